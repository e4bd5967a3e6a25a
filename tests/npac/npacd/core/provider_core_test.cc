// ProviderCore on a manual clock: heartbeats, silent associations, no head-of-line
// blocking, throttling and wait reasons, in milliseconds of test time. Real SQLite file
// and tunable registry; the associations are recording links (the socket side is covered
// end to end by the npacd_*_test.cc cases).
#include "npac/npacd/core/provider_core.h"

#include <catch2/catch.hpp>

#include <deque>
#include <map>
#include <set>

#include "cmip/npac_bind.h"
#include "cmip/oids.h"
#include "common/time_source.h"
#include "db/lease_store.h"
#include "db/outbound_queue.h"
#include "db/provider_store.h"
#include "npac/npacd/core/core_service.h"
#include "npac/npacd/core/retention_purge.h"
#include "tests/db/temp_dir.h"
#include "tests/npac/npacd/event_report_pdu.h"
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

bool isHeartbeat(const std::vector<std::uint8_t>& pdu) {
  auto apdu = cmip::decodeRoseApdu(pdu);
  REQUIRE(apdu.isOk());
  auto typed = cmip::fromRose(std::get<cmip::RoseInvoke>(apdu.value()));
  REQUIRE(typed.isOk());
  auto* report = std::get_if<cmip::EventReportArgument>(&typed.value().argument);
  return report != nullptr &&
         report->eventType == cmip::EventTypeId::global(cmip::oids::kNpacHeartbeatEvent);
}

struct CoreFixture : ProviderCore::Host {
  npac::db::testing::TempDir dir;
  std::unique_ptr<db::Database> db;
  std::unique_ptr<tunables::TunableRegistry> registry;
  npac::common::ManualTimeSource clock;
  std::unique_ptr<DeliveryStore> store;
  std::map<std::string, std::unique_ptr<ProviderCore>> cores;
  std::set<std::string> wakes;
  std::set<std::string> delayed;
  std::map<db::AssociationId, std::shared_ptr<RecordingLink>> links;
  std::map<db::AssociationId, std::string> owner;
  std::set<db::AssociationId> lost;
  bool may_deliver = true;  // the node holds the provider's lease

  CoreFixture() {
    auto opened = db::Database::open(dir.file("npacd.db"));
    REQUIRE(opened.isOk());
    db = std::move(opened).value();
    REQUIRE(tunables::TunableRegistry::open(*db, [this] { return clock.wallMs(); }, &registry).isOk());
    store = std::make_unique<DeliveryStore>(*db, [] {});
  }
  void wakeDelivery(const std::string& spid) override { wakes.insert(spid); }
  void wakeDeliveryAfter(const std::string& spid, as::Duration) override { delayed.insert(spid); }
  bool mayDeliver(const std::string&) const override { return may_deliver; }
  const ThrottleGroups* groups = nullptr;  // the provisioned throttle groups, if a test has some
  std::shared_ptr<ThrottleGroup> throttleGroupOf(const std::string& spid) const override {
    return groups != nullptr ? groups->groupOf(spid) : nullptr;
  }

