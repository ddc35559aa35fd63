#include "mlgo/corpus/Extract.h"

#include "mlgo/corpus/Corpus.h"
#include "mlgo/corpus/ObjectSections.h"
#include "mlgo/support/Progress.h"

#include <llvm/Support/JSON.h>
#include <llvm/Support/raw_ostream.h>

#include <tbb/global_control.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <set>

namespace fs = std::filesystem;

namespace mlgo::corpus {

namespace {

constexpr const char* kBitcodeSection = ".llvmbc";
constexpr const char* kCommandSection = ".llvmcmd";

// What became of one object: a module, nothing to extract, or a skip.
struct ObjectOutcome {
  enum class Kind { Module, NoEmbeddedBitcode, Skipped } kind = Kind::Skipped;
  std::string reason;
};

bool isObjectFileName(const fs::path& path) {
  std::string ext = path.extension().string();
  return ext == ".o" || ext == ".obj";
}

// Splits a shell-quoted "command" string of compile_commands.json the way a
// POSIX shell would for the common cases (quotes and backslashes).
std::vector<std::string> splitShellCommand(std::string_view command) {
  std::vector<std::string> words;
  std::string word;
  bool inWord = false;
  char quote = 0;
  for (size_t i = 0; i < command.size(); ++i) {
    char c = command[i];
    if (quote) {
      if (c == quote)
        quote = 0;
      else if (c == '\\' && quote == '"' && i + 1 < command.size())
        word.push_back(command[++i]);
      else
        word.push_back(c);
    } else if (c == '\'' || c == '"') {
      quote = c;
      inWord = true;
    } else if (c == '\\' && i + 1 < command.size()) {
      word.push_back(command[++i]);
      inWord = true;
    } else if (c == ' ' || c == '\t' || c == '\n') {
      if (inWord)
        words.push_back(std::move(word));
      word.clear();
      inWord = false;
    } else {
      word.push_back(c);
      inWord = true;
    }
  }
  if (inWord)
    words.push_back(std::move(word));
  return words;
}

std::string moduleNameFor(const fs::path& object, const fs::path& base) {
  fs::path relative = object.lexically_normal().lexically_relative(base.lexically_normal());
  if (relative.empty() || *relative.begin() == "..")
    relative = object.lexically_normal().relative_path(); // outside the base: keep full path
  return relative.generic_string();
}

ObjectOutcome extractOne(const ObjectInput& input, const fs::path& output) {
  Expected<std::map<std::string, std::string>> sections =
      readObjectSections(input.object, {kBitcodeSection, kCommandSection});
  if (!sections)
    return {ObjectOutcome::Kind::Skipped, sections.error().message};
  auto bitcode = sections->find(kBitcodeSection);
  auto command = sections->find(kCommandSection);
  if (bitcode == sections->end() && command == sections->end())
    return {ObjectOutcome::Kind::NoEmbeddedBitcode, {}};
  if (bitcode == sections->end() || bitcode->second.empty())
    return {ObjectOutcome::Kind::Skipped, "has .llvmcmd but no (or an empty) .llvmbc section"};
  if (command == sections->end() || command->second.empty())
    return {ObjectOutcome::Kind::Skipped, "has bitcode but no command line (.llvmcmd); built with "
                                          "-fembed-bitcode=bitcode? use -fembed-bitcode=all"};
  // Several -cc1 in one section means objects concatenated by `ld -r`: the
  // .llvmbc then holds several modules glued together, not one module.
  std::vector<std::string> args = splitCommandFile(command->second);
  size_t cc1 = std::count(args.begin(), args.end(), "-cc1");
  if (cc1 != 1 || args.front() != "-cc1")
    return {ObjectOutcome::Kind::Skipped,
            cc1 <= 1 ? "command line in .llvmcmd does not start with -cc1"
                     : "holds " + std::to_string(cc1) +
                           " modules (objects merged with ld -r); extract the inputs instead"};
  if (Status written = writeModuleFiles(output, input.moduleName, bitcode->second, command->second);
      !written)
    return {ObjectOutcome::Kind::Skipped, "cannot write module: " + written.error().message};
  return {ObjectOutcome::Kind::Module, {}};
}

} // namespace

Expected<std::vector<ObjectInput>> findObjectsInDirectory(const fs::path& directory) {
  std::error_code ec;
  if (!fs::is_directory(directory, ec))
    return makeError(directory.string() + ": not a directory");
  std::vector<ObjectInput> inputs;
  fs::recursive_directory_iterator it(directory, fs::directory_options::skip_permission_denied, ec);
  if (ec)
    return makeError(directory.string() + ": cannot list: " + ec.message());
  for (; it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec)
      return makeError(directory.string() + ": cannot list: " + ec.message());
    if (it->is_regular_file(ec) && isObjectFileName(it->path()))
      inputs.push_back({it->path(), moduleNameFor(it->path(), directory)});
  }
  std::sort(inputs.begin(), inputs.end(),
            [](const ObjectInput& a, const ObjectInput& b) { return a.moduleName < b.moduleName; });
  return inputs;
}

