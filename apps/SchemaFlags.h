// Options as flags: binds the libraries' OptionSchemas to a CLI11 App. Each
// field becomes one option in its group, with its default (or its
// defaultNote) and its choices in --help. Values are kept as given, as
// text, and applied through the schema when the App has parsed, in the
// schema's order: a flag, a --config key and a run file's stored config all
// go through OptionSchema::apply, so they cannot disagree.
#pragma once

#include "mlgo/support/OptionSchema.h"

#include <CLI/CLI.hpp>

#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace mlgo::apps {

class SchemaFlags {
public:
  SchemaFlags() = default;
  SchemaFlags(const SchemaFlags&) = delete; // CLI11 holds its slots' addresses
  SchemaFlags& operator=(const SchemaFlags&) = delete;

  // Every field of `schema` as an option of `app`, applied to `target` when
  // `app` has parsed (install). `defaults` give --help's defaults.
  template <class Options>
  void bind(CLI::App& app, const OptionSchema<Options>& schema, Options& target,
            const Options& defaults) {
    std::vector<Slot*> slots;
    for (const OptionField<Options>& field : schema.fields())
      slots.push_back(&addOption(app, field, defaults));
    appliers_.push_back([&schema, &target, slots](OptionNotes& notes) {
      return schema.apply(target, given(slots), notes);
    });
  }
  template <class Options>
  void bind(CLI::App& app, const OptionSchema<Options>& schema, Options& target) {
    const Options defaults = target;
    bind(app, schema, target, defaults);
  }

  // Applies every bound schema once `app` has parsed (its parse-complete
  // callback); errors are kept for status(), not thrown, so each tool
  // reports them as its other errors.
  void install(CLI::App& app) {
    app.parse_complete_callback([this] {
      notes_ = {};
      status_ = Status::ok();
      for (const auto& apply : appliers_)
        if (Status s = apply(notes_); !s) {
          status_ = s;
          return;
        }
    });
  }

  const Status& status() const { return status_; }
  const OptionNotes& notes() const { return notes_; }

  // "warning: --optimizer sep-cma-es does not use --directions (set away
  // from its default)", one line per choice that makes flags unused.
  std::vector<std::string> unusedWarnings() const {
    std::vector<std::string> lines;
    std::vector<std::string> reasons;
    for (const OptionNotes::Unused& u : notes_.unused)
      if (std::find(reasons.begin(), reasons.end(), u.because) == reasons.end())
        reasons.push_back(u.because);
    for (const std::string& because : reasons) {
      std::vector<std::string> fields;
      for (const OptionNotes::Unused& u : notes_.unused)
        if (u.because == because)
          fields.push_back("--" + u.field);
      lines.push_back(because + " does not use " + join(fields, ", ") + " (set away from " +
                      (fields.size() == 1 ? "its default" : "their defaults") + ")");
    }
    return lines;
  }

  // A command whose only schema this is: binds and installs, keeping the
  // binding alive with the returned pointer.
  template <class Options>
  static std::shared_ptr<SchemaFlags> bindAlone(CLI::App& app, const OptionSchema<Options>& schema,
                                                Options& target) {
    auto flags = std::make_shared<SchemaFlags>();
    flags->bind(app, schema, target);
    flags->install(app);
    return flags;
  }

private:
  struct Slot {
    std::string name;
    CLI::Option* option = nullptr;
    bool isSwitch = false;
    bool isList = false;
    bool on = false;
    std::string text;
    std::vector<std::string> list;
  };

  static std::string join(const std::vector<std::string>& parts, const std::string& separator) {
    std::string joined;
    for (const std::string& p : parts)
      joined += (joined.empty() ? "" : separator) + p;
    return joined;
  }

  // Each value checked as it is parsed, by the field itself on a scratch
  // copy of the defaults: CLI11 then names the flag and the value.
  template <class Options>
  static CLI::Validator valueCheck(const OptionField<Options>& field, const Options& defaults) {
    return CLI::Validator(
        [set = field.set, defaults](std::string& text) -> std::string {
          Options scratch = defaults;
          OptionNotes ignored;
          Status checked = set(scratch, {text}, ignored);
          return checked ? std::string() : checked.error().message;
        },
        "");
  }

  template <class Options>
  Slot& addOption(CLI::App& app, const OptionField<Options>& field, const Options& defaults) {
    const std::vector<std::string> defaultValues = field.get(defaults);
    Slot& slot = slots_.emplace_back();
    slot.name = field.name;
    slot.isSwitch = field.isSwitch;
    slot.isList = field.isList;
    std::string names =
        (field.shortName.empty() ? "" : "-" + field.shortName + ",") + "--" + field.name;
    std::string help = field.help;
    if (!field.choices.empty())
      help += ": " + join(field.choices, " | ");
    if (field.isSwitch) {
      slot.option =
          app.add_flag(field.negatable ? names + ",!--no-" + field.name : names, slot.on, help);
    } else if (field.isList) {
      slot.option = app.add_option(names, slot.list, help);
      if (field.delimiter)
        slot.option->delimiter(field.delimiter);
    } else {
      slot.option = app.add_option(names, slot.text, help);
    }
    if (!field.choices.empty())
      slot.option->check(CLI::IsMember(field.choices));
    else if (!field.isSwitch)
      slot.option->check(valueCheck(field, defaults));
    // A later value wins (a flag after --config's key, a script's extra
    // flag), as clang's own options do.
    if (!field.isList)
      slot.option->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    std::string shown = !field.defaultNote.empty() ? field.defaultNote
                        : field.isList && !defaultValues.empty()
                            ? "[" + join(defaultValues, ",") + "]"
                            : join(defaultValues, ",");
    if (!field.isSwitch && !shown.empty())
      slot.option->default_str(shown);
    if (!field.isSwitch && field.choices.empty())
      slot.option->type_name(field.kind == TextKind::Integer  ? "INT"
                             : field.kind == TextKind::Number ? "NUMBER"
                                                              : "TEXT");
    slot.option->group(field.group.empty() ? "Options" : field.group);
    return slot;
  }

  // The values given (on the command line or in --config), by field name.
  static ConfigValues given(const std::vector<Slot*>& slots) {
    ConfigValues values;
    for (const Slot* slot : slots) {
      if (slot->option->count() == 0)
        continue;
      if (slot->isSwitch)
        values.emplace_back(slot->name, std::vector<std::string>{slot->on ? "true" : "false"});
      else if (slot->isList)
        values.emplace_back(slot->name, slot->list);
      else
        values.emplace_back(slot->name, std::vector<std::string>{slot->text});
    }
    return values;
  }

  std::deque<Slot> slots_;
  std::vector<std::function<Status(OptionNotes&)>> appliers_;
  Status status_;
  OptionNotes notes_;
};

} // namespace mlgo::apps
