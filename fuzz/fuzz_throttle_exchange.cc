// libFuzzer target: what one npacd node reads of the others' throttle reports (table
// throttle_reports; core/throttle_exchange.h) — any group and node names, rates (NaN,
// infinities, negatives), pending counts, wanting flags and ages, over any number of
// exchanges on a manual clock, with this node's own traffic in between
// (ThrottleGroups::applyReports, ThrottleGroup::mayAdmit/onSent/view). And the body of
// POST/PUT /v1/throttle-groups (parseThrottleGroup) from the same bytes as JSON.
// Invariants: the effective maxima are never above the configured ones nor negative, this
// node's share never above the effective maximum, a list never has more than three nodes,
// the level is 0..3, every node listed is reachable or named unreachable, and an accepted
// body names a valid group. No crash, no hang.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "npac/npacd/api/throttle_group_json.h"
#include "npac/npacd/core/throttle_groups.h"

namespace {

using namespace npac;
using namespace npac::npacd;

struct Reader {
  const std::uint8_t* data;
  std::size_t size;
  std::size_t at = 0;
  bool more() const { return at < size; }
  std::uint8_t byte() { return at < size ? data[at++] : 0; }
  std::uint64_t u64() {
    std::uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v = v << 8 | byte();
    return v;
  }
  double real() {
    const std::uint64_t bits = u64();
    double d;
    static_assert(sizeof d == sizeof bits);
    __builtin_memcpy(&d, &bits, sizeof d);
    return d;
  }
  std::string text() {
    const std::size_t n = byte() % 8;
    std::string s;
    for (std::size_t i = 0; i < n; ++i) s.push_back(static_cast<char>(byte()));
    return s;
  }
};

void check(bool ok) {
  if (!ok) std::abort();
}

void exchange(Reader& in) {
  npac::common::ManualTimeSource clock;
  db::ThrottleGroupDefinition group;
  group.name = "g";
  group.members = {"0001"};
  group.max_rate = 1 + in.byte() * 40;
  group.max_pending = in.byte() * 50;
  group.peer_loss_reduction_percent = in.byte() % 101;
  ThrottleGroups groups(clock, "self");
  groups.apply({group});
  while (in.more()) {
    std::vector<db::ThrottleReport> reports;
    for (std::size_t n = in.byte() % 6; n > 0; --n) {
      db::ThrottleReport r;
      r.group = in.byte() % 4 == 0 ? in.text() : "g";
      r.node = in.byte() % 8 == 0 ? "self" : std::string(1, static_cast<char>('a' + in.byte() % 5)) + in.text();
      r.rate = in.real();
      r.pending = static_cast<std::int64_t>(in.u64());
      r.wanting = in.byte() & 1;
      r.age_ms = static_cast<std::int64_t>(in.u64());
      reports.push_back(r);
    }
    groups.applyReports(reports, clock.now());
    ThrottleGroup& g = *groups.find("g");
    for (std::size_t n = in.byte() % 16; n > 0; --n) {
      const int level = g.mayAdmit(clock.now());
      check(level >= 0 && level <= 3);
      if (level == 0) g.onSent("0001", in.byte(), clock.now());
    }
    if (in.byte() & 1) g.notePending("0001", in.byte());
    clock.advance(std::chrono::milliseconds(in.byte() * 20));
    const ThrottleGroup::View v = g.view(clock.now());
    check(v.level >= 0 && v.level <= 3);
    check(v.max_rate >= 0 && v.max_rate <= static_cast<double>(group.max_rate));
    check(v.max_pending >= 0 && v.max_pending <= static_cast<double>(group.max_pending));
    check(v.rate_share >= 0 && v.rate_share <= v.max_rate);
    check(v.pending_share >= 0 && v.pending_share <= v.max_pending);
    check(std::isfinite(v.rate) && v.rate >= 0);
    check(v.nodes.size() >= 1 && v.nodes.size() <= 3 && v.nodes[0].local);
    std::size_t unreachable = 0;
    for (const ThrottleGroup::NodeShare& node : v.nodes) {
      check(std::isfinite(node.rate) && node.rate >= 0);
      if (!node.counted) ++unreachable;
      check(node.local || node.node != "self");
    }
    check(unreachable == v.unreachable.size());
    const db::ThrottleReport mine = groups.localReports(clock.now()).at(0);
    check(mine.node == "self" && std::isfinite(mine.rate) && mine.rate >= 0 && mine.pending >= 0);
  }
}

void body(const std::uint8_t* data, std::size_t size) {
  const nlohmann::json j = nlohmann::json::parse(data, data + size, nullptr, false);
  if (j.is_discarded()) return;
  db::ThrottleGroupDefinition current;
  current.name = "g";
  current.members = {"0001"};
  current.max_rate = 10;
  const db::ThrottleGroupDefinition* const bases[] = {nullptr, &current};
  for (const db::ThrottleGroupDefinition* base : bases) {
    Result<db::ThrottleGroupDefinition> parsed = parseThrottleGroup(j, base);
    if (!parsed.isOk()) {
      check(parsed.status().code() == StatusCode::kInvalidThrottleGroup && !parsed.status().message().empty());
      continue;
    }
    const db::ThrottleGroupDefinition& g = parsed.value();
    check(!g.name.empty() && g.name.size() <= 64 && !g.members.empty());
    check(g.max_rate >= 0 && g.max_pending >= 0 && (g.max_rate > 0 || g.max_pending > 0));
    check(g.peer_loss_reduction_percent >= 0 && g.peer_loss_reduction_percent <= 100);
    check(g.abatement[0] < g.onset[0]);
    (void)toJson(g).dump();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  if (data[0] & 1) {
    body(data + 1, size - 1);
  } else {
    Reader in{data + 1, size - 1};
    exchange(in);
  }
  return 0;
}
