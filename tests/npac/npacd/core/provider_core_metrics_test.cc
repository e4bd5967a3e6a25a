// ProviderCore's counters for GET /metrics (core_metrics.h) on a manual clock: every
// counter that should move moves, by value — PDUs sent, acknowledged, retransmitted and
// failed under their association function and CMIP operation, the response and
// heartbeat round trips, an ended association's series, and nothing at all while
// counting is off. Real SQLite file and tunable registry; the associations are recording
// links as in provider_core_test.cc. And the part that keeps them, ProviderCounting, on its
// own: series, counting off, the latest PDUs written.
#include "npac/npacd/core/provider_core.h"

#include <catch2/catch.hpp>

#include <map>
#include <set>

#include "cmip/npac_bind.h"
#include "cmip/oids.h"
#include "common/time_source.h"
#include "db/database.h"
#include "db/outbound_queue.h"
#include "db/provider_store.h"
#include "npac/npacd/core/core_metrics.h"
#include "npac/npacd/core/provider_counting.h"
#include "tests/db/temp_dir.h"
#include "tests/npac/npacd/core/recording_link.h"

namespace {

using namespace npac;
using namespace npac::npacd;
using npac::npacd::testing::RecordingLink;
using npac::npacd::testing::invokeIdOf;
using npac::npacd::testing::resultFor;
using npac::npacd::testing::deliverRound;
using namespace std::chrono_literals;
namespace as = npac::associations;
using F = as::AssociationFunction;
using Op = cmip::CmipOpcode;

cmip::RoseApdu errorFor(std::int32_t invoke_id) {
  return cmip::RoseReturnError{cmip::InvokeId{invoke_id},
                               cmip::Code::local(static_cast<std::int32_t>(cmip::CmipError::kProcessingFailure)),
                               std::nullopt};
}

struct MetricsFixture : ProviderCore::Host {
  npac::db::testing::TempDir dir;
  std::unique_ptr<db::Database> db;
  std::unique_ptr<tunables::TunableRegistry> registry;
  npac::common::ManualTimeSource clock;
  std::unique_ptr<DeliveryStore> store;
  std::unique_ptr<ProviderCore> core;
  std::set<std::string> wakes;
  std::map<db::AssociationId, std::shared_ptr<RecordingLink>> links;

  MetricsFixture() {
    auto opened = db::Database::open(dir.file("npacd.db"));
    REQUIRE(opened.isOk());
    db = std::move(opened).value();
    REQUIRE(tunables::TunableRegistry::open(*db, [this] { return clock.wallMs(); }, &registry).isOk());
    store = std::make_unique<DeliveryStore>(*db, [] {});
    REQUIRE(db::ProviderStore(*db).add({"0001", "Provider 0001", db::SystemType::kSoa, true}).isOk());
    core = std::make_unique<ProviderCore>("0001", clock, *registry, *store, *this);
  }
  void wakeDelivery(const std::string& spid) override { wakes.insert(spid); }
  void wakeDeliveryAfter(const std::string& spid, as::Duration) override { wakes.insert(spid); }
  bool mayDeliver(const std::string&) const override { return true; }  // one node, lease always held

