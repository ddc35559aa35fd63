#include "TomlConfig.h"

#include "mlgo/support/OptionSchema.h"

#include <iterator>

namespace mlgo::apps {

namespace {

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

} // namespace

std::vector<CLI::ConfigItem> TomlConfig::from_config(std::istream& input) const {
  std::string file = "--config";
  if (const CLI::Option* option = app_->get_config_ptr(); option && option->count() > 0)
    file = option->as<std::string>();
  std::string text{std::istreambuf_iterator<char>(input), std::istreambuf_iterator<char>()};
  Expected<std::vector<ConfigEntry>> entries = parseToml(text, file);
  if (!entries)
    throw CLI::ConfigError(entries.error().message);
  std::vector<CLI::ConfigItem> items;
  for (ConfigEntry& entry : *entries) {
    checkKnown(app_, entry.parents, entry.name, file);
    CLI::ConfigItem item;
    item.parents = std::move(entry.parents);
    item.name = std::move(entry.name);
    item.inputs = std::move(entry.values);
    items.push_back(std::move(item));
  }
  return items;
}

void useStrictTomlConfig(CLI::App& app) {
  app.config_formatter(std::make_shared<TomlConfig>(&app));
  app.allow_config_extras(CLI::config_extras_mode::error);
}

} // namespace mlgo::apps
