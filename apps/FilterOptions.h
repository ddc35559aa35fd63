// The command-line filter flags (ml-compiler-opt's delete/replace/add
// semantics), shared by every tool that compiles corpus modules.
#pragma once

#include "mlgo/corpus/CommandLine.h"

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace mlgo::apps {

struct FilterArgs {
  std::vector<std::string> deleteFlags;
  std::vector<std::string> replaceFlags;
  std::vector<std::string> addFlags;
  bool allowUnsafeCommands = false;

  void addTo(CLI::App& app) {
    app.add_option("--delete-flag", deleteFlags,
                   "Drop module arguments starting with this flag (and the next argument if "
                   "it has no '=')");
    app.add_option("--replace-flag", replaceFlags,
                   "FLAG=VALUE: give a module argument a new value; it must occur exactly once");
    app.add_option("--add-flag", addFlags, "Append this argument after the input");
    app.add_flag("--allow-unsafe-commands", allowUnsafeCommands,
                 "Compile corpus commands as they are: by default a command that loads a "
                 "plugin is refused and options writing files of their own (dependency "
                 "files, statistics, remarks) are dropped (a corpus's .cmd files are code)");
  }

  Expected<corpus::CommandLineFilters> toFilters() const {
    corpus::CommandLineFilters filters;
    filters.deleteFlags = deleteFlags;
    filters.addFlags = addFlags;
    filters.allowUnsafeCommands = allowUnsafeCommands;
    for (const std::string& rule : replaceFlags) {
      Expected<std::pair<std::string, std::string>> parsed = corpus::parseReplaceRule(rule);
      if (!parsed)
        return makeError("--replace-flag: " + parsed.error().message);
      filters.replaceFlags.push_back(parsed.take());
    }
    if (Status valid = filters.validate(); !valid)
      return valid.error();
    return filters;
  }
};

} // namespace mlgo::apps
