#include "tunables/catalogue.h"

#include <set>

#include <catch2/catch.hpp>

namespace npac::tunables {
namespace {

using namespace std::chrono_literals;

const Catalogue& catalogue() { return Catalogue::standard(); }

const TunableSpec& spec(std::string_view name) {
  const TunableSpec* found = catalogue().find(name);
  INFO(name);
  REQUIRE(found != nullptr);
  return *found;
}

Status parse(std::string_view name, std::string_view text, Value* out = nullptr) {
  Value scratch;
  return catalogue().parse(spec(name), text, out ? out : &scratch);
}

template <typename T>
void checkKey(Key<T> key, std::string_view name) {
  const TunableSpec& s = catalogue().spec(key.id);
  INFO(name);
  CHECK(s.name == name);
  CHECK(s.type == valueTypeOf<T>());
  CHECK(typeOf(s.default_value) == s.type);
}

TEST_CASE("Every typed key names the catalogue entry of its id and type", "[catalogue]") {
  REQUIRE(catalogue().all().size() == kTunableCount);
  for (std::size_t i = 0; i < kTunableCount; ++i) {
    CHECK(static_cast<std::size_t>(catalogue().all()[i].id) == i);
  }
  checkKey(kSrr, "srr");
  checkKey(kDuplicateBind, "duplicate_bind");
  checkKey(kMaxAssociationsPerSp, "max_associations_per_sp");
  checkKey(kBindTimeout, "bind_timeout");
  checkKey(kResponseTimeout, "response_timeout");
  checkKey(kRetryAttempts, "retry_attempts");
  checkKey(kHeartbeatInterval, "heartbeat_interval");
  checkKey(kHeartbeatTimeout, "heartbeat_timeout");
  checkKey(kCongestionWindow, "congestion_window");
  checkKey(kDepartureTimeWindow, "departure_time_window");
  checkKey(kKeyLifetime, "key_lifetime");
  checkKey(kQueueRetention, "queue_retention");
  checkKey(kEgressPolicy, "egress_policy");
  checkKey(kThrottleMaxRate, "throttle_max_rate");
  checkKey(kThrottleMaxPending, "throttle_max_pending");
  checkKey(kThrottleOnset1, "throttle_onset_1");
  checkKey(kThrottleAbatement1, "throttle_abatement_1");
  checkKey(kThrottleOnset2, "throttle_onset_2");
  checkKey(kThrottleAbatement2, "throttle_abatement_2");
  checkKey(kThrottleOnset3, "throttle_onset_3");
  checkKey(kThrottleAbatement3, "throttle_abatement_3");
  checkKey(kThrottleMinAbatementTime, "throttle_min_abatement_time");
  checkKey(kNpacSystemId, "npac_system_id");
  checkKey(kMetricsCacheInterval, "metrics_cache_interval");
  checkKey(kApiExpensiveReadRate, "api_expensive_read_rate");
}

TEST_CASE("Every default passes its own validation and names are unique", "[catalogue]") {
  std::set<std::string_view> names;
  for (const TunableSpec& s : catalogue().all()) {
    INFO(s.name);
    CHECK(names.insert(s.name).second);
    CHECK(catalogue().check(s, s.default_value).isOk());
    CHECK_FALSE(s.description.empty());
    CHECK(s.description.find('\n') == std::string_view::npos);
    // The canonical text of the default parses back to the default.
    Value reparsed;
    CHECK(catalogue().parse(s, catalogue().format(s, s.default_value), &reparsed).isOk());
    CHECK(reparsed == s.default_value);
  }
}

TEST_CASE("The issue's defaults are the catalogue's defaults", "[catalogue]") {
  CHECK(std::get<bool>(spec("srr").default_value) == false);
  CHECK(spec("srr").scope == Scope::kProvider);
  CHECK(catalogue().format(spec("duplicate_bind"), spec("duplicate_bind").default_value) ==
        "replace");
  CHECK(std::get<Duration>(spec("response_timeout").default_value) == 15min);
  CHECK(std::get<std::int64_t>(spec("retry_attempts").default_value) == 1);
  CHECK(std::get<Duration>(spec("heartbeat_interval").default_value) == 0s);  // off
  CHECK(spec("heartbeat_interval").scope == Scope::kProvider);
  CHECK(spec("heartbeat_timeout").scope == Scope::kProvider);
  CHECK(std::get<std::int64_t>(spec("congestion_window").default_value) == 100);
  CHECK(std::get<Duration>(spec("key_lifetime").default_value) == std::chrono::days(365));
  CHECK(catalogue().format(spec("egress_policy"), spec("egress_policy").default_value) ==
        "round-robin");
}

TEST_CASE("An unknown name is not in the catalogue", "[catalogue]") {
  CHECK(catalogue().find("srrr") == nullptr);
  CHECK(catalogue().find("") == nullptr);
  CHECK(catalogue().find("SRR") == nullptr);
}

TEST_CASE("Unparseable text for a typed tunable is a wrong-type error", "[catalogue]") {
  CHECK(parse("srr", "maybe").code() == ErrorCode::kWrongType);
  CHECK(parse("congestion_window", "lots").code() == ErrorCode::kWrongType);
  CHECK(parse("response_timeout", "15").code() == ErrorCode::kWrongType);
  CHECK(parse("npac_system_id", "NP\tAC").code() == ErrorCode::kWrongType);
}

TEST_CASE("Values outside the declared range are out-of-range errors", "[catalogue]") {
  CHECK(parse("congestion_window", "0").code() == ErrorCode::kOutOfRange);
  CHECK(parse("congestion_window", "10001").code() == ErrorCode::kOutOfRange);
  CHECK(parse("congestion_window", "10000").isOk());
  CHECK(parse("congestion_window", "1").isOk());
  CHECK(parse("response_timeout", "500ms").code() == ErrorCode::kOutOfRange);
  CHECK(parse("response_timeout", "2d").code() == ErrorCode::kOutOfRange);
  CHECK(parse("retry_attempts", "0").code() == ErrorCode::kOutOfRange);
  CHECK(parse("npac_system_id", "").code() == ErrorCode::kOutOfRange);
  CHECK(parse("npac_system_id", std::string(5, 'x')).code() == ErrorCode::kOutOfRange);
  const Status status = parse("congestion_window", "0");
  CHECK(status.message().find("1..10000") != std::string::npos);
}

TEST_CASE("npac_system_id takes exactly four PrintableString characters", "[catalogue]") {
  // LnpAccessControl systemId ::= PrintableString (SIZE (4)) (docs/npac-bind.asn1).
  CHECK(parse("npac_system_id", "NPA").code() == ErrorCode::kOutOfRange);
  CHECK(parse("npac_system_id", "NPACX").code() == ErrorCode::kOutOfRange);
  CHECK(parse("npac_system_id", "NP@C").code() == ErrorCode::kWrongType);
  CHECK(parse("npac_system_id", "NPAC").isOk());
  CHECK(parse("npac_system_id", "N-1 ").isOk());
  CHECK(parse("npac_system_id", "NPA").message().find("4") != std::string::npos);
}

TEST_CASE("Zero means off where declared and is out of range elsewhere", "[catalogue]") {
  Value value;
  CHECK(parse("heartbeat_interval", "0", &value).isOk());
  CHECK(std::get<Duration>(value) == 0s);
  CHECK(parse("heartbeat_interval", "5s").code() == ErrorCode::kOutOfRange);
  CHECK(parse("heartbeat_interval", "30s").isOk());
  CHECK(parse("throttle_max_rate", "0").isOk());
  CHECK(parse("heartbeat_timeout", "0").code() == ErrorCode::kOutOfRange);
  CHECK(catalogue().describeRange(spec("heartbeat_interval")) == "0 (off) or 10s..1d");
}

TEST_CASE("An enumeration accepts its names in any case and nothing else", "[catalogue]") {
  Value value;
  CHECK(parse("egress_policy", "LRTM", &value).isOk());
  CHECK(std::get<EnumValue>(value).index == static_cast<std::uint32_t>(EgressPolicy::kLrtm));
  CHECK(catalogue().format(spec("egress_policy"), value) == "lrtm");
  CHECK(parse("duplicate_bind", "reject", &value).isOk());
  CHECK(std::get<EnumValue>(value).index == static_cast<std::uint32_t>(DuplicateBind::kReject));
  const Status status = parse("egress_policy", "random");
  CHECK(status.code() == ErrorCode::kUnknownEnumValue);
  CHECK(status.message().find("round-robin | weighted | lrtm") != std::string::npos);
}

TEST_CASE("Checking a value of another type is a wrong-type error", "[catalogue]") {
  CHECK(catalogue().check(spec("srr"), Value(std::int64_t{1})).code() == ErrorCode::kWrongType);
  CHECK(catalogue().check(spec("egress_policy"), Value(EnumValue{3})).code() ==
        ErrorCode::kUnknownEnumValue);
}

TEST_CASE("A SPID is exactly four ASCII letters or digits", "[catalogue]") {
  CHECK(isValidSpid("0001"));
  CHECK(isValidSpid("X1b2"));
  CHECK_FALSE(isValidSpid(""));
  CHECK_FALSE(isValidSpid("001"));
  CHECK_FALSE(isValidSpid("00001"));
  CHECK_FALSE(isValidSpid("00-1"));
  CHECK_FALSE(isValidSpid("00 1"));
}

}  // namespace
}  // namespace npac::tunables
