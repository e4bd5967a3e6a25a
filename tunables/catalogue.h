// The tunable catalogue: every operator-settable parameter of npacd, declared once.
//
// Each entry gives the name, the value type and its range (or allowed names), the
// default, the scope (global, per service provider, or both), the unit and a one-line
// description that says why the default is what it is. This table is the single source
// for validation (TunableRegistry::set), for the admin API's listing, and for
// docs/TUNABLES.md (renderTunablesMarkdown, npac-tunables-doc).
//
// Code reads a tunable through a typed key (`kSrr`, `kResponseTimeout`), which carries
// the entry's index: no string lookup on the read path. The keys below and the entries
// in catalogue.cc are tied together by TunableId; a test checks names and types match.
//
// Threading: the catalogue is immutable after static initialisation; read it from any
// thread.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "tunables/status.h"
#include "tunables/value.h"

namespace npac::tunables {

// One identifier per catalogue entry, in catalogue order.
enum class TunableId : std::uint16_t {
  kSrr,
  kDuplicateBind,
  kMaxAssociationsPerSp,
  kBindTimeout,
  kResponseTimeout,
  kRetryAttempts,
  kHeartbeatInterval,
  kHeartbeatTimeout,
  kCongestionWindow,
  kDepartureTimeWindow,
  kKeyLifetime,
  kQueueRetention,
  kAssociationLogRetention,
  kEgressPolicy,
  kThrottleMaxRate,
  kThrottleMaxPending,
  kThrottleOnset1,
  kThrottleAbatement1,
  kThrottleOnset2,
  kThrottleAbatement2,
  kThrottleOnset3,
  kThrottleAbatement3,
  kThrottleMinAbatementTime,
  kNpacSystemId,
  kMaxUnboundConnections,
  kProviderLeaseTimeout,
  kCount,  // not a tunable
};

inline constexpr std::size_t kTunableCount = static_cast<std::size_t>(TunableId::kCount);

// Where a value may be set.
enum class Scope : std::uint8_t {
  kGlobal,       // one value for the whole NPAC
  kProvider,     // only per service provider; otherwise the default applies
  kBoth,         // a global value, overridable per provider
};

std::string_view toString(Scope scope);

// The C++ face of the enumeration tunables. Their order matches the allowed names.
enum class DuplicateBind : std::uint32_t { kReplace, kReject };
enum class EgressPolicy : std::uint32_t { kRoundRobin, kWeighted, kLrtm };

struct TunableSpec {
  TunableId id;
  std::string_view name;
  ValueType type;
  Scope scope;
  std::string_view unit;         // "" for bool and enumeration
  std::string_view description;  // one line: what it does and why the default
  Value default_value;
  // Integer: value range. Duration: milliseconds. String: length range. Inclusive.
  std::int64_t min = 0;
  std::int64_t max = 0;
  // 0 is accepted outside [min, max] and means "off" (heartbeat, throttle levels).
  bool zero_means_off = false;
  std::vector<std::string_view> allowed;  // enumeration names, canonical spelling

  bool allowsGlobal() const { return scope != Scope::kProvider; }
  bool allowsProvider() const { return scope != Scope::kGlobal; }
};

class Catalogue {
 public:
  // The catalogue npacd ships.
  static const Catalogue& standard();

  std::span<const TunableSpec> all() const { return specs_; }
  const TunableSpec& spec(TunableId id) const { return specs_[static_cast<std::size_t>(id)]; }
  // nullptr when no tunable has that name.
  const TunableSpec* find(std::string_view name) const;
  // The kUnknownName status for a name find() did not find: `no tunable named "x"`, with
  // the nearest name when one is close (common/nearest_name.h): `(did you mean
  // 'bind_timeout'?)`.
  Status unknownName(std::string_view name) const;