  void set(const std::string& name, const std::string& value) {
    REQUIRE(registry->set(name, "0001", value, "test").isOk());
    core->applyTunables();
  }
  RecordingLink& bind(db::AssociationId id, as::FunctionMask functions) {
    auto link = std::make_shared<RecordingLink>();
    link->on_abort = [this, id] { core->onLost(id); };
    as::AssociationSpec spec;
    spec.id = static_cast<as::AssociationId>(id);
    spec.nsap = as::Nsap::fromIpv4({127, 0, 0, static_cast<std::uint8_t>(id)});
    spec.functions = functions;
    spec.bound_order = static_cast<std::uint64_t>(id);
    core->onBound(link, spec, false);
    links[id] = link;
    return *link;
  }
  // M-EVENT-REPORTs needing `function`, queued with `opcode` (confirmed or not); `pdu`
  // replaces the encoded Invoke when given.
  std::vector<db::MessageId> submit(F function, int count, Op opcode = Op::kEventReportConfirmed,
                                    std::optional<std::vector<std::uint8_t>> pdu = std::nullopt) {
    cmip::EventReportArgument argument;
    argument.managedObjectClass = cmip::ObjectClass::global(cmip::oids::kLnpNpacSmsClass);
    argument.managedObjectInstance = cmip::npacSmsInstance();
    argument.eventType = cmip::EventTypeId::global(cmip::oids::kNpacHeartbeatEvent);
    std::vector<db::NewMessage> rows;
    for (int i = 0; i < count; ++i) {
      db::NewMessage row{"0001", 1u << static_cast<unsigned>(function), 0,
                         pdu ? *pdu : encodeQueuedInvoke(cmip::CmipInvoke{0, std::nullopt, opcode, argument})};
      row.kind = db::MessageKind::kPush;
      row.opcode = static_cast<int>(opcode);
      row.confirmed = cmip::isConfirmedCmipOpcode(opcode);
      rows.push_back(std::move(row));
    }
    auto ids = db::OutboundQueue(*db).appendBatch(rows, clock.wallMs());
    REQUIRE(ids.isOk());
    core->onSubmitted(ids.value());
    return ids.value();
  }
  // Turns heartbeats on (10 s), lets one leave on `link` (association 1) and answers it
  // `rtt` of clock later.
  void answerHeartbeatAfter(RecordingLink& link, std::chrono::milliseconds rtt) {
    set("heartbeat_interval", "10s");
    clock.advance(10s);
    core->tick();
    REQUIRE(link.sent.size() == 1);
    clock.advance(rtt);
    core->onAnswer(1, resultFor(invokeIdOf(link.sent[0].first)));
  }
  void run() {
    for (int guard = 0; guard < 1000 && !wakes.empty(); ++guard) {
      wakes.clear();
      deliverRound(*core, *store);
    }
    store->flush();
  }
  std::uint64_t count(ProviderCounters::Outcome outcome, F function, Op op) {
    CoreMetrics::Provider snapshot = core->view().metrics();
    REQUIRE(snapshot.counters.has_value());
    return snapshot.counters->pdus[outcome][static_cast<std::size_t>(function)][static_cast<std::size_t>(op)];
  }
};

const as::FunctionMask kTwoFunctions = as::FunctionMask::of({F::kSoaManagement, F::kNotifications});

}  // namespace

TEST_CASE("Ten confirmed PDUs answered with results count ten sent and ten acknowledged under their function and operation") {
  MetricsFixture f;
  RecordingLink& link = f.bind(1, kTwoFunctions);
  f.submit(F::kNotifications, 10);
  f.run();
  REQUIRE(link.sent.size() == 10);
  CHECK(f.count(ProviderCounters::kSent, F::kNotifications, Op::kEventReportConfirmed) == 10);
  CHECK(f.count(ProviderCounters::kAcknowledged, F::kNotifications, Op::kEventReportConfirmed) == 0);
  f.clock.advance(200ms);
  for (auto& [pdu, tag] : link.sent) f.core->onAnswer(1, resultFor(invokeIdOf(pdu)));
  CHECK(f.count(ProviderCounters::kAcknowledged, F::kNotifications, Op::kEventReportConfirmed) == 10);
  CHECK(f.count(ProviderCounters::kSent, F::kSoaManagement, Op::kEventReportConfirmed) == 0);
  CHECK(f.count(ProviderCounters::kFailed, F::kNotifications, Op::kEventReportConfirmed) == 0);
  // Each answered 200 ms of clock after its send: all ten in the (0.1, 0.25] bucket.
  const common::Histogram rtt = f.core->view().metrics().counters->response_rtt;
  CHECK(rtt.count() == 10);
  CHECK(rtt.sum() == Approx(2.0));
  const auto bucket = static_cast<std::size_t>(
      std::find(kRoundTripBuckets.begin(), kRoundTripBuckets.end(), 0.25) - kRoundTripBuckets.begin());
  CHECK(rtt.counts()[bucket] == 10);
}

TEST_CASE("An unconfirmed PDU counts as acknowledged once written") {
  MetricsFixture f;
  RecordingLink& link = f.bind(1, kTwoFunctions);
  f.submit(F::kSoaManagement, 3, Op::kEventReport);
  f.run();
  REQUIRE(link.sent.size() == 3);
  CHECK(f.count(ProviderCounters::kSent, F::kSoaManagement, Op::kEventReport) == 3);
  for (auto& [pdu, tag] : link.sent) f.core->onWritten(1, tag);
  CHECK(f.count(ProviderCounters::kAcknowledged, F::kSoaManagement, Op::kEventReport) == 3);
}

TEST_CASE("A PDU answered with a ReturnError counts as failed under its operation") {
  MetricsFixture f;
  RecordingLink& link = f.bind(1, kTwoFunctions);
  f.submit(F::kNotifications, 2, Op::kActionConfirmed);
  f.run();
  REQUIRE(link.sent.size() == 2);
  f.core->onAnswer(1, errorFor(invokeIdOf(link.sent[0].first)));
  f.core->onAnswer(1, resultFor(invokeIdOf(link.sent[1].first)));
  CHECK(f.count(ProviderCounters::kFailed, F::kNotifications, Op::kActionConfirmed) == 1);
  CHECK(f.count(ProviderCounters::kAcknowledged, F::kNotifications, Op::kActionConfirmed) == 1);
}

