#include "mlgo/deploy/BitcodeInputs.h"

#include <array>
#include <cstring>
#include <fstream>
#include <string_view>

namespace mlgo::deploy {

namespace fs = std::filesystem;

namespace {

bool isBitcodeMagic(const char* bytes, size_t size) {
  static constexpr std::array<unsigned char, 4> kRaw{'B', 'C', 0xC0, 0xDE};
  static constexpr std::array<unsigned char, 4> kWrapper{0xDE, 0xC0, 0x17, 0x0B};
  return size >= 4 &&
         (std::memcmp(bytes, kRaw.data(), 4) == 0 || std::memcmp(bytes, kWrapper.data(), 4) == 0);
}

constexpr std::string_view kArchiveMagic = "!<arch>\n";
constexpr std::string_view kThinArchiveMagic = "!<thin>\n";
constexpr size_t kMemberHeader = 60; // name 16, date 12, uid 6, gid 6, mode 8, size 10, "`\n"

std::string trimmed(std::string_view field) {
  size_t end = field.find_last_not_of(' ');
  return std::string(end == std::string_view::npos ? std::string_view() : field.substr(0, end + 1));
}

// A member's name: "name/" (GNU short), "/123" (offset into the "//" table).
std::string memberName(const std::string& field, const std::string& longNames) {
  if (field.size() > 1 && field[0] == '/' && field[1] != '/') {
    size_t offset = std::strtoull(field.c_str() + 1, nullptr, 10);
    if (offset >= longNames.size())
      return field;
    size_t end = longNames.find("/\n", offset);
    return longNames.substr(offset, end == std::string::npos ? std::string::npos : end - offset);
  }
  return field.ends_with("/") ? field.substr(0, field.size() - 1) : field;
}

std::optional<std::string> bitcodeMemberOf(const fs::path& archive) {
  std::ifstream in(archive, std::ios::binary);
  std::array<char, 8> magic{};
  if (!in.read(magic.data(), magic.size()))
    return std::nullopt;
  std::string_view kind(magic.data(), magic.size());
  bool thin = kind == kThinArchiveMagic;
  if (kind != kArchiveMagic && !thin)
    return std::nullopt;
  std::string longNames;
  std::array<char, kMemberHeader> header{};
  while (in.read(header.data(), header.size())) {
    std::string name = trimmed(std::string_view(header.data(), 16));
    uint64_t size =
        std::strtoull(trimmed(std::string_view(header.data() + 48, 10)).c_str(), nullptr, 10);
    bool special = name == "/" || name == "/SYM64/" || name == "//";
    // Thin archives store only the symbol and name tables' contents.
    bool stored = !thin || special;
    std::streampos data = in.tellg();
    if (name == "//") {
      longNames.resize(size);
      in.read(longNames.data(), static_cast<std::streamsize>(size));
    } else if (!special && thin) {
      fs::path member = memberName(name, longNames);
      if (member.is_relative())
        member = archive.parent_path() / member;
      if (isBitcodeFile(member))
        return archive.string() + "(" + member.string() + ")";
    } else if (!special) {
      std::array<char, 4> start{};
      in.read(start.data(), start.size());
      if (in && isBitcodeMagic(start.data(), start.size()))
        return archive.string() + "(" + memberName(name, longNames) + ")";
    }
    if (!stored)
      continue;
    in.clear();
    in.seekg(data + static_cast<std::streamoff>(size + (size & 1)));
  }
  return std::nullopt;
}

std::optional<std::string> bitcodeIn(const fs::path& input) {
  if (isBitcodeFile(input))
    return input.string();
  return bitcodeMemberOf(input);
}

} // namespace

bool isBitcodeFile(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::array<char, 4> magic{};
  return in.read(magic.data(), magic.size()) && isBitcodeMagic(magic.data(), magic.size());
}

std::optional<std::string> firstBitcodeInput(const CompilerCommand& command) {
  std::error_code error;
  for (const std::string& input : command.linkInputs)
    if (fs::is_regular_file(input, error))
      if (std::optional<std::string> found = bitcodeIn(input))
        return found;
  // -lNAME: the first libNAME.so or libNAME.a in the -L directories is what
  // the linker takes (a shared library is never bitcode).
  for (const std::string& library : command.libraries)
    for (const std::string& directory : command.libraryDirectories) {
      fs::path shared = fs::path(directory) / ("lib" + library + ".so");
      fs::path archive = fs::path(directory) / ("lib" + library + ".a");
      if (fs::exists(shared, error))
        break;
      if (fs::is_regular_file(archive, error)) {
        if (std::optional<std::string> found = bitcodeIn(archive))
          return found;
        break;
      }
    }
  return std::nullopt;
}

} // namespace mlgo::deploy
