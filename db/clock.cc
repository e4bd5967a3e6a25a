#include "db/clock.h"

namespace npac::db {

Clock clockOf(const common::TimeSource& source) {
  return [&source] { return source.wallMs(); };
}

Clock systemClock() { return clockOf(common::realTimeSource()); }

}  // namespace npac::db
