// npacd's configuration file (--config npacd.toml): the same settings as the command line,
// one `name = value` per line in TOML (https://toml.io/en/v1.0.0). The command line wins
// over the file (CLI11 fills from the file only what the command line left unset).
//
// CLI11's own TOML reader is lenient — an unknown key is ignored or reported without its
// line, a bare word reads as a flag set to true, "1__2" reaches the option unexplained,
// escapes such as \" are kept as typed, a NUL cuts a path short. So npacd reads the file
// itself (readConfigText) and hands CLI11 only checked, decoded settings. It reads the part
// of TOML that flat settings need:
//   key = value     at the top level, a bare key naming a long option without "--"
//   "basic"         a string, escapes \b \t \n \f \r \" \\ \uXXXX \UXXXXXXXX decoded
//   'literal'       a string taken as written
//   42, +42, 1_000  a decimal integer (an underscore only between two digits)
//   true, false     a flag
//   # comment       on a line of its own or after the value
// and refuses with "FILE:LINE: reason", naming the key: a key that is no option, a key
// given twice, a section or any other TOML construct, a value of the wrong kind, a control
// character other than a tab anywhere in a line (a NUL included), an unknown escape, a
// string decoding to a NUL — and a value its option refuses: every value goes through the
// option's own checks (CLI::Validator), the same that check the command line (ranges of
// config.h kNumberOptions, durations, names, endpoints). So a refused value stops npacd
// before anything is created on disk.
//
// Only a regular file of at most kMaxConfigFileBytes is read: a FIFO or a device
// (/dev/zero) is refused as --config is parsed (checkConfigFile), and the reader stops at
// the bound whatever it is handed.
//
// Threading: used once at start-up on the main thread.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "common/status.h"

namespace npac::npacd {

// The largest configuration file npacd reads; the shipped one is about 3 KiB.
inline constexpr std::size_t kMaxConfigFileBytes = std::size_t{1} << 20;

// One key the file may set: an option's long name without "--", what it takes, and the
// option's own checks (which may normalise the value: "010" becomes "10").
struct ConfigKey {
  enum class Kind { kFlag, kInteger, kText };
  std::string name;
  Kind kind = Kind::kText;
  std::vector<CLI::Validator> checks;
};

// One setting read from the file: the key, its value decoded and checked (a flag's
// "true"/"false", an integer's decimal digits, a string's characters), and its line.
struct ConfigSetting {
  std::string key;
  std::string value;
  int line = 0;
};

// The keys of every configurable option of `app` (not --help, --version, --config), with
// their checks. An option whose CLI11 type is an integer (INT, UINT) takes an integer.
std::vector<ConfigKey> configKeysOf(CLI::App& app);

// Reads the text of a configuration file: one setting per key set, or kBadDocument with
// the message "FILE:LINE: reason" for the first line that is refused.
Result<std::vector<ConfigSetting>> readConfigText(const std::string& file, const std::string& text,
                                                  const std::vector<ConfigKey>& keys);

// Why `path` cannot be read as a configuration file ("" when it can): it does not exist,
// cannot be examined, is not a regular file (a directory, FIFO, socket or device), or is
// larger than kMaxConfigFileBytes. --config's check, run as the option is parsed — before
// CLI11 opens the file, which on a FIFO would wait for a writer forever.
std::string checkConfigFile(const std::string& path);

// The configuration reader npacd gives CLI11: readConfigText() over at most
// kMaxConfigFileBytes of the stream; throws CLI::ConfigError with its message. `file`
// names the file in messages (CLI11 hands the reader a stream).
class CheckedTomlConfig final : public CLI::ConfigTOML {
 public:
  CheckedTomlConfig(CLI::App& app, const CLI::Option* config_option) : app_(app), config_option_(config_option) {}
  std::vector<CLI::ConfigItem> from_config(std::istream& input) const override;

 private:
  CLI::App& app_;
  const CLI::Option* config_option_;
};

}  // namespace npac::npacd
