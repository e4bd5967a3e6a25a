// Time on the database paths.
//
// Every stored time is an integer count of milliseconds since 1970-01-01T00:00:00Z (UTC),
// in a column named *_at. Integers sort, compare and index cheaply, survive any locale,
// and `datetime(x/1000, 'unixepoch')` renders them for an operator in the sqlite3 shell.
// Stores never read a clock: callers pass the instant (explicit `at` parameters), and
// components that stamp rows themselves (QueueWriter) take a Clock, so tests are exact.
#pragma once

#include <cstdint>
#include <functional>

#include "common/time_source.h"

namespace npac::db {

using TimeMs = std::int64_t;  // milliseconds since the Unix epoch, UTC

// Returns "now" in TimeMs. Must be callable from any thread.
using Clock = std::function<TimeMs()>;

// `source`'s wall time in TimeMs; `source` must outlive the Clock.
Clock clockOf(const common::TimeSource& source);

// The process's real time source's wall time (common::realTimeSource()).
Clock systemClock();

}  // namespace npac::db
