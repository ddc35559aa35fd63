#include "TomlConfig.h"

#include <toml++/toml.h>

#include <charconv>

namespace mlgo::apps {

namespace {

// One TOML value as the string CLI11 would have read from a command line.
std::optional<std::string> scalarText(const toml::node& node) {
  if (const auto* text = node.as_string())
    return text->get();
  if (const auto* integer = node.as_integer())
    return std::to_string(integer->get());
  if (const auto* boolean = node.as_boolean())
    return boolean->get() ? "true" : "false";
  if (const auto* number = node.as_floating_point()) {
    // The shortest text that reads back as the same double ("0.1", not
    // "0.10000000000000001"): the effective config shows it.
    char buffer[32];
    auto [end, error] = std::to_chars(buffer, buffer + sizeof buffer, number->get());
    return std::string(buffer, error == std::errc() ? end : buffer);
  }
  return std::nullopt;
}

// The (sub)command a section names, or null.
const CLI::App* commandAt(const CLI::App* app, const std::vector<std::string>& parents) {
  for (const std::string& name : parents) {
    try {
      app = app->get_subcommand_ptr(name).get();
    } catch (const CLI::OptionNotFound&) {
      return nullptr;
    }
    if (!app)
      return nullptr;
  }
  return app;
}

// CLI11 would say "INI was not able to parse sigam": name the file, the
// section and the key.
void checkKnown(const CLI::App* root, const std::vector<std::string>& parents,
                const std::string& name, const std::string& file) {
  const CLI::App* command = commandAt(root, parents);
  if (!command)
    return; // CLI11 reports sections it does not know
  for (const std::string& spelling : {"--" + name, "-" + name, name})
    if (command->get_option_no_throw(spelling))
      return;
  std::string section;
  for (const std::string& parent : parents)
    section += "[" + parent + "] ";
  throw CLI::ConfigError(file + ": unknown key " + section + "'" + name + "' (no option --" + name +
                         "; see --help)");
}

void collect(const toml::table& table, std::vector<std::string>& parents,
             std::vector<CLI::ConfigItem>& items, const std::string& file, const CLI::App* root) {
  for (const auto& [key, node] : table) {
    std::string name(key.str());
    std::string where = file + ": key '" + name + "'";
    if (const toml::table* section = node.as_table()) {
      parents.push_back(name);
      collect(*section, parents, items, file, root);
      parents.pop_back();
      continue;
    }
    checkKnown(root, parents, name, file);
    CLI::ConfigItem item;
    item.parents = parents;
    item.name = name;
    if (const toml::array* values = node.as_array()) {
      for (const toml::node& element : *values) {
        std::optional<std::string> text = scalarText(element);
        if (!text)
          throw CLI::ConfigError(where + ": arrays may hold only strings, numbers or booleans");
        item.inputs.push_back(*text);
      }
    } else if (std::optional<std::string> text = scalarText(node)) {
      item.inputs.push_back(*text);
    } else {
      throw CLI::ConfigError(where + ": unsupported value (dates and times are not options)");
    }
    items.push_back(std::move(item));
  }
}

} // namespace

std::vector<CLI::ConfigItem> TomlConfig::from_config(std::istream& input) const {
  std::string file = "--config";
  if (const CLI::Option* option = app_->get_config_ptr(); option && option->count() > 0)
    file = option->as<std::string>();
  toml::table root;
  try {
    root = toml::parse(input, file);
  } catch (const toml::parse_error& error) {
    const toml::source_position& at = error.source().begin;
    throw CLI::ConfigError(file + ":" + std::to_string(at.line) + ":" + std::to_string(at.column) +
                           ": " + std::string(error.description()));
  }
  std::vector<CLI::ConfigItem> items;
  std::vector<std::string> parents;
  collect(root, parents, items, file, app_);
  return items;
}

void useStrictTomlConfig(CLI::App& app) {
  app.config_formatter(std::make_shared<TomlConfig>(&app));
  app.allow_config_extras(CLI::config_extras_mode::error);
}

} // namespace mlgo::apps