  void set(const std::string& name, const std::string& spid, const std::string& value) {
    auto status = registry->set(name, spid, value, "test");
    INFO(status.toString());
    REQUIRE(status.isOk());
    for (auto& [s, c] : cores) {
      if (spid.empty() || s == spid) c->applyTunables();
    }
  }
  ProviderCore& provider(const std::string& spid) {
    auto& slot = cores[spid];
    if (!slot) {
      REQUIRE(db::ProviderStore(*db).add({spid, "Provider " + spid, db::SystemType::kSoa, true}).isOk());
      slot = std::make_unique<ProviderCore>(spid, clock, *registry, *store, *this);
    }
    return *slot;
  }
  RecordingLink& bind(const std::string& spid, db::AssociationId id, as::FunctionMask functions) {
    auto link = std::make_shared<RecordingLink>();
    link->on_abort = [this, spid, id] {
      lost.insert(id);
      cores[spid]->onLost(id);
    };
    as::AssociationSpec spec;
    spec.id = static_cast<as::AssociationId>(id);
    spec.nsap = as::Nsap::fromIpv4({127, 0, 0, static_cast<std::uint8_t>(id)});
    spec.functions = functions;
    spec.bound_order = static_cast<std::uint64_t>(id);
    provider(spid).onBound(link, spec, false);
    links[id] = link;
    owner[id] = spid;
    return *link;
  }
  // Confirmed M-EVENT-REPORTs for `spid` needing `function`.
  std::vector<db::MessageId> submit(const std::string& spid, F function, int count) {
    std::vector<db::NewMessage> rows;
    for (int i = 0; i < count; ++i) {
      db::NewMessage row{spid, 1u << static_cast<unsigned>(function), 0, testing::queuedEventReport()};
      row.kind = db::MessageKind::kPush;
      row.opcode = static_cast<int>(cmip::CmipOpcode::kEventReportConfirmed);
      row.confirmed = true;
      rows.push_back(std::move(row));
    }
    auto ids = db::OutboundQueue(*db).appendBatch(rows, clock.wallMs());
    REQUIRE(ids.isOk());
    provider(spid).onSubmitted(ids.value());
    return ids.value();
  }
  void run() {
    for (int guard = 0; guard < 10000 && !wakes.empty(); ++guard) {
      const std::string spid = *wakes.begin();
      wakes.erase(wakes.begin());
      deliverRound(*cores[spid], *store);
    }
    store->flush();
  }
  void tick() {
    for (auto& [spid, c] : cores) c->tick();
    run();
  }
  db::MessageState state(db::MessageId id) {
    auto row = db::OutboundQueue(*db).get(id);
    REQUIRE(row.isOk());
    return row->state;
  }
};

const as::FunctionMask kAll =
    as::FunctionMask::of({F::kSoaManagement, F::kNotifications, F::kQueries});

}  // namespace

TEST_CASE("A heartbeat answer completes only the heartbeat of its own provider and association") {
  CoreFixture f;
  RecordingLink& one = f.bind("0001", 1, kAll);
  RecordingLink& two = f.bind("0002", 2, kAll);
  for (const char* spid : {"0001", "0002"}) {
    f.set("heartbeat_interval", spid, "10s");
    f.set("heartbeat_timeout", spid, "20s");
  }
  for (int interval = 0; interval < 6; ++interval) {
    f.clock.advance(10s);
    f.tick();
    // 0001 answers every heartbeat it got; 0002 never does.
    for (auto& [pdu, tag] : one.sent) {
      if (isHeartbeat(pdu)) f.cores["0001"]->onAnswer(1, resultFor(invokeIdOf(pdu)));
    }
    one.sent.clear();
  }
  CHECK(f.lost == std::set<db::AssociationId>{2});
  CHECK(two.abort_reason.find("heartbeat") != std::string::npos);
  CHECK(f.cores["0001"]->associationCount() > 0);
}

TEST_CASE("Of five providers with heartbeats on exactly the silent one is aborted after heartbeat_timeout") {
  CoreFixture f;
  for (int p = 1; p <= 5; ++p) {
    const std::string spid = std::string("000") + std::to_string(p);
    f.bind(spid, p, kAll);
    f.set("heartbeat_interval", spid, "10s");
    f.set("heartbeat_timeout", spid, "30s");
  }
  // 0003 stays silent; it must be gone 10 s (interval) + 30 s (timeout) later, not sooner.
  for (int step = 1; step <= 10; ++step) {
    f.clock.advance(10s);
    f.tick();
    for (int p = 1; p <= 5; ++p) {
      if (p == 3) continue;
      auto& link = *f.links[p];
      for (auto& [pdu, tag] : link.sent) {
        if (isHeartbeat(pdu)) f.cores[f.owner[p]]->onAnswer(p, resultFor(invokeIdOf(pdu)));
      }
      link.sent.clear();
    }
    if (step < 4) CHECK(f.lost.empty());
  }
  CHECK(f.lost == std::set<db::AssociationId>{3});
}

TEST_CASE("A heartbeat's invoke id is never one an outstanding request of the provider uses") {
  CoreFixture f;
  RecordingLink& link = f.bind("0001", 1, kAll);
  f.set("heartbeat_interval", "0001", "10s");
  f.submit("0001", F::kNotifications, 5);
  f.run();
  REQUIRE(link.sent.size() == 5);
  std::set<std::int32_t> ids;
  for (auto& [pdu, tag] : link.sent) ids.insert(invokeIdOf(pdu));
  link.sent.clear();
  f.clock.advance(10s);
  f.tick();
  REQUIRE(link.sent.size() == 1);
  REQUIRE(isHeartbeat(link.sent[0].first));
  CHECK(ids.count(invokeIdOf(link.sent[0].first)) == 0);
}

