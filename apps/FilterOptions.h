// The command-line filter flags (ml-compiler-opt's delete/replace/add
// semantics), shared by every tool that compiles corpus modules.
#pragma once

#include "mlgo/corpus/CommandLine.h"

#include "SchemaFlags.h"
#include "mlgo/support/OptionSchema.h"

#include <string>
#include <vector>

namespace mlgo::apps {

struct FilterArgs {
  std::vector<std::string> deleteFlags;
  std::vector<std::string> replaceFlags;
  std::vector<std::string> addFlags;
  bool allowUnsafeCommands = false;
  // The binding when these are a command's only flags (mlgo-corpus command).
  std::shared_ptr<SchemaFlags> ownFlags;

  static const OptionSchema<FilterArgs>& schema() {
    static const OptionSchema<FilterArgs> schema = [] {
      OptionSchema<FilterArgs> s;
      s.value(
          "delete-flag",
          "Drop module arguments starting with this flag (and the next argument if it has "
          "no '=')",
          [](auto& a) -> auto& { return a.deleteFlags; });
      s.value(
          "replace-flag",
          "FLAG=VALUE: give a module argument a new value; it must occur exactly once",
          [](auto& a) -> auto& { return a.replaceFlags; });
      s.value(
          "add-flag", "Append this argument after the input",
          [](auto& a) -> auto& { return a.addFlags; });
      s.flag(
          "allow-unsafe-commands",
          "Compile corpus commands as they are: by default a command that loads a plugin is "
          "refused and options writing files of their own (dependency files, statistics, "
          "remarks) are dropped (a corpus's .cmd files are code)",
          [](auto& a) -> auto& { return a.allowUnsafeCommands; });
      return s;
    }();
    return schema;
  }

  void addTo(CLI::App& app) { ownFlags = SchemaFlags::bindAlone(app, schema(), *this); }

  Expected<corpus::CommandLineFilters> toFilters() const {
    if (ownFlags)
      MLGO_TRY(ownFlags->status());
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
