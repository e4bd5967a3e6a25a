// npacctl plan: scenario execution (see plan.h).
#include "npac/npacctl/plan.h"

#include <chrono>
#include <cmath>
#include <map>

#include "dispatch/traffic_table.h"

namespace npac::npacctl {
namespace {

using dispatch::Duration;
using dispatch::LrtmPolicy;
using dispatch::MemberId;
using dispatch::Policy;
using dispatch::ThrottledPolicy;
using dispatch::TimePoint;
using dispatch::WeightedPolicy;
using nlohmann::json;

double toMs(Duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

// The Citrix ADC "LRTM method" tables write N and Nw with two decimals (23333.34): keep
// that precision.
double round2(double x) { return std::round(x * 100.0) / 100.0; }

class PlanRun {
 public:
  PlanRun(const Scenario& scenario, Policy& policy, PlanWriter& out)
      : s_(scenario), policy_(policy), out_(out) {
    throttled_ = dynamic_cast<ThrottledPolicy*>(&policy_);
    Policy& inner = throttled_ ? throttled_->inner() : policy_;
    weighted_ = dynamic_cast<WeightedPolicy*>(&inner);
    lrtm_ = dynamic_cast<LrtmPolicy*>(&inner);
  }

  void run() {
    for (const ScenarioMember& m : s_.members) add(m);
    json initial = {{"step", 0}, {"op", "initial"}};
    if (!s_.title.empty()) initial["title"] = s_.title;
    if (!s_.source.empty()) initial["source"] = s_.source;
    initial["policy"] = std::string(policy_.name());
    initial["time_ms"] = toMs(now_.time_since_epoch());
    out_.beginStep(initial);
    out_.endStep(tables(json::object()));
    for (std::size_t i = 0; i < s_.steps.size(); ++i) step(i + 1, s_.steps[i]);
  }

 private:
  void add(const ScenarioMember& m) {
    policy_.addMember(m.member);
    if (lrtm_ && m.monitors) lrtm_->bindMonitors(m.member.id, *m.monitors);
    for (const auto& [kind, rtt] : m.samples) policy_.onMonitorSample(m.member.id, kind, rtt, now_);
  }

  std::string nameOf(MemberId id) const {
    auto it = s_.names.find(id);
    return it == s_.names.end() ? std::to_string(id) : it->second;
  }

  // The step's event happens first (so the header shows its fields, its error and the
  // clock after an advance), then the picks stream out one by one, then the release.
  void step(std::size_t index, const Step& st) {
    json j = {{"step", index}, {"op", std::string(toString(st.op))}};
    if (!st.note.empty()) j["comment"] = st.note;
    switch (st.op) {
      case StepOp::kPick: j["count"] = st.count; break;
      case StepOp::kState:
        j["member"] = nameOf(st.member);
        j["state"] = std::string(dispatch::toString(st.state));
        policy_.setState(st.member, st.state);
        break;
      case StepOp::kWeight:
        j["member"] = nameOf(st.member);
        j["weight"] = st.weight;
        policy_.setWeight(st.member, st.weight);
        break;
      case StepOp::kComplete:
        j["member"] = nameOf(st.member);
        j["latency_ms"] = toMs(st.latency);
        policy_.onCompleted(st.member, st.latency, now_);
        break;
      case StepOp::kFail:
        j["member"] = nameOf(st.member);
        policy_.onFailed(st.member, now_);
        break;
      case StepOp::kSample:
        j["member"] = nameOf(st.member);
        j["monitor"] = std::string(dispatch::monitorKindName(st.monitor));
        j["rtt_ms"] = toMs(st.latency);
        policy_.onMonitorSample(st.member, st.monitor, st.latency, now_);
        break;
      case StepOp::kAdvance:
        now_ += st.latency;
        j["ms"] = toMs(st.latency);
        break;
      case StepOp::kAdd:
        j["member"] = st.added.name;
        add(st.added);
        break;
      case StepOp::kRemove:
        j["member"] = nameOf(st.member);
        policy_.removeMember(st.member);
        break;
      case StepOp::kShow: break;
      case StepOp::kPeerCounts:
      case StepOp::kPeerLost:
      case StepOp::kPeerRestored: peerStep(st, j); break;
    }
    j["time_ms"] = toMs(now_.time_since_epoch());
    out_.beginStep(j);
    if (st.op == StepOp::kPick) picks(st);
    json tail = json::object();
    if (throttled_) release(tail);
    out_.endStep(tables(std::move(tail)));
  }

  void peerStep(const Step& st, json& j) {
    j["peer"] = st.peer;
    if (!throttled_) {
      j["error"] = "peer steps need the throttle policy with a list";
      return;
    }
    dispatch::PeerUpdate u = dispatch::PeerUpdate::kApplied;
    if (st.op == StepOp::kPeerCounts) {
      j["rate"] = st.peer_rate;
      j["pending"] = st.peer_pending;
      u = throttled_->reportPeerCounts(st.peer, st.peer_rate, st.peer_pending, now_);
    } else if (st.op == StepOp::kPeerLost) {
      u = throttled_->peerLost(st.peer, now_);
    } else {
      u = throttled_->peerRestored(st.peer, now_);
    }
    if (u == dispatch::PeerUpdate::kUnknownPeer) j["error"] = "unknown peer (not in throttle.list.peers)";
  }

  // The Oracle DSR/UDR Diameter User's Guide egress throttle as npacd applies it: held
  // messages leave as soon as the level allows, in order, each already recorded as sent
  // by the gate.
  void release(json& j) {
    const dispatch::ReleaseBatch batch = throttled_->release(now_);
    for (const dispatch::Released& r : batch.released) {
      ++picked_[r.member];
      out_.item("released",
                {{"n", r.id}, {"member", nameOf(r.member)}, {"id", r.member}, {"priority", r.priority}});
    }
    if (batch.blocked) j["release_blocked"] = std::string(dispatch::toString(*batch.blocked));
  }

  json submit(const dispatch::PickContext& ctx, std::uint64_t n) {
    const dispatch::Admission a = throttled_->submit(dispatch::Submission{n, ctx, true});
    json p = {{"n", n}, {"priority", ctx.priority}, {"level", a.level}};
    switch (a.kind) {
      case dispatch::Admission::Kind::kSend:
        p["member"] = nameOf(*a.member);
        p["id"] = *a.member;
        ++picked_[*a.member];
        break;
      case dispatch::Admission::Kind::kHeld:
        p["member"] = nullptr;
        p["held"] = true;
        p["reason"] = std::string(dispatch::toString(dispatch::NoneReason::kThrottled));
        ++held_;
        break;
      case dispatch::Admission::Kind::kNoMember:
      case dispatch::Admission::Kind::kInvalidPriority:
        p["member"] = nullptr;
        p["reason"] = std::string(dispatch::toString(a.reason));
        ++refused_;
        break;
    }
    return p;
  }

  void picks(const Step& st) {
    for (std::uint32_t k = 0; k < st.count; ++k) {
      dispatch::PickContext ctx;
      ctx.now = now_;
      ctx.key = st.key;
      ctx.sequenced = st.sequenced;
      ctx.priority = st.priority;
      ctx.avoid = st.avoid;
      if (throttled_) {
        out_.item("picks", submit(ctx, ++pick_no_));
        continue;
      }
      const dispatch::PickResult r = policy_.pick(ctx);
      json p = {{"n", ++pick_no_}};
      if (!r.ok()) {
        p["member"] = nullptr;
        p["reason"] = std::string(dispatch::toString(r.reason));
        ++refused_;
        out_.item("picks", p);
        continue;
      }
      const MemberId id = *r.member;
      p["member"] = nameOf(id);
      p["id"] = id;
      ++picked_[id];
      if (lrtm_) {
        // LRTM method tables: "(N = before)" then "N = after" the request is sent.
        if (auto v = lrtm_->view(id)) {
          p["n_before"] = round2(v->n);
          p["nw_before"] = round2(v->nw);
        }
      }
      if (st.send) policy_.onSent(id, now_);
      if (lrtm_) {
        if (auto v = lrtm_->view(id)) {
          p["n_after"] = round2(v->n);
          p["nw_after"] = round2(v->nw);
        }
      }
      out_.item("picks", p);
    }
  }

  json tables(json j) {
    j["members"] = memberTable();
    if (weighted_) {
      json groups = json::array();
      for (const auto& g : weighted_->groups()) {
        groups.push_back({{"rc", g.relative_cost},
                          {"group_weight", g.group_weight},
                          {"threshold_percent", g.threshold_percent},
                          {"required_weight", g.required_weight},
                          {"available_weight", g.available_weight},
                          {"state", std::string(dispatch::toString(g.state))},
                          {"in_use", g.in_use}});
      }
      j["groups"] = std::move(groups);
      j["status"] = std::string(dispatch::toString(weighted_->status()));
    }
    if (throttled_) j["throttle"] = throttleTable();
    j["refused"] = refused_;
    return j;
  }

  json throttleTable() {
    const int level = throttled_->congestionLevel(now_);
    const dispatch::EgressThrottleGroup& g = throttled_->group();
    json t = {{"level", level},
              {"held", throttled_->heldCount()},
              {"held_total", held_},
              {"group", {{"level", g.level()},
                         {"rate_level", g.rateLevel()},
                         {"pending_level", g.pendingLevel()},
                         {"emr", round2(g.emr(now_))},
                         {"ept", g.ept()}}}};
    if (const dispatch::EgressThrottleList* l = throttled_->list()) {
      t["list"] = {{"level", l->level()},
                   {"rate_level", l->rateLevel()},
                   {"pending_level", l->pendingLevel()},
                   {"lost_peers", l->lostPeers()},
                   {"rate_maximum", round2(l->rateMaximum())},
                   {"pending_maximum", round2(l->pendingMaximum())},
                   {"emr", round2(l->emr())},
                   {"ept", l->ept()}};
    }
    return t;
  }

  json memberTable() {
    const std::vector<dispatch::Member> members = policy_.members();
    std::vector<std::uint64_t> counts;
    for (const auto& m : members) counts.push_back(picked_.count(m.id) ? picked_.at(m.id) : 0);
    const std::vector<std::uint32_t> share = dispatch::loadPercents(counts);
    // Weighted: Table 2-3/2-4/2-5 columns by member.
    std::map<MemberId, std::pair<std::uint32_t, std::uint32_t>> weighted_cols;
    if (weighted_) {
      for (const auto& g : weighted_->groups()) {
        for (std::size_t i = 0; i < g.members.size(); ++i) {
          weighted_cols[g.members[i].id] = {g.entity_available_weight[i], g.load_percent[i]};
        }
      }
    }
    json rows = json::array();
    for (std::size_t i = 0; i < members.size(); ++i) {
      const auto& m = members[i];
      json row = {{"name", nameOf(m.id)},
                  {"id", m.id},
                  {"weight", m.weight},
                  {"rc", m.relative_cost},
                  {"state", std::string(dispatch::toString(m.state))},
                  {"active", m.active},
                  {"picks", counts[i]},
                  {"pick_share_percent", share[i]}};
      if (weighted_) {
        row["entity_available_weight"] = weighted_cols[m.id].first;
        row["load_percent"] = weighted_cols[m.id].second;
      }
      if (lrtm_) {
        if (auto v = lrtm_->view(m.id)) {
          row["response_ms"] = toMs(v->response_time);
          row["measured"] = v->measured.has_value();
          row["n"] = round2(v->n);
          row["nw"] = round2(v->nw);
        }
      }
      rows.push_back(std::move(row));
    }
    return rows;
  }

  const Scenario& s_;
  Policy& policy_;
  PlanWriter& out_;
  WeightedPolicy* weighted_ = nullptr;
  LrtmPolicy* lrtm_ = nullptr;
  ThrottledPolicy* throttled_ = nullptr;
  std::uint64_t held_ = 0;
  TimePoint now_{};
  std::uint64_t pick_no_ = 0;
  std::uint64_t refused_ = 0;
  std::map<MemberId, std::uint64_t> picked_;
};

}  // namespace

std::optional<std::string> runPlan(const Scenario& scenario, PlanWriter& writer) {
  Result<std::unique_ptr<dispatch::Policy>> made = dispatch::makePolicy(scenario.policy);
  if (!made.isOk()) return "policy: " + made.status().message();
  PlanRun(scenario, **made, writer).run();
  return std::nullopt;
}

}  // namespace npac::npacctl