TEST_CASE("A stored PDU that is not a ROSE Invoke counts as failed and not as sent") {
  MetricsFixture f;
  f.bind(1, kTwoFunctions);
  f.submit(F::kNotifications, 1, Op::kEventReportConfirmed, std::vector<std::uint8_t>{0x05, 0x00});
  f.run();
  CHECK(f.count(ProviderCounters::kFailed, F::kNotifications, Op::kEventReportConfirmed) == 1);
  CHECK(f.count(ProviderCounters::kSent, F::kNotifications, Op::kEventReportConfirmed) == 0);
}

TEST_CASE("Requests in flight on a lost association count as retransmitted when re-sent on the survivor") {
  MetricsFixture f;
  RecordingLink& one = f.bind(1, kTwoFunctions);
  RecordingLink& two = f.bind(2, kTwoFunctions);
  f.submit(F::kNotifications, 4);
  f.run();
  REQUIRE(one.sent.size() + two.sent.size() == 4);
  const std::size_t on_one = one.sent.size();
  REQUIRE(on_one > 0);
  two.sent.clear();
  f.links[1]->abort("test: connection lost");
  f.run();
  CHECK(two.sent.size() == on_one);
  CHECK(f.count(ProviderCounters::kRetransmitted, F::kNotifications, Op::kEventReportConfirmed) == on_one);
  CHECK(f.count(ProviderCounters::kSent, F::kNotifications, Op::kEventReportConfirmed) == 4 + on_one);
  for (auto& [pdu, tag] : two.sent) f.core->onAnswer(2, resultFor(invokeIdOf(pdu)));
  CHECK(f.count(ProviderCounters::kAcknowledged, F::kNotifications, Op::kEventReportConfirmed) == on_one);
}

TEST_CASE("A heartbeat answered 300 ms after it was sent is observed in the heartbeat round trip") {
  MetricsFixture f;
  RecordingLink& link = f.bind(1, kTwoFunctions);
  f.answerHeartbeatAfter(link, 300ms);
  const common::Histogram heartbeat = f.core->view().metrics().counters->heartbeat_rtt;
  CHECK(heartbeat.count() == 1);
  CHECK(heartbeat.sum() == Approx(0.3));
  CHECK(f.core->view().metrics().counters->response_rtt.count() == 0);
}

TEST_CASE("An association that ended leaves the provider's metrics snapshot") {
  MetricsFixture f;
  f.bind(1, kTwoFunctions);
  f.bind(2, kTwoFunctions);
  REQUIRE(f.core->view().metrics().associations.size() == 2);
  f.links[1]->abort("test: connection lost");
  const CoreMetrics::Provider snapshot = f.core->view().metrics();
  REQUIRE(snapshot.associations.size() == 1);
  CHECK(snapshot.associations[0].id == 2);
  CHECK(snapshot.associations[0].state == "bound");
}

TEST_CASE("With counting off the provider keeps no counters and its snapshot has none") {
  MetricsFixture f;
  f.core->setCounting(false);
  RecordingLink& link = f.bind(1, kTwoFunctions);
  f.submit(F::kNotifications, 3);
  f.run();
  REQUIRE(link.sent.size() == 3);
  for (auto& [pdu, tag] : link.sent) f.core->onAnswer(1, resultFor(invokeIdOf(pdu)));
  const CoreMetrics::Provider snapshot = f.core->view().metrics();
  CHECK_FALSE(snapshot.counters.has_value());
  CHECK(snapshot.associations.size() == 1);  // the live state is still there
}

TEST_CASE("The egress view lists the latest PDUs written with the association each went on, oldest first") {
  MetricsFixture f;
  f.bind(1, kTwoFunctions);
  f.bind(2, kTwoFunctions);
  f.submit(F::kNotifications, 6, Op::kEventReport);
  f.run();
  ProviderEgressView view = f.core->view().egress();
  CHECK(view.policy == "round-robin");
  REQUIRE(view.recent.size() == 6);
  for (std::size_t i = 0; i < 6; ++i) {
    INFO("PDU " << i);
    CHECK(view.recent[i].association == (i % 2 == 0 ? 1 : 2));  // strict rotation (NANC 353)
    CHECK(view.recent[i].function == "notifications");
    CHECK_FALSE(view.recent[i].retransmission);
  }
  // The ring keeps the latest kRecentPicks only.
  f.submit(F::kNotifications, 100, Op::kEventReport);
  f.run();
  view = f.core->view().egress();
  CHECK(view.recent.size() == kRecentPicks);
}

