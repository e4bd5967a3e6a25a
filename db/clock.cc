#include "db/clock.h"

#include <chrono>

namespace npac::db {

Clock systemClock() {
  return [] {
    using namespace std::chrono;
    return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
  };
}

}  // namespace npac::db
