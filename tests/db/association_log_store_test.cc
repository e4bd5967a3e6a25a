#include "db/association_log_store.h"

#include <catch2/catch.hpp>

#include "fixtures.h"

using namespace npac::db;
using namespace npac::db::testing;

namespace {

AssociationEvent event(AssociationEventKind kind, const std::string& spid, TimeMs at) {
  AssociationEvent e;
  e.kind = kind;
  e.spid = spid;
  e.at = at;
  e.nsap = Bytes{0x54, 0x00, 0x72, 0x87, 0x22, 127, 0, 0, 1, 0, 0, 1};
  e.function_mask = 0x5;
  return e;
}

}  // namespace

TEST_CASE("Every kind of association event reads back with all its fields") {
  TempDir dir;
  auto db = openFresh(dir);
  AssociationLogStore log(*db);
  AssociationEvent bind = event(AssociationEventKind::kBind, "0001", 100);
  bind.association_id = 42;
  bind.recovery_mode = true;
  AssociationEvent reject = event(AssociationEventKind::kReject, "0009", 150);
  reject.nsap.clear();
  reject.reason = "unknown SPID";
  reject.diagnostic = "ACSE result-source-diagnostic 1";
  AssociationEvent release = event(AssociationEventKind::kRelease, "0001", 200);
  release.association_id = 42;
  release.bound_at = 100;
  AssociationEvent abort = event(AssociationEventKind::kAbort, "0001", 300);
  abort.association_id = 43;
  abort.bound_at = 250;
  abort.reason = "duplicate bind replaced (NANC 386)";
  std::vector<AssociationEvent> all{bind, reject, release, abort};
  for (auto& e : all) {
    auto id = log.append(e);
    REQUIRE(id.isOk());
    e.id = *id;
  }
  auto recent = log.recent(10);
  REQUIRE(recent.isOk());
  REQUIRE(recent->size() == 4);
  CHECK((*recent)[0] == all[3]);  // newest first
  CHECK((*recent)[1] == all[2]);
  CHECK((*recent)[2] == all[1]);
  CHECK((*recent)[3] == all[0]);
  CHECK((*recent)[2].nsap.empty());
  CHECK((*recent)[3].recovery_mode);
}

TEST_CASE("A provider's association events are selected by half-open time range") {
  TempDir dir;
  auto db = openFresh(dir);
  AssociationLogStore log(*db);
  for (TimeMs at : {100, 200, 300}) {
    REQUIRE(log.append(event(AssociationEventKind::kBind, "0001", at)).isOk());
  }
  REQUIRE(log.append(event(AssociationEventKind::kBind, "0002", 200)).isOk());
  auto range = log.forProvider("0001", 200, 300, 100);
  REQUIRE(range.isOk());
  REQUIRE(range->size() == 1);
  CHECK(range->front().at == 200);
  CHECK(range->front().spid == "0001");
}

TEST_CASE("Purging the association log removes only events before the cutoff") {
  TempDir dir;
  auto db = openFresh(dir);
  AssociationLogStore log(*db);
  for (TimeMs at : {100, 200, 300}) {
    REQUIRE(log.append(event(AssociationEventKind::kAbort, "0001", at)).isOk());
  }
  CHECK(log.purgeBefore(250).value() == 2);
  auto left = log.recent(10);
  REQUIRE(left->size() == 1);
  CHECK(left->front().at == 300);
}

TEST_CASE("A bounded purge of the association log removes at most that many of the oldest events") {
  TempDir dir;
  auto db = openFresh(dir);
  AssociationLogStore log(*db);
  for (TimeMs at : {100, 200, 300, 400}) {
    REQUIRE(log.append(event(AssociationEventKind::kAbort, "0001", at)).isOk());
  }
  auto purged = log.purgeBefore(350, 2);
  INFO(purged.status().toString());
  REQUIRE(purged.isOk());
  CHECK(*purged == 2);
  auto left = log.recent(10);
  REQUIRE(left->size() == 2);
  CHECK(log.purgeBefore(350, 2).value() == 1);  // the one left before the cutoff
  CHECK(log.recent(10)->size() == 1);
}
