// The provider queue view end to end: a real npacd (npacd_fixture.h) on a temp SQLite
// file, npac-soa-sim binding to it, and npacctl as a child process — `npacctl queue`,
// the wait reason in `npacctl msg status`, the peer and bound time in `npacctl assoc
// list`, and the exit codes of refusals. The rendering of what only the ProviderCore
// reports (congestion, throttle, storage) is checked against the admin API in-process
// (admin_api_fixture.h) with a CoreService that answers a given view.
#include "tests/npac/npacd/npacd_fixture.h"

#include <cstdio>

#include "db/outbound_queue.h"
#include "tests/npac/npacd/api/admin_api_fixture.h"

using namespace npacd_test;

namespace {

using npac::testing::ProgramRun;

// Polls the queue view until `done(view)` holds (bounded); the last view.
Json queueUntil(const NpacdProcess& npacd, const std::string& spid, const std::function<bool(const Json&)>& done,
                std::chrono::milliseconds limit = 10s) {
  Json view;
  eventually(
      [&] {
        Reply r = npacd.call(http::verb::get, "/v1/providers/" + spid + "/queue");
        REQUIRE(r.status == 200);
        view = r.body;
        return done(view);
      },
      limit);
  return view;
}

ProgramRun npacctlAt(std::uint16_t api_port, const std::string& args, const std::string& token_file) {
  return npac::testing::runNpacctl(args + " --api 127.0.0.1:" + std::to_string(api_port) + " --token-file " + token_file);
}

// The admin API in-process with provider 0001, `queued` notifications created 65 s
// before the API's clock, and a core answering `view`.
struct InProcessQueue {
  npac::npacd::testing::AdminApiFixture f;
  std::unique_ptr<npac::db::QueueWriter> writer;
  std::unique_ptr<npac::npacd::testing::QueueBackedCore> core;
  InProcessQueue(int queued, const npac::npacd::ProviderQueueView& view) {
    auto added = f.call(http::verb::post, "/v1/providers",
                        Json{{"spid", "0001"}, {"name", "P"}, {"system_type", "soa"}, {"actor", "t"}});
    REQUIRE(added.status == 201);
    auto connection = f.openConnection();
    npac::db::OutboundQueue queue(*connection);
    std::vector<npac::db::NewMessage> rows;
    for (int i = 0; i < queued; ++i) rows.push_back(npac::db::NewMessage{"0001", 1u << 3, 0, {0x05, 0x00}});
    REQUIRE(queue.appendBatch(rows, npac::npacd::testing::AdminApiFixture::kNow - 65'000).isOk());
    auto started = npac::db::QueueWriter::start(f.path(), {}, npac::npacd::testing::AdminApiFixture::clock());
    REQUIRE(started.isOk());
    writer = std::move(started).value();
    core = std::make_unique<npac::npacd::testing::QueueBackedCore>(*writer);
    {
      std::lock_guard lock(core->mutex);
      core->queue_views["0001"] = view;
    }
    f.onApiThread([&] { f.api->attachCore(core.get()); });
  }
  ~InProcessQueue() {
    f.onApiThread([&] { f.api->attachCore(nullptr); });
  }
};

}  // namespace

TEST_CASE("The queue view of a provider that never bound shows its messages waiting for not-bound") {
  NpacdProcess npacd;
  npacd.provision("0001");
  npacd.submit("0001", "q", 3);
  const Json view = queueUntil(npacd, "0001", [](const Json& v) { return v.value("oldest_queued_age_ms", 0) > 0; });
  INFO(view.dump());
  CHECK(view["live"] == true);
  CHECK(view["bound"] == false);
  CHECK(view["totals"]["queued"] == 3);
  CHECK(view["oldest_queued_age_ms"].get<std::int64_t>() > 0);
  REQUIRE(view["waits"].size() == 1);
  CHECK(view["waits"][0]["function"] == "notifications");
  CHECK(view["waits"][0]["queued"] == 3);
  CHECK(view["waits"][0]["reason"] == "not-bound");
}

TEST_CASE("npacctl queue with a SPID prints the full view as aligned tables") {
  NpacdProcess npacd;
  npacd.provision("0001");
  npacd.submit("0001", "q", 2);
  ProgramRun shown = npacctlOn(npacd, "queue 0001");
  INFO(shown.output);
  REQUIRE(shown.exit_code == 0);
  CHECK(contains(shown.output, "provider 0001: not bound, queued 2, sent 0, acknowledged 0, failed 0"));
  CHECK(contains(shown.output, "oldest queued: "));
  CHECK(contains(shown.output, "FUNCTION       QUEUED  OLDEST"));
  CHECK(contains(shown.output, "notifications  2       "));
  CHECK(contains(shown.output, "not-bound"));
  CHECK(contains(shown.output, "STATE   FUNCTIONS      COUNT  OLDEST CREATED"));

  ProgramRun as_json = npacctlOn(npacd, "queue 0001 --json");
  REQUIRE(as_json.exit_code == 0);
  const Json body = Json::parse(as_json.output, nullptr, false);
  REQUIRE(body.is_object());
  CHECK(body["totals"]["queued"] == 2);
}

TEST_CASE("npacctl queue without a SPID prints one line per provider") {
  NpacdProcess npacd;
  npacd.provision("0001");
  npacd.provision("0002");
  npacd.submit("0002", "q", 4);
  ProgramRun all = npacctlOn(npacd, "queue");
  INFO(all.output);
  REQUIRE(all.exit_code == 0);
  CHECK(contains(all.output, "SPID  CORE       QUEUED  SENT  FAILED  OLDEST"));
  CHECK(contains(all.output, "0001  not bound  0       0     0       -"));
  CHECK(contains(all.output, "0002  not bound  4       0     0"));
  CHECK(contains(all.output, "notifications: not-bound"));

  ProgramRun as_json = npacctlOn(npacd, "queue --json");
  REQUIRE(as_json.exit_code == 0);
  const Json body = Json::parse(as_json.output, nullptr, false);
  REQUIRE(body.is_object());
  REQUIRE(body["providers"].size() == 2);
  CHECK(body["providers"][1]["spid"] == "0002");
  CHECK(body["providers"][1]["totals"]["queued"] == 4);
}

TEST_CASE("npacctl queue refuses an unknown or malformed SPID with exit 1 and an unreachable npacd with exit 3") {
  NpacdProcess npacd;
  ProgramRun unknown = npacctlOn(npacd, "queue 0009");
  CHECK(unknown.exit_code == 1);
  CHECK(contains(unknown.output, "provider_not_found: no provider 0009 is provisioned"));
  ProgramRun malformed = npacctlOn(npacd, "queue 00-1");
  CHECK(malformed.exit_code == 1);
  CHECK(contains(malformed.output, "invalid_spid"));
  ProgramRun slashed = npacctlOn(npacd, "queue 0/01");  // percent-encoded: one path segment, not a route
  CHECK(slashed.exit_code == 1);
  CHECK(contains(slashed.output, "invalid_spid"));
  ProgramRun usage = npacctlOn(npacd, "queue 0001 extra");
  CHECK(usage.exit_code == 2);

  boost::asio::io_context io;
  boost::asio::ip::tcp::acceptor probe(io, {boost::asio::ip::make_address("127.0.0.1"), 0});
  const auto port = probe.local_endpoint().port();
  probe.close();
  const std::string cmd = binDir() + "/npacctl queue --token npac_unused --api 127.0.0.1:" + std::to_string(port) + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  char buf[1024];
  std::string out;
  for (std::size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  const int status = pclose(p);
  CHECK(WEXITSTATUS(status) == 3);
  CHECK(contains(out, "cannot reach npacd"));
}

TEST_CASE("npacctl msg status says why a queued message waits and says nothing once it is delivered") {
  NpacdProcess npacd;
  const fs::path key = npacd.provision("0001");
  const std::int64_t id = npacd.submit("0001", "w", 1)[0];
  ProgramRun waiting = npacctlOn(npacd, "msg status " + std::to_string(id));
  INFO(waiting.output);
  REQUIRE(waiting.exit_code == 0);
  CHECK(contains(waiting.output, ": queued"));
  CHECK(contains(waiting.output, "waiting: not-bound"));
  CHECK(npacd.call(http::verb::get, "/v1/messages/" + std::to_string(id)).body["wait_reason"] == "not-bound");

  auto sim = npacd.sim("0001", key, {"--from", "127.0.0.2", "--expect", "1", "--duration", "15s"});
  REQUIRE(sim->wait() == 0);
  eventually([&] { return npacd.messageState(id) == "acknowledged"; }, 10s);
  REQUIRE(npacd.messageState(id) == "acknowledged");
  ProgramRun delivered = npacctlOn(npacd, "msg status " + std::to_string(id));
  INFO(delivered.output);
  CHECK(contains(delivered.output, ": acknowledged"));
  CHECK_FALSE(contains(delivered.output, "waiting"));
  CHECK_FALSE(npacd.call(http::verb::get, "/v1/messages/" + std::to_string(id)).body.contains("wait_reason"));
}

TEST_CASE("The queue view of a bound provider lists its association and nothing waiting once all is acknowledged") {
  NpacdProcess npacd;
  const fs::path key = npacd.provision("0001");
  auto sim = npacd.sim("0001", key, {"--from", "127.0.0.2", "--expect", "3", "--keep-running", "--duration", "15s"});
  REQUIRE(npacd.waitForAssociations(1));
  npacd.submit("0001", "b", 3);
  const Json view = queueUntil(npacd, "0001", [](const Json& v) { return v["totals"]["acknowledged"] == 3; });
  INFO(view.dump());
  CHECK(view["bound"] == true);
  CHECK(view["totals"]["queued"] == 0);
  CHECK(view["waits"].empty());
  CHECK(view["oldest_queued_age_ms"].is_null());
  REQUIRE(view["associations"].size() == 1);
  CHECK(view["associations"][0]["outstanding"] == 0);
  ProgramRun shown = npacctlOn(npacd, "queue 0001");
  INFO(shown.output);
  CHECK(contains(shown.output, "provider 0001: bound, queued 0"));
  CHECK(contains(shown.output, "nothing is waiting"));
  CHECK(contains(shown.output, "ASSOC  OUTSTANDING  CONGESTED  SILENT"));
}

// Needs the core's wait reasons (ProviderCore): the interim core reports none.
TEST_CASE("A message whose function no bound association has waits for no-association-for-function") {
  NpacdProcess npacd;
  const fs::path key = npacd.provision("0001");
  auto sim = npacd.sim("0001", key,
                       {"--from", "127.0.0.2", "--functions", "notifications", "--keep-running", "--duration", "15s"});
  REQUIRE(npacd.waitForAssociations(1));
  Json message = NpacdProcess::notification("0001", "s");
  message["function"] = "soa-management";
  Reply submitted = npacd.call(http::verb::post, "/v1/messages", message);
  REQUIRE(submitted.status == 201);
  const std::int64_t id = submitted.body["ids"][0].get<std::int64_t>();
  const Json view = queueUntil(npacd, "0001", [](const Json& v) {
    return !v["waits"].empty() && v["waits"][0]["reason"].is_string();
  });
  INFO(view.dump());
  REQUIRE(view["waits"].size() == 1);
  CHECK(view["waits"][0]["function"] == "soa-management");
  CHECK(view["waits"][0]["reason"] == "no-association-for-function");
  ProgramRun status = npacctlOn(npacd, "msg status " + std::to_string(id));
  CHECK(contains(status.output, "waiting: no-association-for-function"));
}

TEST_CASE("npacctl assoc list shows each association's peer address and bound time") {
  NpacdProcess npacd;
  const fs::path key = npacd.provision("0001");
  auto sim = npacd.sim("0001", key, {"--from", "127.0.0.2", "--keep-running", "--duration", "15s"});
  REQUIRE(npacd.waitForAssociations(1));
  const Json listed = npacd.call(http::verb::get, "/v1/associations").body;
  INFO(listed.dump());
  const Json& a = listed["associations"][0];
  REQUIRE(a["peer"].is_string());
  CHECK(a["peer"].get<std::string>().rfind("127.0.0.2:", 0) == 0);
  REQUIRE(a["bound_at"].is_string());
  const std::string bound_at = a["bound_at"].get<std::string>();

  ProgramRun shown = npacctlOn(npacd, "assoc list");
  INFO(shown.output);
  REQUIRE(shown.exit_code == 0);
  CHECK(contains(shown.output, "PEER"));
  CHECK(contains(shown.output, "BOUND AT"));
  CHECK(contains(shown.output, a["peer"].get<std::string>()));
  CHECK(contains(shown.output, bound_at));
}

TEST_CASE("npacctl queue shows the core's wait reason throttle storage and congested associations") {
  npac::npacd::ProviderQueueView view;
  view.spid = "0001";
  view.bound = true;
  view.waits = {{"notifications", npac::npacd::WaitReason::kAllCongested, 2}};
  view.throttle_level = 2;
  view.throttle_detail = "rate 21/20 msg/s";
  view.storage_ok = false;
  view.associations = {{7, 10, true, false}, {8, 3, false, true}};
  InProcessQueue q(2, view);

  ProgramRun shown = npacctlAt(q.f.port, "queue 0001", q.f.tokenFile());
  INFO(shown.output);
  REQUIRE(shown.exit_code == 0);
  CHECK(contains(shown.output, "provider 0001: bound, queued 2, sent 0, acknowledged 0, failed 0"));
  CHECK(contains(shown.output, "oldest queued: 1m05s ago"));
  CHECK(contains(shown.output, "throttle: level 2 (rate 21/20 msg/s)   storage: unavailable"));
  CHECK(contains(shown.output, "notifications  2       1m05s   all-congested"));
  CHECK(contains(shown.output, "7      10           yes        no"));
  CHECK(contains(shown.output, "8      3            no         yes"));

  ProgramRun all = npacctlAt(q.f.port, "queue", q.f.tokenFile());
  INFO(all.output);
  REQUIRE(all.exit_code == 0);
  CHECK(contains(all.output, "0001  bound  2       0     0       1m05s   notifications: all-congested"));
}

TEST_CASE("npacctl msg status prints the core's wait reason of a queued message") {
  npac::npacd::ProviderQueueView view;
  view.spid = "0001";
  view.bound = true;
  view.waits = {{"notifications", npac::npacd::WaitReason::kRecovering, 1}};
  InProcessQueue q(1, view);
  ProgramRun status = npacctlAt(q.f.port, "msg status 1", q.f.tokenFile());
  INFO(status.output);
  REQUIRE(status.exit_code == 0);
  CHECK(contains(status.output, "message 1 for 0001: queued"));
  CHECK(contains(status.output, "waiting: recovering"));
}

TEST_CASE("npacctl queue and msg status show the messages a settled mark passed in the state each is in") {
  npac::npacd::ProviderQueueView view;
  view.spid = "0001";
  view.bound = true;
  InProcessQueue q(4, view);  // messages 1..4, created 65 s before the API's clock
  {
    // Handed out on association 7: 1 and 4 acknowledged, 2 failed, 3 still in flight (its
    // answer never came). The mark passes all four: 2 listed open as failed, 3 as stuck.
    auto connection = q.f.openConnection();
    npac::db::OutboundQueue queue(*connection);
    const npac::db::TimeMs now = npac::npacd::testing::AdminApiFixture::kNow;
    REQUIRE(queue.markSent(std::vector<npac::db::MessageId>{1, 2, 3, 4}, 7, now - 60'000).isOk());
    REQUIRE(queue.markAcknowledged(std::vector<npac::db::MessageId>{1, 4}, now - 59'000).isOk());
    REQUIRE(queue.markFailed(2, "rejected by the provider", now - 59'000).isOk());
    REQUIRE(queue.settle("0001", now).value() == 4);
  }
  ProgramRun shown = npacctlAt(q.f.port, "queue 0001", q.f.tokenFile());
  INFO(shown.output);
  REQUIRE(shown.exit_code == 0);
  CHECK(contains(shown.output, "provider 0001: bound, queued 0, sent 1, acknowledged 2, failed 1"));

  const auto status = [&](int id) {
    ProgramRun r = npacctlAt(q.f.port, "msg status " + std::to_string(id), q.f.tokenFile());
    INFO(r.output);
    CHECK(r.exit_code == 0);
    return r.output;
  };
  CHECK(contains(status(1), "message 1 for 0001: acknowledged (attempts 1"));
  CHECK(contains(status(2), "message 2 for 0001: failed (attempts 1"));
  CHECK(contains(status(2), "failed: rejected by the provider"));
  CHECK(contains(status(3), "message 3 for 0001: sent (attempts 1"));
  CHECK(contains(status(4), "message 4 for 0001: acknowledged (attempts 1"));
}
