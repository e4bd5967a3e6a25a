// The parts a ProviderCore owns, each on its own, on a manual clock over a real tunable
// registry: its heartbeats (ProviderHeartbeats: when one is sent, which answer completes
// it, when its association is silent), its egress throttling (ProviderThrottle: the pace
// of throttle_max_rate, throttle_max_pending, what a throttled round reports), the PDUs
// it holds until their rows commit (HeldPdus: order, refusals, a fenced provider), what is
// written on its associations (ProviderLinks: held until released, unconfirmed invoke ids,
// a PDU that is no Invoke) and its recovery (ProviderRecovery: NANC 351 actions answered).
// Its counting (ProviderCounting) is tested with the counters, provider_core_metrics_test.cc.
#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

#include "cmip/cmip_operations.h"
#include "cmip/npac_bind.h"
#include "cmip/oids.h"
#include "common/time_source.h"
#include "db/database.h"
#include "db/lease_store.h"
#include "db/outbound_queue.h"
#include "db/provider_store.h"
#include "associations/provider_egress.h"
#include "npac/npacd/core/held_pdus.h"
#include "npac/npacd/core/provider_counting.h"
#include "npac/npacd/core/provider_heartbeats.h"
#include "npac/npacd/core/provider_links.h"
#include "npac/npacd/core/provider_recovery.h"
#include "npac/npacd/core/provider_throttle.h"
#include "tests/db/temp_dir.h"
#include "tests/npac/npacd/event_report_pdu.h"
#include "tunables/registry.h"

namespace {

using namespace npac;
using namespace npac::npacd;
using namespace std::chrono_literals;
namespace as = npac::associations;

struct RegistryFixture {
  npac::db::testing::TempDir dir;
  std::unique_ptr<db::Database> db = db::Database::open(dir.file("npacd.db")).value();
  std::unique_ptr<tunables::TunableRegistry> registry;
  common::ManualTimeSource clock;
  RegistryFixture() {
    REQUIRE(tunables::TunableRegistry::open(*db, [this] { return clock.wallMs(); }, &registry).isOk());
  }
  void set(const std::string& name, const std::string& value) {
    auto status = registry->set(name, "0001", value, "test");
    INFO(status.toString());
    REQUIRE(status.isOk());
  }
};

struct SentLink : AssociationLink {
  std::vector<std::vector<std::uint8_t>> sent;
  bool refuse = false;  // the connection takes nothing
  int attempts = 0;
  bool send(const std::vector<std::uint8_t>& apdu, std::int64_t) override {
    ++attempts;
    if (refuse) return false;
    sent.push_back(apdu);
    return true;
  }
  std::string abort_reason;
  void abort(const std::string& reason) override { abort_reason = reason; }
  void setReleaseReason(const std::string&) override {}
  void requestRelease() override {}
  void countRetransmission() override {}
  bool releasing() const override { return false; }
  AssociationInfo describe() const override { return {}; }
};

// The invoke id of `pdu` if it is a heartbeat (an M-EVENT-REPORT of the heartbeat event).
std::optional<std::int32_t> heartbeatId(const std::vector<std::uint8_t>& pdu) {
  auto apdu = cmip::decodeRoseApdu(pdu);
  REQUIRE(apdu.isOk());
  auto typed = cmip::fromRose(std::get<cmip::RoseInvoke>(apdu.value()));
  REQUIRE(typed.isOk());
  auto* report = std::get_if<cmip::EventReportArgument>(&typed.value().argument);
  if (report == nullptr || report->eventType != cmip::EventTypeId::global(cmip::oids::kNpacHeartbeatEvent)) {
    return std::nullopt;
  }
  return typed.value().invokeId;
}

struct HeartbeatFixture : RegistryFixture {
  ProviderHeartbeats heartbeats{"0001", *registry, clock};
  as::OutstandingRequests ids{as::OutstandingLimits{}};
  std::shared_ptr<SentLink> one = std::make_shared<SentLink>();
  std::shared_ptr<SentLink> two = std::make_shared<SentLink>();
  HeartbeatFixture() {
    set("heartbeat_interval", "10s");
    set("heartbeat_timeout", "5s");
    heartbeats.add(1, one, clock.now());
    heartbeats.add(2, two, clock.now());
  }
  std::vector<db::AssociationId> after(std::chrono::milliseconds by) {
    clock.advance(by);
    return heartbeats.tick(clock.now(), ids);
  }
};

}  // namespace

