// ns per pick for the egress dispatch policies at 2, 16, 256 and 4,096 members, and the
// textbook O(n) smooth weighted round robin (nginx's ngx_http_upstream_get_peer: every
// pick adds each peer's weight to its current value, takes the largest, and subtracts the
// total) as the baseline the weighted policy is compared with.
//
// Every policy is driven through the Policy interface (a virtual call), as npacd does.
// Weights are drawn 1–99 from a fixed seed, so every run measures the same tables.
//
//   build-*/bench/dispatch_bench --benchmark_min_time=0.2
#include <benchmark/benchmark.h>

#include <memory>
#include <random>
#include <vector>

#include "dispatch/lrtm.h"
#include "dispatch/round_robin.h"
#include "dispatch/weighted.h"

using namespace npac::dispatch;

namespace {

constexpr std::uint32_t kSeed = 353;

std::vector<std::uint32_t> weights(std::size_t n) {
  std::mt19937 rng(kSeed);
  std::uniform_int_distribution<std::uint32_t> w(kMinWeight, kMaxWeight);
  std::vector<std::uint32_t> out(n);
  for (auto& x : out) x = w(rng);
  return out;
}

void fill(Policy& p, std::size_t n) {
  const auto w = weights(n);
  for (std::size_t i = 0; i < n; ++i) {
    p.addMember(Member{static_cast<MemberId>(i + 1), w[i], 10, MemberState::kAvailable, 0});
  }
}

void BM_RoundRobin(benchmark::State& state) {
  std::unique_ptr<Policy> p = std::make_unique<RoundRobinPolicy>();
  fill(*p, static_cast<std::size_t>(state.range(0)));
  const PickContext ctx;
  for (auto _ : state) benchmark::DoNotOptimize(p->pick(ctx));
}

void BM_Weighted(benchmark::State& state) {
  std::unique_ptr<Policy> p = std::make_unique<WeightedPolicy>();
  fill(*p, static_cast<std::size_t>(state.range(0)));
  const PickContext ctx;
  for (auto _ : state) benchmark::DoNotOptimize(p->pick(ctx));
}

// Sequenced traffic with an MSU key: slot-table lookup.
void BM_WeightedKeyed(benchmark::State& state) {
  std::unique_ptr<Policy> p = std::make_unique<WeightedPolicy>();
  fill(*p, static_cast<std::size_t>(state.range(0)));
  PickContext ctx;
  ctx.sequenced = true;
  std::uint64_t key = 0;
  for (auto _ : state) {
    ctx.key = ++key;
    benchmark::DoNotOptimize(p->pick(ctx));
  }
}

// A member flaps and the next pick rebuilds its group's schedule and slot tables:
// the cost of one status change (O(W log n + S)).
void BM_WeightedStatusChange(benchmark::State& state) {
  std::unique_ptr<Policy> p = std::make_unique<WeightedPolicy>();
  fill(*p, static_cast<std::size_t>(state.range(0)));
  const PickContext ctx;
  bool down = false;
  for (auto _ : state) {
    down = !down;
    p->setState(1, down ? MemberState::kProhibited : MemberState::kAvailable);
    benchmark::DoNotOptimize(p->pick(ctx));
  }
}

// LRTM pick alone (the heap's top): what pick() costs.
void BM_LrtmPick(benchmark::State& state) {
  std::unique_ptr<Policy> p = std::make_unique<LrtmPolicy>();
  const std::size_t n = static_cast<std::size_t>(state.range(0));
  fill(*p, n);
  for (std::size_t i = 0; i < n; ++i) {
    p->onMonitorSample(static_cast<MemberId>(i + 1), MonitorKind::kRequestResponse,
                       std::chrono::microseconds(500 + 37 * i % 1000), {});
    p->onSent(static_cast<MemberId>(i + 1), {});
  }
  const PickContext ctx;
  for (auto _ : state) benchmark::DoNotOptimize(p->pick(ctx));
}

// LRTM as it runs: pick, then onSent on the chosen member (its N grows, the heap
// re-sifts), and the oldest outstanding transaction completes — steady state.
void BM_LrtmPickSentCompleted(benchmark::State& state) {
  std::unique_ptr<Policy> p = std::make_unique<LrtmPolicy>();
  const std::size_t n = static_cast<std::size_t>(state.range(0));
  fill(*p, n);
  for (std::size_t i = 0; i < n; ++i) {
    p->onMonitorSample(static_cast<MemberId>(i + 1), MonitorKind::kRequestResponse,
                       std::chrono::microseconds(500 + 37 * i % 1000), {});
  }
  std::vector<MemberId> ring(64, 0);  // outstanding transactions, FIFO
  std::size_t head = 0;
  const PickContext ctx;
  for (auto _ : state) {
    const PickResult r = p->pick(ctx);
    p->onSent(*r.member, {});
    if (ring[head] != 0) p->onCompleted(ring[head], std::chrono::microseconds(500), {});
    ring[head] = *r.member;
    head = (head + 1) % ring.size();
  }
}

// The O(n) baseline: nginx smooth weighted round robin.
struct NginxPeer {
  int weight;
  int current;
};

void BM_NginxSmoothWrr(benchmark::State& state) {
  const auto w = weights(static_cast<std::size_t>(state.range(0)));
  std::vector<NginxPeer> peers;
  for (auto x : w) peers.push_back(NginxPeer{static_cast<int>(x), 0});
  for (auto _ : state) {
    int total = 0;
    NginxPeer* best = nullptr;
    for (NginxPeer& peer : peers) {
      peer.current += peer.weight;
      total += peer.weight;
      if (best == nullptr || peer.current > best->current) best = &peer;
    }
    best->current -= total;
    benchmark::DoNotOptimize(best);
  }
}

#define MEMBER_COUNTS ->Arg(2)->Arg(16)->Arg(256)->Arg(4096)
BENCHMARK(BM_RoundRobin) MEMBER_COUNTS;
BENCHMARK(BM_Weighted) MEMBER_COUNTS;
BENCHMARK(BM_WeightedKeyed) MEMBER_COUNTS;
BENCHMARK(BM_WeightedStatusChange) MEMBER_COUNTS->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_LrtmPick) MEMBER_COUNTS;
BENCHMARK(BM_LrtmPickSentCompleted) MEMBER_COUNTS;
BENCHMARK(BM_NginxSmoothWrr) MEMBER_COUNTS;

}  // namespace

BENCHMARK_MAIN();
