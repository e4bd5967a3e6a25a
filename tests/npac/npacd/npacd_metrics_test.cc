// npacd end to end: GET /metrics, GET /health and GET /ready (docs/API.md, docs/OPERATIONS.md
// "Metrics"). Real npacd, real npac-soa-sim, real SQLite file, loopback TCP. Each metric that
// should move is read by value before and after what moves it; the exposition is checked by
// promtool (Debian package prometheus) as a scraper would.
#include "tests/support/immutable_file.h"
#include "tests/npac/npacd/metrics_scrape.h"
#include "tests/npac/npacd/multi_provider_fixture.h"
#include "tests/npac/npacd/api/http_server_fixture.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>

#include <cstdio>
#include <optional>
#include <thread>

using namespace npacd_test;

namespace {

// promtool's verdict on `text`: its exit code, with its output in `*out`.
int promtoolCheck(const NpacdProcess& npacd, const std::string& text, std::string* out) {
  const fs::path file = npacd.dir() / "metrics.txt";
  std::ofstream(file, std::ios::binary | std::ios::trunc) << text;
  const std::string command = "/usr/bin/promtool check metrics < " + file.string() + " 2>&1";
  FILE* pipe = ::popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  char buffer[512];
  while (std::fgets(buffer, sizeof buffer, pipe) != nullptr) *out += buffer;
  const int status = ::pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

const std::map<std::string, std::string> kNotificationLabels{
    {"spid", "0001"}, {"function", "notifications"}, {"operation", "event-report-confirmed"}};

using npac::testing::setImmutable;

struct ImmutableGuard {
  fs::path path;
  bool on = false;
  ~ImmutableGuard() {
    if (on) setImmutable(path, false);
  }
};

}  // namespace

TEST_CASE("GET /metrics answers the text exposition format 0.0.4 that promtool accepts") {
  NpacdProcess npacd;
  auto key = npacd.provision("0001", /*srr=*/true);
  auto sim = npacd.sim("0001", key, {"--from", "127.0.0.2", "--from", "127.0.0.3", "--expect", "10", "--duration", "15s"});
  REQUIRE(npacd.waitForAssociations(2));
  npacd.submit("0001", "p", 10);
  REQUIRE(sim->wait() == 0);
  TextReply r = getText(npacd, "/metrics", "Bearer " + npacd.token());
  REQUIRE(r.status == 200);
  CHECK(r.content_type.rfind("text/plain; version=0.0.4", 0) == 0);
  std::string verdict;
  INFO(r.body);
  CHECK(promtoolCheck(npacd, r.body, &verdict) == 0);
  INFO("promtool: " << verdict);
  CHECK(verdict.empty());  // no lint warning either
  CHECK(valueOr0(r.body, "npacd_build_info") == 1);
  CHECK(valueOr0(r.body, "npacd_process_start_time_seconds") > 1.7e9);
  CHECK(valueOr0(r.body, "npacd_core_up") == 1);
}

TEST_CASE("A bind accepted adds one to npacd_binds_accepted_total") {
  NpacdProcess npacd;
  auto key = npacd.provision("0001");
  CHECK(valueOr0(scrape(npacd), "npacd_binds_accepted_total") == 0);
  auto sim = npacd.sim("0001", key, {"--from", "127.0.0.2", "--keep-running", "--duration", "15s"});
  REQUIRE(npacd.waitForAssociations(1));
  const std::string text = scrape(npacd);
  CHECK(valueOr0(text, "npacd_binds_accepted_total") == 1);
  CHECK(valueOr0(text, "npacd_associations", {{"spid", "0001"}, {"state", "bound"}}) == 1);
  CHECK(valueOr0(text, "npacd_associations", {{"spid", "0001"}, {"state", "congested"}}) == 0);
}

TEST_CASE("Binds admitted are counted with the transactions that committed them in npacd_bind_commits_total") {
  NpacdProcess npacd;
  std::vector<std::unique_ptr<SimRun>> sims;
  for (const char* spid : {"0001", "0002", "0003"}) {
    auto key = npacd.provision(spid, /*srr=*/true);
    const int n = static_cast<int>(sims.size());
    sims.push_back(npacd.sim(spid, key, {"--from", "127.0.0." + std::to_string(10 + 2 * n), "--from",
                                         "127.0.0." + std::to_string(11 + 2 * n), "--keep-running", "--duration", "15s"}));
  }
  REQUIRE(npacd.waitForAssociations(6));
  const std::string text = scrape(npacd);
  CHECK(valueOr0(text, "npacd_binds_accepted_total") == 6);
  // However the six arrived, each committed in some transaction, a batch holds at most one
  // bind per provider (bind_queue.h), and each provider's second bind waited for its first.
  const double commits = valueOr0(text, "npacd_bind_commits_total");
  CHECK(commits >= 2);
  CHECK(commits <= 6);
}

TEST_CASE("A bind refused adds one under its LnpBindRefusal reason code") {
  NpacdProcess npacd;
  auto key = npacd.provision("0001");
  // 0002 is not provisioned: the refusal names it (unknown-spid).
  auto refused = npacd.sim("0002", key, {"--from", "127.0.0.3", "--duration", "5s"});
  CHECK(refused->wait() == 5);
  REQUIRE(refused->result.is_object());
  const std::string reason = refused->result["associations"][0]["bind"]["refusal"]["reason"].get<std::string>();
  const std::string text = scrape(npacd);
  CHECK(valueOr0(text, "npacd_binds_refused_total", {{"reason", reason}}) == 1);
  CHECK(valueOr0(text, "npacd_binds_accepted_total") == 0);
}

TEST_CASE("Ten notifications sent and acknowledged add ten to each counter under their function and operation") {
  NpacdProcess npacd;
  auto key = npacd.provision("0001");
  auto sim = npacd.sim("0001", key, {"--from", "127.0.0.2", "--keep-running", "--duration", "30s"});
  REQUIRE(npacd.waitForAssociations(1));
  const std::string before = scrape(npacd);
  const std::vector<std::int64_t> ids = npacd.submit("0001", "t", 10);
  REQUIRE(eventually([&] { return countInState(npacd, ids, "acknowledged") == ids.size(); }, 10s));
  const std::string after = scrape(npacd);
  CHECK(valueOr0(after, "npacd_pdus_sent_total", kNotificationLabels) - valueOr0(before, "npacd_pdus_sent_total", kNotificationLabels) == 10);
  CHECK(valueOr0(after, "npacd_pdus_acknowledged_total", kNotificationLabels) -
            valueOr0(before, "npacd_pdus_acknowledged_total", kNotificationLabels) ==
        10);
  CHECK(valueOr0(after, "npacd_pdus_retransmitted_total", kNotificationLabels) == 0);
  CHECK(valueOr0(after, "npacd_response_round_trip_seconds_count", {{"spid", "0001"}}) == 10);
  // The one association's picks: the ten PDUs.
  CHECK(valueOr0(after, "npacd_association_pdus_sent_total", {{"spid", "0001"}}) == 10);
  CHECK(valueOr0(after, "npacd_queue_messages", {{"spid", "0001"}, {"state", "acknowledged"}}) == 10);
}

TEST_CASE("Messages submitted to a bound provider are delivered from memory, not read back from the database") {
  NpacdProcess npacd;
  auto key = npacd.provision("0001");
  auto sim = npacd.sim("0001", key, {"--from", "127.0.0.2", "--keep-running", "--duration", "30s"});
  REQUIRE(npacd.waitForAssociations(1));
  // The first round loads what is queued; every submission after it is handed over by
  // the queue writer.
  std::vector<std::int64_t> first = npacd.submit("0001", "w", 1);
  REQUIRE(eventually([&] { return countInState(npacd, first, "acknowledged") == 1; }, 10s));
  const std::string before = scrape(npacd);
  std::vector<std::int64_t> ids;
  for (int batch = 0; batch < 5; ++batch) {
    for (std::int64_t id : npacd.submit("0001", "m" + std::to_string(batch), 4)) ids.push_back(id);
  }
  REQUIRE(eventually([&] { return countInState(npacd, ids, "acknowledged") == ids.size(); }, 10s));
  const std::string after = scrape(npacd);
  CHECK(valueOr0(after, "npacd_delivery_rounds_total", {{"source", "memory"}}) >
        valueOr0(before, "npacd_delivery_rounds_total", {{"source", "memory"}}));
  CHECK(valueOr0(after, "npacd_delivery_rounds_total", {{"source", "database"}}) ==
        valueOr0(before, "npacd_delivery_rounds_total", {{"source", "database"}}));
}

TEST_CASE("An LRTM provider's associations show their measured response time and Nw in /metrics and GET /v1/associations") {
  NpacdProcess npacd;
  auto key = npacd.provision("0001", /*srr=*/true);
  REQUIRE(npacd.call(http::verb::put, "/v1/tunables/egress_policy", {{"spid", "0001"}, {"value", "lrtm"}}).status == 200);
  auto sim = npacd.sim("0001", key, {"--from", "127.0.0.2", "--from", "127.0.0.3", "--keep-running", "--duration", "30s"});
  REQUIRE(npacd.waitForAssociations(2));
  const std::string idle = scrape(npacd);
  // Nothing answered yet: LRTM's unmeasured default (1 s) and nothing active, Nw 0.
  CHECK(sampleValue(idle, "npacd_egress_lrtm_response_time_seconds", {{"spid", "0001"}}) == 1.0);
  CHECK(sampleValue(idle, "npacd_egress_lrtm_nw", {{"spid", "0001"}}) == 0.0);
  CHECK_FALSE(sampleValue(idle, "npacd_egress_load_percent").has_value());
  const std::vector<std::int64_t> ids = npacd.submit("0001", "l", 20);
  REQUIRE(eventually([&] { return countInState(npacd, ids, "acknowledged") == ids.size(); }, 10s));
  const std::string after = scrape(npacd);
  std::string verdict;
  CHECK(promtoolCheck(npacd, after, &verdict) == 0);
  INFO("promtool: " << verdict);
  // Each association answered on loopback: its measured mean is well under the default.
  Reply listed = npacd.call(http::verb::get, "/v1/associations");
  REQUIRE(listed.status == 200);
  REQUIRE(listed.body["associations"].size() == 2);
  for (const Json& a : listed.body["associations"]) {
    INFO(a.dump());
    const std::string id = std::to_string(a["id"].get<long>());
    const auto seconds = sampleValue(after, "npacd_egress_lrtm_response_time_seconds", {{"spid", "0001"}, {"association", id}});
    REQUIRE(seconds.has_value());
    CHECK(*seconds > 0.0);
    CHECK(*seconds < 1.0);
    REQUIRE(a["lrtm"].is_object());
    CHECK(a["lrtm"]["measured"] == true);
    CHECK(a["lrtm"]["response_time_ms"].get<double>() == Approx(*seconds * 1000.0));
    CHECK(a["lrtm"]["nw"].get<double>() == 0.0);  // all answered: none active
    CHECK(a["weight"] == 1);
    CHECK(a["load_percent"].is_null());
  }
}

TEST_CASE("Messages in flight on a dropped association count as retransmissions once each") {
  NpacdProcess npacd;
  auto key = npacd.provision("0001", /*srr=*/true);
  // Association 2 answers late and closes after its 5th PDU, with requests in flight.
  auto sim = npacd.sim("0001", key, {"--from", "127.0.0.2", "--from", "127.0.0.3", "--delay", "2=300ms",
                                     "--drop-after", "2=5", "--drop-mode", "close", "--keep-going",
                                     "--keep-running", "--duration", "30s"});
  REQUIRE(npacd.waitForAssociations(2));
  const std::vector<std::int64_t> ids = npacd.submit("0001", "r", 20);
  REQUIRE(eventually([&] { return countInState(npacd, ids, "acknowledged") == ids.size(); }, 20s));
  const std::string text = scrape(npacd);
  kill(sim->pid, SIGTERM);
  sim->wait(10s);
  REQUIRE(sim->result.is_object());
  // What was in flight on the lost association: its rows are flagged as retransmissions
  // when they go back to the queue, and each was sent once more (the provider cannot tell
  // them all: a copy the closed socket swallowed arrives only once).
  int flagged = 0;
  for (const QueueRow& row : queueRows(npacd.db())) flagged += row.retransmission ? 1 : 0;
  INFO(text);
  CHECK(flagged > 0);
  CHECK(valueOr0(text, "npacd_pdus_retransmitted_total", kNotificationLabels) == flagged);
  CHECK(valueOr0(text, "npacd_pdus_sent_total", kNotificationLabels) == 20 + flagged);
  CHECK(valueOr0(text, "npacd_pdus_acknowledged_total", kNotificationLabels) == 20);
  // The dropped association's series are gone; the survivor's remain.
  CHECK(valueOr0(text, "npacd_associations", {{"spid", "0001"}, {"state", "bound"}}) == 1);
  std::size_t association_series = 0;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("npacd_association_pdus_sent_total{", 0) == 0) ++association_series;
  }
  CHECK(association_series == 1);
}

