#include "tunables/throttle_levels.h"

#include <catch2/catch.hpp>

#include "registry_fixture.h"

namespace npac::tunables {
namespace {

using testing::RegistryFixture;

TEST_CASE("The default throttle levels are consistent", "[throttle]") {
  TunableSnapshot snapshot;
  CHECK(checkThrottleLevels(snapshot, "").isOk());
  CHECK(checkThrottleLevels(snapshot, "0001").isOk());
}

TEST_CASE("Level 1 abatement at or above its onset is inconsistent", "[throttle]") {
  TunableSnapshot snapshot;
  snapshot.setOverride(TunableId::kThrottleAbatement1, "", Value(std::int64_t{100}));
  const Status status = checkThrottleLevels(snapshot, "");
  CHECK(status.code() == ErrorCode::kInconsistent);
  CHECK(status.message().find("throttle_abatement_1") != std::string::npos);
}

TEST_CASE("A level with only one of its two values is unused, not inconsistent",
          "[throttle]") {
  TunableSnapshot snapshot;
  snapshot.setOverride(TunableId::kThrottleOnset2, "", Value(std::int64_t{50}));
  CHECK(checkThrottleLevels(snapshot, "").isOk());
}

TEST_CASE("Higher levels must start above and abate above the level below", "[throttle]") {
  TunableSnapshot snapshot;
  snapshot.setOverride(TunableId::kThrottleOnset1, "", Value(std::int64_t{60}));
  snapshot.setOverride(TunableId::kThrottleAbatement1, "", Value(std::int64_t{55}));
  snapshot.setOverride(TunableId::kThrottleOnset2, "", Value(std::int64_t{80}));
  snapshot.setOverride(TunableId::kThrottleAbatement2, "", Value(std::int64_t{75}));
  CHECK(checkThrottleLevels(snapshot, "").isOk());
  snapshot.setOverride(TunableId::kThrottleOnset2, "", Value(std::int64_t{60}));
  CHECK(checkThrottleLevels(snapshot, "").code() == ErrorCode::kInconsistent);
  snapshot.setOverride(TunableId::kThrottleOnset2, "", Value(std::int64_t{80}));
  snapshot.setOverride(TunableId::kThrottleAbatement2, "", Value(std::int64_t{50}));
  CHECK(checkThrottleLevels(snapshot, "").code() == ErrorCode::kInconsistent);
}

TEST_CASE("Level 3 in use without level 2 is inconsistent", "[throttle]") {
  TunableSnapshot snapshot;
  snapshot.setOverride(TunableId::kThrottleOnset1, "", Value(std::int64_t{60}));
  snapshot.setOverride(TunableId::kThrottleAbatement1, "", Value(std::int64_t{55}));
  snapshot.setOverride(TunableId::kThrottleOnset3, "", Value(std::int64_t{90}));
  snapshot.setOverride(TunableId::kThrottleAbatement3, "", Value(std::int64_t{85}));
  CHECK(checkThrottleLevels(snapshot, "").code() == ErrorCode::kInconsistent);
}

TEST_CASE("An operator can enable three levels one tunable at a time", "[throttle]") {
  RegistryFixture f;
  const std::pair<const char*, const char*> steps[] = {
      {"throttle_abatement_1", "55"}, {"throttle_onset_1", "60"},
      {"throttle_onset_2", "80"},     {"throttle_abatement_2", "75"},
      {"throttle_onset_3", "100"},    {"throttle_abatement_3", "95"},
  };
  for (const auto& [name, value] : steps) {
    INFO(name << " = " << value);
    CHECK(f.registry->set(name, "0001", value, "alice").isOk());
  }
  CHECK(f.registry->get(kThrottleOnset3, "0001") == 100);
  CHECK(f.registry->get(kThrottleOnset1) == 100);  // global untouched
}

TEST_CASE("A global change that would break a provider's levels is refused", "[throttle]") {
  RegistryFixture f;
  REQUIRE(f.registry->set("throttle_onset_1", "0001", "90", "alice").isOk());
  REQUIRE(f.registry->set("throttle_abatement_1", "", "85", "alice").isOk());
  // 95 suits the global onset of 100 but not 0001's onset of 90.
  const Status status = f.registry->set("throttle_abatement_1", "", "95", "alice");
  CHECK(status.code() == ErrorCode::kInconsistent);
  CHECK(status.message().find("0001") != std::string::npos);
  CHECK(f.registry->get(kThrottleAbatement1) == 85);
}

TEST_CASE("Clearing an override that would leave the levels inconsistent is refused",
          "[throttle]") {
  RegistryFixture f;
  REQUIRE(f.registry->set("throttle_abatement_1", "", "60", "alice").isOk());
  REQUIRE(f.registry->set("throttle_onset_1", "", "70", "alice").isOk());
  CHECK(f.registry->set("throttle_abatement_1", "0001", "90", "alice").code() ==
        ErrorCode::kInconsistent);
  REQUIRE(f.registry->set("throttle_onset_1", "0001", "100", "alice").isOk());
  REQUIRE(f.registry->set("throttle_abatement_1", "0001", "90", "alice").isOk());
  // Without 0001's onset of 100 its abatement of 90 would exceed the global onset of 70.
  CHECK(f.registry->clear("throttle_onset_1", "0001", "alice").code() ==
        ErrorCode::kInconsistent);
  CHECK(f.registry->get(kThrottleOnset1, "0001") == 100);
}

}  // namespace
}  // namespace npac::tunables
