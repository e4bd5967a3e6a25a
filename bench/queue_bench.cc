// Outbound queue throughput on real files: our OutboundQueue / QueueWriter against a raw
// sqlite3 loop writing the same rows to the same schema with the same PRAGMAs, at batch
// sizes 1, 64 and 1,024, durability full and normal. Figures are items_per_second
// (messages/s); after the run a table gives our/raw ratios.
//
//   build-<you>/bench/queue_bench [--benchmark_min_time=0.5]
//
// append        — appendBatch(): one transaction per batch.
// lifecycle     — append, mark sent, acknowledge: three transactions per batch (what each
//                 message costs the server end to end).
// group_commit  — QueueWriter: T threads each submitting one message and waiting for
//                 its commit (the HTTP submit path); batches form by themselves.
// records/…     — our append, then delivery progress as records (db/progress_log.h) instead of
//                 the two row updates: the write-once log's hot path with today's rows.
// purge/step    — the retention purge: bounded steps (purgeAcknowledgedBefore(cutoff,
//                 rows)) over 100,000 messages delivered as npacd leaves them (rows as
//                 appended, a handed and an acknowledged record per batch of 1,024, the
//                 settled mark above them): rows purged a second of the one thread.
// log/…         — NOT npacd's queue: the write-once shape of the issue "A message is
//                 written once", on the bare C API, to size what it would save. A message
//                 is one row with its PDU (no secondary index but the partial idempotency
//                 one, empty here); progress is one appended row per batch and state (the
//                 batch's ids as a blob of 8-byte integers, the range they span, the
//                 association, the time). The ratio table adds log/raw: the ceiling of the
//                 redesign for the database's part, before any reader is written.
#include <benchmark/benchmark.h>
#include <sqlite3.h>
#include <stdlib.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "db/database.h"
#include "db/outbound_queue.h"
#include "db/progress_log.h"
#include "db/provider_store.h"
#include "db/queue_writer.h"

namespace {

using namespace npac::db;

constexpr std::size_t kPduBytes = 200;  // a typical encoded CMIP notification
constexpr TimeMs kNow = 1'700'000'000'000;
constexpr std::uint32_t kFunctions = 0x1;
constexpr AssociationId kAssociation = 1;

class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "npac-bench-XXXXXX").string();
    path_ = ::mkdtemp(pattern.data());
  }
  ~ScratchDir() { std::filesystem::remove_all(path_); }
  std::string file() const { return path_ + "/npacd.db"; }

 private:
  std::string path_;
};

Durability durabilityOf(const benchmark::State& state) {
  return state.range(1) == 0 ? Durability::kFull : Durability::kNormal;
}

std::unique_ptr<Database> openWithProvider(const std::string& path, Durability durability) {
  OpenOptions options;
  options.durability = durability;
  auto db = Database::open(path, options);
  if (!db) {
    std::fprintf(stderr, "%s\n", db.status().toString().c_str());
    std::abort();
  }
  if (Status added = ProviderStore(**db).add({"0001", "Bench", SystemType::kSoa, true}); !added.isOk()) {
    std::fprintf(stderr, "%s\n", added.toString().c_str());
    std::abort();
  }
  return std::move(db).value();
}

Bytes pdu() {
  Bytes bytes(kPduBytes);
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<std::uint8_t>(i * 7);
  return bytes;
}

