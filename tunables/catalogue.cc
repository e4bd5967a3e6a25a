#include "tunables/catalogue.h"

#include "common/nearest_name.h"
#include "tunables/text.h"

#include <cctype>
#include <chrono>
#include <utility>

namespace npac::tunables {
namespace {

using namespace std::chrono_literals;
using Days = std::chrono::days;

// Bounds shared by several entries.
constexpr std::int64_t kMaxPercent = 100;
constexpr std::int64_t ms(Duration d) { return d.count(); }

TunableSpec boolean(TunableId id, std::string_view name, Scope scope, bool fallback,
                    std::string_view description) {
  return TunableSpec{id, name, ValueType::kBool, scope, "", description, Value(fallback),
                     0, 1, false, {}};
}

TunableSpec integer(TunableId id, std::string_view name, Scope scope, std::string_view unit,
                    std::int64_t fallback, std::int64_t min, std::int64_t max,
                    bool zero_means_off, std::string_view description) {
  return TunableSpec{id,    name, ValueType::kInteger, scope, unit, description,
                     Value(fallback), min, max, zero_means_off, {}};
}

TunableSpec duration(TunableId id, std::string_view name, Scope scope, Duration fallback,
                     Duration min, Duration max, bool zero_means_off,
                     std::string_view description) {
  return TunableSpec{id,  name, ValueType::kDuration, scope, "", description, Value(fallback),
                     ms(min), ms(max), zero_means_off, {}};
}

TunableSpec enumeration(TunableId id, std::string_view name, Scope scope,
                        std::vector<std::string_view> allowed, std::uint32_t fallback,
                        std::string_view description) {
  return TunableSpec{id,   name, ValueType::kEnum, scope, "", description,
                     Value(EnumValue{fallback}), 0, 0, false, std::move(allowed)};
}

TunableSpec text(TunableId id, std::string_view name, Scope scope, std::string fallback,
                 std::int64_t min_length, std::int64_t max_length,
                 std::string_view description) {
  return TunableSpec{id, name, ValueType::kString, scope, "characters", description,
                     Value(std::move(fallback)), min_length, max_length, false, {}};
}

// The catalogue npacd ships. Order must follow TunableId (checked by
// tests/tunables/catalogue_test.cc). Each description says why its default.
std::vector<TunableSpec> standardEntries() {
  using I = TunableId;
  std::vector<TunableSpec> s;
  s.push_back(boolean(I::kSrr, "srr", Scope::kProvider, false,
      "SOA Round Robin: the provider may hold several associations with the same function "
      "mask from different NSAPs, run as one logical association with round-robin egress "
      "(NANC 353 items 3-4). Off by default: NANC 353 makes it an opt-in per provider."));
  s.push_back(enumeration(I::kDuplicateBind, "duplicate_bind", Scope::kGlobal,
      {"replace", "reject"}, 0,
      "A second bind with the same SPID and function mask while SRR is off: replace aborts "
      "the existing association and keeps the new one, as NANC 386 does for a client that "
      "re-binds before the NPAC notices its lost link; reject refuses the new bind."));
  s.push_back(integer(I::kMaxAssociationsPerSp, "max_associations_per_sp", Scope::kBoth,
      "associations", 8, 1, 64, false,
      "Most associations one provider may hold at once, all function masks and SRR members "
      "counted. 8 leaves room for SOA and LSMS plus several SRR members (NANC 353: two or "
      "more) while bounding what one provider can take."));
  s.push_back(duration(I::kBindTimeout, "bind_timeout", Scope::kGlobal, 30s, 1s, 10min,
      false,
      "Time from TCP connect until the bind request must have arrived, else the connection "
      "is closed. 30 s covers the RFC 1006/OSI handshake and a signature check on a slow "
      "link and frees half-open connections quickly."));
  s.push_back(duration(I::kResponseTimeout, "response_timeout", Scope::kBoth, 15min, 1s,
      Days(1), false,
      "Time a request waits for its response before the attempt fails. 15 min is the "
      "NPAC SMS's historical \"1 x 15\" timer (one attempt, 15 minutes)."));
  s.push_back(integer(I::kRetryAttempts, "retry_attempts", Scope::kBoth, "attempts", 1, 1,
      10, false,
      "How many times a request is sent, each waiting response_timeout, before the "
      "association is aborted. 1 is the historical \"1 x 15\" (earlier \"3 x 5\")."));
  s.push_back(duration(I::kHeartbeatInterval, "heartbeat_interval", Scope::kProvider, 0s,
      10s, Days(1), true,
      "Quiet period after which the NPAC sends the provider an application heartbeat "
      "(NANC 404). 0 = off, the default: only providers that support heartbeats get them."));
  s.push_back(duration(I::kHeartbeatTimeout, "heartbeat_timeout", Scope::kProvider, 60s,
      1s, 1h, false,
      "Time a heartbeat waits for its response before the association is aborted "
      "(NANC 404); unused while heartbeat_interval is 0. 60 s: the peer's stack answers "
      "heartbeats, so a minute is generous yet far below response_timeout."));
  s.push_back(integer(I::kCongestionWindow, "congestion_window", Scope::kBoth, "requests",
      100, 1, 10000, false,
      "Outstanding requests on one association before it counts as Congested and gets no "
      "further request. 100 is the figure of one NPAC SMS deployment."));
  s.push_back(duration(I::kDepartureTimeWindow, "departure_time_window", Scope::kGlobal, 5min,
      1s, 1h, false,
      "Largest allowed difference between a bind's CMIP departure time and the NPAC clock; "
      "a bind outside it is refused as a possible replay. 5 min tolerates loosely "
      "synchronised clocks while keeping a captured bind short-lived."));
  s.push_back(duration(I::kKeyLifetime, "key_lifetime", Scope::kGlobal, Days(365), Days(1),
      Days(3650), false,
      "How long a provider's key is valid from activation before it counts as expired. "
      "One year is the NPAC SMS's default key lifetime (NPAC IIS key lists)."));
  s.push_back(duration(I::kQueueRetention, "queue_retention", Scope::kGlobal, Days(7), 1h,
      Days(365), false,
      "How long acknowledged outbound messages stay on disk for time-range recovery before "
      "the purge removes them; unacknowledged ones are never purged. 7 days covers an "
      "outage over a long weekend with margin."));
  s.push_back(duration(I::kAssociationLogRetention, "association_log_retention", Scope::kGlobal,
      Days(90), 1h, Days(3650), false,
      "How long association-log rows (binds, refusals, releases, aborts) are kept before the "
      "purge removes them. 90 days keeps a quarter of history for disputes about who was "
      "bound when, at a few hundred bytes per row."));
  s.push_back(enumeration(I::kEgressPolicy, "egress_policy", Scope::kBoth,
      {"round-robin", "weighted", "lrtm"}, 0,
      "How outbound PDUs are spread over a provider's live associations: round-robin "
      "regardless of load as NANC 353 requires (default), weighted cost groups (EAGLE \"Weighted "
      "GTT Load Sharing\") or least response time from monitors (NetScaler \"LRTM method\")."));
  s.push_back(integer(I::kThrottleMaxRate, "throttle_max_rate", Scope::kBoth, "msg/s", 0, 1,
      250000, true,
      "Egress message rate limit for the provider's logical association (EMR, DSR \"Egress "
      "Throttle Groups\"). "
      "0 = off, the default: congestion_window already bounds each association and a "
      "provider's own limit is known only once provisioned."));
  s.push_back(integer(I::kThrottleMaxPending, "throttle_max_pending", Scope::kBoth,
      "transactions", 0, 1, 1000000, true,
      "Egress pending-transaction limit for the provider's logical association (EPT, "
      "DSR \"Egress Throttle Groups\"). 0 = off, the default, for the same reason as throttle_max_rate."));
  s.push_back(integer(I::kThrottleOnset1, "throttle_onset_1", Scope::kBoth, "%", 100, 1,
      kMaxPercent, false,
      "Percent of the maximum rate or pending count at which congestion level 1 starts "
      "(the DSR egress throttle group's onset threshold). 100 % with 80 % abatement are the usual egress throttle group "
      "defaults: throttle only at the configured maximum."));
  s.push_back(integer(I::kThrottleAbatement1, "throttle_abatement_1", Scope::kBoth, "%", 80,
      1, kMaxPercent, false,
      "Percent below which level 1 ends (the DSR abatement threshold); must be below "
      "throttle_onset_1. 80 % gives a 20-point hysteresis so the level does not flap."));
  s.push_back(integer(I::kThrottleOnset2, "throttle_onset_2", Scope::kBoth, "%", 0, 1,
      kMaxPercent, true,
      "Percent at which congestion level 2 starts; must exceed throttle_onset_1. 0 = level "
      "unused, the default: one level suffices until an operator tunes a provider."));
  s.push_back(integer(I::kThrottleAbatement2, "throttle_abatement_2", Scope::kBoth, "%", 0,
      1, kMaxPercent, true,
      "Percent below which level 2 falls back to level 1; must be below throttle_onset_2 "
      "and above throttle_abatement_1. 0 only while level 2 is unused."));
  s.push_back(integer(I::kThrottleOnset3, "throttle_onset_3", Scope::kBoth, "%", 0, 1,
      kMaxPercent, true,
      "Percent at which congestion level 3 starts; must exceed throttle_onset_2. 0 = level "
      "unused, the default."));
  s.push_back(integer(I::kThrottleAbatement3, "throttle_abatement_3", Scope::kBoth, "%", 0,
      1, kMaxPercent, true,
      "Percent below which level 3 falls back to level 2; must be below throttle_onset_3 "
      "and above throttle_abatement_2. 0 only while level 3 is unused."));
  s.push_back(duration(I::kThrottleMinAbatementTime, "throttle_min_abatement_time",
      Scope::kBoth, 2s, 0s, 1min, false,
      "Least time a congestion level is held before abatement may lower it, so one quiet "
      "moment does not end throttling. 2 s spans many rate samples yet releases traffic "
      "promptly once load has really dropped."));
  s.push_back(text(I::kNpacSystemId, "npac_system_id", Scope::kGlobal, "NPAC", 4, 4,
      "System id the NPAC puts in the LnpAccessControl of its accepting AAREs (system type "
      "npac, docs/PROTOCOL.md \"The NPAC's answer\"): systemId is PrintableString (SIZE (4)), "
      "so exactly four of A-Z a-z 0-9 space ' ( ) + , - . / : = ?."));
  s.push_back(integer(I::kMaxUnboundConnections, "max_unbound_connections", Scope::kGlobal,
      "connections", 256, 1, 100000, false,
      "Connections accepted that have not bound yet (TCP up, no AARQ answered) at most; a "
      "new connection beyond it drops the oldest unbound one, counted and logged. 256 covers "
      "every provider re-binding at once after an NPAC restart with margin, and bounds what "
      "idle or hostile connections can hold."));
  s.push_back(duration(I::kProviderLeaseTimeout, "provider_lease_timeout", Scope::kGlobal, 5s,
      1s, 5min, false,
      "How long a node's lease on a provider lasts without renewal (renewed every third of "
      "it while the provider is bound there); when the owning node dies, another node may "
      "take the provider this long after the last renewal. 5 s keeps a takeover within an "
      "SOA's own re-bind delay while riding out a database pause of a second or two."));
  return s;
}

std::string rangeOf(const TunableSpec& spec, std::int64_t min, std::int64_t max) {
  auto show = [&](std::int64_t v) {
    return spec.type == ValueType::kDuration ? formatDuration(Duration(v)) : std::to_string(v);
  };
  std::string out;
  if (spec.zero_means_off) out = "0 (off) or ";
  out += cat(show(min), "..", show(max));
  return out;
}

}  // namespace

std::string_view toString(Scope scope) {
  switch (scope) {
    case Scope::kGlobal: return "global";
    case Scope::kProvider: return "per provider";
    case Scope::kBoth: return "global, per provider";
  }
  return "unknown";
}

bool isValidSpid(std::string_view spid) {
  if (spid.size() != 4) return false;
  for (char c : spid) {
    if (!std::isalnum(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

Catalogue::Catalogue(std::vector<TunableSpec> specs) : specs_(std::move(specs)) {}

const Catalogue& Catalogue::standard() {
  static const Catalogue catalogue(standardEntries());
  return catalogue;
}

const TunableSpec* Catalogue::find(std::string_view name) const {
  for (const TunableSpec& spec : specs_) {
    if (spec.name == name) return &spec;
  }
  return nullptr;
}

Status Catalogue::unknownName(std::string_view name) const {
  std::vector<std::string> names;
  for (const TunableSpec& spec : specs_) names.emplace_back(spec.name);
  return Status::unknownName("no tunable named \"" + std::string(name) + "\"" + common::didYouMean(name, names));
}

std::string Catalogue::describeRange(const TunableSpec& spec) const {
  switch (spec.type) {
    case ValueType::kBool: return "on | off";
    case ValueType::kInteger:
    case ValueType::kDuration: return rangeOf(spec, spec.min, spec.max);
    case ValueType::kEnum: {
      std::string out;
      for (std::string_view name : spec.allowed) {
        if (!out.empty()) out += " | ";
        out += name;
      }
      return out;
    }
    case ValueType::kString:
      return cat(std::to_string(spec.min), "..", std::to_string(spec.max));
  }
  return "";
}

Status Catalogue::check(const TunableSpec& spec, const Value& value) const {
  const std::string name(spec.name);
  if (typeOf(value) != spec.type) {
    return Status::wrongType(
        cat(name, " is ", toString(spec.type), ", not ", toString(typeOf(value))));
  }
  auto range = [&](std::int64_t v, const std::string& shown) {
    if (spec.zero_means_off && v == 0) return Status::ok();
    if (v < spec.min || v > spec.max) {
      const std::string_view space = spec.unit.empty() ? "" : " ";
      return Status::outOfRange(
          cat(name, " must be ", describeRange(spec), space, spec.unit, ", got ", shown));
    }
    return Status::ok();
  };
  switch (spec.type) {
    case ValueType::kBool: return Status::ok();
    case ValueType::kInteger: {
      const std::int64_t v = std::get<std::int64_t>(value);
      return range(v, std::to_string(v));
    }
    case ValueType::kDuration: {
      const Duration d = std::get<Duration>(value);
      return range(d.count(), formatDuration(d));
    }
    case ValueType::kEnum: {
      if (std::get<EnumValue>(value).index >= spec.allowed.size()) {
        return Status::unknownEnumValue(name + " has no value number " +
                                        std::to_string(std::get<EnumValue>(value).index));
      }
      return Status::ok();
    }
    case ValueType::kString: {
      const std::string& s = std::get<std::string>(value);
      for (char c : s) {
        if (c < 0x20 || c > 0x7e) {
          return Status::wrongType(name + " takes printable ASCII only");
        }
      }
      // LnpAccessControl systemId is PrintableString (X.680 §41.4), narrower than ASCII.
      if (spec.id == TunableId::kNpacSystemId) {
        for (char c : s) {
          if (!std::isalnum(static_cast<unsigned char>(c)) &&
              std::string_view(" '()+,-./:=?").find(c) == std::string_view::npos) {
            return Status::wrongType(name + " takes PrintableString characters only (A-Z a-z 0-9 "
                                     "space ' ( ) + , - . / : = ?)");
          }
        }
      }
      const auto length = static_cast<std::int64_t>(s.size());
      if (length < spec.min || length > spec.max) {
        return Status::outOfRange(
            cat(name, " must be ", describeRange(spec), ", got ", std::to_string(length)));
      }
      return Status::ok();
    }
  }
  return Status::wrongType(name + ": unknown type");
}

Status Catalogue::parse(const TunableSpec& spec, std::string_view text, Value* out) const {
  const std::string prefix = std::string(spec.name) + ": ";
  Value value;
  switch (spec.type) {
    case ValueType::kBool: {
      bool b = false;
      Status s = parseBool(text, &b);
      if (!s) return Status::wrongType(prefix + s.message());
      value = b;
      break;
    }
    case ValueType::kInteger: {
      std::int64_t i = 0;
      Status s = parseInteger(text, &i);
      if (s.code() == ErrorCode::kOutOfRange) return Status::outOfRange(prefix + s.message());
      if (!s) return Status::wrongType(prefix + s.message());
      value = i;
      break;
    }
    case ValueType::kDuration: {
      Duration d{};
      Status s = parseDuration(text, &d);
      if (s.code() == ErrorCode::kOutOfRange) return Status::outOfRange(prefix + s.message());
      if (!s) return Status::wrongType(prefix + s.message());
      value = d;
      break;
    }
    case ValueType::kEnum: {
      bool found = false;
      const std::string_view word = trim(text);
      for (std::uint32_t i = 0; i < spec.allowed.size(); ++i) {
        if (equalsIgnoreCase(word, spec.allowed[i])) {
          value = EnumValue{i};
          found = true;
          break;
        }
      }
      if (!found) {
        return Status::unknownEnumValue(
            cat(prefix, "expected ", describeRange(spec), ", got \"", text, "\""));
      }
      break;
    }
    case ValueType::kString:
      value = std::string(text);
      break;
  }
  Status s = check(spec, value);
  if (!s) return s;
  *out = std::move(value);
  return Status::ok();
}

std::string Catalogue::format(const TunableSpec& spec, const Value& value) const {
  switch (typeOf(value)) {
    case ValueType::kBool: return formatBool(std::get<bool>(value));
    case ValueType::kInteger: return std::to_string(std::get<std::int64_t>(value));
    case ValueType::kDuration: return formatDuration(std::get<Duration>(value));
    case ValueType::kEnum: {
      const std::uint32_t index = std::get<EnumValue>(value).index;
      return index < spec.allowed.size() ? std::string(spec.allowed[index])
                                         : cat("#", std::to_string(index));
    }
    case ValueType::kString: return std::get<std::string>(value);
  }
  return "";
}

}  // namespace npac::tunables
