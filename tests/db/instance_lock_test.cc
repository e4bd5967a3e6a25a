#include "db/instance_lock.h"

#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "temp_dir.h"

using namespace npac::db;
using namespace npac::db::testing;

namespace {

constexpr TimeMs kStart = 1'764'590'400'000;  // 2025-12-01T12:00:00Z

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("The instance lock lives beside the database as <database>.lock", "[sqlite]") {
  CHECK(InstanceLock::lockPathFor("/var/lib/npacd/npacd.db") == "/var/lib/npacd/npacd.db.lock");
}

TEST_CASE("A first instance lock is granted and records pid host and start time owner-only", "[sqlite]") {
  TempDir dir;
  auto lock = InstanceLock::acquire(dir.file("npacd.db"), kStart);
  INFO(lock.status().toString());
  REQUIRE(lock.isOk());
  CHECK((*lock)->path() == dir.file("npacd.db.lock"));
  auto holder = InstanceLock::parseHolder(slurp(dir.file("npacd.db.lock")));
  REQUIRE(holder.has_value());
  CHECK(holder->pid == static_cast<long>(getpid()));
  char host[256] = {};
  REQUIRE(gethostname(host, sizeof host - 1) == 0);
  CHECK(holder->host == host);
  CHECK(holder->started_at == kStart);
  struct stat info {};
  REQUIRE(stat(dir.file("npacd.db.lock").c_str(), &info) == 0);
  CHECK((info.st_mode & 0777) == 0600);
  // Taking the lock never creates the database itself.
  CHECK_FALSE(std::filesystem::exists(dir.file("npacd.db")));
}

TEST_CASE("A second instance lock on the same database is refused naming the holder", "[sqlite]") {
  TempDir dir;
  auto first = InstanceLock::acquire(dir.file("npacd.db"), kStart);
  REQUIRE(first.isOk());
  // A second open file description, as a second npacd would have.
  auto second = InstanceLock::acquire(dir.file("npacd.db"), kStart + 5000);
  REQUIRE_FALSE(second.isOk());
  CHECK(second.status().code() == Status::Code::kBusy);
  CHECK(second.status().file() == dir.file("npacd.db"));
  const std::string text = second.status().toString();
  CHECK(text.find("another npacd is using this database") != std::string::npos);
  CHECK(text.find("pid " + std::to_string(getpid())) != std::string::npos);
  CHECK(text.find("since 2025-12-01T12:00:00Z") != std::string::npos);
  CHECK(text.find("changed nothing") != std::string::npos);
  // The refused attempt left the holder's record alone.
  CHECK(InstanceLock::parseHolder(slurp(dir.file("npacd.db.lock")))->started_at == kStart);
}

TEST_CASE("An instance lock is released when its holder closes it", "[sqlite]") {
  TempDir dir;
  { auto first = InstanceLock::acquire(dir.file("npacd.db"), kStart); REQUIRE(first.isOk()); }
  auto again = InstanceLock::acquire(dir.file("npacd.db"), kStart + 1000);
  INFO(again.status().toString());
  REQUIRE(again.isOk());
  CHECK(InstanceLock::parseHolder(slurp(dir.file("npacd.db.lock")))->started_at == kStart + 1000);
}

TEST_CASE("Locks on two different databases in one directory do not conflict", "[sqlite]") {
  TempDir dir;
  auto a = InstanceLock::acquire(dir.file("a.db"), kStart);
  auto b = InstanceLock::acquire(dir.file("b.db"), kStart);
  CHECK(a.isOk());
  CHECK(b.isOk());
}

TEST_CASE("A stale lock file left by a dead holder is taken over and rewritten", "[sqlite]") {
  TempDir dir;
  std::ofstream(dir.file("npacd.db.lock")) << "pid=999999\nhost=gone\nstarted_at=1\nleftover-longer-text=x\n";
  auto lock = InstanceLock::acquire(dir.file("npacd.db"), kStart);
  REQUIRE(lock.isOk());
  const std::string text = slurp(dir.file("npacd.db.lock"));
  CHECK(text.find("leftover") == std::string::npos);
  CHECK(InstanceLock::parseHolder(text)->pid == static_cast<long>(getpid()));
}

TEST_CASE("A refusal while the holder has not written its record yet still names the lock file", "[sqlite]") {
  TempDir dir;
  auto first = InstanceLock::acquire(dir.file("npacd.db"), kStart);
  REQUIRE(first.isOk());
  std::filesystem::resize_file(dir.file("npacd.db.lock"), 0);
  auto second = InstanceLock::acquire(dir.file("npacd.db"), kStart);
  REQUIRE_FALSE(second.isOk());
  CHECK(second.status().code() == Status::Code::kBusy);
  CHECK(second.status().message().find(dir.file("npacd.db.lock")) != std::string::npos);
}

TEST_CASE("A lock file in a directory that does not exist is refused with kCantOpen", "[sqlite]") {
  TempDir dir;
  auto lock = InstanceLock::acquire(dir.file("missing/npacd.db"), kStart);
  REQUIRE_FALSE(lock.isOk());
  CHECK(lock.status().code() == Status::Code::kCantOpen);
  CHECK(lock.status().message().find("npacd.db.lock") != std::string::npos);
}

TEST_CASE("A lock path that is a symbolic link is refused instead of followed", "[sqlite]") {
  TempDir dir;
  std::ofstream(dir.file("precious")) << "keep me";
  std::filesystem::create_symlink(dir.file("precious"), dir.file("npacd.db.lock"));
  auto lock = InstanceLock::acquire(dir.file("npacd.db"), kStart);
  REQUIRE_FALSE(lock.isOk());
  CHECK(slurp(dir.file("precious")) == "keep me");
}

TEST_CASE("Malformed lock file text is not taken for a holder", "[sqlite]") {
  CHECK_FALSE(InstanceLock::parseHolder("").has_value());
  CHECK_FALSE(InstanceLock::parseHolder("pid=12\nhost=a\n").has_value());
  CHECK_FALSE(InstanceLock::parseHolder("pid=x\nhost=a\nstarted_at=1\n").has_value());
  CHECK_FALSE(InstanceLock::parseHolder("pid=-4\nhost=a\nstarted_at=1\n").has_value());
  CHECK_FALSE(InstanceLock::parseHolder("garbage\n").has_value());
  CHECK(InstanceLock::parseHolder("pid=12\nhost=a\nstarted_at=7\n")->started_at == 7);
}
