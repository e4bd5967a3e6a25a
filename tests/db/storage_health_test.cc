// StorageHealth: one log line when storage starts failing (or fails differently), one
// when it is writable again, nothing per failure in between — captured from spdlog.
#include "db/storage_health.h"

#include <catch2/catch.hpp>

#include <spdlog/sinks/ringbuffer_sink.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/eventually.h"

using namespace npac::db;
using npac::testing::eventually;

namespace {

// Routes spdlog's default logger into a ring buffer for the life of the object.
class CapturedLog {
 public:
  CapturedLog() : previous_(spdlog::default_logger()) {
    sink_ = std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(1000);
    sink_->set_pattern("%l %v");
    auto logger = std::make_shared<spdlog::logger>("captured", sink_);
    logger->set_level(spdlog::level::trace);
    spdlog::set_default_logger(logger);
  }
  ~CapturedLog() { spdlog::set_default_logger(previous_); }
  // Each formatted line without its end-of-line.
  std::vector<std::string> lines() const {
    std::vector<std::string> out = sink_->last_formatted();
    for (std::string& line : out) {
      while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
    }
    return out;
  }

 private:
  std::shared_ptr<spdlog::logger> previous_;
  std::shared_ptr<spdlog::sinks::ringbuffer_sink_mt> sink_;
};

Status diskFull(const std::string& file = "/var/npacd.db") {
  return Status::make(Status::Code::kFull, "database or disk is full", file, "free space", 13, 13, ENOSPC);
}

}  // namespace

TEST_CASE("Storage failing is logged once however many operations fail") {
  CapturedLog log;
  StorageHealth health;
  for (int i = 0; i < 100; ++i) health.reportFailure(diskFull());
  const auto lines = log.lines();
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].rfind("error storage failing: database full: database or disk is full [file /var/npacd.db]", 0) == 0);
  CHECK(lines[0].find("errno 28 ENOSPC") != std::string::npos);
  CHECK(health.failing());
  CHECK(health.failuresSinceHealthy() == 100);
}

TEST_CASE("The first write after failures logs storage writable again once") {
  CapturedLog log;
  StorageHealth health;
  health.reportFailure(diskFull());
  health.reportFailure(diskFull());
  health.reportWritten("/var/npacd.db");
  health.reportWritten("/var/npacd.db");
  const auto lines = log.lines();
  REQUIRE(lines.size() == 2);
  CHECK(lines[1] == "warning storage writable again: /var/npacd.db (2 operations failed meanwhile)");
  CHECK_FALSE(health.failing());
  CHECK(health.failuresSinceHealthy() == 0);
}

TEST_CASE("Writes while healthy log nothing") {
  CapturedLog log;
  StorageHealth health;
  for (int i = 0; i < 10; ++i) health.reportWritten("/var/npacd.db");
  CHECK(log.lines().empty());
}

TEST_CASE("A failure with another cause while failing is logged again") {
  CapturedLog log;
  StorageHealth health;
  health.reportFailure(diskFull());
  health.reportFailure(Status::make(Status::Code::kReadOnly, "disk I/O error", "/var/npacd.db", "chattr -i",
                                    10, 778, EPERM));
  health.reportFailure(diskFull());
  const auto lines = log.lines();
  REQUIRE(lines.size() == 3);
  CHECK(lines[1].rfind("error storage failing (the cause changed): database read-only", 0) == 0);
  CHECK(lines[2].rfind("error storage failing (the cause changed): database full", 0) == 0);
}

TEST_CASE("Errors that are not storage failures are not logged and do not change the state") {
  CapturedLog log;
  StorageHealth health;
  health.reportFailure(Status::notFound("no such provider"));
  health.reportFailure(Status::make(Status::Code::kConstraint, "UNIQUE constraint failed", "/var/npacd.db"));
  health.reportFailure(Status::invalidArgument("bad SPID"));
  health.reportFailure(Status::overloaded("queue full"));
  CHECK(log.lines().empty());
  CHECK_FALSE(health.failing());
}

TEST_CASE("Failures reported from many threads at once are logged once") {
  CapturedLog log;
  StorageHealth health;
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&health] {
      for (int i = 0; i < 200; ++i) health.reportFailure(diskFull());
    });
  }
  for (auto& thread : threads) thread.join();
  CHECK(log.lines().size() == 1);
  CHECK(health.failuresSinceHealthy() == 1600);
}

namespace {

Status noAnswer(const std::string& location = "postgresql://npacd:***@db1/npac") {
  return Status::make(Status::Code::kUnavailable, "no answer within 1000 ms (in: COMMIT)", location,
                      "check the server");
}

}  // namespace

TEST_CASE("A server reported not answering is refused at once until its probe answers, one line each way") {
  CapturedLog log;
  StorageHealth health;
  std::atomic<bool> answers{false};
  std::atomic<int> probes{0};
  const auto probe = [&] {
    ++probes;
    return answers.load();
  };
  const std::string server = "postgresql://npacd:***@db1/npac";
  CHECK(health.notAnswering(server).isOk());
  health.reportNotAnswering(noAnswer(server), probe, std::chrono::milliseconds(10));
  health.reportNotAnswering(noAnswer(server), probe, std::chrono::milliseconds(10));  // already said
  const Status refused = health.notAnswering(server);
  CHECK(refused.code() == Status::Code::kUnavailable);
  CHECK(refused.message().find("PostgreSQL at " + server + " has not answered for ") == 0);
  CHECK(refused.message().find("no answer within 1000 ms (in: COMMIT)") != std::string::npos);
  CHECK(health.notAnswering("postgresql://other/db").isOk());  // another server is not concerned
  CHECK(health.failing());
  CHECK(health.cause().find("has not answered for") != std::string::npos);
  // Asked again, and again.
  REQUIRE(eventually([&] { return probes.load() >= 2; }, std::chrono::seconds(10), std::chrono::milliseconds(5)));
  CHECK(health.notAnswering(server).code() == Status::Code::kUnavailable);
  answers = true;
  REQUIRE(eventually([&] { return health.notAnswering(server).isOk(); }, std::chrono::seconds(10),
                     std::chrono::milliseconds(5)));
  CHECK_FALSE(health.failing());
  const auto lines = log.lines();
  REQUIRE(lines.size() == 2);
  CHECK(lines[0].rfind("error database not answering: database unavailable: no answer within 1000 ms", 0) == 0);
  CHECK(lines[1].rfind("warning database answering again: PostgreSQL at " + server + " after ", 0) == 0);
}

TEST_CASE("What the connections of a server not answering report meanwhile is not logged again") {
  CapturedLog log;
  StorageHealth health;
  const std::string server = "postgresql://npacd:***@db1/npac";
  health.reportNotAnswering(noAnswer(server), [] { return false; }, std::chrono::hours(1));
  for (int i = 0; i < 50; ++i) {
    health.reportFailure(Status::make(Status::Code::kUnavailable, "the connection to PostgreSQL was lost", server));
  }
  CHECK(log.lines().size() == 1);
  CHECK(health.failuresSinceHealthy() == 51);
}
