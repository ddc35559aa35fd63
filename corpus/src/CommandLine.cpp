#include "mlgo/corpus/CommandLine.h"

#include <algorithm>
#include <array>
#include <optional>
#include <set>
#include <string_view>

namespace mlgo::corpus {

namespace {

bool startsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// The flag part of "-flag=value" (the whole argument if it has no '=').
std::string_view flagKey(std::string_view argument) {
  return argument.substr(0, argument.find('='));
}

} // namespace

Status CommandLineFilters::validate() const {
  std::set<std::string_view> replaced, deleted, added;
  for (const auto& [flag, value] : replaceFlags) {
    if (flag.empty())
      return makeError("replace filter with an empty flag");
    if (!replaced.insert(flag).second)
      return makeError("replace filter for " + flag + " given twice");
  }
  for (const std::string& flag : deleteFlags) {
    if (flag.empty())
      return makeError("delete filter with an empty flag");
    deleted.insert(flag);
  }
  for (const std::string& flag : addFlags)
    added.insert(flagKey(flag));
  for (std::string_view flag : replaced) {
    if (deleted.count(flag) || added.count(flag))
      return makeError("flag " + std::string(flag) +
                       " is both replaced and added/deleted; use only the replace filter");
  }
  for (std::string_view flag : added)
    if (deleted.count(flag))
      return makeError("flag " + std::string(flag) + " is both added and deleted");
  return Status::ok();
}

Expected<std::pair<std::string, std::string>> parseReplaceRule(std::string_view rule) {
  size_t eq = rule.find('=');
  if (eq == std::string_view::npos || eq == 0)
    return makeError("replace filter \"" + std::string(rule) + "\" is not of the form FLAG=VALUE");
  return std::pair<std::string, std::string>(std::string(rule.substr(0, eq)),
                                             std::string(rule.substr(eq + 1)));
}

Expected<std::vector<std::string>>
applyCommandLineFilters(const std::vector<std::string>& arguments,
                        const CommandLineFilters& filters,
                        const std::vector<std::string>& trailing) {
  if (Status valid = filters.validate(); !valid)
    return valid.error();
  std::vector<std::string> result;
  result.reserve(arguments.size() + trailing.size() + filters.addFlags.size());
  std::set<std::string> matchedReplacements;
  for (size_t i = 0; i < arguments.size(); ++i) {
    const std::string& argument = arguments[i];
    bool deleted = std::any_of(filters.deleteFlags.begin(), filters.deleteFlags.end(),
                               [&](const std::string& f) { return startsWith(argument, f); });
    if (deleted) {
      // "-flag value": the value goes too.
      if (argument.find('=') == std::string::npos)
        ++i;
      continue;
    }
    const std::pair<std::string, std::string>* replacement = nullptr;
    for (const auto& rule : filters.replaceFlags) {
      if (!startsWith(argument, rule.first))
        continue;
      if (replacement)
        return makeError("argument " + argument + " matches two replace filters (" +
                         replacement->first + ", " + rule.first + ")");
      replacement = &rule;
    }
    if (!replacement) {
      result.push_back(argument);
      continue;
    }
    if (!matchedReplacements.insert(replacement->first).second)
      return makeError("replace filter " + replacement->first + " matches more than one argument");
    if (argument.find('=') == std::string::npos) {
      result.push_back(argument);
      result.push_back(replacement->second);
      ++i;
    } else {
      result.push_back(replacement->first + "=" + replacement->second);
    }
  }
  for (const auto& [flag, value] : filters.replaceFlags)
    if (!matchedReplacements.count(flag))
      return makeError("replace filter " + flag + " matches no argument of the command line");
  result.insert(result.end(), trailing.begin(), trailing.end());
  result.insert(result.end(), filters.addFlags.begin(), filters.addFlags.end());
  return result;
}

namespace {

// Options of a stored cc1 command that write a file of their own choosing
// (build artefacts such as dependency files, statistics, remarks): they do
// not change the object, and a recompilation must not write outside its
// scratch directory, so they are dropped (with their separate values).
constexpr auto kFileOutputsSeparate = std::to_array<std::string_view>(
    {"-dependency-file", "-MT", "-MQ", "-opt-record-file", "-header-include-file",
     "-diagnostic-log-file", "-split-dwarf-output", "-stack-usage-file"});
constexpr auto kFileOutputsJoined = std::to_array<std::string_view>(
    {"-stats-file=", "-ftime-trace=", "-coverage-data-file=", "-coverage-notes-file=",
     "-fcrash-diagnostics-dir=", "-fprofile-instrument-path="});

bool writesAFile(const std::vector<std::string>& command, size_t i, size_t& skip) {
  std::string_view a = command[i];
  skip = 0;
  for (std::string_view option : kFileOutputsSeparate)
    if (a == option) {
      skip = 1;
      return true;
    }
  for (std::string_view prefix : kFileOutputsJoined)
    if (startsWith(a, prefix))
      return true;
  if (a == "-mllvm" && i + 1 < command.size() &&
      (startsWith(command[i + 1], "-info-output-file") ||
       startsWith(command[i + 1], "-stats-file"))) {
    skip = 1;
    return true;
  }
  return false;
}

// A plugin the command would load (foreign code in the compiler), or nullopt.
std::optional<std::string> loadedPlugin(const std::vector<std::string>& command) {
  static constexpr auto kSeparate =
      std::to_array<std::string_view>({"-load", "-add-plugin", "-plugin"});
  static constexpr auto kJoined =
      std::to_array<std::string_view>({"-fpass-plugin=", "-load-pass-plugin=", "-fplugin="});
  for (size_t i = 0; i < command.size(); ++i) {
    std::string_view a = command[i];
    for (std::string_view option : kSeparate)
      if (a == option)
        return std::string(a) + (i + 1 < command.size() ? " " + command[i + 1] : "");
    for (std::string_view prefix : kJoined)
      if (startsWith(a, prefix))
        return std::string(a);
  }
  return std::nullopt;
}

} // namespace

Expected<std::vector<std::string>> buildCompileCommand(const ModuleSpec& module,
                                                       const CommandLineFilters& filters,
                                                       const std::filesystem::path& object) {
  // The training build embedded bitcode; a recompilation must not, or the
  // object would carry (and be measured with) another copy of the module.
  std::vector<std::string> stored;
  stored.reserve(module.storedCommand.size());
  for (size_t i = 0; i < module.storedCommand.size(); ++i) {
    const std::string& argument = module.storedCommand[i];
    if (startsWith(argument, "-fembed-bitcode"))
      continue;
    size_t skip = 0;
    if (!filters.allowUnsafeCommands && writesAFile(module.storedCommand, i, skip)) {
      i += skip;
      continue;
    }
    // The build's own index path is meaningless here; the corpus has its copy.
    if (module.thinLTOIndex && startsWith(argument, "-fthinlto-index="))
      continue;
    stored.push_back(argument);
  }

  std::vector<std::string> input{"-x", "ir", module.bitcode.string()};
  if (module.thinLTOIndex) {
    input.push_back("-fthinlto-index=" + module.thinLTOIndex->string());
    input.push_back("-mllvm");
    input.push_back("-thinlto-assume-merged");
  }
  Expected<std::vector<std::string>> command = applyCommandLineFilters(stored, filters, input);
  if (!command)
    return makeError("module \"" + module.name + "\": " + command.error().message);
  if (!filters.allowUnsafeCommands)
    if (std::optional<std::string> plugin = loadedPlugin(*command))
      return makeError("module \"" + module.name + "\": its command loads a plugin (" + *plugin +
                       "); a corpus's commands are code, so this is refused (give "
                       "--allow-unsafe-commands if you trust the corpus)");
  command->push_back("-o");
  command->push_back(object.string());
  return command;
}

} // namespace mlgo::corpus
