// The check of npacd's SQLite file at start (--check-db; docs/DATABASE.md "Checking the
// file at start"): a file with a damaged page must be refused before npacd reports ready,
// not found out when a request first touches the page (500 "database corrupt") or, worse,
// when delivery reads the damaged rows.
//
// The cost is bounded: PRAGMA quick_check reads every page once (every b-tree and page
// format, not whether each index matches its table); `auto`, the default, runs it on files
// up to kAutoCheckLimitBytes and says in the log that a larger file was not checked and
// how to check it. `quick` always runs it, `full` runs PRAGMA integrity_check (indexes
// too, several times slower), `off` none. PostgreSQL checks its own pages (data
// checksums, pg_amcheck): nothing is done there.
//
// Threading: called once from main before any other connection opens the file.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/time_source.h"

namespace npac::npacd {

enum class StartupCheck { kAuto, kQuick, kFull, kOff };

inline constexpr std::int64_t kAutoCheckLimitBytes = std::int64_t{1} << 30;  // 1 GiB

std::optional<StartupCheck> parseStartupCheck(std::string_view text);  // auto quick full off
const char* toString(StartupCheck check);

// "" when the file at `path` is sound, does not exist yet, is PostgreSQL, or was not
// checked (the log says why); else why npacd refuses it, naming the problems SQLite found
// and what an operator does about it. `time` times the check for the log line.
std::string checkDatabaseAtStart(const std::string& path, StartupCheck mode, const common::TimeSource& time,
                                 std::int64_t auto_limit_bytes = kAutoCheckLimitBytes);

}  // namespace npac::npacd
