#include "npac/npacd/startup_check.h"

#include <sqlite3.h>

#include <chrono>
#include <filesystem>
#include <vector>

#include <spdlog/spdlog.h>

#include "db/postgres_connection.h"

namespace npac::npacd {
namespace {

// SQLite's own list of problems (empty: sound), or why the check itself failed (a file
// too damaged to read is damaged too). The file is opened as it is — no journal mode
// set, nothing created, nothing written — before db::Database opens it for use.
std::vector<std::string> sqliteCheck(const std::string& path, bool full) {
  sqlite3* handle = nullptr;
  std::vector<std::string> problems;
  int rc = sqlite3_open_v2(path.c_str(), &handle, SQLITE_OPEN_READWRITE, nullptr);
  if (rc == SQLITE_OK) {
    sqlite3_busy_timeout(handle, 5000);
    sqlite3_stmt* check = nullptr;
    rc = sqlite3_prepare_v2(handle, full ? "PRAGMA integrity_check" : "PRAGMA quick_check", -1, &check, nullptr);
    while (rc == SQLITE_OK && (rc = sqlite3_step(check)) == SQLITE_ROW) {
      const auto* line = reinterpret_cast<const char*>(sqlite3_column_text(check, 0));
      if (line != nullptr && std::string_view(line) != "ok") problems.emplace_back(line);
      rc = SQLITE_OK;
    }
    sqlite3_finalize(check);
    // Not an SQLite database at all (another application's file): Database::open()
    // refuses it with its own explanation.
    if (rc != SQLITE_DONE && rc != SQLITE_OK && (rc & 0xff) != SQLITE_NOTADB) {
      problems.push_back(std::string("SQLite: ") + sqlite3_errmsg(handle));
    }
  } else {
    problems.push_back(std::string("SQLite cannot open it: ") + sqlite3_errstr(rc));
  }
  sqlite3_close_v2(handle);
  return problems;
}

}  // namespace

std::optional<StartupCheck> parseStartupCheck(std::string_view text) {
  if (text == "auto") return StartupCheck::kAuto;
  if (text == "quick") return StartupCheck::kQuick;
  if (text == "full") return StartupCheck::kFull;
  if (text == "off") return StartupCheck::kOff;
  return std::nullopt;
}

const char* toString(StartupCheck check) {
  switch (check) {
    case StartupCheck::kAuto: return "auto";
    case StartupCheck::kQuick: return "quick";
    case StartupCheck::kFull: return "full";
    case StartupCheck::kOff: return "off";
  }
  return "?";
}

std::string checkDatabaseAtStart(const std::string& path, StartupCheck mode, const common::TimeSource& time,
                                 std::int64_t auto_limit_bytes) {
  if (mode == StartupCheck::kOff || db::isPostgresUrl(path)) return "";
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return "";  // new, or open() names what is wrong
  const auto bytes = static_cast<std::int64_t>(std::filesystem::file_size(path, ec));
  if (ec || bytes == 0) return "";  // open() refuses an empty file with its own reason
  if (mode == StartupCheck::kAuto && bytes > auto_limit_bytes) {
    spdlog::info("database {}: {} MiB, larger than the {} MiB --check-db auto checks at start: not checked "
                 "(npacd --check-db quick checks it anyway)",
                 path, bytes >> 20, auto_limit_bytes >> 20);
    return "";
  }
  const bool full = mode == StartupCheck::kFull;
  const char* pragma = full ? "integrity_check" : "quick_check";
  const auto started = time.now();
  const std::vector<std::string> problems = sqliteCheck(path, full);
  const double seconds = std::chrono::duration<double>(time.now() - started).count();
  if (problems.empty()) {
    spdlog::info("database {}: PRAGMA {} found no damage ({} MiB in {:.2f} s)", path, pragma, bytes >> 20, seconds);
    return "";
  }
  std::string found;
  for (std::size_t i = 0; i < problems.size() && i < 10; ++i) found += "\n  " + problems[i];
  if (problems.size() > 10) found += "\n  … " + std::to_string(problems.size() - 10) + " more";
  return "the database " + path + " is damaged (PRAGMA " + pragma + "):" + found +
         "\nnpacd does not start on it: restore the latest backup (docs/OPERATIONS.md \"Backup, restore and "
         "upgrade\"), or copy what can be read with sqlite3 " + path +
         " .recover; --check-db off starts anyway, at the risk of losing what the damaged pages hold";
}

}  // namespace npac::npacd
