// Crash safety, for real: a forked child appends through QueueWriter (the server's path)
// and reports each committed id over a pipe; the parent SIGKILLs it at a seeded random
// moment, reopens the file and checks that every reported message is present and intact,
// that no submission is half-written, and that PRAGMA integrity_check passes.
//
// NPAC_CRASH_ROUNDS (default 24) and NPAC_CRASH_SEED (default 20261129) override the
// round count and seed. Even rounds use durability full, odd rounds normal: `normal`
// risks the last commits on power loss, never on a process crash, which this models.
// The second case runs the same rounds with the WAL checkpoints on a WalCheckpointer's
// thread, as npacd runs them (db/wal_checkpointer.h).
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <set>
#include <thread>

#include "db/outbound_queue.h"
#include "db/queue_writer.h"
#include "db/wal_checkpointer.h"
#include "crash_support.h"
#include "fixtures.h"

using namespace npac::db;
using namespace npac::db::testing;

namespace {

constexpr int kDefaultRounds = 24;
constexpr std::uint64_t kDefaultSeed = 20261129;
constexpr int kSubmitterThreads = 4;
constexpr int kMaxPerSubmission = 16;
constexpr int kMaxAcksBeforeKill = 1500;
constexpr int kMaxExtraDelayUs = 3000;

// One report on the pipe: 16 bytes, written whole (below PIPE_BUF, so atomic).
struct AckRecord {
  std::int64_t id;
  std::uint64_t label;  // tag << 16 | index
};

// Payload: tag (8 bytes), index and count (2 bytes each), then filler derived from them,
// so any row can be checked on its own and each submission's completeness verified.
Bytes payload(std::uint64_t tag, std::uint16_t index, std::uint16_t count) {
  Bytes out;
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<std::uint8_t>(tag >> (8 * i)));
  out.push_back(static_cast<std::uint8_t>(index));
  out.push_back(static_cast<std::uint8_t>(index >> 8));
  out.push_back(static_cast<std::uint8_t>(count));
  out.push_back(static_cast<std::uint8_t>(count >> 8));
  const std::uint64_t seed = splitmix(tag * 131 + index);
  const std::size_t filler = 20 + seed % 400;
  for (std::size_t i = 0; i < filler; ++i) {
    out.push_back(static_cast<std::uint8_t>(splitmix(seed + i)));
  }
  return out;
}

struct Decoded {
  std::uint64_t tag = 0;
  std::uint16_t index = 0;
  std::uint16_t count = 0;
};

std::optional<Decoded> decode(const Bytes& pdu) {
  if (pdu.size() < 12) return std::nullopt;
  Decoded d;
  for (int i = 0; i < 8; ++i) d.tag |= std::uint64_t{pdu[i]} << (8 * i);
  d.index = static_cast<std::uint16_t>(pdu[8] | pdu[9] << 8);
  d.count = static_cast<std::uint16_t>(pdu[10] | pdu[11] << 8);
  if (payload(d.tag, d.index, d.count) != pdu) return std::nullopt;
  return d;
}

// Where the child's WAL checkpoints run: inside its commits (SQLite's own), or on a
// WalCheckpointer's thread as in npacd, every 32 pages so that kills land in and between them.
enum class Checkpoints { kInCommits, kOwnThread };

