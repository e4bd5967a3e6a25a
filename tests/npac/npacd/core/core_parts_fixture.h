// The parts of one core thread below its AssociationManager, in-process on a manual clock:
// a real SQLite file with its DeliveryStore and tunables, ProviderLeases held as node "a",
// the DeliveryScheduler on an io_context the test runs turn by turn (turn()), and the
// ProviderCores it delivers for. Associations are recording links whose abort is reported
// back as a loss, the way a Session reports onClosed.
#pragma once

#include <catch2/catch.hpp>

#include <boost/asio/io_context.hpp>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/time_source.h"
#include "common/timer.h"
#include "db/outbound_queue.h"
#include "db/provider_store.h"
#include "npac/npacd/core/delivery_scheduler.h"
#include "npac/npacd/core/provider_cores.h"
#include "tests/db/temp_dir.h"
#include "tests/npac/npacd/event_report_pdu.h"

namespace npac::npacd::testing {

struct PartsLink : AssociationLink {
  std::vector<std::vector<std::uint8_t>> sent;
  std::function<void()> on_send;   // before each PDU is recorded
  std::function<void()> on_abort;  // reports the loss
  std::string abort_reason;
  bool send(const std::vector<std::uint8_t>& apdu, std::int64_t) override {
    if (on_send) on_send();
    sent.push_back(apdu);
    return true;
  }
  void abort(const std::string& reason) override {
    abort_reason = reason;
    if (on_abort) on_abort();
  }
  void setReleaseReason(const std::string&) override {}
  void requestRelease() override {}
  void countRetransmission() override {}
  bool releasing() const override { return false; }
  AssociationInfo describe() const override { return {}; }
};

struct CorePartsFixture {
  npac::db::testing::TempDir dir;
  std::unique_ptr<db::Database> db = db::Database::open(dir.file("npacd.db")).value();
  std::unique_ptr<tunables::TunableRegistry> registry;
  common::ManualTimeSource clock;
  common::ManualTimers timers{clock};
  boost::asio::io_context io;
  std::unique_ptr<DeliveryStore> store;
  std::unique_ptr<ProviderLeases> leases;
  std::unique_ptr<DeliveryScheduler> delivery;
  std::unique_ptr<ProviderCores> providers;
  std::map<db::AssociationId, std::shared_ptr<PartsLink>> links;

  CorePartsFixture() {
    REQUIRE(tunables::TunableRegistry::open(*db, [this] { return clock.wallMs(); }, &registry).isOk());
    store = std::make_unique<DeliveryStore>(*db, [this] { delivery->flushSoon(); });
    leases = std::make_unique<ProviderLeases>(*db, clock, *registry);
    leases->setNode("a");
    delivery = std::make_unique<DeliveryScheduler>(io, timers, *store,
                                                   [this](const std::string& spid) { return providers->find(spid); });
    providers = std::make_unique<ProviderCores>(io, clock, *registry, *store, *leases, *delivery);
    providers->installFence();
  }
  ~CorePartsFixture() { turn(); }

  // Runs what the turn posted (and what that posts); how many handlers ran.
  std::size_t turn() {
    io.restart();
    return io.poll();
  }
  // `spid` provisioned, its lease taken and held by node "a".
  void provision(const std::string& spid) {
    REQUIRE(db::ProviderStore(*db).add({spid, "Provider " + spid, db::SystemType::kSoa, true}).isOk());
    auto taken = leases->take(spid);
    REQUIRE(taken.isOk());
    REQUIRE(taken->acquired);
    leases->hold(spid, taken->lease.epoch, clock.now());
  }
  PartsLink& bind(const std::string& spid, db::AssociationId id) {
    auto link = std::make_shared<PartsLink>();
    link->on_abort = [this, spid, id] { providers->find(spid)->onLost(id); };
    associations::AssociationSpec spec;
    spec.id = static_cast<associations::AssociationId>(id);
    spec.nsap = associations::Nsap::fromIpv4({127, 0, 0, static_cast<std::uint8_t>(id)});
    spec.functions = associations::FunctionMask::of({associations::AssociationFunction::kNotifications});
    spec.bound_order = static_cast<std::uint64_t>(id);
    providers->coreFor(spid).onBound(link, spec, false);
    links[id] = link;
    return *link;
  }
  // `count` confirmed M-EVENT-REPORTs committed for `spid` and announced to its core.
  std::vector<db::MessageId> submit(const std::string& spid, int count) {
    std::vector<db::NewMessage> rows;
    for (int i = 0; i < count; ++i) {
      db::NewMessage row{spid, 1u << static_cast<unsigned>(associations::AssociationFunction::kNotifications), 0,
                         npac::npacd::testing::queuedEventReport()};
      row.kind = db::MessageKind::kPush;
      row.opcode = static_cast<int>(cmip::CmipOpcode::kEventReportConfirmed);
      row.confirmed = true;
      rows.push_back(std::move(row));
    }
    auto ids = db::OutboundQueue(*db).appendBatch(rows, clock.wallMs());
    REQUIRE(ids.isOk());
    providers->find(spid)->onSubmitted(ids.value());
    return ids.value();
  }
  // Delivery rounds the store has served (from memory or from the database).
  std::uint64_t rounds() const { return store->figures().ready_rounds + store->figures().database_rounds; }
  std::size_t queuedInDatabase() {
    auto reader = db::Database::open(dir.file("npacd.db")).value();
    return db::OutboundQueue(*reader).count(db::MessageState::kQueued).value();
  }
};

}  // namespace npac::npacd::testing