TEST_CASE("Queued messages show in the queue depth and the oldest one's age") {
  NpacdProcess npacd;
  npacd.provision("0001");
  npacd.submit("0001", "q", 3);  // no association: they wait
  std::string text;
  REQUIRE(eventually(
      [&] {
        text = scrape(npacd);
        return valueOr0(text, "npacd_queue_oldest_queued_age_seconds", {{"spid", "0001"}}) > 0;
      },
      5s));
  CHECK(valueOr0(text, "npacd_queue_messages", {{"spid", "0001"}, {"state", "queued"}}) == 3);
  CHECK(valueOr0(text, "npacd_queue_messages", {{"spid", "0001"}, {"state", "sent"}}) == 0);
  CHECK(valueOr0(text, "npacd_queue_oldest_queued_age_seconds", {{"spid", "0001"}}) < 60);
  CHECK(valueOr0(text, "npacd_queue_writer_committed_messages_total") == 3);
  CHECK(valueOr0(text, "npacd_sqlite_commit_seconds_count") >= 1);
}

TEST_CASE("npacd checkpoints its SQLite WAL on a thread of its own once submissions pass 1000 pages") {
  NpacdProcess npacd;
  npacd.provision("0001");
  // No association: the messages stay queued. Batches until the WAL passed SQLite's mark
  // and the checkpoint thread copied it (bounded: 40 batches of 1000 is about 16 MB).
  std::string text;
  for (int batch = 0; batch < 40; ++batch) {
    npacd.submit("0001", "w" + std::to_string(batch) + "-", 1000);
    text = scrape(npacd);
    if (valueOr0(text, "npacd_sqlite_checkpoints_total", {{"mode", "passive"}}) >= 1) break;
  }
  INFO(text);
  CHECK(valueOr0(text, "npacd_sqlite_checkpoints_total", {{"mode", "passive"}}) >= 1);
  CHECK(valueOr0(text, "npacd_sqlite_checkpoint_seconds_count") >= 1);
  CHECK(valueOr0(text, "npacd_sqlite_checkpoint_failures_total") == 0);
  CHECK(valueOr0(text, "npacd_sqlite_wal_pages") < 16000);
}

