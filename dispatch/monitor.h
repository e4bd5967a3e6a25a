// Response-time monitors for LRTM (NetScaler "LRTM method", least response time using
// monitors).
//
// LRTM method: each monitor bound to a service measures a response time with its own
// protocol, and the virtual server averages the results of the monitors bound to the
// service. For npacd a member (an association) can be watched by three monitors
// (MonitorKind in dispatch/policy.h): its own request→response round trip, a TCP
// connect probe and an application heartbeat round trip (NANC 404).
//
// Smoothing: each monitor keeps an exponentially weighted moving average of its samples,
// value += alpha × (sample − value), seeded by its first sample (as TCP's SRTT, RFC 6298
// §2, whose alpha = 1/8 is our default). alpha = 1 keeps the last sample only. The LRTM
// method's tables have one constant response time per service, so every alpha reproduces them.
//
// A member's response time is the plain mean of the bound monitors that have produced
// at least one sample; with none, the member is "unmeasured" (LRTM decides what that
// means, see dispatch/lrtm.h).
//
// Threading: none; plain values owned by one policy on one strand.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

#include "dispatch/policy.h"

namespace npac::dispatch {

inline constexpr std::size_t kMonitorKinds = 3;
inline constexpr double kDefaultMonitorAlpha = 0.125;  // RFC 6298 §2 SRTT gain

// A set of MonitorKind values (bit i = MonitorKind with value i).
class MonitorMask {
 public:
  constexpr MonitorMask() = default;
  static constexpr MonitorMask all() { return MonitorMask(0b111); }
  static constexpr MonitorMask none() { return MonitorMask(0); }
  static constexpr MonitorMask of(MonitorKind kind) { return MonitorMask(bit(kind)); }

  constexpr MonitorMask with(MonitorKind kind) const { return MonitorMask(bits_ | bit(kind)); }
  constexpr bool has(MonitorKind kind) const { return (bits_ & bit(kind)) != 0; }
  constexpr bool empty() const { return bits_ == 0; }
  constexpr std::uint8_t bits() const { return bits_; }
  friend constexpr bool operator==(MonitorMask, MonitorMask) = default;

 private:
  constexpr explicit MonitorMask(std::uint8_t bits) : bits_(bits) {}
  static constexpr std::uint8_t bit(MonitorKind kind) {
    return static_cast<std::uint8_t>(1u << static_cast<unsigned>(kind));
  }
  std::uint8_t bits_ = 0;
};

// One monitor's smoothed response time.
class ResponseTimeMonitor {
 public:
  explicit ResponseTimeMonitor(double alpha = kDefaultMonitorAlpha) : alpha_(alpha) {}

  // Adds one round-trip sample (negative samples count as zero).
  void addSample(Duration rtt);
  void reset() { value_.reset(); samples_ = 0; }

  std::optional<Duration> value() const { return value_; }
  std::uint64_t samples() const { return samples_; }

 private:
  double alpha_;
  std::optional<Duration> value_;
  std::uint64_t samples_ = 0;
};

// The monitors bound to one member and their average.
class MemberMonitors {
 public:
  MemberMonitors(MonitorMask bound, double alpha);

  // Feeds a sample to the monitor of that kind. Returns false (and ignores the sample)
  // when that kind is not bound to this member.
  bool addSample(MonitorKind kind, Duration rtt);

  // Rebinds: unbound monitors forget their samples, newly bound ones start empty.
  void bind(MonitorMask bound);
  MonitorMask bound() const { return bound_; }

  // Mean over the bound monitors that have a value; nullopt when none has.
  std::optional<Duration> responseTime() const { return average_; }
  const ResponseTimeMonitor& monitor(MonitorKind kind) const {
    return monitors_[static_cast<std::size_t>(kind)];
  }

 private:
  void recompute();

  MonitorMask bound_;
  std::array<ResponseTimeMonitor, kMonitorKinds> monitors_;
  std::optional<Duration> average_;
};

// "request-response", "tcp-connect", "heartbeat".
std::string_view monitorKindName(MonitorKind kind);

}  // namespace npac::dispatch
