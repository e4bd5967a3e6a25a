// classifyQueuedPdu: the facts npacd gives the schema-4 migration for rows queued before
// the queue stored them (db/migrations.h).
#include <catch2/catch.hpp>

#include "cmip/rose.h"
#include "npac/npacd/queued_pdu_facts.h"

using namespace npac;

TEST_CASE("A queued Invoke is a push of its operation confirmed as X.711 defines it") {
  auto confirmed = npacd::classifyQueuedPdu(
      cmip::encodeRoseApdu(cmip::RoseInvoke{0, std::nullopt, cmip::Code::local(7), cmip::OpaqueBer{{0x30, 0x00}}}));
  REQUIRE(confirmed.has_value());
  CHECK(*confirmed == db::MessageFacts{db::MessageKind::kPush, 7, true});
  auto unconfirmed = npacd::classifyQueuedPdu(
      cmip::encodeRoseApdu(cmip::RoseInvoke{0, std::nullopt, cmip::Code::local(0), cmip::OpaqueBer{{0x30, 0x00}}}));
  CHECK(*unconfirmed == db::MessageFacts{db::MessageKind::kPush, 0, false});
}

TEST_CASE("A queued ReturnResult or ReturnError is an unconfirmed response") {
  cmip::RoseReturnResult result{cmip::InvokeId{3},
                                cmip::RoseReturnResult::Body{cmip::Code::local(6), cmip::OpaqueBer{{0x30, 0x00}}}};
  CHECK(*npacd::classifyQueuedPdu(cmip::encodeRoseApdu(result)) ==
        db::MessageFacts{db::MessageKind::kResponse, 6, false});
  cmip::RoseReturnError error{cmip::InvokeId{3}, cmip::Code::local(2), std::nullopt};
  CHECK(*npacd::classifyQueuedPdu(cmip::encodeRoseApdu(error)) ==
        db::MessageFacts{db::MessageKind::kResponse, db::kUnknownOpcode, false});
}

TEST_CASE("Queued bytes that are no Invoke or answer are left to the priority rule") {
  CHECK_FALSE(npacd::classifyQueuedPdu(std::vector<std::uint8_t>{0x30, 0x03, 0x02, 0x01, 0x05}).has_value());
  CHECK_FALSE(npacd::classifyQueuedPdu(std::vector<std::uint8_t>{}).has_value());
  CHECK_FALSE(npacd::classifyQueuedPdu(
                  cmip::encodeRoseApdu(cmip::RoseInvoke{0, std::nullopt, cmip::Code::local(99), std::nullopt}))
                  .has_value());
  CHECK_FALSE(npacd::classifyQueuedPdu(cmip::encodeRoseApdu(cmip::RoseReject{})).has_value());
}
