// npacd's logging set-up: where the log goes (stdout, a rotating file, or the systemd
// journal), its format (spdlog's text pattern, or one JSON object per line) and its level.
// setUpLogging() installs the result as spdlog's default logger "npacd", which every
// spdlog::info/... call in the server writes through.
//
// Threading: call setUpLogging() once at start-up, before any other thread logs. The sinks
// are spdlog's thread-safe (_mt) sinks, and the level is an atomic of the logger, so
// setLogLevel() and currentLogLevel() are safe from any thread (the admin API calls them on
// its thread: PUT/GET /v1/log-level).
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>

#include <spdlog/common.h>
#include <spdlog/formatter.h>

#include "common/status.h"

namespace npac::npacd {

enum class LogFormat { kText, kJson };

struct LogOptions {
  std::string level = "info";   // trace, debug, info, warn, error, critical, off
  std::string format = "text";  // text | json
  std::string target = "stdout";  // stdout | journal
  std::string file;             // non-empty: a rotating file instead of the target
  std::size_t max_size = 100 * 1024 * 1024;  // bytes per file before it rotates
  std::size_t max_files = 5;                 // rotated files kept beside the live one
};

// The level named `name` (the names of --log-level; "warning" is accepted for warn), or
// nullopt.
std::optional<spdlog::level::level_enum> parseLogLevel(const std::string& name);
// The --log-level name of `level`: "warn" where spdlog itself says "warning".
std::string logLevelName(spdlog::level::level_enum level);
// "trace, debug, info, warn, error, critical, off": for messages.
const char* logLevelNames();

// Validates `options` and installs the logger. A Status whose message says why, naming
// the flag: kBadOption on a bad level, format or target, --log-file together with
// --log-target journal, a --log-max-size or --log-max-files outside its range (config.h
// kNumberOptions); kCannotOpenFile for a log file that cannot be opened or a journal that
// takes no messages. A log file npacd creates — the first one, and each new
// one after a rotation — is owner-only (0600) whatever the umask; an existing one keeps
// its mode.
Status setUpLogging(const LogOptions& options);

// The default logger's level, and a change of it (takes effect at once on every thread).
spdlog::level::level_enum currentLogLevel();
void setLogLevel(spdlog::level::level_enum level);

// One JSON object per line: {"time":"2026-12-01T16:02:41.123Z","level":"info",
// "logger":"npacd","message":"..."}; the message escaped by nlohmann::json (RFC 8259 §7),
// bytes that are not UTF-8 replaced by U+FFFD so a line always parses.
class JsonLogFormatter final : public spdlog::formatter {
 public:
  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override;
  std::unique_ptr<spdlog::formatter> clone() const override;
};

}  // namespace npac::npacd
