// Cost of reading a tunable on the hot path, and of an operator's set.
//
// The server reads `srr` for a provider on every bind decision; these measure that read
// through the registry (one atomic snapshot load + one SPID hash lookup), through a
// snapshot the caller already holds, and with reader threads racing. BM_Set is the full
// write path: validate, one SQLite transaction (override + audit, durability full), publish.
//
//   build/bench/tunables_bench --benchmark_min_time=0.5
#include <benchmark/benchmark.h>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "db/database.h"
#include "db/transaction.h"
#include "db/tunable_store.h"
#include "tunables/registry.h"

namespace {

using npac::tunables::TunableRegistry;

// A registry on a fresh database file with `providers` providers overriding srr.
struct Setup {
  std::string dir;
  std::unique_ptr<npac::db::Database> db;
  std::unique_ptr<TunableRegistry> registry;

  explicit Setup(int providers) {
    std::string pattern = (std::filesystem::temp_directory_path() / "npac-tbench-XXXXXX").string();
    dir = ::mkdtemp(pattern.data());
    db = std::move(npac::db::Database::open(dir + "/npacd.db").value());
    {  // Seed the overrides in one transaction; the registry loads them at open.
      npac::db::Transaction txn(*db);
      npac::db::TunableStore store(*db);
      if (!txn.begin().isOk()) std::abort();
      for (int i = 0; i < providers; ++i) {
        char spid[16];
        std::snprintf(spid, sizeof spid, "%04d", i % 10000);
        if (!store.set({"srr", spid, i % 2 ? "on" : "off", 0, "bench"}).isOk()) std::abort();
      }
      if (!txn.commit().isOk()) std::abort();
    }
    if (!TunableRegistry::open(*db, [] { return npac::db::TimeMs{0}; }, &registry).isOk()) {
      std::abort();
    }
  }
  ~Setup() {
    registry.reset();
    db.reset();
    std::filesystem::remove_all(dir);
  }
};

void BM_ReadSrr(benchmark::State& state) {
  Setup setup(static_cast<int>(state.range(0)));
  const std::string spid = "0001";
  for (auto _ : state) {
    benchmark::DoNotOptimize(setup.registry->get(npac::tunables::kSrr, spid));
  }
}
BENCHMARK(BM_ReadSrr)->Arg(0)->Arg(100)->Arg(10000);

void BM_ReadSrrFromHeldSnapshot(benchmark::State& state) {
  Setup setup(100);
  const auto snapshot = setup.registry->snapshot();
  const std::string spid = "0001";
  for (auto _ : state) {
    benchmark::DoNotOptimize(snapshot->get(npac::tunables::kSrr, spid));
  }
}
BENCHMARK(BM_ReadSrrFromHeldSnapshot);

// Readers on several threads share one registry (the cache line of the snapshot pointer
// is contended).
Setup* shared_setup = nullptr;
void BM_ReadSrrContended(benchmark::State& state) {
  if (state.thread_index() == 0) shared_setup = new Setup(100);
  // Google Benchmark starts all threads' loops together after thread 0's setup.
  for (auto _ : state) {
    benchmark::DoNotOptimize(shared_setup->registry->get(npac::tunables::kSrr, "0001"));
  }
  if (state.thread_index() == 0) {
    delete shared_setup;
    shared_setup = nullptr;
  }
}
BENCHMARK(BM_ReadSrrContended)->Threads(2);

void BM_Set(benchmark::State& state) {
  Setup setup(0);
  bool on = false;
  for (auto _ : state) {
    on = !on;
    if (!setup.registry->set("srr", "0001", on ? "on" : "off", "bench").isOk()) std::abort();
  }
  state.counters["sets/s"] = benchmark::Counter(static_cast<double>(state.iterations()),
                                                benchmark::Counter::kIsRate);
}
BENCHMARK(BM_Set)->Unit(benchmark::kMicrosecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