Expected<std::vector<ObjectInput>> findObjectsInCompileCommands(const fs::path& compileCommands) {
  Expected<std::string> text = readFileBytes(compileCommands);
  if (!text)
    return text.error();
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(*text);
  if (!parsed)
    return makeError(compileCommands.string() +
                     ": invalid JSON: " + llvm::toString(parsed.takeError()));
  const llvm::json::Array* entries = parsed->getAsArray();
  if (!entries)
    return makeError(compileCommands.string() + ": top level must be an array of entries");
  fs::path base = fs::absolute(compileCommands).parent_path();
  std::vector<ObjectInput> inputs;
  std::set<std::string> seen;
  for (size_t i = 0; i < entries->size(); ++i) {
    const llvm::json::Object* entry = (*entries)[i].getAsObject();
    std::string where = compileCommands.string() + ": entry " + std::to_string(i);
    if (!entry)
      return makeError(where + " is not an object");
    std::optional<llvm::StringRef> directory = entry->getString("directory");
    if (!directory)
      return makeError(where + " has no \"directory\"");
    std::optional<std::string> output;
    if (std::optional<llvm::StringRef> o = entry->getString("output"))
      output = o->str();
    if (!output) {
      std::vector<std::string> args;
      if (const llvm::json::Array* arguments = entry->getArray("arguments")) {
        for (const llvm::json::Value& a : *arguments)
          if (std::optional<llvm::StringRef> s = a.getAsString())
            args.push_back(s->str());
      } else if (std::optional<llvm::StringRef> command = entry->getString("command")) {
        args = splitShellCommand(*command);
      } else {
        return makeError(where + " has neither \"arguments\" nor \"command\"");
      }
      for (size_t a = 0; a < args.size(); ++a) {
        if (args[a] == "-o" && a + 1 < args.size())
          output = args[a + 1];
        else if (args[a].size() > 2 && args[a].compare(0, 2, "-o") == 0)
          output = args[a].substr(2);
      }
    }
    if (!output)
      return makeError(where + " names no output object (no \"output\" and no -o)");
    fs::path object =
        fs::path(*output).is_absolute() ? fs::path(*output) : fs::path(directory->str()) / *output;
    object = object.lexically_normal();
    // The same object compiled twice in the database (e.g. PIC and non-PIC
    // variants with one -o) is one module.
    if (!seen.insert(object.string()).second)
      continue;
    inputs.push_back({object, moduleNameFor(object, base)});
  }
  return inputs;
}

Expected<ExtractSummary> extractCorpus(const std::vector<ObjectInput>& inputs,
                                       const fs::path& outputDirectory,
                                       const ExtractOptions& options) {
  auto start = std::chrono::steady_clock::now();
  std::set<std::string> names;
  for (const ObjectInput& input : inputs)
    if (!names.insert(input.moduleName).second)
      return makeError("two objects map to module name \"" + input.moduleName + "\"");
  std::error_code ec;
  fs::create_directories(outputDirectory, ec);
  if (ec)
    return makeError(outputDirectory.string() + ": cannot create: " + ec.message());

  // Each object's outcome goes into its own slot: the corpus lists modules in
  // input order whatever the scheduling.
  std::vector<ObjectOutcome> outcomes(inputs.size());
  {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism,
                              std::max<size_t>(1, options.threads));
    ProgressLine progress("extract", inputs.size());
    // One object per task: objects differ in size by orders of magnitude, so
    // a grain of 1 lets TBB balance them.
    tbb::parallel_for(tbb::blocked_range<size_t>(0, inputs.size(), 1),
                      [&](const tbb::blocked_range<size_t>& range) {
                        for (size_t i = range.begin(); i != range.end(); ++i) {
                          outcomes[i] = extractOne(inputs[i], outputDirectory);
                          progress.advance();
                        }
                      });
  }

  ExtractSummary summary;
  summary.objectsScanned = inputs.size();
  for (size_t i = 0; i < inputs.size(); ++i) {
    switch (outcomes[i].kind) {
    case ObjectOutcome::Kind::Module:
      summary.modules.push_back(inputs[i].moduleName);
      break;
    case ObjectOutcome::Kind::NoEmbeddedBitcode:
      summary.withoutEmbeddedBitcode.push_back(inputs[i].object);
      break;
    case ObjectOutcome::Kind::Skipped:
      summary.skipped.push_back({inputs[i].object, outcomes[i].reason});
      break;
    }
  }
  if (summary.modules.empty())
    return makeError("no object under the input carries embedded bitcode (.llvmbc/.llvmcmd); "
                     "build with -Xclang -fembed-bitcode=all (" +
                     std::to_string(inputs.size()) + " objects scanned)");
  CorpusDescription description;
  description.modules = summary.modules;
  if (Status written = writeCorpusDescription(outputDirectory / kDescriptionFile, description);
      !written)
    return written.error();
  summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return summary;
}

} // namespace mlgo::corpus