TEST_CASE("A heartbeat is sent on an association once it was silent for heartbeat_interval and not before") {
  HeartbeatFixture f;
  CHECK(f.after(9999ms).empty());
  CHECK(f.one->sent.empty());
  f.heartbeats.received(2, f.clock.now());  // 2 heard from: its silence starts again
  CHECK(f.after(1ms).empty());
  REQUIRE(f.one->sent.size() == 1);
  CHECK(heartbeatId(f.one->sent[0]).has_value());
  CHECK(f.two->sent.empty());
  CHECK(f.after(1s).empty());  // one unanswered at most
  CHECK(f.one->sent.size() == 1);
}

TEST_CASE("Only the answer with its invoke id on its own association completes a heartbeat") {
  HeartbeatFixture f;
  f.after(10s);
  REQUIRE(f.one->sent.size() == 1);
  REQUIRE(f.two->sent.size() == 1);
  const std::int32_t id_one = heartbeatId(f.one->sent[0]).value();
  const std::int32_t id_two = heartbeatId(f.two->sent[0]).value();
  CHECK(id_one != id_two);  // one allocator
  f.clock.advance(250ms);
  CHECK_FALSE(f.heartbeats.answered(2, id_one, f.clock.now()).has_value());
  const std::optional<double> rtt = f.heartbeats.answered(1, id_one, f.clock.now());
  REQUIRE(rtt.has_value());
  CHECK(*rtt == Approx(0.25));
  CHECK(f.heartbeats.rtt(1) == rtt);
  CHECK_FALSE(f.heartbeats.rtt(2).has_value());
}

TEST_CASE("An association whose heartbeat stays unanswered for heartbeat_timeout is named silent") {
  HeartbeatFixture f;
  f.after(10s);
  const std::int32_t id_two = heartbeatId(f.two->sent[0]).value();
  REQUIRE(f.heartbeats.answered(2, id_two, f.clock.now()).has_value());
  CHECK(f.after(4999ms).empty());
  CHECK(f.after(1ms) == std::vector<db::AssociationId>{1});
}

TEST_CASE("A forgotten association gives back its unanswered heartbeat's invoke id and is never named again") {
  HeartbeatFixture f;
  f.after(10s);
  const std::int32_t id_one = heartbeatId(f.one->sent[0]).value();
  CHECK(f.heartbeats.forget(1) == std::optional<as::InvokeId>(id_one));
  CHECK_FALSE(f.heartbeats.forget(1).has_value());
  const std::vector<db::AssociationId> silent = f.after(5s);
  CHECK(silent == std::vector<db::AssociationId>{2});
}

TEST_CASE("No heartbeat is sent while heartbeat_interval is 0") {
  HeartbeatFixture f;
  f.set("heartbeat_interval", "0");
  CHECK(f.after(1h).empty());
  CHECK(f.one->sent.empty());
}

TEST_CASE("Without throttle limits every message is admitted and no throttle level is reported") {
  RegistryFixture f;
  ProviderThrottle throttle("0001", *f.registry);
  throttle.build();
  CHECK(throttle.admits(f.clock.now(), 100000));
  CHECK(throttle.groupHolds(f.clock.now()) == 0);
  CHECK_FALSE(throttle.level(f.clock.now()).has_value());
  CHECK_FALSE(throttle.throttled());
}

