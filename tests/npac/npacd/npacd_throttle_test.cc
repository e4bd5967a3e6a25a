// npacd end to end: the egress throttle (throttle_max_rate, DSR "Egress Throttle Groups")
// paces one provider's logical association. 100 confirmed messages submitted at once with
// throttle_max_rate 20 msg/s are all delivered and acknowledged, none lost or repeated,
// spread over at least 4 s, and GET /v1/providers/{spid}/queue shows a throttle level above
// 0 while they are held. Real npacd, real npac-soa-sim, loopback TCP, the real SQLite file.
#include "tests/npac/npacd/multi_provider_fixture.h"

#include <algorithm>

using namespace npacd_test;

TEST_CASE("throttle_max_rate 20 spreads 100 messages over at least 4 s and loses none") {
  NpacdProcess npacd;
  const fs::path key = npacd.provision("0001");
  REQUIRE(setTunable(npacd, "throttle_max_rate", 20, "0001") == 200);
  constexpr int kMessages = 100;
  auto sim = npacd.sim("0001", key, {"--from", "127.0.0.2", "--expect", std::to_string(kMessages),
                                     "--duration", "40s"});
  REQUIRE(npacd.waitForAssociations(1));
  const std::vector<std::int64_t> ids = npacd.submit("0001", "t", kMessages);

  // While they leave, the provider's queue view shows the throttle in force.
  int highest_level = 0;
  int queue_status = 0;
  Json last_view;
  std::size_t acknowledged = 0;
  eventually(
      [&] {
        const Reply view = npacd.call(http::verb::get, "/v1/providers/0001/queue");
        queue_status = view.status;
        if (view.status == 200) {
          last_view = view.body;
          const Json& throttle = view.body["throttle"];  // {"level": 0..3, "detail": …} (docs/API.md)
          if (throttle.is_object()) highest_level = std::max(highest_level, throttle.value("level", 0));
        }
        acknowledged = 0;
        for (const QueueRow& row : queueRows(npacd.db())) acknowledged += row.state == "acknowledged" ? 1 : 0;
        return acknowledged == ids.size();
      },
      30s, 100ms);
  INFO("npacd log:\n" << npacd.log());
  CHECK(acknowledged == ids.size());
  INFO("GET /v1/providers/0001/queue: " << queue_status << " " << last_view.dump());
  CHECK(queue_status == 200);
  CHECK(highest_level > 0);

  const std::vector<QueueRow> rows = queueRows(npacd.db());
  REQUIRE(rows.size() == ids.size());
  std::int64_t first_sent = INT64_MAX, last_sent = 0;
  for (const QueueRow& row : rows) {
    CHECK(row.state == "acknowledged");
    CHECK_FALSE(row.retransmission);
    first_sent = std::min(first_sent, row.sent_at);
    last_sent = std::max(last_sent, row.sent_at);
  }
  // 100 at 20 msg/s take 5 s; 4 s leaves room for a first burst.
  CHECK(last_sent - first_sent >= 4000);

  REQUIRE(sim->wait(20s) == 0);
  const Json& report = sim->result;
  const Deliveries d = deliveriesOf(report);
  CHECK(d.copies.size() == static_cast<std::size_t>(kMessages));
  CHECK(d.total == static_cast<std::size_t>(kMessages));
  REQUIRE(report["received"].size() == static_cast<std::size_t>(kMessages));
  const std::int64_t spread = report["received"].back()["at_ms"].get<std::int64_t>() -
                              report["received"].front()["at_ms"].get<std::int64_t>();
  CHECK(spread >= 4000);
}
