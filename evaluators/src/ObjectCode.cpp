#include "mlgo/evaluators/ObjectCode.h"

#include "mlgo/support/Random.h"

#include <llvm/Object/ObjectFile.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/xxhash.h>

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

Expected<CodeMeasure> measureObject(const llvm::object::ObjectFile& object,
                                    const std::vector<std::string>& sections) {
  // A module without code (only data, or nothing) is a valid 0-byte result.
  CodeMeasure measure;
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
  }
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