TEST_CASE("A congested function does not hold back messages of another function") {
  CoreFixture f;
  f.set("congestion_window", "", "1");
  RecordingLink& x = f.bind("0001", 1, as::FunctionMask::of({F::kSoaManagement}));
  RecordingLink& y = f.bind("0001", 2, as::FunctionMask::of({F::kNotifications}));
  const auto soa = f.submit("0001", F::kSoaManagement, 2);
  const auto notes = f.submit("0001", F::kNotifications, 4);
  f.run();
  REQUIRE(x.sent.size() == 1);  // X holds one (its window); it never answers
  for (std::size_t i = 0; i < notes.size(); ++i) {
    REQUIRE(y.sent.size() == i + 1);
    f.cores["0001"]->onAnswer(2, resultFor(invokeIdOf(y.sent.back().first)));
    f.run();
  }
  for (db::MessageId id : notes) CHECK(f.state(id) == db::MessageState::kAcknowledged);
  CHECK(f.state(soa[1]) == db::MessageState::kQueued);
  CHECK(f.cores["0001"]->view().waitReason(F::kSoaManagement) == WaitReason::kAllCongested);
  CHECK_FALSE(f.cores["0001"]->view().waitReason(F::kNotifications).has_value());
  CHECK(f.cores["0001"]->view().waitReason(F::kQueries) == WaitReason::kNoAssociationForFunction);
}

TEST_CASE("A silent association takes no new PDU and is aborted at retry_attempts timeouts although its retries are answered elsewhere") {
  CoreFixture f;
  f.set("response_timeout", "", "1s");
  f.set("retry_attempts", "", "2");
  RecordingLink& a = f.bind("0001", 1, kAll);
  RecordingLink& b = f.bind("0001", 2, kAll);
  auto answerB = [&] {
    for (auto& [pdu, tag] : b.sent) f.cores["0001"]->onAnswer(2, resultFor(invokeIdOf(pdu)));
    b.sent.clear();
    f.run();
  };
  const auto first = f.submit("0001", F::kNotifications, 4);  // 2 on A, 2 on B
  f.run();
  REQUIRE(a.sent.size() == 2);
  answerB();
  f.clock.advance(1s);
  f.tick();  // A's two are due: silent (timeout 1), retried on B
  answerB();
  CHECK(f.lost.empty());
  CHECK(f.cores["0001"]->view().waitReason(F::kNotifications) == std::nullopt);  // B takes them
  a.sent.clear();
  const auto later = f.submit("0001", F::kNotifications, 6);
  f.run();
  CHECK(a.sent.empty());  // silent: no new PDU
  answerB();
  CHECK(f.cores["0001"]->view().queue().associations.front().silent);
  f.clock.advance(1s);
  f.tick();  // still silent a response_timeout later: timeout 2 of retry_attempts 2 → aborted
  CHECK(f.lost == std::set<db::AssociationId>{1});
  CHECK(a.abort_reason.find("response_timeout") != std::string::npos);
  answerB();
  for (db::MessageId id : first) CHECK(f.state(id) == db::MessageState::kAcknowledged);
  for (db::MessageId id : later) CHECK(f.state(id) == db::MessageState::kAcknowledged);
}

TEST_CASE("A silent association is aborted once retry_attempts of its requests' timeouts passed") {
  CoreFixture f;
  f.set("response_timeout", "", "1s");
  f.set("retry_attempts", "", "2");
  f.set("congestion_window", "", "1");
  RecordingLink& a = f.bind("0001", 1, kAll);
  f.submit("0001", F::kNotifications, 3);
  f.run();
  REQUIRE(a.sent.size() == 1);
  f.clock.advance(1s);
  f.tick();  // timeout 1: silent, retried on A (no other association)
  CHECK(f.lost.empty());
  CHECK(f.cores["0001"]->view().waitReason(F::kNotifications) == WaitReason::kSilent);
  f.clock.advance(1s);
  f.tick();  // timeout 2 → aborted; its messages back to queued
  CHECK(f.lost == std::set<db::AssociationId>{1});
  CHECK(a.abort_reason.find("response_timeout") != std::string::npos);
  CHECK(f.cores["0001"]->view().waitReason(F::kNotifications) == WaitReason::kNotBound);
}