TEST_CASE("throttle_max_rate 20 lets two messages leave per tenth of a second") {
  RegistryFixture f;
  f.set("throttle_max_rate", "20");
  ProviderThrottle throttle("0001", *f.registry);
  throttle.build();
  f.clock.advance(1s);
  for (int i = 0; i < 2; ++i) {
    REQUIRE(throttle.admits(f.clock.now(), 0));
    throttle.onSent(f.clock.now(), false, 0);
  }
  CHECK_FALSE(throttle.admits(f.clock.now(), 0));
  f.clock.advance(kPaceSlot);
  CHECK(throttle.admits(f.clock.now(), 0));
}

TEST_CASE("throttle_max_pending 2 holds a third request while two are unanswered") {
  RegistryFixture f;
  f.set("throttle_max_pending", "2");
  ProviderThrottle throttle("0001", *f.registry);
  throttle.build();
  CHECK(throttle.admits(f.clock.now(), 1));
  CHECK_FALSE(throttle.admits(f.clock.now(), 2));
}

TEST_CASE("A round stopped by the throttle is reported at level 1 or more until a round is not") {
  RegistryFixture f;
  f.set("throttle_max_rate", "20");
  ProviderThrottle throttle("0001", *f.registry);
  throttle.build();
  throttle.settle(true, 0);
  CHECK(throttle.throttled());
  CHECK(throttle.level(f.clock.now()).value_or(0) >= 1);
  ProviderQueueView view;
  throttle.describe(view, f.clock, 0);
  CHECK(view.throttle_level >= 1);
  CHECK_THAT(view.throttle_detail, Catch::Contains("msg/s"));
  throttle.settle(false, 0);
  CHECK_FALSE(throttle.throttled());
  CHECK(throttle.level(f.clock.now()) == std::optional<int>(0));
}

namespace {

struct HeldFixture : RegistryFixture {
  DeliveryStore store{*db, [] {}};
  HeldPdus held{"0001", store};
  std::map<db::AssociationId, std::shared_ptr<SentLink>> links;
  HeldPdus::LinkOf link_of = [this](db::AssociationId id) -> AssociationLink* {
    auto it = links.find(id);
    return it == links.end() ? nullptr : it->second.get();
  };
};

}  // namespace

TEST_CASE("Held PDUs leave in order and an association that refused one gets none of the rest") {
  HeldFixture f;
  f.links[1] = std::make_shared<SentLink>();
  f.links[2] = std::make_shared<SentLink>();
  f.links[1]->refuse = true;
  f.held.hold(1, {0x01}, 0);
  f.held.hold(2, {0x02}, 0);
  f.held.hold(1, {0x03}, 0);
  f.held.hold(2, {0x04}, 0);
  CHECK(f.links[2]->sent.empty());  // nothing leaves before release
  CHECK(f.held.release(f.link_of) == std::vector<db::AssociationId>{1});
  CHECK(f.links[1]->attempts == 1);
  CHECK(f.links[2]->sent == std::vector<std::vector<std::uint8_t>>{{0x02}, {0x04}});
  CHECK(f.held.size() == 0);
}

TEST_CASE("A held PDU of an association lost meanwhile is dropped") {
  HeldFixture f;
  f.held.hold(7, {0x01}, 0);
  CHECK(f.held.release(f.link_of).empty());
  CHECK(f.held.size() == 0);
}