void ours(benchmark::State& state, bool lifecycle) {
  ScratchDir dir;
  auto db = openWithProvider(dir.file(), durabilityOf(state));
  OutboundQueue queue(*db);
  // Each message its own PDU (as submissions are): one body per row, as raw() writes.
  std::vector<NewMessage> batch(static_cast<std::size_t>(state.range(0)), NewMessage{"0001", kFunctions, 0, pdu()});
  for (std::size_t i = 0; i < batch.size(); ++i) batch[i].pdu[0] = static_cast<std::uint8_t>(i);
  for (auto _ : state) {
    auto ids = queue.appendBatch(batch, kNow);
    if (!ids) state.SkipWithError(ids.status().toString().c_str());
    if (lifecycle && ids) {
      Status sent = queue.markSent(*ids, kAssociation, kNow);
      Status acked = queue.markAcknowledged(*ids, kNow);
      if (!sent || !acked) state.SkipWithError("mark sent/acknowledged failed");
    }
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}

// Our append, then progress as records (db/progress_log.h): one handed and one
// acknowledged record per batch, each in its own transaction as ours() marks them — the
// write-once log's hot path with today's message rows.
void records(benchmark::State& state, bool lifecycle) {
  ScratchDir dir;
  auto db = openWithProvider(dir.file(), durabilityOf(state));
  OutboundQueue queue(*db);
  ProgressLog log(*db);
  std::vector<NewMessage> batch(static_cast<std::size_t>(state.range(0)), NewMessage{"0001", kFunctions, 0, pdu()});
  for (std::size_t i = 0; i < batch.size(); ++i) batch[i].pdu[0] = static_cast<std::uint8_t>(i);
  for (auto _ : state) {
    auto ids = queue.appendBatch(batch, kNow);
    if (!ids) state.SkipWithError(ids.status().toString().c_str());
    if (lifecycle && ids) {
      const ProgressRecord handed{"0001", ProgressEvent::kHanded, kAssociation, kNow, *ids, {}};
      const ProgressRecord acked{"0001", ProgressEvent::kAcknowledged, 0, kNow, *ids, {}};
      Status sent = log.append(std::span(&handed, 1));
      Status done = log.append(std::span(&acked, 1));
      if (!sent || !done) state.SkipWithError("progress records failed");
    }
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}

// The retention purge in bounded steps of state.range(0) rows over kPurgeRows delivered
// messages; the file is filled again (untimed) whenever the purge has emptied it.
void purge(benchmark::State& state) {
  constexpr std::size_t kPurgeRows = 100'000;
  constexpr std::size_t kBatch = 1024;
  ScratchDir dir;
  auto db = openWithProvider(dir.file(), durabilityOf(state));
  OutboundQueue queue(*db);
  ProgressLog log(*db);
  std::vector<NewMessage> batch(kBatch, NewMessage{"0001", kFunctions, 0, pdu()});
  for (std::size_t i = 0; i < batch.size(); ++i) batch[i].pdu[0] = static_cast<std::uint8_t>(i);
  const auto fill = [&] {
    for (std::size_t n = 0; n < kPurgeRows; n += kBatch) {
      auto ids = queue.appendBatch(batch, kNow);
      if (!ids) return state.SkipWithError(ids.status().toString().c_str());
      const ProgressRecord handed{"0001", ProgressEvent::kHanded, kAssociation, kNow, *ids, {}};
      const ProgressRecord acked{"0001", ProgressEvent::kAcknowledged, 0, kNow, *ids, {}};
      if (!log.append(std::span(&handed, 1)) || !log.append(std::span(&acked, 1))) {
        return state.SkipWithError("progress records failed");
      }
      for (;;) {  // as the core's turns do, every 256 acknowledgements or so
        auto before = log.settledThrough("0001");
        auto mark = queue.settle("0001", kNow);
        if (!before || !mark) return state.SkipWithError("settle failed");
        if (*mark == *before) break;
      }
    }
  };
  const auto step = static_cast<std::size_t>(state.range(0));
  std::size_t purged = 0;
  for (auto _ : state) {
    auto removed = queue.purgeAcknowledgedBefore(kNow + 3'600'000, step);
    if (!removed) {
      state.SkipWithError(removed.status().toString().c_str());
      break;
    }
    purged += *removed;
    if (*removed < step) {
      state.PauseTiming();
      fill();
      state.ResumeTiming();
    }
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(purged));
}

// The bare C API's connection as npacd configures its own (WAL, the durability's
// synchronous setting), for raw() and writeOnce().
sqlite3* openBare(const std::string& file, const benchmark::State& state) {
  sqlite3* db = nullptr;
  sqlite3_open_v2(file.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  sqlite3_busy_timeout(db, 5000);
  sqlite3_exec(db, "PRAGMA journal_mode=WAL", nullptr, nullptr, nullptr);
  sqlite3_exec(db, durabilityOf(state) == Durability::kFull ? "PRAGMA synchronous=FULL"
                                                            : "PRAGMA synchronous=NORMAL",
               nullptr, nullptr, nullptr);
  return db;
}

sqlite3_stmt* prepareBare(sqlite3* db, const char* sql) {
  sqlite3_stmt* stmt = nullptr;
  sqlite3_prepare_v2(db, sql, -1, &stmt, nullptr);
  return stmt;
}

void stepAndReset(sqlite3_stmt* stmt) {
  sqlite3_step(stmt);
  sqlite3_reset(stmt);
}

// The baseline: the same statements through the bare C API, no wrappers, no checks.
void raw(benchmark::State& state, bool lifecycle) {
  ScratchDir dir;
  openWithProvider(dir.file(), durabilityOf(state));  // same schema and provider row
  sqlite3* db = openBare(dir.file(), state);
  sqlite3_exec(db, "PRAGMA foreign_keys=ON", nullptr, nullptr, nullptr);
  sqlite3_stmt* begin = prepareBare(db, "BEGIN IMMEDIATE");
  sqlite3_stmt* commit = prepareBare(db, "COMMIT");
  sqlite3_stmt* insert_body = prepareBare(db, "INSERT INTO message_bodies(pdu, addressees) VALUES(?, 1)");
  sqlite3_stmt* insert = prepareBare(db,
                                     "INSERT INTO outbound_queue(spid, function_mask, priority, body_id, "
                                     "created_at) VALUES(?, ?, ?, ?, ?)");
  sqlite3_stmt* sent = prepareBare(db,
                                   "UPDATE outbound_queue SET state = 'sent', attempts = attempts + 1, "
                                   "sent_at = ?, association_id = ? WHERE id = ? AND state = 'queued'");
  sqlite3_stmt* ack = prepareBare(db,
                                  "UPDATE outbound_queue SET state = 'acknowledged', acknowledged_at = ? "
                                  "WHERE id = ? AND state <> 'acknowledged'");
  const Bytes payload = pdu();
  const auto batch = static_cast<std::size_t>(state.range(0));
  std::vector<sqlite3_int64> ids(batch);
  auto exec = stepAndReset;
  for (auto _ : state) {
    exec(begin);
    for (std::size_t i = 0; i < batch; ++i) {
      sqlite3_bind_blob(insert_body, 1, payload.data(), static_cast<int>(payload.size()), SQLITE_STATIC);
      if (sqlite3_step(insert_body) != SQLITE_DONE) state.SkipWithError(sqlite3_errmsg(db));
      sqlite3_reset(insert_body);
      sqlite3_bind_text(insert, 1, "0001", 4, SQLITE_STATIC);
      sqlite3_bind_int64(insert, 2, kFunctions);
      sqlite3_bind_int64(insert, 3, 0);
      sqlite3_bind_int64(insert, 4, sqlite3_last_insert_rowid(db));
      sqlite3_bind_int64(insert, 5, kNow);
      if (sqlite3_step(insert) != SQLITE_DONE) state.SkipWithError(sqlite3_errmsg(db));
      sqlite3_reset(insert);
      ids[i] = sqlite3_last_insert_rowid(db);
    }
    exec(commit);
    if (lifecycle) {
      exec(begin);
      for (auto id : ids) {
        sqlite3_bind_int64(sent, 1, kNow);
        sqlite3_bind_int64(sent, 2, kAssociation);
        sqlite3_bind_int64(sent, 3, id);
        exec(sent);
      }
      exec(commit);
      exec(begin);
      for (auto id : ids) {
        sqlite3_bind_int64(ack, 1, kNow);
        sqlite3_bind_int64(ack, 2, id);
        exec(ack);
      }
      exec(commit);
    }
  }
  for (sqlite3_stmt* stmt : {begin, commit, insert_body, insert, sent, ack}) sqlite3_finalize(stmt);
  sqlite3_close_v2(db);
  state.SetItemsProcessed(state.iterations() * state.range(0));
}

// The write-once shape (see the file's header): its own schema in a scratch file.
void writeOnce(benchmark::State& state, bool lifecycle) {
  ScratchDir dir;
  sqlite3* db = openBare(dir.file(), state);
  sqlite3_exec(db,
               "CREATE TABLE log_messages(id INTEGER PRIMARY KEY, spid TEXT NOT NULL, "
               "function_mask INTEGER NOT NULL, priority INTEGER NOT NULL, created_at INTEGER NOT NULL, "
               "kind INTEGER NOT NULL, opcode INTEGER NOT NULL, confirmed INTEGER NOT NULL, "
               "idempotency_key TEXT, pdu BLOB NOT NULL);"
               "CREATE UNIQUE INDEX log_idempotency ON log_messages(spid, idempotency_key) "
               "WHERE idempotency_key IS NOT NULL;"
               "CREATE TABLE log_progress(seq INTEGER PRIMARY KEY, spid TEXT NOT NULL, event INTEGER NOT NULL, "
               "association_id INTEGER, at INTEGER NOT NULL, first_id INTEGER NOT NULL, last_id INTEGER NOT NULL, "
               "ids BLOB NOT NULL);",
               nullptr, nullptr, nullptr);
  sqlite3_stmt* begin = prepareBare(db, "BEGIN IMMEDIATE");
  sqlite3_stmt* commit = prepareBare(db, "COMMIT");
  sqlite3_stmt* insert = prepareBare(db,
                                     "INSERT INTO log_messages(spid, function_mask, priority, created_at, "
                                     "kind, opcode, confirmed, pdu) VALUES(?, ?, 0, ?, 0, 6, 1, ?)");
  sqlite3_stmt* progress = prepareBare(db,
                                       "INSERT INTO log_progress(spid, event, association_id, at, first_id, "
                                       "last_id, ids) VALUES('0001', ?, ?, ?, ?, ?, ?)");
  const Bytes payload = pdu();
  const auto batch = static_cast<std::size_t>(state.range(0));
  std::vector<sqlite3_int64> ids(batch);
  auto exec = stepAndReset;
  auto record = [&](int event) {  // one progress row for the whole batch
    exec(begin);
    sqlite3_bind_int(progress, 1, event);
    sqlite3_bind_int64(progress, 2, kAssociation);
    sqlite3_bind_int64(progress, 3, kNow);
    sqlite3_bind_int64(progress, 4, ids.front());
    sqlite3_bind_int64(progress, 5, ids.back());
    sqlite3_bind_blob(progress, 6, ids.data(), static_cast<int>(ids.size() * sizeof(sqlite3_int64)), SQLITE_STATIC);
    if (sqlite3_step(progress) != SQLITE_DONE) state.SkipWithError(sqlite3_errmsg(db));
    sqlite3_reset(progress);
    exec(commit);
  };
  for (auto _ : state) {
    exec(begin);
    for (std::size_t i = 0; i < batch; ++i) {
      sqlite3_bind_text(insert, 1, "0001", 4, SQLITE_STATIC);
      sqlite3_bind_int64(insert, 2, kFunctions);
      sqlite3_bind_int64(insert, 3, kNow);
      sqlite3_bind_blob(insert, 4, payload.data(), static_cast<int>(payload.size()), SQLITE_STATIC);
      if (sqlite3_step(insert) != SQLITE_DONE) state.SkipWithError(sqlite3_errmsg(db));
      sqlite3_reset(insert);
      ids[i] = sqlite3_last_insert_rowid(db);
    }
    exec(commit);
    if (lifecycle) {
      record(1);  // handed to the wire
      record(2);  // acknowledged
    }
  }
  for (sqlite3_stmt* stmt : {begin, commit, insert, progress}) sqlite3_finalize(stmt);
  sqlite3_close_v2(db);
  state.SetItemsProcessed(state.iterations() * state.range(0));
}

// range(0): submitter threads, each with one message per submission, closed loop.
void groupCommit(benchmark::State& state) {
  constexpr int kSubmissionsPerThread = 64;
  ScratchDir dir;
  const Durability durability = durabilityOf(state);
  openWithProvider(dir.file(), durability);
  OpenOptions options;
  options.durability = durability;
  auto writer = QueueWriter::start(dir.file(), options, [] { return kNow; });
  if (!writer) {
    state.SkipWithError(writer.status().toString().c_str());
    return;
  }
  const auto threads = static_cast<int>(state.range(0));
  std::atomic<int> failures{0};
  for (auto _ : state) {
    std::vector<std::thread> submitters;
    for (int t = 0; t < threads; ++t) {
      submitters.emplace_back([&] {
        for (int i = 0; i < kSubmissionsPerThread; ++i) {
          auto ids = (*writer)->submit({NewMessage{"0001", kFunctions, 0, pdu()}}).get();
          if (!ids) ++failures;
        }
      });
    }
    for (auto& submitter : submitters) submitter.join();
  }
  if (failures > 0) state.SkipWithError("submissions failed");
  const auto batches = (*writer)->committedBatches();
  const auto messages = (*writer)->committedMessages();
  state.counters["msgs_per_commit"] =
      batches == 0 ? 0.0 : static_cast<double>(messages) / static_cast<double>(batches);
  state.SetItemsProcessed(state.iterations() * threads * kSubmissionsPerThread);
}

// Prints every run like the console reporter, then ours/raw ratios.
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  RatioReporter() : ConsoleReporter(OO_Tabular) {}  // plain text: figures get pasted into notes
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      auto it = run.counters.find("items_per_second");
      if (it != run.counters.end()) rates_[run.benchmark_name()] = it->second;
    }
    ConsoleReporter::ReportRuns(runs);
  }
  void Finalize() override {
    ConsoleReporter::Finalize();
    for (const char* who : {"ours", "records", "log"}) {
      const std::string title = std::string(who) == "ours"      ? "ours vs raw sqlite3 (same rows)"
                                : std::string(who) == "records" ? "progress as records vs raw sqlite3"
                                                                : "write-once shape vs raw sqlite3";
      std::printf("\n%-44s %14s %14s %8s\n", title.c_str(),
                  (std::string(who) + " msg/s").c_str(), "raw msg/s", "ratio");
      const std::string prefix = std::string(who) + "/";
      for (const auto& [name, rate] : rates_) {
        if (name.rfind(prefix, 0) != 0) continue;
        auto raw = rates_.find("raw/" + name.substr(prefix.size()));
        if (raw == rates_.end() || raw->second == 0) continue;
        std::printf("%-44s %14.0f %14.0f %8.2f\n", name.substr(prefix.size()).c_str(), rate, raw->second,
                    rate / raw->second);
      }
    }
  }

 private:
  std::map<std::string, double> rates_;
};

}  // namespace

