// UTC timestamps as the admin API, the audit log and the logs print them:
// "2026-11-29T15:00:00.000Z" (RFC 3339, milliseconds, always UTC).
//
// In common/ so that a lower layer (npac/npacd/npac_keys.cc writing an audit entry) need
// not reach up into the API's JSON vocabulary for it. Parsing stays with the API
// (api/json.h parseTime), the one place that reads a time from a person.
//
// Threading: pure function; safe from any thread.
#pragma once

#include <cstdint>
#include <string>

namespace npac::common {

// Milliseconds since the Unix epoch → "YYYY-MM-DDThh:mm:ss.mmmZ".
std::string formatUtcMillis(std::int64_t ms_since_epoch);

}  // namespace npac::common