// The child: only its own fresh connection (opened after fork), leaves with _exit.
[[noreturn]] void runChild(const std::string& path, Durability durability, std::uint64_t seed,
                           int fd, Checkpoints checkpoints) {
  OpenOptions open;
  open.durability = durability;
  std::unique_ptr<WalCheckpointer> checkpointer;
  if (checkpoints == Checkpoints::kOwnThread) {
    auto opened = WalCheckpointer::open(path, open, {.wal_pages = 32});
    if (!opened) ::_exit(6);
    checkpointer = std::move(opened).value();
    checkpointer->start();
    open.checkpointer = checkpointer.get();
  }
  auto writer = QueueWriter::start(path, open, [] { return TimeMs{1'700'000'000'000}; });
  if (!writer) ::_exit(3);
  std::vector<std::thread> threads;
  for (int t = 0; t < kSubmitterThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937_64 rng(seed * 7 + t);
      for (std::uint64_t j = 0;; ++j) {
        const std::uint64_t tag = (std::uint64_t(t + 1) << 40) | j;
        const auto count = static_cast<std::uint16_t>(1 + rng() % kMaxPerSubmission);
        std::vector<NewMessage> messages;
        for (std::uint16_t i = 0; i < count; ++i) {
          messages.push_back(NewMessage{"0001", 0x1, 0, payload(tag, i, count)});
        }
        auto result = (*writer)->submit(std::move(messages)).get();
        if (!result) ::_exit(4);
        std::vector<AckRecord> records;
        for (std::uint16_t i = 0; i < count; ++i) {
          records.push_back(AckRecord{(*result)[i], tag << 16 | i});
        }
        if (!writeAll(fd, records.data(), records.size() * sizeof(AckRecord))) ::_exit(5);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  ::_exit(0);
}

struct RoundOutcome {
  std::size_t acknowledged = 0;
  std::size_t rows = 0;
};

RoundOutcome crashRound(std::uint64_t seed, Durability durability, Checkpoints checkpoints) {
  TempDir dir;
  const std::string path = dir.file("npacd.db");
  {
    auto db = openFresh(dir);
    addProvider(*db, "0001");
  }
  std::mt19937_64 rng(seed);
  const auto acks_before_kill = static_cast<std::size_t>(rng() % (kMaxAcksBeforeKill + 1));
  const auto extra_delay_us = static_cast<int>(rng() % kMaxExtraDelayUs);

  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(fds[0]);
    runChild(path, durability, seed, fds[1], checkpoints);
  }
  ::close(fds[1]);

  std::vector<AckRecord> acks;
  std::string buffer;
  bool killed = false;
  char chunk[4096];
  for (;;) {
    if (!killed && acks.size() >= acks_before_kill) {
      std::this_thread::sleep_for(std::chrono::microseconds(extra_delay_us));
      ::kill(pid, SIGKILL);
      killed = true;
    }
    const ssize_t n = ::read(fds[0], chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // EOF: the child is gone
    buffer.append(chunk, static_cast<std::size_t>(n));
    while (buffer.size() >= sizeof(AckRecord)) {
      AckRecord record;
      std::memcpy(&record, buffer.data(), sizeof record);
      buffer.erase(0, sizeof record);
      acks.push_back(record);
    }
  }
  ::close(fds[0]);
  int wait_status = 0;
  REQUIRE(::waitpid(pid, &wait_status, 0) == pid);
  INFO("child status " << wait_status);
  REQUIRE(WIFSIGNALED(wait_status));  // it never exits on its own: a failure would _exit
  CHECK(WTERMSIG(wait_status) == SIGKILL);
  CHECK(buffer.empty());  // no torn report

  auto db = openFresh(dir);
  auto problems = db->integrityCheck();
  REQUIRE(problems.isOk());
  CHECK(problems->empty());

  OutboundQueue queue(*db);
  for (const AckRecord& ack : acks) {
    auto message = queue.get(ack.id);
    INFO("acknowledged id " << ack.id);
    REQUIRE(message.isOk());
    auto decoded = decode(message->pdu);
    REQUIRE(decoded.has_value());
    CHECK((decoded->tag << 16 | decoded->index) == ack.label);
  }

  // Every row in the file is intact and every submission is all-or-nothing.
  auto rows = queue.unacknowledged("0001", 10'000'000);
  REQUIRE(rows.isOk());
  std::map<std::uint64_t, std::set<std::uint16_t>> groups;
  std::map<std::uint64_t, std::uint16_t> counts;
  for (const QueuedMessage& row : *rows) {
    auto decoded = decode(row.pdu);
    INFO("row " << row.id);
    REQUIRE(decoded.has_value());
    groups[decoded->tag].insert(decoded->index);
    counts[decoded->tag] = decoded->count;
  }
  for (const auto& [tag, indices] : groups) {
    INFO("submission tag " << tag);
    CHECK(indices.size() == counts[tag]);
  }
  return RoundOutcome{acks.size(), rows->size()};
}

// NPAC_CRASH_ROUNDS rounds from `seed`, full and normal in turn.
void crashRounds(std::uint64_t seed, Checkpoints checkpoints) {
  const auto rounds = static_cast<int>(envOr("NPAC_CRASH_ROUNDS", kDefaultRounds));
  RoundOutcome total;
  for (int round = 0; round < rounds; ++round) {
    const Durability durability = round % 2 == 0 ? Durability::kFull : Durability::kNormal;
    INFO("seed " << seed << " round " << round << " durability " << toString(durability));
    RoundOutcome outcome = crashRound(splitmix(seed + round), durability, checkpoints);
    CHECK(outcome.rows >= outcome.acknowledged);
    total.acknowledged += outcome.acknowledged;
    total.rows += outcome.rows;
  }
  // Committed-but-unreported rows (killed between COMMIT and the pipe) are allowed.
  WARN("crash rounds: " << total.acknowledged << " acknowledged, " << total.rows << " rows found");
}

}  // namespace

TEST_CASE("Every acknowledged append survives SIGKILL intact and nothing is half-written", "[sqlite]") {
  crashRounds(envOr("NPAC_CRASH_SEED", kDefaultSeed), Checkpoints::kInCommits);
}

TEST_CASE("With WAL checkpoints on a thread of their own every acknowledged append survives SIGKILL intact",
          "[sqlite]") {
  crashRounds(envOr("NPAC_CRASH_SEED", kDefaultSeed) + 1, Checkpoints::kOwnThread);
}