int main(int argc, char** argv) {
  for (bool lifecycle : {false, true}) {
    const std::string kind = lifecycle ? "lifecycle" : "append";
    for (const char* who : {"ours", "records", "raw", "log"}) {
      const std::string name = who;
      auto* bench = benchmark::RegisterBenchmark(
          (name + "/" + kind).c_str(),
          [name, lifecycle](benchmark::State& state) {
            if (name == "ours") ours(state, lifecycle);
            if (name == "records") records(state, lifecycle);
            if (name == "raw") raw(state, lifecycle);
            if (name == "log") writeOnce(state, lifecycle);
          });
      bench->ArgNames({"batch", "normal"});
      for (int normal : {0, 1}) {
        for (int batch : {1, 64, 1024}) bench->Args({batch, normal});
      }
      bench->Unit(benchmark::kMillisecond)->UseRealTime();
    }
  }
  auto* purging = benchmark::RegisterBenchmark("purge/step", purge);
  purging->ArgNames({"rows", "normal"});
  for (int rows : {500, 10000}) purging->Args({rows, 1});
  purging->Unit(benchmark::kMillisecond)->UseRealTime();
  auto* group = benchmark::RegisterBenchmark("group_commit", groupCommit);
  group->ArgNames({"threads", "normal"});
  for (int normal : {0, 1}) {
    for (int threads : {1, 16, 64}) group->Args({threads, normal});
  }
  group->Unit(benchmark::kMillisecond)->UseRealTime();

  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  return 0;
}
