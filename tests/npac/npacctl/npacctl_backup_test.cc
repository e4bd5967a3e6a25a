// `npacctl backup FILE` ($NPAC_BIN/npacctl as a child process) against the two kinds of
// input it takes: FILE, checked before npacd is asked (an existing file, a directory, a
// missing or unwritable directory), and npacd's answer, checked before FILE is written —
// here served by the admin API's own HttpServer in this process with answers npacd would
// never give (a body cut short, a body that is no database, a schema that is not the one
// announced, a refusal). Whatever fails, FILE does not appear and nothing is left beside it.
// The real backup end to end is npacd_backup_test.cc.
#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <future>

#include <boost/asio/post.hpp>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "db/database.h"
#include "db/migrations.h"
#include "db/sqlite_backup.h"
#include "npac/npacd/api/http_server.h"
#include "tests/support/immutable_file.h"
#include "tests/support/program_run.h"
#include "tests/support/test_paths.h"

namespace npac::npacd {
namespace {

namespace fs = std::filesystem;
namespace http = boost::beast::http;

using Run = npac::testing::ProgramRun;
const auto npacctl = npac::testing::runNpacctl;

struct TempDir {
  fs::path path;
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "npacctl-backup-XXXXXX").string();
    REQUIRE(::mkdtemp(pattern.data()) != nullptr);
    path = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  // Every name in the directory, for "nothing was left".
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& entry : fs::directory_iterator(path)) out.push_back(entry.path().filename().string());
    return out;
  }
};

// What the fake npacd answers POST /v1/backup with.
struct Answer {
  int status = 200;
  std::string body;
  std::string bytes;    // X-Npac-Backup-Bytes ("" = the body's length)
  std::string sha256;   // X-Npac-Backup-Sha256 ("" = the body's digest)
  std::string schema = std::to_string(db::kCurrentSchemaVersion);
};

std::string sha256Hex(const std::string& data) {
  // The same digest npacctl computes: `sha256sum` of the body.
  TempDir dir;
  const fs::path file = dir.path / "body";
  std::ofstream(file, std::ios::binary) << data;
  FILE* pipe = popen(("sha256sum " + file.string()).c_str(), "r");
  char buf[128] = {};
  REQUIRE(std::fgets(buf, sizeof buf, pipe) != nullptr);
  pclose(pipe);
  return std::string(buf, 64);
}

// An HttpServer on loopback answering every request with `answer`, streamed as npacd
// streams a backup (the header, then the body in pieces).
class FakeNpacd {
 public:
  explicit FakeNpacd(Answer answer) : answer_(std::move(answer)) {
    if (answer_.bytes.empty()) answer_.bytes = std::to_string(answer_.body.size());
    if (answer_.sha256.empty()) answer_.sha256 = sha256Hex(answer_.body);
    HttpServer::Options options;
    options.address = "127.0.0.1";
    options.port = 0;
    auto started = HttpServer::start(io_, options, [this](HttpRequest&&, Responder respond) {
      if (answer_.status != 200) {
        respond(jsonErrorResponse(static_cast<http::status>(answer_.status), "backup_in_progress", "one at a time"));
        return;
      }
      HttpResponse head{http::status::ok, 11};
      head.set(http::field::content_type, "application/vnd.sqlite3");
      head.set("X-Npac-Backup-Bytes", answer_.bytes);
      head.set("X-Npac-Backup-Sha256", answer_.sha256);
      head.set("X-Npac-Backup-Schema-Version", answer_.schema);
      auto stream = respond.stream(std::move(head));
      for (std::size_t at = 0; at < answer_.body.size(); at += 4096) stream->send(answer_.body.substr(at, 4096));
      stream->finish();
    });
    REQUIRE(started.isOk());
    server_ = std::move(started).value();
    thread_ = std::thread([this] { io_.run(); });
  }
  ~FakeNpacd() {
    std::promise<void> stopped;
    boost::asio::post(io_, [&] {
      server_->stop();
      server_.reset();
      stopped.set_value();
    });
    stopped.get_future().wait();
    thread_.join();
  }
  std::string api() const { return " --api 127.0.0.1:" + std::to_string(server_->port()) + " --token npac_test"; }

 private:
  Answer answer_;
  boost::asio::io_context io_;
  std::unique_ptr<HttpServer> server_;
  std::thread thread_;
};

