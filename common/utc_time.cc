#include "common/utc_time.h"

#include <cstdio>
#include <ctime>

namespace npac::common {

std::string formatUtcMillis(std::int64_t ms_since_epoch) {
  std::time_t seconds = static_cast<std::time_t>(ms_since_epoch / 1000);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
                tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms_since_epoch % 1000));
  return buf;
}

}  // namespace npac::common
