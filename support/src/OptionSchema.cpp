#include "mlgo/support/OptionSchema.h"

#include <toml++/toml.h>

namespace mlgo {

std::string tomlScalar(const std::string& text, TextKind kind) {
  if (kind != TextKind::String)
    return text;
  std::string quoted = "\"";
  for (char c : text) {
    switch (c) {
    case '"':
    case '\\':
      quoted += '\\';
      quoted += c;
      break;
    case '\n':
      quoted += "\\n";
      break;
    case '\t':
      quoted += "\\t";
      break;
    default:
      quoted += c;
    }
  }
  return quoted + "\"";
}

namespace {

// One TOML value as the text a command line would give.
std::optional<std::string> scalarText(const toml::node& node) {
  if (const auto* text = node.as_string())
    return text->get();
  if (const auto* integer = node.as_integer())
    return std::to_string(integer->get());
  if (const auto* boolean = node.as_boolean())
    return boolean->get() ? "true" : "false";
  if (const auto* number = node.as_floating_point())
    return TextCodec<double>::format(number->get());
  return std::nullopt;
}

} // namespace

namespace {

Status collect(const toml::table& table, std::vector<std::string>& parents,
               std::vector<ConfigEntry>& entries, const std::string& origin) {
  for (const auto& [key, node] : table) {
    std::string name(key.str());
    if (const toml::table* section = node.as_table()) {
      parents.push_back(name);
      MLGO_TRY(collect(*section, parents, entries, origin));
      parents.pop_back();
      continue;
    }
    ConfigEntry entry{parents, name, {}};
    const std::string where = origin + ": key '" + name + "'";
    if (const toml::array* array = node.as_array()) {
      for (const toml::node& element : *array) {
        std::optional<std::string> text = scalarText(element);
        if (!text)
          return makeError(where + ": arrays may hold only strings, numbers or booleans");
        entry.values.push_back(std::move(*text));
      }
    } else if (std::optional<std::string> text = scalarText(node)) {
      entry.values.push_back(std::move(*text));
    } else {
      return makeError(where + ": unsupported value (dates and times are not options)");
    }
    entries.push_back(std::move(entry));
  }
  return Status::ok();
}

} // namespace

Expected<std::vector<ConfigEntry>> parseToml(std::string_view text, const std::string& origin) {
  toml::table root;
  try {
    root = toml::parse(text, origin);
  } catch (const toml::parse_error& error) {
    const toml::source_position& at = error.source().begin;
    return makeError(origin + ":" + std::to_string(at.line) + ":" + std::to_string(at.column) +
                     ": " + std::string(error.description()));
  }
  std::vector<ConfigEntry> entries;
  std::vector<std::string> parents;
  MLGO_TRY(collect(root, parents, entries, origin));
  return entries;
}

Expected<ConfigValues> parseFlatToml(std::string_view text, const std::string& origin) {
  MLGO_ASSIGN_OR_RETURN(std::vector<ConfigEntry> entries, parseToml(text, origin));
  ConfigValues values;
  for (ConfigEntry& entry : entries) {
    if (!entry.parents.empty())
      return makeError(origin + ": key '" + entry.parents.front() +
                       "': a section, where only flat options are read");
    values.emplace_back(std::move(entry.name), std::move(entry.values));
  }
  return values;
}

} // namespace mlgo