TEST_CASE("An answered heartbeat's round trip is listed with its association") {
  MetricsFixture f;
  RecordingLink& link = f.bind(1, kTwoFunctions);
  std::vector<AssociationInfo> listed;
  f.core->view().describe(listed);
  REQUIRE(listed.size() == 1);
  CHECK_FALSE(listed[0].heartbeat_rtt_seconds.has_value());
  f.answerHeartbeatAfter(link, 250ms);
  listed.clear();
  f.core->view().describe(listed);
  REQUIRE(listed[0].heartbeat_rtt_seconds.has_value());
  CHECK(*listed[0].heartbeat_rtt_seconds == Approx(0.25));
}

TEST_CASE("A weighted provider's associations are listed with their weight and Current Load %") {
  MetricsFixture f;
  f.set("egress_policy", "weighted");
  f.bind(1, kTwoFunctions);
  f.bind(2, kTwoFunctions);
  std::vector<AssociationInfo> listed;
  f.core->view().describe(listed);
  REQUIRE(listed.size() == 2);
  for (const AssociationInfo& a : listed) {
    REQUIRE(a.egress.has_value());
    CHECK(a.egress->weight == 1);
    CHECK(a.egress->load_percent == std::optional<std::uint32_t>(50));  // equal weights, one group
    CHECK_FALSE(a.egress->lrtm.has_value());
  }
}

namespace {

constexpr std::uint32_t kNotificationsMask = 1u << static_cast<unsigned>(F::kNotifications);

db::QueuedMessage countedRow(db::MessageId id, Op opcode) {
  db::QueuedMessage row;
  row.id = id;
  row.function_mask = kNotificationsMask;
  row.opcode = static_cast<int>(opcode);
  return row;
}

std::uint64_t counted(const ProviderCounting& counting, ProviderCounters::Outcome outcome, Op opcode) {
  return counting.counters()->pdus[outcome][static_cast<std::size_t>(F::kNotifications)]
                                  [ProviderCounters::operationIndex(static_cast<int>(opcode))];
}

}  // namespace

TEST_CASE("An answered confirmed request is counted acknowledged under the function and operation it was sent as") {
  ProviderCounting counting;
  const auto confirmed = Op::kEventReportConfirmed;
  const std::optional<PduSeries> series = counting.written(countedRow(7, confirmed), true, false);
  REQUIRE(series.has_value());
  CHECK(series->function == F::kNotifications);
  counting.answered(7, ProviderCounters::kAcknowledged);
  CHECK(counted(counting, ProviderCounters::kSent, confirmed) == 1);
  CHECK(counted(counting, ProviderCounters::kRetransmitted, confirmed) == 0);
  CHECK(counted(counting, ProviderCounters::kAcknowledged, confirmed) == 1);
}

TEST_CASE("A retransmission is counted both sent and retransmitted") {
  ProviderCounting counting;
  const auto confirmed = Op::kEventReportConfirmed;
  counting.written(countedRow(7, confirmed), true, true);
  CHECK(counted(counting, ProviderCounters::kSent, confirmed) == 1);
  CHECK(counted(counting, ProviderCounters::kRetransmitted, confirmed) == 1);
}

TEST_CASE("Counting turned off counts nothing and forgets what the requests in flight were") {
  ProviderCounting counting;
  const auto confirmed = Op::kEventReportConfirmed;
  counting.written(countedRow(7, confirmed), true, false);
  counting.setCounting(false);
  CHECK_FALSE(counting.on());
  CHECK(counting.counters() == nullptr);
  CHECK_FALSE(counting.written(countedRow(8, confirmed), true, false).has_value());
  counting.answered(8, ProviderCounters::kAcknowledged);
  counting.setCounting(true);
  counting.answered(7, ProviderCounters::kAcknowledged);
  // Its series was forgotten: counted under the unknown operation.
  CHECK(counted(counting, ProviderCounters::kAcknowledged, confirmed) == 0);
  CHECK(counting.counters()->pdus[ProviderCounters::kAcknowledged][static_cast<std::size_t>(F::kNotifications)]
                                 [ProviderCounters::kUnknownOperation] == 1);
  CHECK(counted(counting, ProviderCounters::kSent, confirmed) == 0);
}

TEST_CASE("The latest PDUs written are listed oldest first and at most kRecentPicks of them even with counting off") {
  ProviderCounting counting;
  counting.setCounting(false);
  const auto last = static_cast<db::AssociationId>(kRecentPicks) + 3;
  for (db::AssociationId id = 1; id <= last; ++id) {
    counting.picked(id, F::kNotifications, id % 2 == 0, static_cast<db::TimeMs>(id) * 10);
  }
  const std::vector<ProviderEgressView::Pick> recent = counting.recent();
  REQUIRE(recent.size() == kRecentPicks);
  CHECK(recent.front().association == 4);
  CHECK(recent.front().at == 40);
  CHECK(recent.front().retransmission);
  CHECK(recent.back().association == last);
  CHECK(recent.back().function == "notifications");
}