TEST_CASE("GET /metrics with a query string is refused as bad_query") {
  NpacdProcess npacd;
  TextReply r = getText(npacd, "/metrics?name[]=npacd_up", "Bearer " + npacd.token());
  CHECK(r.status == 400);
  CHECK(r.body.find("bad_query") != std::string::npos);
  CHECK(getText(npacd, "/metrics?", "Bearer " + npacd.token()).status == 200);  // an empty query is none
}

TEST_CASE("GET /metrics needs a token and GET /health and GET /ready do not") {
  NpacdProcess npacd;
  CHECK(getText(npacd, "/metrics", std::nullopt).status == 401);
  CHECK(valueOr0(scrape(npacd), "npacd_api_refusals_total", {{"reason", "unauthenticated"}}) == 1);
  TextReply health = getText(npacd, "/health", std::nullopt);
  CHECK(health.status == 200);
  CHECK(health.body == "alive\n");
  TextReply ready = getText(npacd, "/ready", std::nullopt);
  CHECK(ready.status == 200);
  CHECK(ready.body == "ready\n");
}

TEST_CASE("GET /ready answers 503 naming the database while it refuses writes and 200 once it takes them again") {
  NpacdProcess npacd;
  npacd.provision("0001");
  npacd.submit("0001", "w", 1);  // the WAL exists
  const fs::path wal = fs::path(npacd.db().string() + "-wal");
  REQUIRE(fs::exists(wal));
  ImmutableGuard guard{wal};
  if (!setImmutable(wal, true)) {
    WARN("cannot set the immutable attribute on the WAL (not root, or the filesystem refuses): case not run");
    return;
  }
  guard.on = true;
  // The next write fails (a submission answers 5xx) and the storage health turns failing.
  Reply refused = npacd.call(http::verb::post, "/v1/messages", Json{{"messages", {NpacdProcess::notification("0001", "x")}}});
  CHECK(refused.status >= 500);
  TextReply ready;
  REQUIRE(eventually([&] { return (ready = getText(npacd, "/ready", std::nullopt)).status == 503; }, 5s));
  CHECK(ready.body.find("database-writable") != std::string::npos);
  CHECK(valueOr0(scrape(npacd), "npacd_storage_writable") == 0);
  CHECK(getText(npacd, "/health", std::nullopt).status == 200);  // alive all the same
  setImmutable(wal, false);
  guard.on = false;
  REQUIRE(npacd.call(http::verb::post, "/v1/messages", Json{{"messages", {NpacdProcess::notification("0001", "y")}}})
              .status == 201);
  CHECK(eventually([&] { return getText(npacd, "/ready", std::nullopt).status == 200; }, 5s));
}

