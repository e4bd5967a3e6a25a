#include "npac/npacd/logging.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <vector>

#include <nlohmann/json.hpp>
#include <spdlog/sinks/rotating_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/sinks/systemd_sink.h>
#include <spdlog/spdlog.h>

#include "npac/npacd/config.h"

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

// spdlog opens its files with fopen, which creates them with the process umask (0644, or
// 0666 under umask 000: anyone could append a forged line). Called before every open, the
// first and each one after a rotation: a file that does not exist yet is created here,
// owner-only like the database (docs/DATABASE.md "File modes"), and spdlog then opens the
// existing file. A file that exists keeps its mode.
void createOwnerOnly(const spdlog::filename_t& file) {
  const std::filesystem::path path(file);
  std::error_code ignored;
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), ignored);
  const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOCTTY, 0600);
  if (fd >= 0) ::close(fd);  // a failure is spdlog's to report: its own open fails the same way
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

// Why `options` (its level aside) cannot be used, or "".
std::string checkLogOptions(const LogOptions& options) {
  if (options.format != "text" && options.format != "json") {
    return "--log-format must be text or json, got '" + options.format + "'";
  }
  if (options.target != "stdout" && options.target != "journal") {
    return "--log-target must be stdout or journal, got '" + options.target + "'";
  }
  if (!options.file.empty() && options.target == "journal") {
    return "--log-file and --log-target journal exclude each other: choose one";
  }
  // The options' own checks refuse these as they are parsed; a caller that sets them
  // itself gets the same answer.
  for (const auto& [name, value] : {std::pair{"log-max-size", options.max_size},
                                    std::pair{"log-max-files", options.max_files}}) {
    std::uint64_t checked = 0;
    const std::string text = std::to_string(value);
    if (std::string why = parseInteger(text, *numberRangeOf(name), &checked); !why.empty()) {
      return "--" + std::string(name) + " " + why;
    }
  }
  return "";
}

// The sink `options` name: the rotated file, the journal or stdout; kCannotOpenFile when
// it cannot be opened.
Result<spdlog::sink_ptr> makeSink(const LogOptions& options) {
  try {
    if (!options.file.empty()) {
      spdlog::file_event_handlers owner_only;
      owner_only.before_open = createOwnerOnly;
      return spdlog::sink_ptr(std::make_shared<spdlog::sinks::rotating_file_sink_mt>(
          options.file, options.max_size, options.max_files, false, owner_only));
    }
    if (options.target == "journal") {
      // sd_journal_send drops every line silently where no journal listens (libsystemd
      // answers 0 for a missing socket): refuse to start rather than lose them all.
      if (std::string why = journalUnreachable(); !why.empty()) {
        return Status::error(StatusCode::kCannotOpenFile,
                             "--log-target journal: the systemd journal does not take messages (" + why +
                                 "; is systemd-journald running?)");
      }
      // The journal keeps its own time and level (PRIORITY=): the message alone.
      return spdlog::sink_ptr(std::make_shared<spdlog::sinks::systemd_sink_mt>());
    }
    return spdlog::sink_ptr(std::make_shared<spdlog::sinks::stdout_sink_mt>());
  } catch (const spdlog::spdlog_ex& e) {
    return Status::error(StatusCode::kCannotOpenFile, "--log-file " + options.file + ": " + e.what());
  }
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

Status setUpLogging(const LogOptions& options) {
  const auto level = parseLogLevel(options.level);
  if (!level) {
    return Status::badOption("--log-level must be one of " + std::string(logLevelNames()) + ", got '" +
                             options.level + "'");
  }
  if (std::string why = checkLogOptions(options); !why.empty()) return Status::badOption(why);
  Result<spdlog::sink_ptr> sink = makeSink(options);
  if (!sink.isOk()) return sink.status();
  auto logger = std::make_shared<spdlog::logger>(kLoggerName, std::move(sink).value());
  if (options.format == "json") logger->set_formatter(std::make_unique<JsonLogFormatter>());
  logger->set_level(*level);
  // Every line reaches its file at once: an operator tails the log while the trouble
  // happens, and npacd logs little outside start-up, changes and failures.
  logger->flush_on(spdlog::level::trace);
  spdlog::set_default_logger(logger);
  // A file from before npacd created them 0600 (or one made by hand) keeps its mode; say
  // so when others can write into it.
  struct stat file_stat {};
  if (!options.file.empty() && ::stat(options.file.c_str(), &file_stat) == 0 && (file_stat.st_mode & 022) != 0) {
    spdlog::warn("--log-file {} can be written by other users (mode {:04o}): anyone may add lines to it; "
                 "chmod 600 it", options.file, file_stat.st_mode & 07777);
  }
  return Status();
}

spdlog::level::level_enum currentLogLevel() { return spdlog::default_logger_raw()->level(); }

void setLogLevel(spdlog::level::level_enum level) { spdlog::default_logger_raw()->set_level(level); }

}  // namespace npac::npacd
