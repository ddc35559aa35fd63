#include "mlgo/corpus/Corpus.h"

#include <fstream>

#include <llvm/Support/JSON.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>
#include <map>
#include <set>

namespace fs = std::filesystem;

namespace mlgo::corpus {

namespace {

// ml-compiler-opt's placeholder for an override the user must still fill in.
constexpr std::string_view kUnspecifiedOverride = "<UNSPECIFIED>";

Expected<std::vector<std::string>> readStringArray(const llvm::json::Value* value,
                                                   std::string_view field, const fs::path& file) {
  const llvm::json::Array* array = value ? value->getAsArray() : nullptr;
  if (!array)
    return makeError(file.string() + ": \"" + std::string(field) +
                     "\" must be an array of strings");
  std::vector<std::string> result;
  result.reserve(array->size());
  for (size_t i = 0; i < array->size(); ++i) {
    std::optional<llvm::StringRef> s = (*array)[i].getAsString();
    if (!s)
      return makeError(file.string() + ": \"" + std::string(field) + "\"[" + std::to_string(i) +
                       "] is not a string");
    result.emplace_back(s->str());
  }
  return result;
}

// A module name must stay inside the corpus directory.
bool isSafeModuleName(const std::string& name) {
  if (name.empty() || name.front() == '/')
    return false;
  for (const fs::path& part : fs::path(name))
    if (part == "..")
      return false;
  return true;
}

} // namespace

Expected<CorpusDescription> readCorpusDescription(const fs::path& file) {
  Expected<std::string> text = readFileBytes(file);
  if (!text)
    return text.error();
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(*text);
  if (!parsed)
    return makeError(file.string() + ": invalid JSON: " + llvm::toString(parsed.takeError()));
  const llvm::json::Object* root = parsed->getAsObject();
  if (!root)
    return makeError(file.string() + ": top level must be a JSON object");

  CorpusDescription description;
  if (!root->get("modules"))
    return makeError(file.string() + ": missing \"modules\"");
  Expected<std::vector<std::string>> modules =
      readStringArray(root->get("modules"), "modules", file);
  if (!modules)
    return modules.error();
  description.modules = modules.take();
  if (description.modules.empty())
    return makeError(file.string() + ": \"modules\" is empty");

  // By normal form: "./a.o" and "a.o" are the same files, not two modules.
  std::map<std::string, std::string> seen;
  for (const std::string& name : description.modules) {
    if (!isSafeModuleName(name))
      return makeError(file.string() + ": module name \"" + name +
                       "\" must be a relative path inside the corpus");
    auto [it, added] = seen.emplace(fs::path(name).lexically_normal().string(), name);
    if (!added)
      return makeError(file.string() + ": module \"" + name + "\" is listed twice" +
                       (it->second == name ? std::string() : " (also as \"" + it->second + "\")"));
  }

  if (const llvm::json::Value* thin = root->get("has_thinlto")) {
    std::optional<bool> b = thin->getAsBoolean();
    if (!b)
      return makeError(file.string() + ": \"has_thinlto\" must be true or false");
    description.hasThinLTO = *b;
  }

  if (const llvm::json::Value* override = root->get("global_command_override")) {
    Expected<std::vector<std::string>> args =
        readStringArray(override, "global_command_override", file);
    if (!args)
      return args.error();
    if (args->size() == 1 && (*args)[0] == kUnspecifiedOverride)
      return makeError(file.string() +
                       ": \"global_command_override\" is still <UNSPECIFIED>; fill it in");
    description.globalCommandOverride = args.take();
  }
  return description;
}

Status writeCorpusDescription(const fs::path& file, const CorpusDescription& description) {
  llvm::json::Array modules;
  for (const std::string& name : description.modules)
    modules.push_back(name);
  llvm::json::Object root{{"has_thinlto", description.hasThinLTO}, {"modules", std::move(modules)}};
  if (description.globalCommandOverride) {
    llvm::json::Array args;
    for (const std::string& arg : *description.globalCommandOverride)
      args.push_back(arg);
    root["global_command_override"] = std::move(args);
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(root))) << "\n";
  os.flush();
  return writeFileAtomically(file, text);
}

// A module's bitcode, checked where every tool loads it (an empty or foreign
// .bc would otherwise compile as an empty module: size 0, reward 0).
static Expected<uint64_t> checkBitcodeFile(const fs::path& file, const std::string& module) {
  std::string what = file.string() + ": bitcode of module \"" + module + "\"";
  std::error_code ec;
  fs::file_status status = fs::status(file, ec);
  if (ec || !fs::exists(status))
    return makeError(what + " is missing");
  if (!fs::is_regular_file(status))
    return makeError(what + " is " + fileKind(status) + ", not a file");
  uint64_t bytes = fs::file_size(file, ec);
  if (ec)
    return makeError(what + " is unreadable (" + ec.message() + ")");
  if (bytes == 0)
    return makeError(what + " is empty (0 bytes)");
  std::ifstream in(file, std::ios::binary);
  unsigned char magic[4] = {};
  if (!in.read(reinterpret_cast<char*>(magic), sizeof magic))
    return makeError(what + " is unreadable or shorter than a bitcode header");
  bool raw = magic[0] == 'B' && magic[1] == 'C' && magic[2] == 0xC0 && magic[3] == 0xDE;
  bool wrapped = magic[0] == 0xDE && magic[1] == 0xC0 && magic[2] == 0x17 && magic[3] == 0x0B;
  if (!raw && !wrapped)
    return makeError(what + " is not LLVM bitcode (no 'BC' 0xC0DE signature)");
  return bytes;
}