TEST_CASE("throttle_max_rate 20 spreads 100 messages over more than 4 seconds and holds none back for good") {
  CoreFixture f;
  RecordingLink& link = f.bind("0001", 1, kAll);
  f.set("throttle_max_rate", "0001", "20");
  const auto ids = f.submit("0001", F::kNotifications, 100);
  std::vector<std::pair<std::int64_t, std::size_t>> sends;  // ms, count at that step
  int max_level = 0;
  for (std::int64_t ms = 0; ms <= 10'000 && link.sent.size() < 100; ms += 50) {
    const std::size_t before = link.sent.size();
    f.run();
    deliverRound(*f.cores["0001"], *f.store);  // the host's delayed wake-up
    for (std::size_t i = before; i < link.sent.size(); ++i) {
      f.cores["0001"]->onAnswer(1, resultFor(invokeIdOf(link.sent[i].first)));
    }
    f.run();
    if (link.sent.size() > before) sends.emplace_back(ms, link.sent.size() - before);
    if (link.sent.size() < 100) {
      max_level = std::max(max_level, f.cores["0001"]->view().queue().throttle_level);
    }
    f.clock.advance(50ms);
  }
  REQUIRE(link.sent.size() == 100);
  CHECK(sends.back().first - sends.front().first >= 4000);
  // Never more than 20 within any second.
  for (const auto& [at, n] : sends) {
    std::size_t in_window = 0;
    for (const auto& [other, m] : sends) {
      if (other >= at && other < at + 1000) in_window += m;
    }
    CHECK(in_window <= 20);
  }
  CHECK(max_level >= 1);
  for (db::MessageId id : ids) CHECK(f.state(id) == db::MessageState::kAcknowledged);
}

TEST_CASE("The retention purge removes acknowledged messages past queue_retention and never one not acknowledged") {
  CoreFixture f;
  f.set("queue_retention", "", "1h");
  RecordingLink& link = f.bind("0001", 1, kAll);
  const auto acked = f.submit("0001", F::kNotifications, 3);
  f.run();
  for (auto& [pdu, tag] : link.sent) f.cores["0001"]->onAnswer(1, resultFor(invokeIdOf(pdu)));
  f.store->flush();
  const auto waiting = f.submit("0001", F::kQueries, 2);  // no association has queries
  RetentionPurge purge(*f.db, *f.registry, f.clock);
  CHECK(purge.runIfDue().messages == 0);  // acknowledged just now
  f.clock.advance(30s);
  CHECK_FALSE(purge.runIfDue().ran);  // at most once per kPurgeInterval
  f.clock.advance(58min);
  CHECK(purge.runIfDue().messages == 0);  // 58.5 min: within queue_retention
  f.clock.advance(2min);
  auto outcome = purge.runIfDue();
  CHECK(outcome.ran);
  CHECK(outcome.messages == 3);
  for (db::MessageId id : acked) CHECK_FALSE(db::OutboundQueue(*f.db).get(id).isOk());
  for (db::MessageId id : waiting) CHECK(f.state(id) == db::MessageState::kQueued);
}

TEST_CASE("A provider whose lease this node does not hold gets nothing from the queue and its messages say why") {
  CoreFixture f;
  f.may_deliver = false;  // another node took the provider, or this one was paused
  RecordingLink& link = f.bind("0001", 1, kAll);
  std::vector<db::MessageId> ids = f.submit("0001", F::kNotifications, 3);
  f.run();
  CHECK(link.sent.empty());
  CHECK(f.cores["0001"]->view().waitReason(F::kNotifications) == std::optional<WaitReason>(WaitReason::kLeaseNotValid));
  for (db::MessageId id : ids) CHECK(f.state(id) == db::MessageState::kQueued);
  f.may_deliver = true;  // renewed
  deliverRound(*f.cores["0001"], *f.store);
  f.run();
  CHECK(link.sent.size() == 3);
}

