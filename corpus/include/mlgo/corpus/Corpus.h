// A training corpus in ml-compiler-opt's layout:
//
//   <dir>/corpus_description.json   {"modules": [names…], "has_thinlto": bool,
//                                    optional "global_command_override": [args…]}
//   <dir>/<name>.bc                 the module's bitcode
//   <dir>/<name>.cmd                its -cc1 arguments, NUL-separated, starting
//                                   with "-cc1", without input file or -o
//   <dir>/<name>.thinlto.bc         the ThinLTO index, only if has_thinlto
//
// Names may contain '/' (they are object paths relative to the build tree).
// A corpus written by ml-compiler-opt's extract_ir loads unchanged.
#pragma once

#include "mlgo/support/Expected.h"
#include "mlgo/support/Files.h"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mlgo::corpus {

inline constexpr std::string_view kDescriptionFile = "corpus_description.json";

struct CorpusDescription {
  std::vector<std::string> modules;
  bool hasThinLTO = false;
  // When present, every module is compiled with these arguments instead of its
  // own .cmd file.
  std::optional<std::vector<std::string>> globalCommandOverride;
};

Expected<CorpusDescription> readCorpusDescription(const std::filesystem::path& file);
Status writeCorpusDescription(const std::filesystem::path& file,
                              const CorpusDescription& description);

struct ModuleSpec {
  std::string name;
  std::filesystem::path bitcode;
  // Only set when the corpus has ThinLTO indices.
  std::optional<std::filesystem::path> thinLTOIndex;
  uint64_t bitcodeBytes = 0;
  // The -cc1 arguments as stored (from <name>.cmd or the global override),
  // before any filter; element 0 is "-cc1".
  std::vector<std::string> storedCommand;
};

// The language a module was compiled from. The stored -cc1 command has no
// input file (and so no -x), but it names the main file (-main-file-name):
// .c is C; .cc, .cpp, .cxx, .c++, .C are C++; else C++ when the command
// sets a C++ standard (-std=c++… or -std=gnu++…), otherwise Other.
enum class SourceLanguage { C, Cxx, Other };
std::string_view sourceLanguageName(SourceLanguage language); // "C", "C++", "other"
SourceLanguage moduleLanguage(const ModuleSpec& module);

class Corpus {
public:
  // Loads and validates every module's files. The error names the corpus file
  // and the module at fault.
  static Expected<Corpus> load(const std::filesystem::path& directory);

  const std::filesystem::path& directory() const { return directory_; }
  const CorpusDescription& description() const { return description_; }
  // In the order of corpus_description.json.
  const std::vector<ModuleSpec>& modules() const { return modules_; }
  size_t size() const { return modules_.size(); }
  const ModuleSpec* find(std::string_view name) const;

private:
  std::filesystem::path directory_;
  CorpusDescription description_;
  std::vector<ModuleSpec> modules_;
};

// Splits the contents of a .cmd file (NUL-separated; a trailing NUL is
// tolerated) into arguments.
std::vector<std::string> splitCommandFile(std::string_view contents);
std::string joinCommandFile(const std::vector<std::string>& arguments);

// Writes <dir>/<name>.bc and <dir>/<name>.cmd, creating subdirectories.
Status writeModuleFiles(const std::filesystem::path& directory, std::string_view name,
                        std::string_view bitcode, std::string_view commandFileContents);

using mlgo::readFileBytes;
using mlgo::writeFileBytes;

} // namespace mlgo::corpus
