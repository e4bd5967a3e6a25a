#include "db/queue_writer.h"

#include <catch2/catch.hpp>

#include <atomic>
#include <set>
#include <chrono>
#include <thread>

#include "db/transaction.h"
#include "fixtures.h"

using namespace npac::db;
using namespace npac::db::testing;
using namespace std::chrono_literals;

namespace {

constexpr TimeMs kNow = 1'700'000'000'000;

NewMessage newMessage(const std::string& spid, std::uint8_t tag) {
  return NewMessage{spid, 0x1, 0, Bytes{0xa1, tag}};
}

std::unique_ptr<QueueWriter> startWriter(const TempDir& dir, QueueWriter::Options options = {}) {
  OpenOptions open;
  open.busy_timeout = 30s;  // the tests hold the write lock from another connection
  auto writer = QueueWriter::start(databaseLocation(dir), open, [] { return kNow; }, options);
  INFO(writer.status().toString());
  REQUIRE(writer.isOk());
  return std::move(writer).value();
}

bool isReady(const std::future<Result<std::vector<MessageId>>>& future) {
  return future.wait_for(0s) == std::future_status::ready;
}

// Holds the database's write lock from another connection while alive, so everything
// submitted meanwhile waits for the same next commit.
struct WriteLockHolder {
  explicit WriteLockHolder(Database& db) : txn(db) { REQUIRE(txn.begin().isOk()); }
  Transaction txn;
};

}  // namespace

TEST_CASE("A submission completes with ids that are committed in the database") {
  TempDir dir;
  auto db = openFresh(dir);
  addProvider(*db, "0001");
  auto writer = startWriter(dir);
  auto result = writer->submit({newMessage("0001", 7), newMessage("0001", 8)}).get();
  REQUIRE(result.isOk());
  REQUIRE(result->size() == 2);
  OutboundQueue queue(*db);  // a different connection sees the rows: they are committed
  auto first = queue.get((*result)[0]);
  REQUIRE(first.isOk());
  CHECK(first->pdu == Bytes{0xa1, 7});
  CHECK(first->created_at == kNow);
  CHECK(queue.get((*result)[1])->pdu == Bytes{0xa1, 8});
}

TEST_CASE("No submitter is told accepted before the commit, and waiting submissions share one") {
  TempDir dir;
  auto db = openFresh(dir);
  addProvider(*db, "0001");
  auto writer = startWriter(dir);
  std::vector<std::future<Result<std::vector<MessageId>>>> futures;
  {
    WriteLockHolder lock(*db);
    for (int i = 0; i < 50; ++i) futures.push_back(writer->submit({newMessage("0001", i)}));
    for (auto& future : futures) CHECK_FALSE(isReady(future));  // nothing can commit yet
  }  // lock released (rolled back): the writer commits
  std::vector<MessageId> ids;
  for (auto& future : futures) {
    auto result = future.get();
    REQUIRE(result.isOk());
    ids.push_back(result->front());
  }
  // One batch may have been taken before the lock; everything else went in one more.
  CHECK(writer->committedBatches() <= 2);
  CHECK(writer->committedMessages() == 50);
  for (std::size_t i = 1; i < ids.size(); ++i) CHECK(ids[i] > ids[i - 1]);  // submit order
}

TEST_CASE("Concurrent submitters all get distinct committed ids") {
  TempDir dir;
  auto db = openFresh(dir);
  addProvider(*db, "0001");
  auto writer = startWriter(dir);
  constexpr int kThreads = 4;
  constexpr int kPerThread = 100;
  std::vector<std::vector<MessageId>> ids(kThreads);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        auto result = writer->submit({newMessage("0001", static_cast<std::uint8_t>(t))}).get();
        if (!result) {
          ++failures;
          continue;
        }
        ids[t].push_back(result->front());
      }
    });
  }
  for (auto& thread : threads) thread.join();
  CHECK(failures == 0);
  std::set<MessageId> all;
  for (auto& per_thread : ids) all.insert(per_thread.begin(), per_thread.end());
  CHECK(all.size() == kThreads * kPerThread);
  OutboundQueue queue(*db);
  CHECK(queue.count(MessageState::kQueued).value() == kThreads * kPerThread);
}

TEST_CASE("A bad submission fails alone while the others in its batch commit") {
  TempDir dir;
  auto db = openFresh(dir);
  addProvider(*db, "0001");
  auto writer = startWriter(dir);
  std::vector<std::future<Result<std::vector<MessageId>>>> futures;
  {
    WriteLockHolder lock(*db);
    futures.push_back(writer->submit({newMessage("0001", 1)}));
    futures.push_back(writer->submit({newMessage("0001", 2), newMessage("9999", 3)}));
    futures.push_back(writer->submit({newMessage("0001", 4)}));
  }
  auto first = futures[0].get();
  auto bad = futures[1].get();
  auto last = futures[2].get();
  CHECK(first.isOk());
  CHECK(last.isOk());
  REQUIRE_FALSE(bad.isOk());
  CHECK(bad.status().code() == Status::Code::kConstraint);
  OutboundQueue queue(*db);
  CHECK(queue.count(MessageState::kQueued).value() == 2);  // the bad one left no row
}