TEST_CASE("The held PDUs of a provider whose lease another node took never leave") {
  HeldFixture f;
  REQUIRE(db::ProviderStore(*f.db).add({"0001", "Provider 0001", db::SystemType::kSoa, true}).isOk());
  auto taken = db::LeaseStore(*f.db).acquire("0001", "a", f.clock.wallMs(), 5000);
  REQUIRE(taken.isOk());
  const std::int64_t epoch = taken->lease.epoch;
  DeliveryStore::Fence fence;
  fence.owner = "a";
  fence.epoch_of = [epoch](const std::string&) { return std::optional<std::int64_t>(epoch); };
  fence.on_fenced = [](const std::string&, const db::Status&) {};
  f.store.setFence(std::move(fence));
  db::NewMessage row{"0001", 1u, 0, npac::npacd::testing::queuedEventReport()};
  row.kind = db::MessageKind::kPush;
  row.confirmed = true;
  const std::vector<db::NewMessage> rows{row};
  auto ids = db::OutboundQueue(*f.db).appendBatch(rows, f.clock.wallMs());
  REQUIRE(ids.isOk());
  // Node b takes the lease after a's ran out; a's `sent` write is refused.
  REQUIRE(db::LeaseStore(*f.db).acquire("0001", "b", f.clock.wallMs() + 10'000, 5000).value().acquired);
  f.links[1] = std::make_shared<SentLink>();
  f.store.markSent("0001", ids.value(), 1, f.clock.wallMs());
  f.held.hold(1, {0x01}, 0);
  f.store.flush();
  REQUIRE(f.store.fenced("0001"));
  CHECK(f.held.release(f.link_of).empty());
  CHECK(f.links[1]->attempts == 0);
  CHECK(f.held.size() == 0);
}

namespace {

constexpr auto kNotifications = as::AssociationFunction::kNotifications;
constexpr std::uint32_t kNotificationsMask = 1u << static_cast<unsigned>(kNotifications);

std::uint64_t counted(const ProviderCounting& counting, ProviderCounters::Outcome outcome, cmip::CmipOpcode opcode) {
  return counting.counters()->pdus[outcome][static_cast<std::size_t>(kNotifications)]
                                  [ProviderCounters::operationIndex(static_cast<int>(opcode))];
}

}  // namespace

namespace {

// One provider's egress and links over a real queue, with associations 1 and 2 bound.
struct LinksFixture : RegistryFixture {
  DeliveryStore store{*db, [] {}};
  std::unique_ptr<as::ProviderEgress> egress =
      as::ProviderEgress::create("0001", dispatch::PolicyConfig{}, as::OutstandingLimits{}).value();
  ProviderCounting counting;
  ProviderLinks links{"0001", clock, store, *egress, counting};
  std::map<db::AssociationId, std::shared_ptr<SentLink>> sessions;

  explicit LinksFixture(bool recovery_mode = false) {
    REQUIRE(db::ProviderStore(*db).add({"0001", "Provider 0001", db::SystemType::kSoa, true}).isOk());
    for (db::AssociationId id : {1, 2}) {
      as::AssociationSpec spec;
      spec.id = static_cast<as::AssociationId>(id);
      spec.nsap = as::Nsap::fromIpv4({127, 0, 0, static_cast<std::uint8_t>(id)});
      spec.functions = as::FunctionMask::of({kNotifications});
      spec.bound_order = static_cast<std::uint64_t>(id);
      egress->onBound(spec, recovery_mode);
      sessions[id] = std::make_shared<SentLink>();
      links.add(id, sessions[id], kNotificationsMask);
    }
  }
  // A row committed for 0001 carrying `pdu`, as the store reads it.
  db::QueuedMessage queue(std::vector<std::uint8_t> pdu, bool confirmed = true) {
    db::NewMessage row{"0001", kNotificationsMask, 0, std::move(pdu)};
    row.kind = db::MessageKind::kPush;
    row.opcode = static_cast<int>(confirmed ? cmip::CmipOpcode::kEventReportConfirmed : cmip::CmipOpcode::kEventReport);
    row.confirmed = confirmed;
    const std::vector<db::NewMessage> rows{row};
    auto ids = db::OutboundQueue(*db).appendBatch(rows, clock.wallMs());
    REQUIRE(ids.isOk());
    auto stored = store.get(ids.value().at(0));
    REQUIRE(stored.isOk());
    return stored.value();
  }
  // Where the egress places `row` now.
  as::Transmission place(const db::QueuedMessage& row) {
    as::OutboundMessage out;
    out.id = static_cast<as::MessageId>(row.id);
    out.function = kNotifications;
    out.confirmed = row.confirmed;
    as::SendOutcome outcome = egress->send(out, clock.now());
    REQUIRE(outcome.ok());
    return *outcome.transmission;
  }
  db::MessageState stateOf(db::MessageId id) {
    store.flush();
    return store.get(id).value().state;
  }
};

std::int32_t invokeIdOf(const std::vector<std::uint8_t>& pdu) {
  auto apdu = cmip::decodeRoseApdu(pdu);
  REQUIRE(apdu.isOk());
  return std::get<cmip::RoseInvoke>(apdu.value()).invokeId;
}

}  // namespace

TEST_CASE("A PDU written on an association leaves only once released and is listed among the latest written") {
  LinksFixture f;
  const db::QueuedMessage row = f.queue(npacd::testing::queuedEventReport());
  const as::Transmission t = f.place(row);
  REQUIRE(f.links.write(t, row, factsOf(row)) == ProviderLinks::Written::kWritten);
  const std::shared_ptr<SentLink>& session = f.sessions.at(static_cast<db::AssociationId>(t.association));
  CHECK(session->sent.empty());
  f.links.release();
  REQUIRE(session->sent.size() == 1);
  CHECK(invokeIdOf(session->sent[0]) == *t.invoke_id);
  REQUIRE(f.counting.recent().size() == 1);
  CHECK(f.counting.recent()[0].association == static_cast<db::AssociationId>(t.association));
}

TEST_CASE("An unconfirmed operation's invoke id stays reserved until its PDU is written and it is then acknowledged") {
  LinksFixture f;
  const db::QueuedMessage row = f.queue(npacd::testing::queuedEventReport(cmip::CmipOpcode::kEventReport), false);
  const as::Transmission t = f.place(row);
  REQUIRE_FALSE(t.invoke_id.has_value());
  REQUIRE(f.links.write(t, row, factsOf(row)) == ProviderLinks::Written::kWritten);
  f.links.count(row, factsOf(row), false);
  f.links.release();
  const std::shared_ptr<SentLink>& session = f.sessions.at(static_cast<db::AssociationId>(t.association));
  REQUIRE(session->sent.size() == 1);
  const std::int32_t reserved = invokeIdOf(session->sent[0]);
  const std::optional<as::InvokeId> other = f.egress->outstanding().reserveInvokeId(t.message);
  CHECK(other != std::optional<as::InvokeId>(reserved));  // still in use
  f.egress->outstanding().releaseInvokeId(other.value());
  f.links.written(row.id);
  CHECK(f.stateOf(row.id) == db::MessageState::kAcknowledged);
  CHECK(counted(f.counting, ProviderCounters::kAcknowledged, cmip::CmipOpcode::kEventReport) == 1);
  CHECK(f.egress->outstanding().reserveInvokeId(t.message) == std::optional<as::InvokeId>(reserved));
}

TEST_CASE("A lost association gives back the invoke ids of its unconfirmed PDUs not yet written") {
  LinksFixture f;
  const db::QueuedMessage row = f.queue(npacd::testing::queuedEventReport(cmip::CmipOpcode::kEventReport), false);
  const as::Transmission t = f.place(row);
  REQUIRE(f.links.write(t, row, factsOf(row)) == ProviderLinks::Written::kWritten);
  f.links.release();
  const auto association = static_cast<db::AssociationId>(t.association);
  const std::int32_t reserved = invokeIdOf(f.sessions.at(association)->sent.at(0));
  f.links.remove(association);
  CHECK(f.links.link(association) == nullptr);
  CHECK(f.egress->outstanding().reserveInvokeId(t.message) == std::optional<as::InvokeId>(reserved));
}

TEST_CASE("A stored PDU that is no ROSE Invoke fails its row and never leaves") {
  LinksFixture f;
  const db::QueuedMessage row = f.queue({0x01, 0x02, 0x03});
  const as::Transmission t = f.place(row);
  CHECK(f.links.write(t, row, factsOf(row)) == ProviderLinks::Written::kBadPdu);
  f.links.release();
  CHECK(f.sessions.at(1)->sent.empty());
  CHECK(f.sessions.at(2)->sent.empty());
  CHECK(f.stateOf(row.id) == db::MessageState::kFailed);
  CHECK(f.counting.recent().empty());
  CHECK(f.egress->outstanding().size() == 0);
}

TEST_CASE("An association that refuses a released PDU is aborted") {
  LinksFixture f;
  const db::QueuedMessage row = f.queue(npacd::testing::queuedEventReport());
  const as::Transmission t = f.place(row);
  const std::shared_ptr<SentLink>& session = f.sessions.at(static_cast<db::AssociationId>(t.association));
  session->refuse = true;
  REQUIRE(f.links.write(t, row, factsOf(row)) == ProviderLinks::Written::kWritten);
  f.links.release();
  CHECK(session->abort_reason == "a PDU could not be written");
}

TEST_CASE("The usable functions and free window slots are those of the associations that can take a PDU now") {
  LinksFixture f;
  const std::uint32_t window = f.egress->outstanding().limits().congestion_window;
  CHECK(f.links.usableFunctions() == kNotificationsMask);
  CHECK(f.links.freeWindowSlots(kNotificationsMask) == 2 * window);
  f.place(f.queue(npacd::testing::queuedEventReport()));
  CHECK(f.links.freeWindowSlots(kNotificationsMask) == 2 * window - 1);
  CHECK(f.links.freeWindowSlots(1u << static_cast<unsigned>(as::AssociationFunction::kQueries)) == 0);
}

namespace {

// A provider's recovery over LinksFixture's links, its associations bound in recovery mode.
struct RecoveryFixture : LinksFixture {
  bool may_deliver = true;
  int wakes = 0;
  ProviderRecovery recovery{"0001", clock, store, *egress, links, counting,
                            ProviderRecovery::Host{[this] { return may_deliver; }, [this] { ++wakes; }}};
  RecoveryFixture() : LinksFixture(/*recovery_mode=*/true) {}

  static cmip::CmipInvoke action(const cmip::Oid& type, std::optional<cmip::OpaqueBer> info = std::nullopt) {
    cmip::ActionArgument argument;
    argument.selection.baseClass = cmip::ObjectClass::global(cmip::oids::kLnpNpacSmsClass);
    argument.selection.baseInstance = cmip::npacSmsInstance();
    argument.actionType = cmip::ActionTypeId::global(type);
    argument.actionInfoArg = std::move(info);
    return cmip::CmipInvoke{42, std::nullopt, cmip::CmipOpcode::kActionConfirmed, argument};
  }
  static cmip::CmipInvoke swim() {
    cmip::RecoveryRequest request;
    request.allUnacknowledged = true;
    return action(cmip::oids::kLnpRecoveryRequestAction, cmip::encodeRecoveryRequest(request));
  }
  // The PDUs association 1 was sent, the action's answer last.
  const std::vector<std::vector<std::uint8_t>>& sent() const { return sessions.at(1)->sent; }
};

// The messageCount of a recovery request's ActionResult.
std::int64_t messageCount(const std::vector<std::uint8_t>& pdu) {
  auto apdu = cmip::decodeRoseApdu(pdu);
  REQUIRE(apdu.isOk());
  auto result = cmip::fromRose(std::get<cmip::RoseReturnResult>(apdu.value()));
  REQUIRE(result.isOk());
  CHECK(result->invokeId == 42);
  const auto& action = std::get<cmip::ActionResult>(result->value);
  REQUIRE(action.actionReply.has_value());
  auto count = cmip::decodeRecoveryReply(action.actionReply->actionReplyInfo.bytes);
  REQUIRE(count.isOk());
  return count.value();
}

cmip::CmipError errorOf(const std::vector<std::uint8_t>& pdu) {
  auto apdu = cmip::decodeRoseApdu(pdu);
  REQUIRE(apdu.isOk());
  auto error = cmip::fromRose(std::get<cmip::RoseReturnError>(apdu.value()));
  REQUIRE(error.isOk());
  return error->error;
}

}  // namespace

TEST_CASE("A recovery request for everything unacknowledged sends those messages before its answer with their count") {
  RecoveryFixture f;
  const db::QueuedMessage first = f.queue(npacd::testing::queuedEventReport());
  const db::QueuedMessage second = f.queue(npacd::testing::queuedEventReport());
  REQUIRE(f.recovery.onAction(1, RecoveryFixture::swim()));
  const std::size_t written = f.sessions.at(1)->sent.size() + f.sessions.at(2)->sent.size() - 1;
  CHECK(written == 2);
  REQUIRE_FALSE(f.sent().empty());
  CHECK(messageCount(f.sent().back()) == 2);
  CHECK(f.stateOf(first.id) == db::MessageState::kSent);
  CHECK(f.stateOf(second.id) == db::MessageState::kSent);
  CHECK(f.counting.counters()->recovery_sessions == 1);
}

TEST_CASE("A recovery request for messages already acknowledged answers with none of them") {
  RecoveryFixture f;
  const db::QueuedMessage row = f.queue(npacd::testing::queuedEventReport());
  f.store.acknowledge("0001", row.id, f.clock.wallMs());
  f.store.flush();
  REQUIRE(f.recovery.onAction(1, RecoveryFixture::swim()));
  REQUIRE(f.sent().size() == 1);
  CHECK(messageCount(f.sent()[0]) == 0);
  CHECK(f.sessions.at(2)->sent.empty());
}

TEST_CASE("A recovery request on a node that does not hold the provider's lease is refused with processingFailure") {
  RecoveryFixture f;
  f.queue(npacd::testing::queuedEventReport());
  f.may_deliver = false;
  REQUIRE(f.recovery.onAction(1, RecoveryFixture::swim()));
  REQUIRE(f.sent().size() == 1);
  CHECK(errorOf(f.sent()[0]) == cmip::CmipError::kProcessingFailure);
  CHECK(f.sessions.at(2)->sent.empty());
  CHECK(f.counting.counters()->recovery_sessions == 0);
}

TEST_CASE("Recovery complete answers, leaves recovery mode and wakes delivery for the messages held meanwhile") {
  RecoveryFixture f;
  REQUIRE_FALSE(f.egress->recovery().mayPush());
  REQUIRE(f.recovery.onAction(2, RecoveryFixture::action(cmip::oids::kLnpRecoveryCompleteAction)));
  REQUIRE(f.sessions.at(2)->sent.size() == 1);
  auto apdu = cmip::decodeRoseApdu(f.sessions.at(2)->sent[0]);
  REQUIRE(apdu.isOk());
  CHECK(std::holds_alternative<cmip::RoseReturnResult>(apdu.value()));
  CHECK(f.egress->recovery().mayPush());
  CHECK(f.wakes == 1);
  // A second one finds the provider out of recovery mode.
  REQUIRE(f.recovery.onAction(2, RecoveryFixture::action(cmip::oids::kLnpRecoveryCompleteAction)));
  REQUIRE(f.sessions.at(2)->sent.size() == 2);
  CHECK(errorOf(f.sessions.at(2)->sent[1]) == cmip::CmipError::kProcessingFailure);
  CHECK(f.wakes == 1);
}

TEST_CASE("A recovery action on another object instance is answered noSuchObjectInstance") {
  RecoveryFixture f;
  cmip::CmipInvoke invoke = RecoveryFixture::swim();
  std::get<cmip::ActionArgument>(invoke.argument).selection.baseInstance = cmip::ObjectInstance{};
  REQUIRE(f.recovery.onAction(1, invoke));
  REQUIRE(f.sent().size() == 1);
  CHECK(errorOf(f.sent()[0]) == cmip::CmipError::kNoSuchObjectInstance);
}

TEST_CASE("An action that is not a recovery action or comes on no bound association is left to the application") {
  RecoveryFixture f;
  CHECK_FALSE(f.recovery.onAction(1, RecoveryFixture::action(cmip::oids::kLnpNpacSmsClass)));
  CHECK_FALSE(f.recovery.onAction(9, RecoveryFixture::swim()));
  CHECK(f.sent().empty());
}