TEST_CASE("GET /ready answers 503 naming the drain while npacd shuts down") {
  NpacdProcess npacd;
  auto key = npacd.provision("0001");
  // A silent association keeps its requests outstanding, so the drain lasts its bound.
  auto sim = npacd.sim("0001", key, {"--from", "127.0.0.2", "--silent", "1", "--keep-running", "--duration", "30s"});
  REQUIRE(npacd.waitForAssociations(1));
  npacd.submit("0001", "d", 2);
  REQUIRE(eventually([&] { return valueOr0(scrape(npacd), "npacd_association_outstanding_requests") == 2; }, 5s));
  REQUIRE(getText(npacd, "/ready", std::nullopt).status == 200);
  // SIGTERM, and its exit awaited on another thread: npacd drains (at most its 2 s
  // drain timeout, the requests stay unanswered) while this one probes.
  std::thread stopping([&] { npacd.stop(); });
  TextReply ready;
  const bool refused = eventually([&] { return (ready = getText(npacd, "/ready", std::nullopt)).status == 503; }, 2s, 10ms);
  stopping.join();
  CHECK(refused);
  CHECK(ready.body.find("draining") != std::string::npos);
}

TEST_CASE("npacd --metrics off renders no PDU counters while its live state still shows") {
  NpacdProcess npacd(NpacdProcess::Options{{}, {"--metrics", "off"}});
  auto key = npacd.provision("0001");
  auto sim = npacd.sim("0001", key, {"--from", "127.0.0.2", "--keep-running", "--duration", "30s"});
  REQUIRE(npacd.waitForAssociations(1));
  const std::vector<std::int64_t> ids = npacd.submit("0001", "o", 5);
  REQUIRE(eventually([&] { return countInState(npacd, ids, "acknowledged") == ids.size(); }, 10s));
  const std::string text = scrape(npacd);
  CHECK(valueOr0(text, "npacd_metrics_counting") == 0);
  CHECK_FALSE(sampleValue(text, "npacd_pdus_sent_total").has_value());
  CHECK_FALSE(sampleValue(text, "npacd_binds_accepted_total").has_value());
  CHECK(valueOr0(text, "npacd_associations", {{"spid", "0001"}, {"state", "bound"}}) == 1);
  CHECK(valueOr0(text, "npacd_queue_messages", {{"spid", "0001"}, {"state", "acknowledged"}}) == 5);
}

