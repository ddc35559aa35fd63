#include "mlgo/deploy/ElfText.h"

#include <cstring>
#include <elf.h>
#include <fstream>
#include <functional>
#include <string_view>
#include <vector>

namespace mlgo::deploy {

namespace {

// Calls `text` with the contents of each .text section, in section order.
Status forEachTextSection(const std::filesystem::path& object,
                          const std::function<void(std::string_view)>& text) {
  auto bad = [&](const std::string& why) { return makeError(object.string() + ": " + why); };
  std::ifstream file(object, std::ios::binary);
  if (!file)
    return bad("cannot open");
  std::vector<char> bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  Elf64_Ehdr header;
  if (bytes.size() < sizeof header)
    return bad("not an ELF object");
  std::memcpy(&header, bytes.data(), sizeof header);
  if (std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 || header.e_ident[EI_CLASS] != ELFCLASS64 ||
      header.e_ident[EI_DATA] != ELFDATA2LSB)
    return bad("not a 64-bit little-endian ELF object");
  if (header.e_shentsize != sizeof(Elf64_Shdr) || header.e_shstrndx >= header.e_shnum ||
      header.e_shoff + uint64_t(header.e_shnum) * sizeof(Elf64_Shdr) > bytes.size())
    return bad("truncated section headers");
  auto section = [&](size_t index) {
    Elf64_Shdr s;
    std::memcpy(&s, bytes.data() + header.e_shoff + index * sizeof s, sizeof s);
    return s;
  };
  Elf64_Shdr names = section(header.e_shstrndx);
  if (names.sh_offset + names.sh_size > bytes.size())
    return bad("truncated section names");
  for (size_t i = 0; i < header.e_shnum; ++i) {
    Elf64_Shdr s = section(i);
    if (s.sh_name >= names.sh_size)
      return bad("section name out of range");
    const char* start = bytes.data() + names.sh_offset + s.sh_name;
    std::string_view name(start, strnlen(start, names.sh_size - s.sh_name));
    if (name != ".text" && !name.starts_with(".text."))
      continue;
    if (s.sh_type == SHT_NOBITS || s.sh_offset + s.sh_size > bytes.size())
      return bad("section " + std::string(name) + " has no contents in the file");
    text(std::string_view(bytes.data() + s.sh_offset, s.sh_size));
  }
  return Status::ok();
}

} // namespace

Expected<uint64_t> textBytes(const std::filesystem::path& object) {
  uint64_t total = 0;
  MLGO_TRY(forEachTextSection(object, [&](std::string_view text) { total += text.size(); }));
  return total;
}

Expected<std::string> textContents(const std::filesystem::path& object) {
  std::string all;
  MLGO_TRY(forEachTextSection(object, [&](std::string_view text) { all += text; }));
  return all;
}

} // namespace mlgo::deploy