// A sound npacd database file's bytes.
std::string npacdDatabase() {
  TempDir dir;
  {
    auto db = db::Database::open((dir.path / "npacd.db").string());
    REQUIRE(db.isOk());
  }
  REQUIRE(db::SqliteCopier().copy((dir.path / "npacd.db").string(), (dir.path / "copy.db").string()).isOk());
  std::ifstream in(dir.path / "copy.db", std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

using npac::testing::setImmutable;  // root: writes in the directory then fail with EPERM

// Nothing listens there: a FILE refused before npacd is asked exits 2, not 3.
const std::string kNowhere = " --api 127.0.0.1:1 --token npac_test";

}  // namespace

TEST_CASE("npacctl backup refuses a FILE it cannot create before asking npacd") {
  TempDir dir;
  std::ofstream(dir.path / "taken.db") << "an earlier backup";
  fs::create_directories(dir.path / "folder");
  struct Case {
    std::string file;
    std::string said;
  };
  for (const Case& c : {Case{(dir.path / "taken.db").string(), "exists: npacctl backup never overwrites a file"},
                        Case{(dir.path / "folder").string(), "is a directory"},
                        Case{(dir.path / "missing" / "b.db").string(), "does not exist"},
                        Case{(dir.path / "taken.db" / "b.db").string(), "is not a directory"},
                        Case{"''", "FILE is empty"}}) {
    INFO(c.file);
    Run r = npacctl("backup " + c.file + kNowhere);
    INFO(r.output);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.output, Catch::Contains(c.said));
  }
  std::ifstream kept(dir.path / "taken.db");
  std::string text;
  std::getline(kept, text);
  CHECK(text == "an earlier backup");
}

TEST_CASE("npacctl backup refuses a directory it may not write in before asking npacd") {
  TempDir dir;
  const fs::path locked = dir.path / "locked";
  fs::create_directories(locked);
  // Root writes anywhere the mode forbids; the immutable attribute stops root too.
  const bool immutable = ::geteuid() == 0 && setImmutable(locked, true);
  if (!immutable) fs::permissions(locked, fs::perms::owner_read | fs::perms::owner_exec);
  if (::geteuid() == 0 && !immutable) {
    WARN("running as root on a file system without the immutable attribute: not checked");
    return;
  }
  Run r = npacctl("backup " + (locked / "b.db").string() + kNowhere);
  if (immutable) setImmutable(locked, false);
  fs::permissions(locked, fs::perms::owner_all);
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Catch::Contains("cannot write in " + locked.string()));
  CHECK(fs::is_empty(locked));
}

TEST_CASE("npacctl backup writes nothing when the body is shorter than npacd announced") {
  TempDir dir;
  const std::string database = npacdDatabase();
  Answer answer;
  answer.body = database.substr(0, database.size() / 2);
  answer.bytes = std::to_string(database.size());
  answer.sha256 = sha256Hex(database);
  FakeNpacd npacd(answer);
  Run r = npacctl("backup " + (dir.path / "b.db").string() + npacd.api());
  INFO(r.output);
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.output, Catch::Contains("is not the one npacd sent") && Catch::Contains("nothing written"));
  CHECK(dir.names().empty());
}

TEST_CASE("npacctl backup writes nothing when the body is not a database") {
  TempDir dir;
  Answer answer;
  answer.body = std::string(10000, 'x');
  FakeNpacd npacd(answer);
  Run r = npacctl("backup " + (dir.path / "b.db").string() + npacd.api());
  INFO(r.output);
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.output, Catch::Contains("cannot be read as a database") && Catch::Contains("nothing written"));
  CHECK(dir.names().empty());
}

TEST_CASE("npacctl backup writes nothing when the copy is not at the schema npacd announced") {
  TempDir dir;
  Answer answer;
  answer.body = npacdDatabase();
  answer.schema = "99";
  FakeNpacd npacd(answer);
  Run r = npacctl("backup " + (dir.path / "b.db").string() + npacd.api());
  INFO(r.output);
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.output, Catch::Contains("is at schema " + std::to_string(db::kCurrentSchemaVersion) + ", npacd said 99"));
  CHECK(dir.names().empty());
}

TEST_CASE("npacctl backup reports npacd's refusal and writes nothing") {
  TempDir dir;
  Answer answer;
  answer.status = 429;
  FakeNpacd npacd(answer);
  Run r = npacctl("backup " + (dir.path / "b.db").string() + npacd.api());
  INFO(r.output);
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.output, Catch::Contains("backup_in_progress"));
  CHECK(dir.names().empty());
}

TEST_CASE("npacctl backup writes a whole, sound copy as FILE") {
  TempDir dir;
  Answer answer;
  answer.body = npacdDatabase();
  FakeNpacd npacd(answer);
  Run r = npacctl("backup " + (dir.path / "b.db").string() + npacd.api());
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.output, Catch::Contains("integrity ok"));
  CHECK(dir.names() == std::vector<std::string>{"b.db"});
  CHECK(fs::file_size(dir.path / "b.db") == answer.body.size());
}

}  // namespace npac::npacd
