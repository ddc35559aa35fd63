#include "mlgo/corpus/ObjectSections.h"

#include <llvm/Object/ObjectFile.h>
#include <llvm/Support/Error.h>

#include <algorithm>

namespace mlgo::corpus {

Expected<std::map<std::string, std::string>>
readObjectSections(const std::filesystem::path& object, const std::vector<std::string>& names) {
  llvm::Expected<llvm::object::OwningBinary<llvm::object::ObjectFile>> binary =
      llvm::object::ObjectFile::createObjectFile(object.string());
  if (!binary)
    return makeError(object.string() +
                     ": not a readable object file: " + llvm::toString(binary.takeError()));
  std::map<std::string, std::string> found;
  for (const llvm::object::SectionRef& section : binary->getBinary()->sections()) {
    llvm::Expected<llvm::StringRef> name = section.getName();
    if (!name) {
      llvm::consumeError(name.takeError());
      continue;
    }
    if (std::find(names.begin(), names.end(), name->str()) == names.end())
      continue;
    llvm::Expected<llvm::StringRef> contents = section.getContents();
    if (!contents)
      return makeError(object.string() + ": section " + name->str() +
                       " is unreadable: " + llvm::toString(contents.takeError()));
    // Two sections of one name (e.g. objects merged with `ld -r`) would be
    // ambiguous: report rather than pick one.
    if (found.count(name->str()))
      return makeError(object.string() + ": more than one " + name->str() + " section");
    found.emplace(name->str(), contents->str());
  }
  return found;
}

Expected<std::optional<std::string>> readObjectSection(const std::filesystem::path& object,
                                                       const std::string& name) {
  Expected<std::map<std::string, std::string>> sections = readObjectSections(object, {name});
  if (!sections)
    return sections.error();
  auto it = sections->find(name);
  if (it == sections->end())
    return std::optional<std::string>();
  return std::optional<std::string>(std::move(it->second));
}

} // namespace mlgo::corpus
