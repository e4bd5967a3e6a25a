// npacd end to end: the provider's egress policy (the `egress_policy` tunable — round
// robin, `weighted` with per-NSAP weights and relative costs from provisioning, `lrtm`)
// through the running server, and SRR turned off while requests are outstanding
// (docs/OPERATIONS.md SRR table). Real binary, SQLite, loopback, npac-soa-sim; every wait bounded, no timing
// assertion: the counts checked are the ones the dispatch core guarantees
// (docs/DISPATCH.md, docs/dispatch/lrtm.md). The last two cases are regressions for a bug
// they found: a request moved to another association was sent once more under a new
// invoke id when its first association went.
#include "tests/npac/npacd/npacd_fixture.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

using namespace npacd_test;

namespace {

// One copy of a message as the sim's report records it.
struct Arrival {
  int association = 0;  // 1-based, the sim's --from order (= npacd's bind order)
  bool retransmission = false;
  std::uint64_t seq = 0;  // the order the sim received it in
};

// message tag (information hex) → its copies, in the order they arrived.
std::map<std::string, std::vector<Arrival>> arrivalsByTag(const Json& report) {
  std::map<std::string, std::vector<Arrival>> out;
  for (const Json& r : report["received"]) {
    out[r["info"].get<std::string>()].push_back(
        Arrival{r["association"].get<int>(), r["retransmission"].get<bool>(), r["seq"].get<std::uint64_t>()});
  }
  return out;
}

// For each of prefix0..prefix(count-1): the association of its first copy.
std::vector<int> firstCopies(const std::map<std::string, std::vector<Arrival>>& seen, const char* prefix,
                             int count) {
  std::vector<int> out;
  for (int i = 0; i < count; ++i) {
    auto it = seen.find(NpacdProcess::tagHex(label(prefix, i)));
    out.push_back(it == seen.end() ? 0 : it->second.front().association);
  }
  return out;
}

void provisionNsap(NpacdProcess& npacd, const std::string& spid, const std::string& address, int weight,
                   int relative_cost) {
  const Reply r = npacd.call(http::verb::post, "/v1/providers/" + spid + "/nsaps",
                             Json{{"address", address}, {"weight", weight}, {"relative_cost", relative_cost}});
  INFO(r.body.dump());
  REQUIRE(r.status == 201);
}

void setTunable(NpacdProcess& npacd, const std::string& name, const std::string& spid, const Json& value) {
  const Reply r = npacd.call(http::verb::put, "/v1/tunables/" + name, Json{{"value", value}, {"spid", spid}});
  INFO(r.body.dump());
  REQUIRE(r.status == 200);
}

Json associationList(const NpacdProcess& npacd) {
  return npacd.call(http::verb::get, "/v1/associations").body["associations"];
}

// Waits (bounded) until every id is acknowledged; the ids that are not.
std::vector<std::int64_t> waitAcknowledged(const NpacdProcess& npacd, const std::vector<std::int64_t>& ids,
                                           std::chrono::milliseconds limit = 15s) {
  std::size_t next = 0;  // the ids before it are acknowledged
  eventually(
      [&] {
        while (next < ids.size() && npacd.messageState(ids[next]) == "acknowledged") ++next;
        return next == ids.size();
      },
      limit, 10ms);
  std::vector<std::int64_t> missing;
  for (; next < ids.size(); ++next) {
    if (npacd.messageState(ids[next]) != "acknowledged") missing.push_back(ids[next]);
  }
  return missing;
}

// Waits (bounded) until npacd's log contains `text`.
bool waitForLog(const NpacdProcess& npacd, const std::string& text, std::chrono::milliseconds limit = 10s) {
  return eventually([&] { return npacd.log().find(text) != std::string::npos; }, limit);
}

std::size_t occurrences(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// Stops the sim (SIGTERM: it releases what is up and writes its report); the report.
const Json& finish(SimRun& sim) {
  if (sim.pid > 0) kill(sim.pid, SIGTERM);
  sim.wait(10s);
  REQUIRE(sim.result.is_object());
  return sim.result;
}

// Every tag prefix0..prefix(count-1) reached the provider; every copy after the first is
// marked as a retransmission (same invoke id as a copy seen before).
void checkEachArrivedDuplicatesMarked(const std::map<std::string, std::vector<Arrival>>& seen, const char* prefix,
                                      int count) {
  for (int i = 0; i < count; ++i) {
    auto it = seen.find(NpacdProcess::tagHex(label(prefix, i)));
    INFO("message " << label(prefix, i));
    REQUIRE(it != seen.end());
    for (std::size_t copy = 1; copy < it->second.size(); ++copy) CHECK(it->second[copy].retransmission);
  }
}

// The weighted smooth schedule of a weight-3 member A (added first) and a weight-1 member
// B: instants A 1/6, 3/6, 5/6 and B 3/6, ties to the member added first, so the cycle is
// A A B A (docs/DISPATCH.md "a smooth schedule"). A's picks among the first `picks`:
std::size_t weight3Share(std::size_t picks) {
  constexpr std::size_t kPrefix[4] = {0, 1, 2, 2};
  return 3 * (picks / 4) + kPrefix[picks % 4];
}

// "tag invoke N on A (retransmission); …" — what the sim received, for failure messages.
std::string receivedTrace(const Json& report) {
  std::ostringstream trace;
  for (const Json& r : report["received"]) {
    trace << r["info"].get<std::string>() << " invoke " << r["invoke_id"] << " on " << r["association"]
          << (r["retransmission"].get<bool>() ? " (retransmission)" : "") << "; ";
  }
  return trace.str();
}

}  // namespace

TEST_CASE("weighted egress splits a provider's PDUs exactly 3 to 1 between NSAPs of weight 3 and 1") {
  NpacdProcess npacd;
  auto key = npacd.provision("0001", /*srr=*/true);
  provisionNsap(npacd, "0001", "127.0.0.2", 3, 0);
  provisionNsap(npacd, "0001", "127.0.0.3", 1, 0);
  setTunable(npacd, "egress_policy", "0001", "weighted");
  // Far above what one association may hold here: a Congested member counts as
  // unavailable to the weighted policy (EAGLE weighted GTT) and would change the schedule.
  setTunable(npacd, "congestion_window", "0001", 1000);
  constexpr int kMessages = 400;
  auto sim = npacd.sim("0001", key, {"--from", "127.0.0.2", "--from", "127.0.0.3", "--expect",
                                     std::to_string(kMessages), "--duration", "20s"});
  REQUIRE(npacd.waitForAssociations(2));
  std::vector<std::int64_t> ids = npacd.submit("0001", "w", kMessages);
  REQUIRE(sim->wait() == 0);
  const Json& report = sim->result;
  CHECK(report["associations"][0]["received"] == kMessages * 3 / 4);
  CHECK(report["associations"][1]["received"] == kMessages / 4);
  auto seen = arrivalsByTag(report);
  CHECK(seen.size() == static_cast<std::size_t>(kMessages));
  std::vector<int> on = firstCopies(seen, "w", kMessages);
  for (int i = 0; i < kMessages; ++i) {
    INFO("message w" << i);
    CHECK(on[i] != 0);
    CHECK(seen[NpacdProcess::tagHex(label("w", i))].size() == 1);  // no duplicate
  }
  // Any 4 consecutive picks (the group's available weight) give exactly 3 and 1.
  for (int i = 0; i + 4 <= kMessages; ++i) {
    INFO("messages w" << i << "..w" << i + 3);
    CHECK(std::count(on.begin() + i, on.begin() + i + 4, 1) == 3);
  }
  CHECK(waitAcknowledged(npacd, ids).empty());
  for (const Json& r : report["received"]) CHECK_FALSE(r["retransmission"].get<bool>());
}

TEST_CASE("GET /v1/providers/{spid}/egress shows the latest picks in the weighted 3 to 1 split and each association its weight and Current Load %") {
  NpacdProcess npacd;
  auto key = npacd.provision("0001", /*srr=*/true);
  // Not bound in this run yet: the provisioned policy and no picks.
  Reply before = npacd.call(http::verb::get, "/v1/providers/0001/egress");
  REQUIRE(before.status == 200);
  CHECK(before.body["policy"] == "round-robin");
  CHECK(before.body["bound_this_run"] == false);
  CHECK(before.body["recent"].empty());
  provisionNsap(npacd, "0001", "127.0.0.2", 3, 0);
  provisionNsap(npacd, "0001", "127.0.0.3", 1, 0);
  setTunable(npacd, "egress_policy", "0001", "weighted");
  setTunable(npacd, "congestion_window", "0001", 1000);
  constexpr int kMessages = 40;
  auto sim = npacd.sim("0001", key, {"--from", "127.0.0.2", "--from", "127.0.0.3", "--expect",
                                     std::to_string(kMessages), "--duration", "20s"});
  REQUIRE(npacd.waitForAssociations(2));
  std::map<std::string, int> association_of;  // association id → 1-based bind order
  Reply listed = npacd.call(http::verb::get, "/v1/associations");
  REQUIRE(listed.body["associations"].size() == 2);
  for (const Json& a : listed.body["associations"]) {
    INFO(a.dump());
    const bool heavy = a["weight"] == 3;
    CHECK(a["load_percent"] == (heavy ? 75 : 25));  // EAGLE Table 2-4: 3 / (3 + 1)
    CHECK(a["relative_cost"] == 0);
    CHECK(a["lrtm"].is_null());
    association_of[std::to_string(a["id"].get<long>())] = heavy ? 3 : 1;
  }
  std::vector<std::int64_t> ids = npacd.submit("0001", "e", kMessages);
  REQUIRE(sim->wait() == 0);
  Reply egress = npacd.call(http::verb::get, "/v1/providers/0001/egress");
  REQUIRE(egress.status == 200);
  CHECK(egress.body["policy"] == "weighted");
  CHECK(egress.body["bound_this_run"] == true);
  const Json& recent = egress.body["recent"];
  REQUIRE(recent.size() == static_cast<std::size_t>(kMessages));
  std::vector<int> weights;
  for (const Json& pick : recent) {
    CHECK(pick["function"] == "notifications");
    weights.push_back(association_of[std::to_string(pick["association_id"].get<long>())]);
  }
  for (std::size_t i = 0; i + 4 <= weights.size(); ++i) {
    INFO("picks " << i << ".." << i + 3);
    CHECK(std::count(weights.begin() + i, weights.begin() + i + 4, 3) == 3);
  }
}

TEST_CASE("weighted egress keeps all traffic on the lowest relative cost and moves it to the next cost without loss when that association goes") {
  NpacdProcess npacd;
  auto key = npacd.provision("0001", /*srr=*/true);
  provisionNsap(npacd, "0001", "127.0.0.2", 1, 0);   // the dominant group, RC 0
  provisionNsap(npacd, "0001", "127.0.0.3", 3, 10);  // the load-shared alternate, RC 10
  provisionNsap(npacd, "0001", "127.0.0.4", 1, 10);
  setTunable(npacd, "egress_policy", "0001", "weighted");
  setTunable(npacd, "congestion_window", "0001", 1000);
  constexpr int kMessages = 200;
  constexpr int kDropAfter = 50;
  // Association 1 (RC 0) closes its connection without a release after its 50th message;
  // npacd has sent it more by then, which it never answers.
  auto sim = npacd.sim("0001", key, {"--from", "127.0.0.2", "--from", "127.0.0.3", "--from", "127.0.0.4",
                                     "--drop-after", label("1=", kDropAfter), "--drop-mode", "close",
                                     "--keep-running", "--duration", "20s"});
  REQUIRE(npacd.waitForAssociations(3));
  std::vector<std::int64_t> ids = npacd.submit("0001", "c", kMessages);
  CHECK(waitAcknowledged(npacd, ids).empty());
  REQUIRE(npacd.waitForAssociations(2));
  const Json& report = finish(*sim);
  INFO(report["associations"].dump());
  CHECK(report["associations"][0]["end"]["reason"] == "dropped-close");
  CHECK(report["associations"][0]["received"] == kDropAfter);
  auto seen = arrivalsByTag(report);
  checkEachArrivedDuplicatesMarked(seen, "c", kMessages);
  // While in service the RC 0 association took everything, in FIFO order: messages
  // c0..c49, and nothing reached RC 10 before it was gone.
  std::uint64_t last_on_rc0 = 0;
  std::uint64_t first_on_rc10 = UINT64_MAX;
  std::set<std::string> on_rc10;  // distinct messages, each one pick of the RC 10 group
  std::size_t on_weight3 = 0;
  for (const auto& [tag, copies] : seen) {
    for (const Arrival& a : copies) {
      if (a.association == 1) {
        last_on_rc0 = std::max(last_on_rc0, a.seq);
      } else {
        first_on_rc10 = std::min(first_on_rc10, a.seq);
        CHECK(on_rc10.insert(tag).second);  // at most one copy in RC 10
        on_weight3 += a.association == 2;
      }
    }
  }
  CHECK(last_on_rc0 < first_on_rc10);
  for (int i = 0; i < kDropAfter; ++i) {
    CHECK(seen[NpacdProcess::tagHex(label("c", i))].front().association == 1);
  }
  // Every message it did not answer went to RC 10 (retransmitted or first sent there),
  // split by the RC 10 group's schedule: weights 3 and 1.
  CHECK(on_rc10.size() >= static_cast<std::size_t>(kMessages - kDropAfter));
  CHECK(on_weight3 == weight3Share(on_rc10.size()));
  CHECK(report["associations"][1]["received"].get<std::size_t>() + report["associations"][2]["received"].get<std::size_t>() ==
        on_rc10.size());
}

TEST_CASE("lrtm egress sends most PDUs to the association that answers at once and fewer than half to the slow one") {
  NpacdProcess npacd;
  auto key = npacd.provision("0001", /*srr=*/true);
  setTunable(npacd, "egress_policy", "0001", "lrtm");
  // LRTM skips a Congested member; at the default window (100) the fast association
  // would fill up within the burst and the rest would go to the slow one.
  setTunable(npacd, "congestion_window", "0001", 1000);
  auto sim = npacd.sim("0001", key, {"--from", "127.0.0.2", "--from", "127.0.0.3", "--delay", "2=1s",
                                     "--keep-running", "--duration", "20s"});
  REQUIRE(npacd.waitForAssociations(2));
  // Warm-up: both idle and unmeasured, so one each (idle first, then in the order they
  // joined). Their answers are each association's first response-time sample: about 0
  // for the first, at least 1 s for the second.
  std::vector<std::int64_t> warm = npacd.submit("0001", "m", 2);
  REQUIRE(waitAcknowledged(npacd, warm).empty());
  Json listed = associationList(npacd);
  CHECK(listed[0]["sent"] == 1);
  CHECK(listed[1]["sent"] == 1);
  // One burst, placed in one delivery round (≤ 256), so no answer comes back in between:
  // after one PDU each (both idle), the slow one gets another only when the fast one's
  // active × response time reaches its own 1 × ≥1 s — that is, unless the fast
  // association's measured response time were itself about a second, not before the
  // fast one holds the majority.
  constexpr int kMessages = 200;
  std::vector<std::int64_t> ids = npacd.submit("0001", "l", kMessages);
  CHECK(waitAcknowledged(npacd, ids).empty());
  const Json& report = finish(*sim);
  auto seen = arrivalsByTag(report);
  checkEachArrivedDuplicatesMarked(seen, "l", kMessages);
  std::vector<int> on = firstCopies(seen, "l", kMessages);
  const auto slow = std::count(on.begin(), on.end(), 2);
  const auto fast = std::count(on.begin(), on.end(), 1);
  INFO("fast " << fast << ", slow " << slow);
  CHECK(fast + slow == kMessages);
  CHECK(slow >= 1);  // idle first: it was idle at the burst's second pick
  CHECK(slow < kMessages / 2);
  for (const auto& [tag, copies] : seen) CHECK(copies.size() == 1);
}

TEST_CASE("switching egress_policy live changes how the next PDUs are spread without a new bind") {
  NpacdProcess npacd;
  auto key = npacd.provision("0001", /*srr=*/true);
  provisionNsap(npacd, "0001", "127.0.0.2", 3, 0);
  provisionNsap(npacd, "0001", "127.0.0.3", 1, 0);
  setTunable(npacd, "congestion_window", "0001", 1000);
  auto sim = npacd.sim("0001", key, {"--from", "127.0.0.2", "--from", "127.0.0.3", "--keep-running",
                                     "--duration", "20s"});
  REQUIRE(npacd.waitForAssociations(2));
  Json before = associationList(npacd);
  constexpr int kPhase = 40;
  // Round robin (the default): strict alternation, weights ignored.
  std::vector<std::int64_t> ids = npacd.submit("0001", "a", kPhase);
  REQUIRE(waitAcknowledged(npacd, ids).empty());
  setTunable(npacd, "egress_policy", "0001", "weighted");
  REQUIRE(waitForLog(npacd, "SPID 0001: egress policy now weighted"));
  ids = npacd.submit("0001", "b", kPhase);
  REQUIRE(waitAcknowledged(npacd, ids).empty());
  setTunable(npacd, "egress_policy", "0001", "round-robin");
  REQUIRE(waitForLog(npacd, "SPID 0001: egress policy now round-robin"));
  ids = npacd.submit("0001", "c", kPhase);
  REQUIRE(waitAcknowledged(npacd, ids).empty());
  Json after = associationList(npacd);
  REQUIRE(after.size() == 2);
  CHECK(after[0]["id"] == before[0]["id"]);
  CHECK(after[1]["id"] == before[1]["id"]);
  CHECK(occurrences(npacd.log(), "bind accepted: SPID 0001") == 2);
  const Json& report = finish(*sim);
  auto seen = arrivalsByTag(report);
  std::vector<int> a = firstCopies(seen, "a", kPhase);
  std::vector<int> b = firstCopies(seen, "b", kPhase);
  std::vector<int> c = firstCopies(seen, "c", kPhase);
  for (int i = 1; i < kPhase; ++i) {
    CHECK(a[i] != a[i - 1]);
    CHECK(c[i] != c[i - 1]);
  }
  CHECK(std::count(a.begin(), a.end(), 1) == kPhase / 2);
  CHECK(std::count(b.begin(), b.end(), 1) == kPhase * 3 / 4);
  CHECK(std::count(b.begin(), b.end(), 2) == kPhase / 4);
  CHECK(std::count(c.begin(), c.end(), 1) == kPhase / 2);
  for (const auto& [tag, copies] : seen) CHECK(copies.size() == 1);
  for (const Json& assoc : report["associations"]) CHECK(assoc["end"]["reason"] == "released");
}

TEST_CASE("turning SRR off while the later associations hold unanswered requests moves them to the earliest-bound and releases the others gracefully without loss") {
  NpacdProcess npacd;
  auto key = npacd.provision("0001", /*srr=*/true);
  // Associations 2 and 3 answer 1.5 s late (below npacd's 3 s release timeout, so their
  // RLRE, queued behind those answers, still arrives in time).
  auto sim = npacd.sim("0001", key, {"--from", "127.0.0.2", "--from", "127.0.0.3", "--from", "127.0.0.4",
                                     "--delay", "2=1500ms", "--delay", "3=1500ms", "--keep-going",
                                     "--keep-running", "--duration", "20s"});
  REQUIRE(npacd.waitForAssociations(3));
  const Json before = associationList(npacd);
  const std::int64_t keeper = before[0]["id"].get<std::int64_t>();
  constexpr int kMessages = 30;
  std::vector<std::int64_t> ids = npacd.submit("0001", "o", kMessages);
  // Round robin put 10 on each; the first answered at once, the others hold theirs.
  Json listed;
  auto holding = [&] {
    listed = associationList(npacd);
    return listed.size() == 3 && listed[0]["outstanding"] == 0 && listed[1]["outstanding"] == kMessages / 3 &&
           listed[2]["outstanding"] == kMessages / 3;
  };
  eventually(holding, 5s, 10ms);
  INFO(listed.dump());
  REQUIRE(holding());
  REQUIRE(npacd.call(http::verb::put, "/v1/providers/0001/srr", Json{{"on", false}}).status == 200);
  REQUIRE(npacd.waitForAssociations(1));
  const Json left = associationList(npacd);
  CHECK(left[0]["id"] == keeper);
  // The operator's listing counts what the keeper carried a second time.
  CHECK(left[0]["retransmissions"] == kMessages / 3 * 2);
  CHECK(waitAcknowledged(npacd, ids).empty());
  const Json& report = finish(*sim);
  INFO(report["associations"].dump());
  CHECK(report["associations"][1]["end"]["reason"] == "released-by-peer");
  CHECK(report["associations"][2]["end"]["reason"] == "released-by-peer");
  auto seen = arrivalsByTag(report);
  checkEachArrivedDuplicatesMarked(seen, "o", kMessages);
  // The held requests moved to the earliest-bound association: each arrived a second
  // time there, marked as a retransmission (same invoke id). Nothing else was repeated.
  std::size_t moved = 0;
  for (const auto& [tag, copies] : seen) {
    if (copies.front().association == 1) {
      CHECK(copies.size() == 1);
      continue;
    }
    REQUIRE(copies.size() == 2);
    CHECK(copies[1].association == 1);
    ++moved;
  }
  CHECK(moved == static_cast<std::size_t>(kMessages / 3 * 2));
  for (std::int64_t id : ids) {
    const Reply row = npacd.call(http::verb::get, "/v1/messages/" + std::to_string(id));
    CHECK(row.body["state"] == "acknowledged");
  }
}

// Regression: when SRR goes off, the requests moved to the earliest-bound association
// were written there but their queue rows still named the released association; when
// that release completed before the keeper answered, they were re-queued and sent a third
// time under new invoke ids, unmarked. The rows now follow the request (moveSent).
TEST_CASE("turning SRR off while a silent association holds requests and the earliest-bound answers late sends each held request only once more") {
  NpacdProcess npacd;
  auto key = npacd.provision("0001", /*srr=*/true);
  auto sim = npacd.sim("0001", key, {"--from", "127.0.0.2", "--from", "127.0.0.3", "--delay", "1=1s", "--silent", "2",
                                     "--keep-going", "--keep-running", "--duration", "20s"});
  REQUIRE(npacd.waitForAssociations(2));
  constexpr int kMessages = 10;
  std::vector<std::int64_t> ids = npacd.submit("0001", "q", kMessages);
  Json listed;
  auto holding = [&] {
    listed = associationList(npacd);
    return listed.size() == 2 && listed[0]["outstanding"] == kMessages / 2 && listed[1]["outstanding"] == kMessages / 2;
  };
  eventually(holding, 5s, 10ms);
  INFO(listed.dump());
  REQUIRE(holding());
  REQUIRE(npacd.call(http::verb::put, "/v1/providers/0001/srr", Json{{"on", false}}).status == 200);
  REQUIRE(npacd.waitForAssociations(1));  // the silent one answers RLRQ at once
  CHECK(waitAcknowledged(npacd, ids).empty());
  const Json& report = finish(*sim);
  INFO(receivedTrace(report));
  CHECK(report["associations"][1]["end"]["reason"] == "released-by-peer");
  auto seen = arrivalsByTag(report);
  checkEachArrivedDuplicatesMarked(seen, "q", kMessages);
  // 5 on each, then the 5 held ones once more on the earliest-bound.
  CHECK(report["totals"]["received"] == kMessages + kMessages / 2);
}

// Regression of the same kind: a request retried after response_timeout on another
// association (onTimer, `avoid`) kept its queue row on the first association; when that
// one went, the row was re-queued although the request was outstanding on the survivor,
// and it was sent again under a new invoke id, unmarked.
TEST_CASE("a request retried on another association is not sent again under a new invoke id when the first association goes") {
  NpacdProcess npacd;
  auto key = npacd.provision("0001", /*srr=*/true);
  setTunable(npacd, "response_timeout", "0001", "1s");
  setTunable(npacd, "retry_attempts", "0001", 10);
  auto sim = npacd.sim("0001", key, {"--from", "127.0.0.2", "--from", "127.0.0.3", "--silent", "1", "--delay",
                                     "2=2500ms", "--keep-going", "--keep-running", "--duration", "20s"});
  REQUIRE(npacd.waitForAssociations(2));
  std::vector<std::int64_t> ids = npacd.submit("0001", "t", 2);  // t0 on 1, t1 on 2
  // After response_timeout each is retried on the other association (avoid).
  Json listed;
  auto retried = [&] {
    listed = associationList(npacd);
    return listed.size() == 2 && listed[0]["sent"] == 2 && listed[1]["sent"] == 2;
  };
  eventually(retried, 5s, 10ms);
  INFO(listed.dump());
  REQUIRE(retried());
  const std::int64_t first = listed[0]["id"].get<std::int64_t>();
  REQUIRE(npacd.call(http::verb::post, "/v1/associations/" + std::to_string(first) + "/abort",
                     Json{{"actor", "npacd-test"}}).status == 200);
  REQUIRE(npacd.waitForAssociations(1));
  CHECK(waitAcknowledged(npacd, ids).empty());
  const Json& report = finish(*sim);
  INFO(receivedTrace(report));
  checkEachArrivedDuplicatesMarked(arrivalsByTag(report), "t", 2);
}
