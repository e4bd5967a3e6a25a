// Scenario JSON → Scenario, with errors as values (docs/DISPATCH.md "Scenario files").
#include "npac/npacctl/scenario.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <initializer_list>
#include <set>

namespace npac::npacctl {
namespace {

using dispatch::Duration;
using dispatch::MemberId;
using dispatch::MemberState;
using dispatch::MonitorKind;
using nlohmann::json;

constexpr double kMaxMilliseconds = 1e9;  // ~11.6 days: enough for any plan

// Collects the first error; every getter is a no-op once an error is recorded.
class Reader {
 public:
  std::optional<Status> error;  // kBadDocument: "<JSON path>: <what is wrong>"

  void fail(const std::string& where, const std::string& reason) {
    if (!error) error = Status::badDocument(where.empty() ? reason : where + ": " + reason);
  }

  // A field the step or block cannot do without: absent is an error, never a default.
  bool require(const json& j, const char* key, const std::string& where, const std::string& what) {
    if (error) return false;
    if (j.contains(key)) return true;
    fail(join(where, key), "required (" + what + ")");
    return false;
  }

  bool object(const json& j, const std::string& where, std::initializer_list<const char*> allowed) {
    if (error) return false;
    if (!j.is_object()) {
      fail(where, "must be an object");
      return false;
    }
    std::set<std::string> ok(allowed.begin(), allowed.end());
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (ok.count(it.key()) == 0) {
        fail(where.empty() ? it.key() : where + "." + it.key(), "unknown field");
        return false;
      }
    }
    return true;
  }

  std::optional<std::uint64_t> integer(const json& j, const char* key, const std::string& where,
                                       std::uint64_t lo, std::uint64_t hi) {
    if (error || !j.contains(key)) return std::nullopt;
    return integerAt(j.at(key), join(where, key), lo, hi);
  }

  // The value itself at `path` (a list element or a map value).
  std::optional<std::uint64_t> integerAt(const json& v, const std::string& path, std::uint64_t lo,
                                         std::uint64_t hi) {
    if (error) return std::nullopt;
    if (!v.is_number_integer() || (v.is_number_integer() && !v.is_number_unsigned() && v.get<std::int64_t>() < 0)) {
      fail(path, "must be a whole number in " + std::to_string(lo) + "–" + std::to_string(hi));
      return std::nullopt;
    }
    const std::uint64_t x = v.get<std::uint64_t>();
    if (x < lo || x > hi) {
      fail(path, "must be in " + std::to_string(lo) + "–" + std::to_string(hi) + ", got " + std::to_string(x));
      return std::nullopt;
    }
    return x;
  }

  std::optional<double> number(const json& j, const char* key, const std::string& where,
                               double lo, double hi) {
    if (error || !j.contains(key)) return std::nullopt;
    return numberAt(j.at(key), join(where, key), lo, hi);
  }

  std::optional<double> numberAt(const json& v, const std::string& path, double lo, double hi) {
    if (error) return std::nullopt;
    if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < lo ||
        v.get<double>() > hi) {
      fail(path, "must be a number in " + trim(lo) + "–" + trim(hi));
      return std::nullopt;
    }
    return v.get<double>();
  }

  std::optional<Duration> millis(const json& j, const char* key, const std::string& where) {
    if (error || !j.contains(key)) return std::nullopt;
    return millisAt(j.at(key), join(where, key));
  }

  std::optional<Duration> millisAt(const json& v, const std::string& path) {
    auto ms = numberAt(v, path, 0, kMaxMilliseconds);
    if (!ms) return std::nullopt;
    return std::chrono::duration_cast<Duration>(std::chrono::duration<double, std::milli>(*ms));
  }

  std::optional<std::string> string(const json& j, const char* key, const std::string& where) {
    if (error || !j.contains(key)) return std::nullopt;
    if (!j.at(key).is_string()) {
      fail(join(where, key), "must be a string");
      return std::nullopt;
    }
    return j.at(key).get<std::string>();
  }

