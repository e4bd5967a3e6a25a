#include "npac/npacd/logging.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <vector>

#include <nlohmann/json.hpp>
#include <spdlog/sinks/rotating_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/sinks/systemd_sink.h>
#include <spdlog/spdlog.h>

namespace npac::npacd {

namespace {

constexpr const char* kLoggerName = "npacd";

// Where journald takes native-protocol datagrams (systemd-journald.socket, the path
// sd_journal_send writes to).
constexpr const char* kJournalSocket = "/run/systemd/journal/socket";

// "" if a datagram socket connects to the journal's socket; else why not.
std::string journalUnreachable() {
  const int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return std::string("socket: ") + std::strerror(errno);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, kJournalSocket, sizeof address.sun_path - 1);
  std::string why;
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
    why = std::string(kJournalSocket) + ": " + std::strerror(errno);
  }
  ::close(fd);
  return why;
}

std::string utcTimestamp(spdlog::log_clock::time_point when) {
  const auto since_epoch = when.time_since_epoch();
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(since_epoch);
  const auto millis = std::chrono::duration_cast<std::chrono::milliseconds>(since_epoch - seconds).count();
  const std::time_t t = static_cast<std::time_t>(seconds.count());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[40];
  const std::size_t n = std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  std::snprintf(buf + n, sizeof buf - n, ".%03lldZ", static_cast<long long>(millis));
  return buf;
}

}  // namespace

std::optional<spdlog::level::level_enum> parseLogLevel(const std::string& name) {
  if (name == "warning") return spdlog::level::warn;
  // spdlog::level::from_str answers "off" for any name it does not know: check the names.
  for (int l = spdlog::level::trace; l < spdlog::level::n_levels; ++l) {
    const auto level = static_cast<spdlog::level::level_enum>(l);
    if (name == logLevelName(level)) return level;
  }
  return std::nullopt;
}

std::string logLevelName(spdlog::level::level_enum level) {
  if (level == spdlog::level::warn) return "warn";
  const auto name = spdlog::level::to_string_view(level);
  return std::string(name.data(), name.size());
}

const char* logLevelNames() { return "trace, debug, info, warn, error, critical, off"; }

void JsonLogFormatter::format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) {
  // ordered_json: the fields in the order a reader scans them (time first).
  nlohmann::ordered_json line{{"time", utcTimestamp(msg.time)},
                      {"level", logLevelName(msg.level)},
                      {"logger", std::string(msg.logger_name.data(), msg.logger_name.size())},
                      {"message", std::string(msg.payload.data(), msg.payload.size())}};
  const std::string text = line.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
  dest.append(text.data(), text.data() + text.size());
  dest.push_back('\n');
}

std::unique_ptr<spdlog::formatter> JsonLogFormatter::clone() const {
  return std::make_unique<JsonLogFormatter>();
}

bool setUpLogging(const LogOptions& options, std::string* error) {
  const auto level = parseLogLevel(options.level);
  if (!level) {
    *error = "--log-level must be one of " + std::string(logLevelNames()) + ", got '" + options.level + "'";
    return false;
  }
  if (options.format != "text" && options.format != "json") {
    *error = "--log-format must be text or json, got '" + options.format + "'";
    return false;
  }
  if (options.target != "stdout" && options.target != "journal") {
    *error = "--log-target must be stdout or journal, got '" + options.target + "'";
    return false;
  }
  if (!options.file.empty() && options.target == "journal") {
    *error = "--log-file and --log-target journal exclude each other: choose one";
    return false;
  }
  if (options.max_size == 0) {
    *error = "--log-max-size must be at least 1 byte";
    return false;
  }
  spdlog::sink_ptr sink;
  try {
    if (!options.file.empty()) {
      sink = std::make_shared<spdlog::sinks::rotating_file_sink_mt>(options.file, options.max_size,
                                                                   options.max_files);
    } else if (options.target == "journal") {
      // sd_journal_send drops every line silently where no journal listens (libsystemd
      // answers 0 for a missing socket): refuse to start rather than lose them all.
      if (std::string why = journalUnreachable(); !why.empty()) {
        *error = "--log-target journal: the systemd journal does not take messages (" + why +
                 "; is systemd-journald running?)";
        return false;
      }
      // The journal keeps its own time and level (PRIORITY=): the message alone.
      sink = std::make_shared<spdlog::sinks::systemd_sink_mt>();
    } else {
      sink = std::make_shared<spdlog::sinks::stdout_sink_mt>();
    }
  } catch (const spdlog::spdlog_ex& e) {
    *error = "--log-file " + options.file + ": " + e.what();
    return false;
  }
  auto logger = std::make_shared<spdlog::logger>(kLoggerName, sink);
  if (options.format == "json") logger->set_formatter(std::make_unique<JsonLogFormatter>());
  logger->set_level(*level);
  // Every line reaches its file at once: an operator tails the log while the trouble
  // happens, and npacd logs little outside start-up, changes and failures.
  logger->flush_on(spdlog::level::trace);
  spdlog::set_default_logger(logger);
  return true;
}

spdlog::level::level_enum currentLogLevel() { return spdlog::default_logger_raw()->level(); }

void setLogLevel(spdlog::level::level_enum level) { spdlog::default_logger_raw()->set_level(level); }

}  // namespace npac::npacd
