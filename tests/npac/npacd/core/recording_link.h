// RecordingLink: one bound association as a ProviderCore sees it, for the core's in-process
// tests: every PDU it was given with its tag, and aborts reported back (on_abort) as a loss
// the way a Session reports onClosed. invokeIdOf and resultFor read and answer what it was
// given; deliverRound runs one delivery round of a core as the DeliveryScheduler does,
// the store's flush between its halves. One definition for the test files, since a unity build (NPAC_UNITY) compiles
// several of them as one unit. Threading: the test's thread.
#pragma once

#include <catch2/catch.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "cmip/rose.h"
#include "npac/npacd/core/association_link.h"
#include "npac/npacd/core/delivery_store.h"
#include "npac/npacd/core/provider_core.h"

namespace npac::npacd::testing {

struct RecordingLink : AssociationLink {
  std::vector<std::pair<std::vector<std::uint8_t>, std::int64_t>> sent;
  std::function<void()> on_abort;
  std::function<void()> on_send;  // called as each PDU is handed over, before it is recorded
  std::string abort_reason;
  bool release_requested = false;
  bool send(const std::vector<std::uint8_t>& apdu, std::int64_t tag) override {
    if (on_send) on_send();
    sent.emplace_back(apdu, tag);
    return true;
  }
  void abort(const std::string& reason) override {
    abort_reason = reason;
    if (on_abort) on_abort();
  }
  void setReleaseReason(const std::string&) override {}
  void requestRelease() override { release_requested = true; }
  void countRetransmission() override {}
  bool releasing() const override { return false; }
  AssociationInfo describe() const override { return {}; }
};

// The invoke id of a ROSE Invoke the core sent.
inline std::int32_t invokeIdOf(const std::vector<std::uint8_t>& pdu) {
  auto apdu = cmip::decodeRoseApdu(pdu);
  REQUIRE(apdu.isOk());
  return std::get<cmip::RoseInvoke>(apdu.value()).invokeId;
}

// An empty ReturnResult for `invoke_id`, as a provider confirms a PDU.
inline cmip::RoseApdu resultFor(std::int32_t invoke_id) {
  return cmip::RoseReturnResult{cmip::InvokeId{invoke_id}, std::nullopt};
}

// One delivery round of `core`: decideRound(), the store's flush, finishRound().
inline void deliverRound(ProviderCore& core, DeliveryStore& store) {
  const ProviderCore::Round round = core.decideRound();
  store.flush();
  core.finishRound(round);
}

}  // namespace npac::npacd::testing