  std::optional<bool> boolean(const json& j, const char* key, const std::string& where) {
    if (error || !j.contains(key)) return std::nullopt;
    if (!j.at(key).is_boolean()) {
      fail(join(where, key), "must be true or false");
      return std::nullopt;
    }
    return j.at(key).get<bool>();
  }

  static std::string join(const std::string& where, const std::string& key) {
    return where.empty() ? key : where + "." + key;
  }

 private:
  static std::string trim(double x) {
    std::string s = std::to_string(x);
    while (!s.empty() && s.back() == '0') s.pop_back();
    if (!s.empty() && s.back() == '.') s.pop_back();
    return s;
  }
};

// FNV-1a 64: string keys ("key": "TN 2125551234") become numbers deterministically.
std::uint64_t fnv1a(std::string_view s) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

class Parser {
 public:
  Result<Scenario> run(std::string_view text) {
    json root = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
    if (root.is_discarded()) return bad("", "not valid JSON");
    if (!r_.object(root, "", {"title", "source", "policy", "throttle", "members", "steps", "comment"})) {
      return done();
    }
    s_.title = r_.string(root, "title", "").value_or("");
    s_.source = r_.string(root, "source", "").value_or("");
    policy(root);
    if (root.contains("throttle")) {
      // The throttle block configures the "throttle" wrapper; under any other policy it
      // would be read and then silently have no effect.
      if (!r_.error && s_.policy.name != dispatch::kThrottleName) {
        return bad("throttle", "only used with policy.name \"throttle\" (the policy is \"" +
                                   s_.policy.name + "\")");
      }
      throttle(root.at("throttle"));
    }
    members(root);
    steps(root);
    return done();
  }

 private:
  Result<Scenario> bad(const std::string& where, const std::string& reason) {
    r_.fail(where, reason);
    return done();
  }
  Result<Scenario> done() {
    if (r_.error) return *r_.error;
    return std::move(s_);
  }

  void policy(const json& root) {
    if (!root.contains("policy")) return r_.fail("policy", "required (the policy to plan)");
    const json& p = root.at("policy");
    if (!r_.object(p, "policy", {"name", "inner", "thresholds", "default_threshold",
                                 "monitors", "monitor_alpha", "unmeasured_response_ms"})) {
      return;
    }
    auto& cfg = s_.policy;
    if (auto name = r_.string(p, "name", "policy")) cfg.name = *name;
    else r_.fail("policy.name", "required (round-robin, weighted, lrtm or throttle)");
    if (auto inner = r_.string(p, "inner", "policy")) cfg.inner = *inner;
    if (auto d = r_.integer(p, "default_threshold", "policy", 1, 100)) {
      cfg.weighted.default_threshold_percent = static_cast<std::uint32_t>(*d);
    }
    if (p.contains("thresholds")) {
      const json& t = p.at("thresholds");
      if (!t.is_object()) return r_.fail("policy.thresholds", "must map relative cost to percent");
      for (auto it = t.begin(); it != t.end(); ++it) {
        const std::string where = "policy.thresholds." + it.key();
        // Plain decimal digits only: strtoul alone would also take " 10", "+10" or "-0".
        const std::string& key = it.key();
        const bool digits = !key.empty() && key.size() <= 10 &&
                            key.find_first_not_of("0123456789") == std::string::npos;
        const unsigned long long rc = digits ? std::stoull(key) : 0;
        if (!digits || rc > UINT32_MAX) {
          return r_.fail(where, "the key must be a relative cost (a whole number)");
        }
        if (auto pct = r_.integerAt(it.value(), where, 1, 100)) {
          cfg.weighted.threshold_percent_by_rc[static_cast<std::uint32_t>(rc)] =
              static_cast<std::uint32_t>(*pct);
        }
      }
    }
    if (p.contains("monitors")) {
      if (auto mask = monitorList(p.at("monitors"), "policy.monitors")) cfg.lrtm.monitors = *mask;
    }
    if (auto a = r_.number(p, "monitor_alpha", "policy", 0, 1)) cfg.lrtm.monitor_alpha = *a;
    if (auto u = r_.millis(p, "unmeasured_response_ms", "policy")) cfg.lrtm.unmeasured_response_time = *u;
    policyFieldsUsed(p);
  }

