// Helpers for end-to-end tests with several providers and associations on one real npacd
// (NpacdProcess, npacd_fixture.h; its bounded poll is tests/support/eventually.h): tunables
// set through the admin API, the association log, the NSAP of a loopback address (RFC 1277,
// docs/OPERATIONS.md), a read-only look at the outbound queue in the real SQLite file, and
// the analysis of a simulator's JSON report (docs/SOA-SIM.md: which message arrived how
// often, and whether each repeat was a retransmission — the same invoke id and argument
// seen before).
//
// Threading: everything here runs on the test's own thread (Catch2 v2 assertions are not
// thread-safe); load threads use NpacdProcess::call() only and hand their results back.
#pragma once

#include <sqlite3.h>

#include <cstdio>
#include <functional>
#include <map>
#include <set>

#include "tests/npac/npacd/npacd_fixture.h"
#include "tests/npac/npacd/queue_rows.h"

namespace npacd_test {

// "0001", "0002", … for provider n (0-based).
inline std::string spidOf(int n) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%04d", n + 1);
  return buf;
}

// The NSAP npacd records for a peer at `ipv4` (RFC 1277 as docs/OPERATIONS.md gives it:
// the prefix 540072872203 and the address as twelve decimal digits), as the API shows it.
inline std::string nsapOf(const std::string& ipv4) {
  std::string out = "540072872203";
  std::istringstream in(ipv4);
  for (std::string part; std::getline(in, part, '.');) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "%03d", std::stoi(part));
    out += buf;
  }
  return out;
}

// PUT /v1/tunables/{name}, for `spid` when given; the HTTP status.
inline int setTunable(const NpacdClient& npacd, const std::string& name, const Json& value,
                      const std::string& spid = "") {
  Json body{{"value", value}};
  if (!spid.empty()) body["spid"] = spid;
  return npacd.call(http::verb::put, "/v1/tunables/" + name, body).status;
}

// Turns heartbeats on for `spid` with `timeout` and the shortest interval the catalogue
// accepts of 1 s and 10 s (NANC 404); the interval set, zero if neither was accepted.
inline std::chrono::seconds enableHeartbeats(const NpacdClient& npacd, const std::string& spid,
                                             const std::string& timeout) {
  if (setTunable(npacd, "heartbeat_timeout", timeout, spid) != 200) return 0s;
  for (std::chrono::seconds interval : {1s, 10s}) {
    if (setTunable(npacd, "heartbeat_interval", std::to_string(interval.count()) + "s", spid) == 200) {
      return interval;
    }
  }
  return 0s;
}

// GET /v1/association-log for `spid` (all providers when empty), newest first.
inline Json associationLog(const NpacdClient& npacd, const std::string& spid = "") {
  std::string target = "/v1/association-log?limit=10000";
  if (!spid.empty()) target += "&spid=" + spid;
  Reply r = npacd.call(http::verb::get, target);
  return r.status == 200 ? r.body["events"] : Json::array();
}

// The association-log events of one kind ("bind", "reject", "release", "abort").
inline std::vector<Json> logEvents(const NpacdClient& npacd, const std::string& kind,
                                   const std::string& spid = "") {
  std::vector<Json> out;
  for (const Json& e : associationLog(npacd, spid)) {
    if (e.value("event", "") == kind) out.push_back(e);
  }
  return out;
}

// The live associations (GET /v1/associations) of `spid`, or all.
inline std::vector<Json> liveAssociations(const NpacdClient& npacd, const std::string& spid = "") {
  std::vector<Json> out;
  Reply r = npacd.call(http::verb::get, "/v1/associations");
  if (r.status != 200) return out;
  for (const Json& a : r.body["associations"]) {
    if (spid.empty() || a.value("spid", "") == spid) out.push_back(a);
  }
  return out;
}

// The id of the live association whose peer is at `ipv4`, or -1.
inline std::int64_t associationFrom(const NpacdClient& npacd, const std::string& ipv4) {
  for (const Json& a : liveAssociations(npacd)) {
    if (a.value("peer", "").rfind(ipv4 + ":", 0) == 0) return a["id"].get<std::int64_t>();
  }
  return -1;
}

// A message for `spid` needing `function`, tagged like NpacdProcess::notification().
inline Json messageFor(const std::string& spid, const std::string& function, const std::string& tag) {
  Json m = NpacdProcess::notification(spid, tag);
  m["function"] = function;
  return m;
}