TEST_CASE("An admin API connection npacd closes to make room is counted in /metrics and named in the log") {
  NpacdProcess npacd(NpacdProcess::Options{{}, {"--api-max-connections", "4", "--api-operator-reserve", "1"}});
  Reply made = npacd.call(http::verb::post, "/v1/tokens", Json{{"name", "dash"}, {"role", "reader"}});
  REQUIRE(made.status == 201);
  const std::string auth = "Bearer " + made.body["token"].get<std::string>();
  // Three keep-alive connections of a reader, idle after their request, fill the three
  // places below the operator reserve; the reader's fourth then closes the longest-idle
  // one (an operator's request would take a reserved place instead: it needs no room).
  std::vector<std::unique_ptr<npac::npacd::testing::Connection>> idle;
  for (int i = 0; i < 4; ++i) {
    idle.push_back(
        std::make_unique<npac::npacd::testing::Connection>("127.0.0." + std::to_string(30 + i), npacd.apiPort()));
    REQUIRE(idle.back()->get("/v1/providers", auth)->status == 200);
  }
  CHECK(sampleValue(scrape(npacd), "npacd_api_connections_closed_total", {{"reason", "idle-for-room"}}) == 1);
  CHECK_THAT(npacd.log(), Catch::Contains("the longest-idle one, from 127.0.0.30, was closed to make room"));
}