  // A field of another policy than the one that runs would be ignored: refuse it, so a
  // plan never looks configured when it is not. An unknown name is left to the factory,
  // whose message lists the known ones.
  void policyFieldsUsed(const json& p) {
    if (r_.error) return;
    const std::string& name = s_.policy.name;
    if (p.contains("inner") && name != dispatch::kThrottleName) {
      return r_.fail("policy.inner", "only used with policy.name \"throttle\" (the policy is \"" + name + "\")");
    }
    const std::string& leaf = name == dispatch::kThrottleName ? s_.policy.inner : name;
    if (leaf != dispatch::kRoundRobinName && leaf != dispatch::kWeightedName && leaf != dispatch::kLrtmName) return;
    for (const char* key : {"thresholds", "default_threshold"}) {
      if (p.contains(key) && leaf != dispatch::kWeightedName) {
        return r_.fail(std::string("policy.") + key, "only used by the weighted policy (this plan runs " + leaf + ")");
      }
    }
    for (const char* key : {"monitors", "monitor_alpha", "unmeasured_response_ms"}) {
      if (p.contains(key) && leaf != dispatch::kLrtmName) {
        return r_.fail(std::string("policy.") + key, "only used by the lrtm policy (this plan runs " + leaf + ")");
      }
    }
  }

  // {"maximum": 4, "levels": [{"onset": 50, "abatement": 25}], "abatement_ms": 0}
  std::optional<dispatch::LimitConfig> limit(const json& j, const std::string& where) {
    if (!r_.object(j, where, {"maximum", "levels", "abatement_ms"})) return std::nullopt;
    dispatch::LimitConfig cfg;
    cfg.enabled = true;
    auto max = r_.number(j, "maximum", where, 0, 1e12);
    if (!max) {
      r_.fail(where + ".maximum", "required");
      return std::nullopt;
    }
    cfg.maximum = *max;
    cfg.abatement_time = r_.millis(j, "abatement_ms", where).value_or(Duration::zero());
    if (!j.contains("levels") || !j.at("levels").is_array()) {
      r_.fail(where + ".levels", "required (1–3 objects with onset and abatement percent)");
      return std::nullopt;
    }
    const json& levels = j.at("levels");
    for (std::size_t i = 0; i < levels.size(); ++i) {
      const std::string at = where + ".levels[" + std::to_string(i) + "]";
      if (!r_.object(levels[i], at, {"onset", "abatement"})) return std::nullopt;
      auto onset = r_.integer(levels[i], "onset", at, 1, 100);
      auto abatement = r_.integer(levels[i], "abatement", at, 1, 100);
      if (!onset || !abatement) {
        r_.fail(at, "needs onset and abatement percent (1–100)");
        return std::nullopt;
      }
      cfg.levels.push_back(dispatch::CongestionThreshold{static_cast<std::uint32_t>(*onset),
                                                         static_cast<std::uint32_t>(*abatement)});
    }
    return cfg;
  }