Expected<Corpus> Corpus::load(const fs::path& directory) {
  std::error_code ec;
  if (!fs::is_directory(directory, ec))
    return makeError(directory.string() + ": not a corpus directory (does not exist or is not a "
                                          "directory)");
  Expected<CorpusDescription> description = readCorpusDescription(directory / kDescriptionFile);
  if (!description)
    return description.error();

  Corpus corpus;
  corpus.directory_ = directory;
  corpus.description_ = description.take();
  corpus.modules_.reserve(corpus.description_.modules.size());
  for (const std::string& name : corpus.description_.modules) {
    ModuleSpec module;
    module.name = name;
    module.bitcode = directory / (name + ".bc");
    Expected<uint64_t> bytes = checkBitcodeFile(module.bitcode, name);
    if (!bytes)
      return bytes.error();
    module.bitcodeBytes = *bytes;
    if (corpus.description_.hasThinLTO) {
      module.thinLTOIndex = directory / (name + ".thinlto.bc");
      if (!fs::is_regular_file(*module.thinLTOIndex, ec))
        return makeError(module.thinLTOIndex->string() + ": ThinLTO index of module \"" + name +
                         "\" is missing (the corpus has has_thinlto=true)");
    }
    if (corpus.description_.globalCommandOverride) {
      module.storedCommand = *corpus.description_.globalCommandOverride;
    } else {
      fs::path commandFile = directory / (name + ".cmd");
      Expected<std::string> contents = readFileBytes(commandFile);
      if (!contents)
        return makeError(contents.error().message + " (command line of module \"" + name + "\")");
      module.storedCommand = splitCommandFile(*contents);
      if (module.storedCommand.empty() || module.storedCommand.front() != "-cc1")
        return makeError(commandFile.string() + ": command line of module \"" + name +
                         "\" does not start with -cc1");
      // The format has no output: each tool adds its own -o, and a second
      // one would send the object elsewhere (or not, by backend).
      // (cc1 takes -o only as a separate argument; "-opt-record-file" and
      // the like are other options.)
      for (size_t i = 0; i < module.storedCommand.size(); ++i)
        if (module.storedCommand[i] == "-o")
          return makeError(commandFile.string() + ": command line of module \"" + name +
                           "\" has its own -o" +
                           (i + 1 < module.storedCommand.size() ? " " + module.storedCommand[i + 1]
                                                                : std::string()) +
                           " (a corpus command names no output; remove it)");
    }
    corpus.modules_.push_back(std::move(module));
  }
  return corpus;
}

std::string_view sourceLanguageName(SourceLanguage language) {
  switch (language) {
  case SourceLanguage::C:
    return "C";
  case SourceLanguage::Cxx:
    return "C++";
  case SourceLanguage::Other:
    break;
  }
  return "other";
}

SourceLanguage moduleLanguage(const ModuleSpec& module) {
  const std::vector<std::string>& command = module.storedCommand;
  for (size_t i = 0; i + 1 < command.size(); ++i) {
    if (command[i] != "-main-file-name")
      continue;
    const std::string& file = command[i + 1];
    const size_t dot = file.rfind('.');
    const std::string extension = dot == std::string::npos ? "" : file.substr(dot + 1);
    if (extension == "c")
      return SourceLanguage::C;
    for (const char* cxx : {"cc", "cpp", "cxx", "c++", "C", "cp", "CPP"})
      if (extension == cxx)
        return SourceLanguage::Cxx;
  }
  for (const std::string& argument : command)
    if (argument.rfind("-std=c++", 0) == 0 || argument.rfind("-std=gnu++", 0) == 0)
      return SourceLanguage::Cxx;
  return SourceLanguage::Other;
}

const ModuleSpec* Corpus::find(std::string_view name) const {
  auto it = std::find_if(modules_.begin(), modules_.end(),
                         [&](const ModuleSpec& m) { return m.name == name; });
  return it == modules_.end() ? nullptr : &*it;
}

Status writeModuleFiles(const fs::path& directory, std::string_view name, std::string_view bitcode,
                        std::string_view commandFileContents) {
  fs::path bitcodeFile = directory / (std::string(name) + ".bc");
  std::error_code ec;
  fs::create_directories(bitcodeFile.parent_path(), ec);
  if (ec)
    return makeError(bitcodeFile.parent_path().string() + ": cannot create: " + ec.message());
  if (Status s = writeFileBytes(bitcodeFile, bitcode); !s)
    return s;
  return writeFileBytes(directory / (std::string(name) + ".cmd"), commandFileContents);
}

} // namespace mlgo::corpus