TEST_CASE("Aborting every association of a provider that lost its lease reports each one lost") {
  CoreFixture f;
  f.bind("0001", 1, kAll);
  f.bind("0001", 2, kAll);
  f.bind("0002", 3, kAll);
  CHECK(f.cores["0001"]->abortAll("provider lease lost to another npacd node") == 2);
  CHECK(f.lost == std::set<db::AssociationId>{1, 2});
  CHECK(f.links[1]->abort_reason == "provider lease lost to another npacd node");
  CHECK(f.cores["0001"]->associationCount() == 0);
  CHECK(f.cores["0002"]->associationCount() > 0);
}

TEST_CASE("A delivery round's rows read sent in the database before any of its PDUs is handed to an association") {
  CoreFixture f;
  RecordingLink& link = f.bind("0001", 1, kAll);
  const std::vector<db::MessageId> ids = f.submit("0001", F::kNotifications, 5);
  // What another connection (a restart after kill -9) would find at each hand-over.
  auto reader = db::Database::open(f.dir.file("npacd.db")).value();
  std::vector<std::size_t> queued_at_send;
  link.on_send = [&] { queued_at_send.push_back(db::OutboundQueue(*reader).count(db::MessageState::kQueued).value()); };
  deliverRound(*f.cores["0001"], *f.store);  // one round, without the turn's flush
  REQUIRE(link.sent.size() == 5);
  CHECK(queued_at_send == std::vector<std::size_t>(5, 0));
  for (db::MessageId id : ids) CHECK(db::OutboundQueue(*reader).get(id).value().state == db::MessageState::kSent);
}

TEST_CASE("Rounds decided for two providers hand no PDU to an association until the store committed their rows") {
  CoreFixture f;
  RecordingLink& first = f.bind("0001", 1, kAll);
  RecordingLink& second = f.bind("0002", 2, kAll);
  const std::vector<db::MessageId> a = f.submit("0001", F::kNotifications, 3);
  const std::vector<db::MessageId> b = f.submit("0002", F::kNotifications, 3);
  const ProviderCore::Round round_a = f.cores["0001"]->decideRound();
  const ProviderCore::Round round_b = f.cores["0002"]->decideRound();
  CHECK(first.sent.empty());
  CHECK(second.sent.empty());
  f.store->flush();  // DeliveryScheduler::deliverDue: one commit for both rounds
  CHECK(f.state(a[2]) == db::MessageState::kSent);
  CHECK(f.state(b[2]) == db::MessageState::kSent);
  CHECK(first.sent.empty());
  f.cores["0001"]->finishRound(round_a);
  f.cores["0002"]->finishRound(round_b);
  CHECK(first.sent.size() == 3);
  CHECK(second.sent.size() == 3);
}

