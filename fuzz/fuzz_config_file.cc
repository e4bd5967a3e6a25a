// libFuzzer target: npacd's configuration file (npac/npacd/config_file.h). Any bytes go
// through the line-by-line checker against a key set with each kind (flag, integer,
// text); text the checker accepts is then read by CLI11's TOML reader, as npacd does at
// start. A refusal is an answer (false with "FILE:LINE: reason", or CLI::ConfigError),
// never a crash, a hang or an unbounded allocation.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "npac/npacd/config_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::vector<npac::npacd::ConfigKey> keys = {
      {"db", npac::npacd::ConfigKey::Kind::kText},
      {"init", npac::npacd::ConfigKey::Kind::kFlag},
      {"log-max-files", npac::npacd::ConfigKey::Kind::kInteger},
  };
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::string error;
  if (!npac::npacd::checkConfigText("fuzz.toml", text, keys, &error)) {
    if (error.rfind("fuzz.toml:", 0) != 0) __builtin_trap();  // every refusal names the file
    return 0;
  }
  std::istringstream input(text);
  try {
    (void)CLI::ConfigTOML().from_config(input);
  } catch (const CLI::Error&) {
    // CLI11's own refusal of what the checker let through: an answer, not a crash.
  }
  return 0;
}