  void throttle(const json& t) {
    if (!r_.object(t, "throttle", {"group", "list", "comment"})) return;
    if (t.contains("group")) {
      const json& g = t.at("group");
      if (!r_.object(g, "throttle.group", {"rate", "pending", "rate_window_ms", "rate_buckets"})) return;
      auto& cfg = s_.policy.throttle_group;
      if (g.contains("rate")) {
        if (auto l = limit(g.at("rate"), "throttle.group.rate")) cfg.rate = *l;
      }
      if (g.contains("pending")) {
        if (auto l = limit(g.at("pending"), "throttle.group.pending")) cfg.pending = *l;
      }
      if (auto w = r_.millis(g, "rate_window_ms", "throttle.group")) cfg.rate_window = *w;
      if (auto b = r_.integer(g, "rate_buckets", "throttle.group", 1, 1000)) {
        cfg.rate_buckets = static_cast<std::uint32_t>(*b);
      }
    }
    if (t.contains("list")) {
      const json& l = t.at("list");
      if (!r_.object(l, "throttle.list", {"rate", "pending", "peers", "reduction_percent", "peers_connected"})) {
        return;
      }
      dispatch::ThrottleListConfig cfg;
      if (l.contains("rate")) {
        if (auto x = limit(l.at("rate"), "throttle.list.rate")) cfg.rate = *x;
      }
      if (l.contains("pending")) {
        if (auto x = limit(l.at("pending"), "throttle.list.pending")) cfg.pending = *x;
      }
      if (l.contains("peers")) {
        const json& peers = l.at("peers");
        if (!peers.is_array()) return r_.fail("throttle.list.peers", "must be a list of peer ids");
        for (std::size_t i = 0; i < peers.size(); ++i) {
          auto id = r_.integerAt(peers[i], "throttle.list.peers[" + std::to_string(i) + "]", 0, UINT32_MAX);
          if (!id) return;
          cfg.peers.push_back(static_cast<dispatch::PeerId>(*id));
        }
      }
      if (auto pct = r_.integer(l, "reduction_percent", "throttle.list", 0, 100)) {
        cfg.reduction_percent_per_lost_peer = static_cast<std::uint32_t>(*pct);
      }
      cfg.peers_start_connected = r_.boolean(l, "peers_connected", "throttle.list").value_or(false);
      s_.policy.throttle_list = cfg;
    }
  }

  std::optional<dispatch::MonitorMask> monitorList(const json& j, const std::string& where) {
    if (!j.is_array()) {
      r_.fail(where, "must be a list of monitor kinds");
      return std::nullopt;
    }
    dispatch::MonitorMask mask = dispatch::MonitorMask::none();
    for (std::size_t i = 0; i < j.size(); ++i) {
      auto kind = j[i].is_string() ? parseMonitorKind(j[i].get<std::string>()) : std::nullopt;
      if (!kind) {
        r_.fail(where + "[" + std::to_string(i) + "]",
                "must be request-response, tcp-connect or heartbeat");
        return std::nullopt;
      }
      mask = mask.with(*kind);
    }
    return mask;
  }

