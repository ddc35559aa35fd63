#include "mlgo/evaluators/ObjectCode.h"

#include "mlgo/support/Random.h"

#include <llvm/Object/ELFObjectFile.h>
#include <llvm/Object/ObjectFile.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/xxhash.h>

#include <algorithm>
#include <unordered_map>

namespace fs = std::filesystem;

namespace mlgo::evaluators {

namespace {

bool sectionCounts(llvm::StringRef name, const std::vector<std::string>& patterns) {
  for (const std::string& pattern : patterns) {
    if (!pattern.empty() && pattern.back() == '.' ? name.starts_with(pattern) : name == pattern)
      return true;
  }
  return false;
}

// Section index -> signature of the COMDAT group holding it, for the
// sections of ELF groups flagged GRP_COMDAT.
using ComdatSignatures = std::unordered_map<uint64_t, std::string>;

template <class ELFT>
Expected<ComdatSignatures> comdatSignatures(const llvm::object::ELFFile<ELFT>& file) {
  ComdatSignatures signatures;
  auto headers = file.sections();
  if (!headers)
    return makeError("unreadable section headers: " + llvm::toString(headers.takeError()));
  for (const typename ELFT::Shdr& group : *headers) {
    if (group.sh_type != llvm::ELF::SHT_GROUP)
      continue;
    auto words = file.template getSectionContentsAsArray<typename ELFT::Word>(group);
    if (!words)
      return makeError("unreadable COMDAT group: " + llvm::toString(words.takeError()));
    if (words->empty() || !((*words)[0] & llvm::ELF::GRP_COMDAT))
      continue;
    if (group.sh_link >= headers->size())
      return makeError("a COMDAT group names no symbol table");
    const typename ELFT::Shdr& symbols = (*headers)[group.sh_link];
    auto symbol = file.template getEntry<typename ELFT::Sym>(symbols, group.sh_info);
    if (!symbol)
      return makeError("unreadable COMDAT signature: " + llvm::toString(symbol.takeError()));
    auto strings = file.getStringTableForSymtab(symbols);
    if (!strings)
      return makeError("unreadable COMDAT signature: " + llvm::toString(strings.takeError()));
    auto name = (*symbol)->getName(*strings);
    if (!name)
      return makeError("unreadable COMDAT signature: " + llvm::toString(name.takeError()));
    for (size_t member = 1; member < words->size(); ++member)
      signatures[(*words)[member]] = name->str();
  }
  return signatures;
}

Expected<ComdatSignatures> comdatSignatures(const llvm::object::ObjectFile& object) {
  using namespace llvm::object;
  if (const auto* elf = llvm::dyn_cast<ELF64LEObjectFile>(&object))
    return comdatSignatures(elf->getELFFile());
  if (const auto* elf = llvm::dyn_cast<ELF64BEObjectFile>(&object))
    return comdatSignatures(elf->getELFFile());
  if (const auto* elf = llvm::dyn_cast<ELF32LEObjectFile>(&object))
    return comdatSignatures(elf->getELFFile());
  if (const auto* elf = llvm::dyn_cast<ELF32BEObjectFile>(&object))
    return comdatSignatures(elf->getELFFile());
  return ComdatSignatures{};
}

Expected<CodeMeasure> measureObject(const llvm::object::ObjectFile& object,
                                    const std::vector<std::string>& sections) {
  // A module without code (only data, or nothing) is a valid 0-byte result.
  CodeMeasure measure;
  Expected<ComdatSignatures> signatures = comdatSignatures(object);
  if (!signatures)
    return signatures.error();
  std::unordered_map<uint64_t, uint64_t> comdatBytes;
  for (const llvm::object::SectionRef& section : object.sections()) {
    llvm::Expected<llvm::StringRef> name = section.getName();
    if (!name) {
      llvm::consumeError(name.takeError());
      continue;
    }
    if (!sectionCounts(*name, sections))
      continue;
    llvm::Expected<llvm::StringRef> contents = section.getContents();
    if (!contents)
      return makeError("section " + name->str() +
                       " is unreadable: " + llvm::toString(contents.takeError()));
    measure.bytes += section.getSize();
    measure.hash = llvm::xxh3_64bits(*contents) ^ mix64(measure.hash);
    if (auto in = signatures->find(section.getIndex()); in != signatures->end())
      comdatBytes[llvm::xxh3_64bits(in->second + '\0' + name->str())] += section.getSize();
  }
  for (const auto& [group, bytes] : comdatBytes)
    measure.comdat.push_back({group, bytes});
  std::ranges::sort(measure.comdat, {}, &ComdatCode::group);
  return measure;
}

} // namespace

// The object's code size: the sizes of the task's sections (.text and
// .text.* for size tasks, so -ffunction-sections builds count fully), and a
// hash of their contents. Unreadable objects are errors.
Expected<CodeMeasure> measureCode(const fs::path& object,
                                  const std::vector<std::string>& sections) {
  llvm::Expected<llvm::object::OwningBinary<llvm::object::ObjectFile>> binary =
      llvm::object::ObjectFile::createObjectFile(object.string());
  if (!binary)
    return makeError("not a readable object: " + llvm::toString(binary.takeError()));
  return measureObject(*binary->getBinary(), sections);
}

Expected<CodeMeasure> measureCodeBytes(std::string_view object,
                                       const std::vector<std::string>& sections) {
  llvm::Expected<std::unique_ptr<llvm::object::ObjectFile>> binary =
      llvm::object::ObjectFile::createObjectFile(
          llvm::MemoryBufferRef(llvm::StringRef(object.data(), object.size()), "object"));
  if (!binary)
    return makeError("not a readable object: " + llvm::toString(binary.takeError()));
  return measureObject(**binary, sections);
}

} // namespace mlgo::evaluators