TEST_CASE("A round whose sent rows the lease fence refused hands no PDU to its associations") {
  CoreFixture f;
  RecordingLink& link = f.bind("0001", 1, kAll);
  auto taken = db::LeaseStore(*f.db).acquire("0001", "a", f.clock.wallMs(), 5000);
  REQUIRE(taken.isOk());
  const std::int64_t epoch = taken->lease.epoch;
  std::vector<std::string> fenced;
  DeliveryStore::Fence fence;
  fence.owner = "a";
  fence.epoch_of = [epoch](const std::string&) { return std::optional<std::int64_t>(epoch); };
  fence.on_fenced = [&fenced](const std::string& spid, const db::Status&) { fenced.push_back(spid); };
  f.store->setFence(std::move(fence));
  const std::vector<db::MessageId> ids = f.submit("0001", F::kNotifications, 3);
  // Node b takes the lease after a's ran out, without a knowing yet.
  REQUIRE(db::LeaseStore(*f.db).acquire("0001", "b", f.clock.wallMs() + 10'000, 5000).isOk());
  deliverRound(*f.cores["0001"], *f.store);
  CHECK(fenced == std::vector<std::string>{"0001"});
  CHECK(link.sent.empty());  // the rows are b's to deliver
  for (db::MessageId id : ids) CHECK(f.state(id) == db::MessageState::kQueued);
}

TEST_CASE("A message re-sent after a restart is flagged and carries the invoke id it was first sent with") {
  CoreFixture f;
  RecordingLink& first = f.bind("0001", 1, kAll);
  const std::vector<db::MessageId> ids = f.submit("0001", F::kNotifications, 3);
  f.run();
  REQUIRE(first.sent.size() == 3);
  std::vector<std::int32_t> invoke_ids;
  for (auto& [pdu, tag] : first.sent) invoke_ids.push_back(invokeIdOf(pdu));
  for (std::size_t i = 0; i < ids.size(); ++i) {
    CHECK(invoke_ids[i] == as::preferredInvokeId(static_cast<as::MessageId>(ids[i])));
  }
  // kill -9 and a new npacd: the rows left `sent` are queued again (recoverInterrupted), a
  // new store and a new core with a fresh invoke-id space bind a new association.
  REQUIRE(db::OutboundQueue(*f.db).requeueAssociation(1).value() == 3);
  f.cores.erase("0001");
  f.store = std::make_unique<DeliveryStore>(*f.db, [] {});
  f.cores["0001"] = std::make_unique<ProviderCore>("0001", f.clock, *f.registry, *f.store, f);
  RecordingLink& again = f.bind("0001", 2, kAll);
  f.run();
  REQUIRE(again.sent.size() == 3);
  for (std::size_t i = 0; i < ids.size(); ++i) {
    CHECK(invokeIdOf(again.sent[i].first) == invoke_ids[i]);
    auto row = db::OutboundQueue(*f.db).get(ids[i]).value();
    CHECK(row.retransmission);
    CHECK(row.attempts == 2);
  }
}

TEST_CASE("A message whose derived invoke id is taken by a heartbeat gets another and still leaves") {
  CoreFixture f;
  RecordingLink& link = f.bind("0001", 1, kAll);
  f.set("heartbeat_interval", "0001", "10s");
  f.set("heartbeat_timeout", "0001", "60s");
  f.clock.advance(10s);
  f.tick();  // the heartbeat takes invoke id 1, unanswered
  REQUIRE(link.sent.size() == 1);
  REQUIRE(isHeartbeat(link.sent[0].first));
  const std::int32_t heartbeat = invokeIdOf(link.sent[0].first);
  const std::vector<db::MessageId> ids = f.submit("0001", F::kNotifications, 3);
  f.run();
  REQUIRE(link.sent.size() == 4);
  std::set<std::int32_t> used{heartbeat};
  for (std::size_t i = 1; i < 4; ++i) CHECK(used.insert(invokeIdOf(link.sent[i].first)).second);
}

// ---- a provisioned throttle group (DSR "Egress Throttle Groups", throttle_groups.h) ----

namespace {

db::ThrottleGroupDefinition bureau(std::int64_t max_rate, std::int64_t max_pending) {
  db::ThrottleGroupDefinition g;
  g.name = "bureau";
  g.members = {"0001", "0002"};
  g.max_rate = max_rate;
  g.max_pending = max_pending;
  return g;
}

}  // namespace

TEST_CASE("A throttle group holds its members' sum to max_rate, not each provider's own") {
  CoreFixture f;
  ThrottleGroups groups(f.clock, "a");
  groups.apply({bureau(20, 0)});
  f.groups = &groups;
  RecordingLink& one = f.bind("0001", 1, kAll);
  RecordingLink& two = f.bind("0002", 2, kAll);
  f.submit("0001", F::kNotifications, 60);
  f.submit("0002", F::kNotifications, 60);
  std::vector<std::pair<std::int64_t, std::size_t>> sends;  // ms, both providers' count at that step
  for (std::int64_t ms = 0; ms <= 8'000; ms += 50) {
    const std::size_t before = one.sent.size() + two.sent.size();
    for (const char* spid : {"0001", "0002"}) deliverRound(*f.cores[spid], *f.store);  // the host's delayed wake-ups
    for (auto* link : {&one, &two}) {
      for (auto& [pdu, tag] : link->sent) {
        const db::AssociationId id = link == &one ? 1 : 2;
        f.cores[f.owner[id]]->onAnswer(id, resultFor(invokeIdOf(pdu)));
      }
    }
    f.run();
    const std::size_t after = one.sent.size() + two.sent.size();
    if (after > before) sends.emplace_back(ms, after - before);
    f.clock.advance(50ms);
  }
  // 8 s at 20/s: about 160 of the 120 could have left — all did, never above 20 a second.
  CHECK(one.sent.size() + two.sent.size() == 120);
  CHECK(one.sent.size() >= 40);  // both members had their turn
  CHECK(two.sent.size() >= 40);
  for (const auto& [at, n] : sends) {
    std::size_t in_window = 0;
    for (const auto& [other, m] : sends) {
      if (other >= at && other < at + 1000) in_window += m;
    }
    CHECK(in_window <= 20);
  }
}

TEST_CASE("A member held by its group waits as throttled, naming the group and its level") {
  CoreFixture f;
  ThrottleGroups groups(f.clock, "a");
  groups.apply({bureau(0, 2)});
  f.groups = &groups;
  RecordingLink& one = f.bind("0001", 1, kAll);
  f.submit("0001", F::kNotifications, 5);
  f.run();
  CHECK(one.sent.size() == 2);  // max_pending 2: the others are held, still queued
  CHECK(f.cores["0001"]->view().waitReason(F::kNotifications) == WaitReason::kThrottled);
  const ProviderQueueView view = f.cores["0001"]->view().queue();
  CHECK(view.throttle_group == "bureau");
  CHECK(view.throttle_group_level >= 1);
  CHECK(view.throttle_level == view.throttle_group_level);
  CHECK(view.throttle_detail.find("throttle group bureau level") != std::string::npos);
  CHECK(view.throttle_detail.find("pending 2/2") != std::string::npos);
  CHECK(f.delayed.count("0001") == 1);  // tried again shortly, never dropped
  // Answers free the pending slots: the held messages leave.
  for (int round = 0; round < 5 && one.sent.size() < 5; ++round) {
    for (std::size_t i = 0; i < one.sent.size(); ++i) f.cores["0001"]->onAnswer(1, resultFor(invokeIdOf(one.sent[i].first)));
    f.clock.advance(2500ms);  // past min_abatement_time
    deliverRound(*f.cores["0001"], *f.store);
  }
  CHECK(one.sent.size() == 5);
}

TEST_CASE("Answers to a member's own requests are never held by its group") {
  CoreFixture f;
  ThrottleGroups groups(f.clock, "a");
  groups.apply({bureau(0, 1)});
  f.groups = &groups;
  RecordingLink& one = f.bind("0001", 1, kAll);
  f.submit("0001", F::kNotifications, 3);
  f.run();
  REQUIRE(one.sent.size() == 1);  // the group's one pending slot is taken
  InboundRequest request;
  request.spid = "0001";
  request.association_id = 1;
  request.invoke_id = 77;
  db::NewMessage answer{"0001", 1u << static_cast<unsigned>(F::kNotifications), kResponsePriority,
                        encodeInboundResponse(request, InboundResponse{})};
  answer.kind = db::MessageKind::kResponse;
  const std::vector<db::NewMessage> rows{answer};
  auto ids = db::OutboundQueue(*f.db).appendBatch(rows, f.clock.wallMs());
  REQUIRE(ids.isOk());
  f.cores["0001"]->onSubmitted(ids.value());
  f.run();
  REQUIRE(one.sent.size() == 2);
  auto apdu = cmip::decodeRoseApdu(one.sent[1].first);
  REQUIRE(apdu.isOk());
  CHECK(std::holds_alternative<cmip::RoseReturnResult>(apdu.value()));
}

TEST_CASE("A member's own throttle_max_rate still applies inside its group") {
  CoreFixture f;
  ThrottleGroups groups(f.clock, "a");
  groups.apply({bureau(1000, 0)});
  f.groups = &groups;
  RecordingLink& one = f.bind("0001", 1, kAll);
  f.set("throttle_max_rate", "0001", "10");
  f.submit("0001", F::kNotifications, 50);
  for (std::int64_t ms = 0; ms < 2000; ms += 50) {
    const std::size_t before = one.sent.size();
    deliverRound(*f.cores["0001"], *f.store);
    for (std::size_t i = before; i < one.sent.size(); ++i) f.cores["0001"]->onAnswer(1, resultFor(invokeIdOf(one.sent[i].first)));
    f.run();
    f.clock.advance(50ms);
  }
  // The group would let 1,000 a second leave; the provider's own 10 a second hold it.
  CHECK(one.sent.size() >= 10);
  CHECK(one.sent.size() <= 20);
  CHECK(groups.find("bureau")->view(f.clock.now()).admitted == one.sent.size());
}