  std::optional<ScenarioMember> member(const json& j, const std::string& where, MemberId next_id) {
    if (!r_.object(j, where, {"name", "id", "weight", "rc", "state", "active", "response_ms",
                              "monitors", "comment"})) {
      return std::nullopt;
    }
    ScenarioMember m;
    m.member.id = static_cast<MemberId>(r_.integer(j, "id", where, 0, UINT32_MAX - 1).value_or(next_id));
    m.name = r_.string(j, "name", where).value_or(std::to_string(m.member.id));
    m.member.weight = static_cast<std::uint32_t>(
        r_.integer(j, "weight", where, dispatch::kMinWeight, dispatch::kMaxWeight).value_or(dispatch::kDefaultWeight));
    m.member.relative_cost = static_cast<std::uint32_t>(r_.integer(j, "rc", where, 0, UINT32_MAX).value_or(0));
    if (auto st = r_.string(j, "state", where)) {
      if (auto parsed = parseMemberState(*st)) m.member.state = *parsed;
      else r_.fail(where + ".state", "must be available, congested or prohibited");
    }
    m.member.active = static_cast<std::uint32_t>(r_.integer(j, "active", where, 0, 1'000'000'000).value_or(0));
    if (auto rt = r_.millis(j, "response_ms", where)) {
      m.samples.emplace_back(MonitorKind::kRequestResponse, *rt);
    }
    if (j.contains("monitors")) {
      // {"tcp-connect": 5000, "heartbeat": 4000}: bound monitors with one sample each.
      const json& mons = j.at("monitors");
      if (!mons.is_object()) {
        r_.fail(where + ".monitors", "must map monitor kind to a response time in ms");
        return std::nullopt;
      }
      dispatch::MonitorMask mask = dispatch::MonitorMask::none();
      for (auto it = mons.begin(); it != mons.end(); ++it) {
        const std::string path = where + ".monitors." + it.key();
        auto kind = parseMonitorKind(it.key());
        if (!kind) {
          r_.fail(path, "unknown monitor kind (request-response, tcp-connect, heartbeat)");
          return std::nullopt;
        }
        mask = mask.with(*kind);
        if (auto rt = r_.millisAt(it.value(), path)) m.samples.emplace_back(*kind, *rt);
      }
      if (j.contains("response_ms")) mask = mask.with(MonitorKind::kRequestResponse);
      m.monitors = mask;
    }
    if (r_.error) return std::nullopt;
    return m;
  }

  void members(const json& root) {
    if (r_.error) return;
    if (!root.contains("members") || !root.at("members").is_array()) {
      return r_.fail("members", "required, as a list of member objects");
    }
    const json& list = root.at("members");
    for (std::size_t i = 0; i < list.size(); ++i) {
      auto m = member(list[i], "members[" + std::to_string(i) + "]", next_id_);
      if (!m) return;
      if (!remember(*m, "members[" + std::to_string(i) + "]")) return;
      s_.members.push_back(std::move(*m));
    }
  }

  bool remember(const ScenarioMember& m, const std::string& where) {
    if (s_.names.count(m.member.id) != 0 || by_name_.count(m.name) != 0) {
      r_.fail(where, "duplicate member id or name \"" + m.name + "\"");
      return false;
    }
    s_.names[m.member.id] = m.name;
    by_name_[m.name] = m.member.id;
    next_id_ = std::max(next_id_, m.member.id + 1);
    return true;
  }

  std::optional<MemberId> memberRef(const json& j, const char* key, const std::string& where) {
    if (r_.error) return std::nullopt;
    const std::string path = Reader::join(where, key);
    if (!j.contains(key)) {
      r_.fail(path, "required (a member name or id)");
      return std::nullopt;
    }
    const json& v = j.at(key);
    if (v.is_string()) {
      auto it = by_name_.find(v.get<std::string>());
      if (it != by_name_.end()) return it->second;
    } else if (v.is_number_unsigned() && s_.names.count(v.get<MemberId>()) != 0) {
      return v.get<MemberId>();
    }
    r_.fail(path, "unknown member " + v.dump());
    return std::nullopt;
  }

  void steps(const json& root) {
    if (r_.error || !root.contains("steps")) return;
    const json& list = root.at("steps");
    if (!list.is_array()) return r_.fail("steps", "must be a list");
    for (std::size_t i = 0; i < list.size() && !r_.error; ++i) {
      step(list[i], "steps[" + std::to_string(i) + "]");
    }
  }

  void step(const json& j, const std::string& where) {
    if (!j.is_object()) return r_.fail(where, "must be an object");
    auto op = r_.string(j, "op", where);
    if (!op) return r_.fail(where + ".op", "required");
    Step s;
    s.note = r_.string(j, "comment", where).value_or("");
    if (*op == "pick") {
      if (!r_.object(j, where, {"op", "comment", "count", "key", "sequenced", "priority", "avoid", "send"})) return;
      s.op = StepOp::kPick;
      s.count = static_cast<std::uint32_t>(r_.integer(j, "count", where, 1, kMaxPicksPerScenario).value_or(1));
      total_picks_ += s.count;
      if (!r_.error && total_picks_ > kMaxPicksPerScenario) {
        return r_.fail(where + ".count", "the scenario's picks would total " + std::to_string(total_picks_) +
                                             ", over the limit of " + std::to_string(kMaxPicksPerScenario));
      }
      if (j.contains("key")) {
        if (j.at("key").is_string()) s.key = fnv1a(j.at("key").get<std::string>());
        else s.key = r_.integer(j, "key", where, 0, UINT64_MAX);
      }
      s.sequenced = r_.boolean(j, "sequenced", where).value_or(false);
      s.priority = static_cast<std::uint8_t>(r_.integer(j, "priority", where, 0, 3).value_or(0));
      if (j.contains("avoid")) s.avoid = memberRef(j, "avoid", where);
      s.send = r_.boolean(j, "send", where).value_or(true);
      if (!s.send && s_.policy.name == dispatch::kThrottleName) {
        // ThrottledPolicy::submit commits every send it decides (EMR, EPT, onSent).
        return r_.fail(where + ".send", "the throttle gate records every send itself (drop \"send\")");
      }
    } else if (*op == "state") {
      if (!r_.object(j, where, {"op", "comment", "member", "state"})) return;
      s.op = StepOp::kState;
      s.member = memberRef(j, "member", where).value_or(0);
      auto st = r_.string(j, "state", where);
      auto parsed = st ? parseMemberState(*st) : std::nullopt;
      if (!parsed) return r_.fail(where + ".state", "must be available, congested or prohibited");
      s.state = *parsed;
    } else if (*op == "weight") {
      if (!r_.object(j, where, {"op", "comment", "member", "weight"})) return;
      s.op = StepOp::kWeight;
      s.member = memberRef(j, "member", where).value_or(0);
      auto w = r_.integer(j, "weight", where, dispatch::kMinWeight, dispatch::kMaxWeight);
      if (!w) return r_.fail(where + ".weight", "required (1–99)");
      s.weight = static_cast<std::uint32_t>(*w);
    } else if (*op == "complete") {
      // No default latency: a 0 ms sample would make the member look fastest to LRTM.
      if (!r_.object(j, where, {"op", "comment", "member", "latency_ms"})) return;
      s.op = StepOp::kComplete;
      s.member = memberRef(j, "member", where).value_or(0);
      if (!r_.require(j, "latency_ms", where, "the transaction's response time in ms")) return;
      auto latency = r_.millis(j, "latency_ms", where);
      if (!latency) return;
      s.latency = *latency;
    } else if (*op == "fail") {
      if (!r_.object(j, where, {"op", "comment", "member"})) return;
      s.op = StepOp::kFail;
      s.member = memberRef(j, "member", where).value_or(0);
    } else if (*op == "sample") {
      if (!r_.object(j, where, {"op", "comment", "member", "monitor", "rtt_ms"})) return;
      s.op = StepOp::kSample;
      s.member = memberRef(j, "member", where).value_or(0);
      auto kind = r_.string(j, "monitor", where);
      auto parsed = kind ? parseMonitorKind(*kind) : std::nullopt;
      if (!parsed) return r_.fail(where + ".monitor", "must be request-response, tcp-connect or heartbeat");
      s.monitor = *parsed;
      auto rtt = r_.millis(j, "rtt_ms", where);
      if (!rtt) return r_.fail(where + ".rtt_ms", "required");
      s.latency = *rtt;
    } else if (*op == "advance") {
      if (!r_.object(j, where, {"op", "comment", "ms"})) return;
      s.op = StepOp::kAdvance;
      auto ms = r_.millis(j, "ms", where);
      if (!ms) return r_.fail(where + ".ms", "required");
      s.latency = *ms;
    } else if (*op == "add") {
      if (!r_.object(j, where, {"op", "comment", "member"})) return;
      s.op = StepOp::kAdd;
      if (!j.contains("member")) return r_.fail(where + ".member", "required (a member object)");
      auto m = member(j.at("member"), where + ".member", next_id_);
      if (!m || !remember(*m, where + ".member")) return;
      s.added = *m;
      s.member = m->member.id;
    } else if (*op == "remove") {
      if (!r_.object(j, where, {"op", "comment", "member"})) return;
      s.op = StepOp::kRemove;
      s.member = memberRef(j, "member", where).value_or(0);
    } else if (*op == "show") {
      if (!r_.object(j, where, {"op", "comment"})) return;
      s.op = StepOp::kShow;
    } else if (*op == "peer-counts") {
      if (!r_.object(j, where, {"op", "comment", "peer", "rate", "pending"})) return;
      s.op = StepOp::kPeerCounts;
      if (!peer(j, where, *op, s)) return;
      if (!r_.require(j, "rate", where, "the peer's egress message rate, msg/s")) return;
      if (!r_.require(j, "pending", where, "the peer's pending transactions")) return;
      auto rate = r_.number(j, "rate", where, 0, 1e12);
      auto pending = r_.integer(j, "pending", where, 0, UINT64_MAX / 2);
      if (!rate || !pending) return;
      s.peer_rate = *rate;
      s.peer_pending = *pending;
    } else if (*op == "peer-lost" || *op == "peer-restored") {
      if (!r_.object(j, where, {"op", "comment", "peer"})) return;
      s.op = *op == "peer-lost" ? StepOp::kPeerLost : StepOp::kPeerRestored;
      if (!peer(j, where, *op, s)) return;
    } else {
      return r_.fail(where + ".op", "unknown step \"" + *op +
                                        "\" (pick, state, weight, complete, fail, sample, advance, add, "
                                        "remove, show, peer-counts, peer-lost, peer-restored)");
    }
    if (!r_.error) s_.steps.push_back(std::move(s));
  }

  // The peer of a peer-* step: required, and one of throttle.list.peers (Oracle DSR
  // "Egress Throttle Lists": a list spans this node's group and 1–2 peers' groups).
  bool peer(const json& j, const std::string& where, const std::string& op, Step& s) {
    if (r_.error) return false;
    const auto& list = s_.policy.throttle_list;
    if (s_.policy.name != dispatch::kThrottleName || !list) {
      r_.fail(where + ".op", op + " needs policy.name \"throttle\" with a throttle.list");
      return false;
    }
    if (!r_.require(j, "peer", where, "a peer id from throttle.list.peers")) return false;
    auto id = r_.integer(j, "peer", where, 0, UINT32_MAX);
    if (!id) return false;
    if (std::find(list->peers.begin(), list->peers.end(), *id) == list->peers.end()) {
      std::string known;
      for (dispatch::PeerId p : list->peers) known += (known.empty() ? "" : ", ") + std::to_string(p);
      r_.fail(where + ".peer", "unknown peer " + std::to_string(*id) + " (throttle.list.peers: " + known + ")");
      return false;
    }
    s.peer = static_cast<std::uint32_t>(*id);
    return true;
  }

  Reader r_;
  Scenario s_;
  std::uint64_t total_picks_ = 0;
  std::map<std::string, MemberId> by_name_;
  MemberId next_id_ = 1;
};

}  // namespace

std::string_view toString(StepOp op) {
  switch (op) {
    case StepOp::kPick: return "pick";
    case StepOp::kState: return "state";
    case StepOp::kWeight: return "weight";
    case StepOp::kComplete: return "complete";
    case StepOp::kFail: return "fail";
    case StepOp::kSample: return "sample";
    case StepOp::kAdvance: return "advance";
    case StepOp::kAdd: return "add";
    case StepOp::kRemove: return "remove";
    case StepOp::kShow: return "show";
    case StepOp::kPeerCounts: return "peer-counts";
    case StepOp::kPeerLost: return "peer-lost";
    case StepOp::kPeerRestored: return "peer-restored";
  }
  return "unknown";
}

std::optional<dispatch::MemberState> parseMemberState(std::string_view text) {
  if (text == "available") return MemberState::kAvailable;
  if (text == "congested") return MemberState::kCongested;
  if (text == "prohibited") return MemberState::kProhibited;
  return std::nullopt;
}

std::optional<dispatch::MonitorKind> parseMonitorKind(std::string_view text) {
  for (MonitorKind k : {MonitorKind::kRequestResponse, MonitorKind::kTcpConnect, MonitorKind::kHeartbeat}) {
    if (dispatch::monitorKindName(k) == text) return k;
  }
  return std::nullopt;
}

Result<Scenario> parseScenario(std::string_view text) { return Parser().run(text); }

}  // namespace npac::npacctl
