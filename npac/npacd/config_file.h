// npacd's configuration file (--config npacd.toml): the same settings as the command line,
// one `name = value` per line in TOML (https://toml.io/en/v1.0.0), read by CLI11. The
// command line wins over the file (CLI11 fills from the file only what the command line
// left unset).
//
// CLI11 alone is lenient — an unknown key is ignored or reported without its line, a bare
// word reads as a flag set to true, a value of the wrong type is reported without the file.
// CheckedTomlConfig checks the whole file first, line by line, and refuses with
// "FILE:LINE: reason" naming the key: a key that is no option, a section, a key given
// twice, a string without its closing quote, an unquoted string, a flag that is not
// true/false, a number option that is not an integer. What it lets through CLI11 reads as
// usual.
//
// Threading: used once at start-up on the main thread.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace npac::npacd {

// One key the file may set: an option's long name without "--", and what it takes.
struct ConfigKey {
  enum class Kind { kFlag, kInteger, kText };
  std::string name;
  Kind kind = Kind::kText;
};

// The keys of every configurable option of `app` (not --help, --version, --config).
std::vector<ConfigKey> configKeysOf(const CLI::App& app);

// Checks the text of a configuration file. False and *error = "FILE:LINE: reason" on the
// first line that is refused.
bool checkConfigText(const std::string& file, const std::string& text, const std::vector<ConfigKey>& keys,
                     std::string* error);

// CLI11's TOML reader with checkConfigText() in front; throws CLI::ConfigError with the
// checker's message. `file` names the file in messages (CLI11 hands the reader a stream).
class CheckedTomlConfig final : public CLI::ConfigTOML {
 public:
  CheckedTomlConfig(const CLI::App& app, const CLI::Option* config_option)
      : app_(app), config_option_(config_option) {}
  std::vector<CLI::ConfigItem> from_config(std::istream& input) const override;

 private:
  const CLI::App& app_;
  const CLI::Option* config_option_;
};

}  // namespace npac::npacd
