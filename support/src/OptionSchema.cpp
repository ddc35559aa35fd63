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

Expected<ConfigValues> parseFlatToml(std::string_view text, const std::string& origin) {
  toml::table root;
  try {
    root = toml::parse(text, origin);
  } catch (const toml::parse_error& error) {
    const toml::source_position& at = error.source().begin;
    return makeError(origin + ":" + std::to_string(at.line) + ":" + std::to_string(at.column) +
                     ": " + std::string(error.description()));
  }
  ConfigValues values;
  for (const auto& [key, node] : root) {
    std::string name(key.str());
    std::vector<std::string> texts;
    if (const toml::array* array = node.as_array()) {
      for (const toml::node& element : *array) {
        std::optional<std::string> t = scalarText(element);
        if (!t)
          return makeError(origin + ": key '" + name +
                           "': arrays may hold only strings, numbers or booleans");
        texts.push_back(std::move(*t));
      }
    } else if (std::optional<std::string> t = scalarText(node)) {
      texts.push_back(std::move(*t));
    } else {
      return makeError(origin + ": key '" + name + "': not a flat option (a table, date or time)");
    }
    values.emplace_back(std::move(name), std::move(texts));
  }
  return values;
}

} // namespace mlgo