TEST_CASE("Submissions beyond the pending limit are refused at once as overloaded") {
  TempDir dir;
  auto db = openFresh(dir);
  addProvider(*db, "0001");
  QueueWriter::Options options;
  options.max_pending_messages = 4;
  auto writer = startWriter(dir, options);
  std::vector<std::future<Result<std::vector<MessageId>>>> futures;
  std::vector<NewMessage> four(4, newMessage("0001", 1));
  {
    WriteLockHolder lock(*db);
    for (int i = 0; i < 3; ++i) futures.push_back(writer->submit(four));
    // The writer holds at most one batch in flight and 4 messages may wait: at least
    // one of the three submissions was refused before anything could commit.
    int refused = 0;
    for (auto& future : futures) {
      if (isReady(future)) {
        auto result = future.get();
        CHECK(result.status().code() == Status::Code::kOverloaded);
        ++refused;
      }
    }
    CHECK(refused >= 1);
  }
}

TEST_CASE("After stop, submissions are refused as shutting down and earlier ones committed") {
  TempDir dir;
  auto db = openFresh(dir);
  addProvider(*db, "0001");
  auto writer = startWriter(dir);
  auto before = writer->submit({newMessage("0001", 1)});
  writer->stop();
  CHECK(before.get().isOk());
  auto after = writer->submit({newMessage("0001", 2)}).get();
  CHECK(after.status().code() == Status::Code::kShutdown);
}

TEST_CASE("A queue writer cannot start on a database it cannot open") {
  TempDir dir;
  auto writer = QueueWriter::start(dir.file("missing/npacd.db"), {}, [] { return kNow; });
  REQUIRE_FALSE(writer.isOk());
  CHECK(writer.status().code() == Status::Code::kCantOpen);
}

TEST_CASE("Two submissions of one keyed message waiting for the writer store it once and the second is told duplicate") {
  TempDir dir;
  auto db = openFresh(dir);
  addProvider(*db, "0001");
  auto writer = startWriter(dir);
  NewMessage keyed = newMessage("0001", 5);
  keyed.idempotency_key = "retry-me";
  std::vector<std::promise<Result<std::vector<AppendOutcome>>>> promises(2);
  {
    WriteLockHolder lock(*db);  // both wait for the same commit
    for (auto& promise : promises) {
      writer->submitOutcomes({keyed}, [&promise](Result<std::vector<AppendOutcome>> r) { promise.set_value(std::move(r)); });
    }
  }
  auto first = promises[0].get_future().get();
  auto second = promises[1].get_future().get();
  REQUIRE(first.isOk());
  REQUIRE(second.isOk());
  CHECK_FALSE((*first)[0].duplicate);
  CHECK((*second)[0] == AppendOutcome{(*first)[0].id, true});
  CHECK(writer->committedMessages() == 1);  // a duplicate is not counted as committed
  CHECK(OutboundQueue(*db).count(MessageState::kQueued).value() == 1);
}

TEST_CASE("The writer's committed mark is its highest committed id, set before the batch's completions run") {
  TempDir dir;
  auto db = openFresh(dir);
  addProvider(*db, "0001");
  auto writer = startWriter(dir);
  CHECK(writer->committedThrough() == 0);
  std::promise<std::pair<MessageId, MessageId>> seen;  // (last id, the mark inside the completion)
  writer->submitOutcomes({newMessage("0001", 1), newMessage("0001", 2)},
                         [&](Result<std::vector<AppendOutcome>> outcomes) {
                           REQUIRE(outcomes.isOk());
                           seen.set_value({outcomes->back().id, writer->committedThrough()});
                         });
  auto [last, mark] = seen.get_future().get();
  CHECK(mark == last);
  // A failed submission (an unknown provider) moves the mark no further.
  CHECK_FALSE(writer->submit({newMessage("0404", 3)}).get().isOk());
  CHECK(writer->committedThrough() == last);
}

TEST_CASE("A committed submission after the clock stepped back is handed on with the stamp its rows got") {
  TempDir dir;
  auto db = openFresh(dir);
  addProvider(*db, "0001");
  // A message the database holds from before the clock stepped back.
  REQUIRE(OutboundQueue(*db).appendBatch(std::vector{newMessage("0001", 1)}, kNow + 60'000).isOk());
  auto writer = startWriter(dir);  // its clock says kNow: a minute behind that message
  std::promise<std::pair<MessageId, TimeMs>> seen;
  writer->submitCommitted({newMessage("0001", 2)},
                          [&](Result<std::vector<AppendOutcome>> outcomes, std::vector<NewMessage>, TimeMs created_at) {
                            REQUIRE(outcomes.isOk());
                            seen.set_value({outcomes->front().id, created_at});
                          });
  auto [id, created_at] = seen.get_future().get();
  CHECK(created_at == kNow + 60'000);
  CHECK(OutboundQueue(*db).get(id)->created_at == created_at);
}
