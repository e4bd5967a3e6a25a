// libFuzzer target: npacd's configuration file (npac/npacd/config_file.h) against npacd's
// real options (command_line.h), each with its range or check. Any bytes go through the
// reader; a refusal must name the file and line. Text the reader accepts must then be
// accepted by CLI11 as npacd applies it at start (App::parse_from_stream through
// CheckedTomlConfig), and every number option must hold a value inside its range
// (config.h kNumberOptions) — never a -1 wrapped into "no limit". A refusal is an answer;
// a crash, a hang, an unbounded allocation or a broken property is a finding.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "npac/npacd/command_line.h"
#include "npac/npacd/config_file.h"

namespace {

using namespace npac::npacd;

// The fields npacd reads its number options from, by option name.
std::vector<std::pair<std::string_view, const std::size_t*>> numberFields(const NpacdCommandLine& line) {
  return {{"api-max-connections", &line.config.api_max_connections},
          {"api-operator-reserve", &line.config.api_operator_reserve},
          {"api-max-per-client", &line.config.api_max_per_client},
          {"api-max-per-token", &line.config.api_max_per_token},
          {"threads", &line.config.core_threads},
          {"log-max-size", &line.log.max_size},
          {"log-max-files", &line.log.max_files}};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > kMaxConfigFileBytes) return 0;  // the reader refuses such a file before reading it
  const std::string text(reinterpret_cast<const char*>(data), size);

  CLI::App app;
  NpacdCommandLine line;
  declareNpacdOptions(app, line);
  const std::vector<ConfigKey> keys = configKeysOf(app);
  npac::Result<std::vector<ConfigSetting>> read = readConfigText("fuzz.toml", text, keys);
  if (!read.isOk()) {
    if (read.status().code() != npac::StatusCode::kBadDocument) __builtin_trap();
    if (read.status().message().rfind("fuzz.toml:", 0) != 0) __builtin_trap();  // every refusal names the file and line
    return 0;
  }
  for (const ConfigSetting& setting : read.value()) {
    if (setting.value.find('\0') != std::string::npos) __builtin_trap();  // a NUL never reaches an option
    if (const auto range = numberRangeOf(setting.key)) {
      std::uint64_t value = 0;
      if (!parseInteger(setting.value, *range, &value).empty()) __builtin_trap();
      if (std::to_string(value) != setting.value) __builtin_trap();  // plain decimal digits only
    }
  }

  // What npacd does with an accepted file: CLI11 applies it through the same reader.
  std::istringstream input(text);
  try {
    app.parse_from_stream(input);
  } catch (const CLI::Error&) {
    __builtin_trap();  // accepted by the reader, refused by CLI11: the two disagree
  }
  for (const auto& [name, field] : numberFields(line)) {
    const IntegerRange range = *numberRangeOf(name);
    if (*field < range.min || *field > range.max) __builtin_trap();
  }
  return 0;
}
