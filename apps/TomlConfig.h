// --config files read by toml++ (a strict TOML parser, through support's
// parseToml) instead of CLI11's lenient reader, which accepted `sigma =
// [1,2` as `sigma = 1`. Errors name the file, line and column; keys no
// option knows are errors too (set CLI::config_extras_mode::error, which
// useStrictTomlConfig does).
#pragma once

#include <CLI/CLI.hpp>

namespace mlgo::apps {

class TomlConfig : public CLI::ConfigTOML {
public:
  explicit TomlConfig(const CLI::App* app) : app_(app) {}
  std::vector<CLI::ConfigItem> from_config(std::istream& input) const override;

private:
  const CLI::App* app_; // for the config file's name in errors
};

// Call before adding subcommands (they inherit the settings).
void useStrictTomlConfig(CLI::App& app);

} // namespace mlgo::apps