  // Text → typed value, checking type, range and enumeration names.
  Status parse(const TunableSpec& spec, std::string_view text, Value* out) const;
  // A typed value → its canonical text (what the database stores).
  std::string format(const TunableSpec& spec, const Value& value) const;
  // Range / allowed-name check of an already typed value (the default, a stored value).
  Status check(const TunableSpec& spec, const Value& value) const;
  // A human-readable range without the unit: "1..10000", "0 (off) or 10s..1d",
  // "round-robin | weighted | lrtm"; for a string, its length range.
  std::string describeRange(const TunableSpec& spec) const;

 private:
  explicit Catalogue(std::vector<TunableSpec> specs);

  std::vector<TunableSpec> specs_;
};

// A typed handle on one tunable: `registry.get(kSrr, spid)` returns bool.
template <typename T>
struct Key {
  TunableId id;
};

inline constexpr Key<bool> kSrr{TunableId::kSrr};
inline constexpr Key<DuplicateBind> kDuplicateBind{TunableId::kDuplicateBind};
inline constexpr Key<std::int64_t> kMaxAssociationsPerSp{TunableId::kMaxAssociationsPerSp};
inline constexpr Key<Duration> kBindTimeout{TunableId::kBindTimeout};
inline constexpr Key<Duration> kResponseTimeout{TunableId::kResponseTimeout};
inline constexpr Key<std::int64_t> kRetryAttempts{TunableId::kRetryAttempts};
inline constexpr Key<Duration> kHeartbeatInterval{TunableId::kHeartbeatInterval};
inline constexpr Key<Duration> kHeartbeatTimeout{TunableId::kHeartbeatTimeout};
inline constexpr Key<std::int64_t> kCongestionWindow{TunableId::kCongestionWindow};
inline constexpr Key<Duration> kDepartureTimeWindow{TunableId::kDepartureTimeWindow};
inline constexpr Key<Duration> kKeyLifetime{TunableId::kKeyLifetime};
inline constexpr Key<Duration> kQueueRetention{TunableId::kQueueRetention};
inline constexpr Key<Duration> kAssociationLogRetention{TunableId::kAssociationLogRetention};
inline constexpr Key<EgressPolicy> kEgressPolicy{TunableId::kEgressPolicy};
inline constexpr Key<std::int64_t> kThrottleMaxRate{TunableId::kThrottleMaxRate};
inline constexpr Key<std::int64_t> kThrottleMaxPending{TunableId::kThrottleMaxPending};
inline constexpr Key<std::int64_t> kThrottleOnset1{TunableId::kThrottleOnset1};
inline constexpr Key<std::int64_t> kThrottleAbatement1{TunableId::kThrottleAbatement1};
inline constexpr Key<std::int64_t> kThrottleOnset2{TunableId::kThrottleOnset2};
inline constexpr Key<std::int64_t> kThrottleAbatement2{TunableId::kThrottleAbatement2};
inline constexpr Key<std::int64_t> kThrottleOnset3{TunableId::kThrottleOnset3};
inline constexpr Key<std::int64_t> kThrottleAbatement3{TunableId::kThrottleAbatement3};
inline constexpr Key<Duration> kThrottleMinAbatementTime{TunableId::kThrottleMinAbatementTime};
inline constexpr Key<std::string> kNpacSystemId{TunableId::kNpacSystemId};
inline constexpr Key<std::int64_t> kMaxUnboundConnections{TunableId::kMaxUnboundConnections};
inline constexpr Key<Duration> kProviderLeaseTimeout{TunableId::kProviderLeaseTimeout};

// The ValueType a key's C++ type maps to (used by the key/catalogue consistency test).
template <typename T>
constexpr ValueType valueTypeOf() {
  if constexpr (std::is_same_v<T, bool>) return ValueType::kBool;
  else if constexpr (std::is_same_v<T, std::int64_t>) return ValueType::kInteger;
  else if constexpr (std::is_same_v<T, Duration>) return ValueType::kDuration;
  else if constexpr (std::is_same_v<T, std::string>) return ValueType::kString;
  else return ValueType::kEnum;
}

// A service provider id as the NPAC uses it: exactly four ASCII letters or digits.
bool isValidSpid(std::string_view spid);

}  // namespace npac::tunables
