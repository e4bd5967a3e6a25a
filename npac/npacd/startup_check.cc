#include "npac/npacd/startup_check.h"

#include <chrono>
#include <filesystem>

#include <spdlog/spdlog.h>

#include "db/database.h"
#include "db/postgres_connection.h"

namespace npac::npacd {

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

std::string checkDatabaseAtStart(const std::string& path, StartupCheck mode, std::int64_t auto_limit_bytes) {
  if (mode == StartupCheck::kOff || db::isPostgresUrl(path)) return "";
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return "";  // a new database is created at open
  const auto bytes = static_cast<std::int64_t>(std::filesystem::file_size(path, ec));
  if (ec) return "";  // open() names what is wrong with the path
  if (mode == StartupCheck::kAuto && bytes > auto_limit_bytes) {
    spdlog::info("database {}: {} MiB, larger than the {} MiB --check-db auto checks at start: not checked "
                 "(npacd --check-db quick checks it anyway)",
                 path, bytes >> 20, auto_limit_bytes >> 20);
    return "";
  }
  db::OpenOptions options;
  options.apply_schema = false;  // read as it is: nothing is written before it is checked
  options.create_if_missing = false;
  auto opened = db::Database::open(path, options);
  if (!opened.isOk()) return "";  // the real open() refuses it with the reason
  const auto started = std::chrono::steady_clock::now();
  const auto depth = mode == StartupCheck::kFull ? db::Database::CheckDepth::kFull : db::Database::CheckDepth::kQuick;
  auto problems = (*opened)->integrityCheck(depth);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  const char* pragma = depth == db::Database::CheckDepth::kFull ? "integrity_check" : "quick_check";
  std::string found;
  if (!problems.isOk()) {
    found = problems.status().toString();
  } else {
    for (std::size_t i = 0; i < problems->size() && i < 10; ++i) found += "\n  " + (*problems)[i];
    if (problems->size() > 10) found += "\n  … " + std::to_string(problems->size() - 10) + " more";
  }
  if (found.empty()) {
    spdlog::info("database {}: PRAGMA {} found no damage ({} MiB in {:.2f} s)", path, pragma, bytes >> 20, seconds);
    return "";
  }
  return "the database " + path + " is damaged (PRAGMA " + pragma + "):" + found +
         "\nnpacd does not start on it: restore the latest backup (docs/OPERATIONS.md \"Backup, restore and "
         "upgrade\"), or copy what can be read with sqlite3 " + path +
         " .recover; --check-db off starts anyway, at the risk of losing what the damaged pages hold";
}

}  // namespace npac::npacd