// POST /v1/messages with `messages` (1..1000); the ids, empty if not 201.
inline std::vector<std::int64_t> post(const NpacdClient& npacd, const Json& messages) {
  std::vector<std::int64_t> ids;
  Reply r = npacd.call(http::verb::post, "/v1/messages", Json{{"messages", messages}});
  if (r.status != 201) return ids;
  for (const Json& id : r.body["ids"]) ids.push_back(id.get<std::int64_t>());
  return ids;
}

inline Json messageRow(const NpacdClient& npacd, std::int64_t id) {
  return npacd.call(http::verb::get, "/v1/messages/" + std::to_string(id)).body;
}

// Every one of `ids` is acknowledged but those sent on `silent` and waiting there for an
// answer, and each kind has some: what a test on a manual clock waits for before it moves
// past response_timeout (in_process_npacd.h), so that only the silent one's requests expire.
inline bool onlySilentHolds(const NpacdClient& npacd, const std::vector<std::int64_t>& ids, std::int64_t silent) {
  std::size_t acknowledged = 0, held = 0;
  for (std::int64_t id : ids) {
    const Json row = messageRow(npacd, id);
    if (row.value("state", "") == "acknowledged") ++acknowledged;
    if (row.value("state", "") == "sent" && row.value("association_id", std::int64_t{-1}) == silent) ++held;
  }
  return acknowledged > 0 && held > 0 && acknowledged + held == ids.size();
}

// How many of `ids` are in `state` now (GET /v1/messages/{id} each).
inline std::size_t countInState(const NpacdClient& npacd, const std::vector<std::int64_t>& ids,
                                const std::string& state) {
  std::size_t n = 0;
  for (std::int64_t id : ids) n += npacd.messageState(id) == state ? 1 : 0;
  return n;
}

// Reads npacd's outbound queue straight from its SQLite file (read-only, WAL readers do
// not block the writer): one row per message, for checks over thousands of messages.
struct QueueRow {
  std::int64_t id = 0;
  std::string spid;
  std::string state;
  std::int64_t sent_at = 0;          // 0 when never sent
  std::int64_t acknowledged_at = 0;  // 0 when not acknowledged
  std::int64_t association_id = 0;
  bool retransmission = false;
};

inline std::vector<QueueRow> queueRows(const fs::path& db) {
  std::vector<QueueRow> rows;
  for (const npac::db::QueuedMessage& m : npac::testing::foldedQueue(db)) {
    rows.push_back(QueueRow{m.id, m.spid, npac::db::toString(m.state), m.sent_at.value_or(0),
                            m.acknowledged_at.value_or(0), m.association_id.value_or(0), m.retransmission});
  }
  return rows;
}

inline std::map<std::string, std::size_t> statesOf(const std::vector<QueueRow>& rows) {
  std::map<std::string, std::size_t> n;
  for (const QueueRow& r : rows) ++n[r.state];
  return n;
}

// What one simulator received, per message (keyed by its information, the tag's BER hex):
// how many copies, and how many of the repeats were NOT retransmissions (the same
// invoke id and argument seen before — a message npacd sent twice as new).
struct Deliveries {
  std::map<std::string, int> copies;
  std::map<std::string, std::set<int>> associations;  // where each arrived (1-based)
  int unflagged_repeats = 0;
  int flagged_repeats = 0;
  std::size_t total = 0;
};

inline Deliveries deliveriesOf(const Json& report) {
  Deliveries d;
  if (!report.is_object()) return d;
  for (const Json& r : report["received"]) {
    const std::string info = r.value("info", "");
    const int copies = ++d.copies[info];
    d.associations[info].insert(r.value("association", 0));
    ++d.total;
    if (copies > 1) {
      if (r.value("retransmission", false)) {
        ++d.flagged_repeats;
      } else {
        ++d.unflagged_repeats;
      }
    }
  }
  return d;
}

// Lines of `text` at spdlog's warning level or above ("[warning]", "[error]", "[critical]").
inline std::size_t problemLines(const std::string& text) {
  std::size_t n = 0;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.find("[error]") != std::string::npos || line.find("[warning]") != std::string::npos ||
        line.find("[critical]") != std::string::npos) {
      ++n;
    }
  }
  return n;
}

}  // namespace npacd_test
