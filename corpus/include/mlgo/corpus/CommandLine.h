// Turning a module's stored -cc1 arguments into the command that recompiles
// it. Filter semantics follow ml-compiler-opt's corpus.py so that its flag
// settings carry over:
//  - delete: an argument starting with a delete flag is dropped; if it has no
//    '=', the argument after it (its value) is dropped too;
//  - replace: an argument starting with a replace flag gets the new value
//    (`-flag=new`, or `-flag new` for the two-argument form); every replace
//    flag must match exactly once;
//  - add: appended after the input (`-x ir <name>.bc`).
#pragma once

#include "mlgo/corpus/Corpus.h"

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace mlgo::corpus {

struct CommandLineFilters {
  std::vector<std::string> deleteFlags;
  std::vector<std::pair<std::string, std::string>> replaceFlags;
  std::vector<std::string> addFlags;
  // A corpus's .cmd files are code run by the compiler: a command that loads
  // a plugin (-load, -fpass-plugin=, -add-plugin) is refused, and options
  // that write files of their own (-dependency-file, -stats-file=,
  // -opt-record-file, …; they do not change the object) are dropped, on both
  // backends alike, unless this is set. The add flags are the user's own.
  bool allowUnsafeCommands = false;

  // Rejects filters that overlap (one flag in two roles), as ml-compiler-opt does.
  Status validate() const;
};

// Parses "FLAG=VALUE" into a replace rule (split at the first '=' after the
// flag's leading dashes and name).
Expected<std::pair<std::string, std::string>> parseReplaceRule(std::string_view rule);

// Applies delete and replace rules, then appends `trailing` and the add flags.
Expected<std::vector<std::string>>
applyCommandLineFilters(const std::vector<std::string>& arguments,
                        const CommandLineFilters& filters,
                        const std::vector<std::string>& trailing);

// The full argument list (without the compiler executable; element 0 is
// "-cc1") that compiles `module` to `object`: the stored arguments without
// -fembed-bitcode (the training build's, not ours), filtered, then
// `-x ir <bc>`, the ThinLTO index if any, the add flags and `-o <object>`.
Expected<std::vector<std::string>> buildCompileCommand(const ModuleSpec& module,
                                                       const CommandLineFilters& filters,
                                                       const std::filesystem::path& object);

} // namespace mlgo::corpus
