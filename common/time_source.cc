#include "common/time_source.h"

namespace npac::common {

MonotonicTime RealTimeSource::now() const { return MonotonicClock::now(); }

SystemTime RealTimeSource::wallTime() const { return SystemClock::now(); }

const TimeSource& realTimeSource() {
  static const RealTimeSource source;
  return source;
}

}  // namespace npac::common
