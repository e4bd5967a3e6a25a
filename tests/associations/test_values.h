// Values the associations/ tests share: a steady instant well past the clock's epoch, an
// SOA's function mask, one Ed25519 NPAC key pair (generated once per test run) and a wall
// time inside its validity. One definition for every test file, since a unity build
// (NPAC_UNITY) compiles several of them as one unit, where file-local names must not repeat.
#pragma once

#include <chrono>

#include "associations/bind_facts.h"
#include "associations/outstanding.h"
#include "associations/signature.h"

namespace npac::associations::testing {

inline const TimePoint t0 = TimePoint(std::chrono::hours(1000));

inline const FunctionMask kSoa = FunctionMask::of({AssociationFunction::kSoaManagement,
                                                   AssociationFunction::kNotifications,
                                                   AssociationFunction::kQueries});

inline const KeyPairPem& keys() {
  static const KeyPairPem pair = generateKeyPair(SignatureAlgorithm::kEd25519).value();
  return pair;
}

inline const WallTime kNow = WallTime(std::chrono::seconds(1'800'000'000));

}  // namespace npac::associations::testing
