// NpacdProcess: the real npacd binary ($NPAC_BIN/npacd) as a child process on a real
// SQLite file in a fresh temp directory, with ephemeral ports (--listen/--api port 0; the
// ports are read back from its start-up log line). NpacdClient, its base, is what a test
// does with any running npacd (InProcessNpacd, in_process_npacd.h, is the other): an
// HTTP/JSON client for its admin API and a runner for $NPAC_BIN/npac-soa-sim with a
// bounded wait. call() authenticates with the operator token npacd wrote to <db>.token at
// its first start (npacd-initial). Every wait is bounded; children are killed (SIGKILL) if
// a test fails or ends early.
#pragma once

#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <nlohmann/json.hpp>
#include "tests/support/eventually.h"
#include "tests/support/program_run.h"
#include "tests/support/test_paths.h"

namespace npacd_test {

namespace fs = std::filesystem;
namespace http = boost::beast::http;
using Json = nlohmann::json;
using namespace std::chrono_literals;
using npac::testing::eventually;

// "prefix" + n, appended: g++ 12 warns (-Wrestrict, PR105651) on "literal" + std::string.
inline std::string label(const char* prefix, long n) {
  std::string s(prefix);
  s.append(std::to_string(n));
  return s;
}

inline std::string binDir() { return npac::testing::programDir(); }

inline bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

inline std::string slurp(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// fork + exec with stdout/stderr to `log`; returns the pid.
inline pid_t spawn(const std::vector<std::string>& argv, const fs::path& log) {
  pid_t pid = fork();
  if (pid == 0) {
    FILE* out = std::fopen(log.c_str(), "a");
    if (out != nullptr) {
      dup2(fileno(out), 1);
      dup2(fileno(out), 2);
    }
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  return pid;
}

// Waits for `pid` at most `limit`; kills it (SIGKILL) past that. The exit code, or -1.
inline int waitFor(pid_t pid, std::chrono::milliseconds limit) {
  int status = 0;
  if (eventually([&] { return waitpid(pid, &status, WNOHANG) == pid; }, limit)) {
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
  return -1;
}

struct Reply {
  int status = 0;
  Json body;
  std::string text;  // the body as sent (a text/plain answer such as /ready's)
};

// A sim run started in the background.
struct SimRun {
  pid_t pid = -1;
  fs::path report;
  fs::path log;
  int exit_code = -2;
  Json result;
  int wait(std::chrono::milliseconds limit = 20s) {
    if (pid > 0) {
      exit_code = waitFor(pid, limit);
      pid = -1;
      result = Json::parse(slurp(report), nullptr, false);
    }
    return exit_code;
  }
  ~SimRun() {
    if (pid > 0) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
  }
};

// What a test does with a running npacd, whichever way it runs: NpacdProcess below (the
// binary as a child process) or InProcessNpacd (in_process_npacd.h: the same start phases
// in the test's own process, on a manual clock). Owns the test's directory, removed at the
// end; the subclass starts npacd in it and sets the ports.
class NpacdClient {
 public:
  NpacdClient(const NpacdClient&) = delete;
  NpacdClient& operator=(const NpacdClient&) = delete;

  const fs::path& dir() const { return dir_; }
  const fs::path& db() const { return db_; }
  std::uint16_t port() const { return port_; }
  std::uint16_t apiPort() const { return api_port_; }
  std::string log() const { return slurp(dir_ / "npacd.log"); }

  // <db>.token: the operator token npacd writes at its first start (initial_token.h); on a
  // postgresql:// database, the test directory's npacd.token (passed as --token-file).
  fs::path tokenFile() const { return onPostgres() ? dir_ / "npacd.token" : fs::path(db_.string() + ".token"); }
  bool onPostgres() const { return db_.string().rfind("postgresql://", 0) == 0; }
  std::string token() const {
    std::string line;
    std::ifstream in(tokenFile());
    std::getline(in, line);
    return line;
  }

  Reply call(http::verb method, const std::string& target, const Json& body = nullptr) const {
    return callWith("Bearer " + token(), method, target, body);
  }
  // `authorization` nullopt: no Authorization header.
  Reply callWith(const std::optional<std::string>& authorization, http::verb method, const std::string& target,
                 const Json& body = nullptr) const {
    boost::asio::io_context io;
    boost::beast::tcp_stream stream(io);
    stream.expires_after(30s);
    stream.connect(boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), api_port_));
    http::request<http::string_body> request{method, target, 11};
    request.set(http::field::host, "127.0.0.1");
    if (authorization) request.set(http::field::authorization, *authorization);
    if (!body.is_null()) {
      request.set(http::field::content_type, "application/json");
      request.body() = body.dump();
    }
    request.prepare_payload();
    http::write(stream, request);
    boost::beast::flat_buffer buffer;
    http::response<http::string_body> response;
    http::read(stream, buffer, response);
    return Reply{static_cast<int>(response.result_int()), Json::parse(response.body(), nullptr, false),
                 response.body()};
  }

  // A provisioned SOA provider with an Ed25519 key (list 1, key 1) made by the sim's
  // keygen; returns the private key file.
  fs::path provision(const std::string& spid, bool srr = false) {
    REQUIRE(call(http::verb::post, "/v1/providers",
                 Json{{"spid", spid}, {"name", "Provider " + spid}, {"system_type", "soa"}})
                .status == 201);
    const fs::path key = dir_ / ("key-" + spid + ".pem");
    pid_t kg = spawn({binDir() + "/npac-soa-sim", "keygen", "--out", key.string()}, dir_ / "keygen.log");
    REQUIRE(waitFor(kg, 20s) == 0);
    Reply added = call(http::verb::post, "/v1/providers/" + spid + "/keys",
                       Json{{"key_list_id", 1}, {"key_id", 1}, {"algorithm", "ed25519"},
                            {"public_key_pem", slurp(key.string() + ".pub")}});
    REQUIRE(added.status == 201);
    if (srr) {
      REQUIRE(call(http::verb::put, "/v1/providers/" + spid + "/srr", Json{{"on", true}}).status == 200);
    }
    return key;
  }

  // A notification for `spid` whose information is the OCTET STRING `tag` (so the sim's
  // report names each message).
  static Json notification(const std::string& spid, const std::string& tag) {
    std::ostringstream hex;
    hex << "04" << std::hex;
    hex.width(2);
    hex.fill('0');
    hex << tag.size();
    for (unsigned char c : tag) {
      hex.width(2);
      hex << static_cast<int>(c);
    }
    return Json{{"spid", spid},
                {"function", "notifications"},
                {"operation", "event-report"},
                {"object_class", "1.3.6.1.4.1.103.7.0.0.1.3"},
                {"instance", {{"dn", Json::array({Json::array({{{"id", "2.5.4.3"}, {"value", "13044e504143"}}})})}}},
                {"type", "1.3.6.1.4.1.103.7.0.0.5.1"},
                {"information", hex.str()}};
  }
  static std::string tagHex(const std::string& tag) {
    return notification("x", tag)["information"].get<std::string>();
  }

  // Submits `count` notifications tagged prefix0..prefixN-1 in batches; their ids.
  // `confirmed` false: unconfirmed M-EVENT-REPORTs (no answer expected).
  std::vector<std::int64_t> submit(const std::string& spid, const std::string& prefix, int count,
                                   bool confirmed = true) {
    std::vector<std::int64_t> ids;
    for (int first = 0; first < count; first += 1000) {
      Json batch = Json::array();
      for (int i = first; i < std::min(count, first + 1000); ++i) {
        batch.push_back(notification(spid, std::string(prefix).append(std::to_string(i))));
        if (!confirmed) batch.back()["confirmed"] = false;
      }
      Reply r = call(http::verb::post, "/v1/messages", Json{{"messages", batch}});
      REQUIRE(r.status == 201);
      for (auto& id : r.body["ids"]) ids.push_back(id.get<std::int64_t>());
    }
    return ids;
  }

  std::string messageState(std::int64_t id) const {
    return call(http::verb::get, "/v1/messages/" + std::to_string(id)).body.value("state", "");
  }

  // Starts npac-soa-sim bound to this npacd with `args` added. A `--functions` or
  // `--sequence` in `args` replaces the fixture's (the sim takes each flag once).
  std::unique_ptr<SimRun> sim(const std::string& spid, const fs::path& key,
                              std::vector<std::string> args) {
    static std::atomic<int> runs{0};
    auto run = std::make_unique<SimRun>();
    const int n = runs++;
    run->report = dir_ / ("sim-" + std::to_string(n) + ".json");
    run->log = dir_ / ("sim-" + std::to_string(n) + ".log");
    auto given = [&](const char* flag) { return std::find(args.begin(), args.end(), flag) != args.end(); };
    std::vector<std::string> argv{binDir() + "/npac-soa-sim", "--npac",
                                  "127.0.0.1:" + std::to_string(port_), "--spid", spid, "--key",
                                  key.string(), "--report", run->report.string(), "--log-level", "warn"};
    if (!given("--functions")) argv.insert(argv.end(), {"--functions", "soa-management,notifications"});
    if (!given("--sequence")) {
      // Explicit, increasing bind sequence numbers: the default (tenths of a second)
      // repeats for two runs in 100 ms.
      argv.insert(argv.end(), {"--sequence", std::to_string(next_sequence_)});
      next_sequence_ += 100;
    }
    // Every end-to-end run authenticates the NPAC: it verifies npacd's signed AARE with
    // the NPAC public keys exported through the API, as a provider installs them.
    if (!given("--npac-key") && !given("--no-npac-verify")) {
      argv.insert(argv.end(), {"--npac-key", exportNpacKeys().string()});
    }
    argv.insert(argv.end(), args.begin(), args.end());
    run->pid = spawn(argv, run->log);
    return run;
  }

  // The public halves of every NPAC key not revoked, in one PEM file (GET
  // /v1/npac-keys/{list}/{key}/public); `name` inside this npacd's directory.
  fs::path exportNpacKeys(const std::string& name = "npac-keys.pub.pem") const {
    Reply listed = call(http::verb::get, "/v1/npac-keys");
    REQUIRE(listed.status == 200);
    std::string pems;
    for (const Json& k : listed.body["npac_keys"]) {
      if (k["state"] == "revoked") continue;
      Reply pub = call(http::verb::get, "/v1/npac-keys/" + std::to_string(k["key_list_id"].get<std::int64_t>()) +
                                            "/" + std::to_string(k["key_id"].get<std::int64_t>()) + "/public");
      REQUIRE(pub.status == 200);
      pems += pub.body["public_key_pem"].get<std::string>();
    }
    // Written aside and renamed into place: a simulator started earlier may be reading the
    // same file while a later sim() exports it again, and must never see it half written.
    const fs::path file = dir_ / name;
    const fs::path aside = dir_ / (name + ".writing");
    {
      std::ofstream out(aside, std::ios::binary | std::ios::trunc);
      out << pems;
      out.close();
      REQUIRE(out);
    }
    fs::rename(aside, file);
    return file;
  }

  // Waits (bounded) until npacd lists `count` associations.
  bool waitForAssociations(std::size_t count, std::chrono::milliseconds limit = 10s) const {
    return eventually(
        [&] {
          Reply r = call(http::verb::get, "/v1/associations");
          return r.status == 200 && r.body["associations"].size() == count;
        },
        limit, 20ms);
  }


 protected:
  // A fresh directory; `db` empty: npacd.db in it.
  explicit NpacdClient(const fs::path& db) {
    static std::atomic<int> counter{0};
    dir_ = fs::temp_directory_path() /
           ("npacd-test-" + std::to_string(getpid()) + "-" + std::to_string(counter++));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    db_ = db.empty() ? dir_ / "npacd.db" : db;
  }
  ~NpacdClient() { fs::remove_all(dir_); }
  void setPorts(std::uint16_t port, std::uint16_t api_port) {
    port_ = port;
    api_port_ = api_port;
  }

 private:
  fs::path dir_;
  fs::path db_;
  std::uint16_t port_ = 0;
  std::uint16_t api_port_ = 0;
  std::uint64_t next_sequence_ = 1000;
};

// The real npacd binary ($NPAC_BIN/npacd) as a child process, started by the constructor.
class NpacdProcess : public NpacdClient {
 public:
  // Where the database lives (default: npacd.db in the test's directory) and flags added
  // to npacd's command line.
  struct Options {
    fs::path db;
    std::vector<std::string> extra_args;
    std::string durability = "normal";  // --durability
  };
  NpacdProcess() : NpacdProcess(Options{}) {}
  explicit NpacdProcess(Options options)
      : NpacdClient(options.db), extra_args_(std::move(options.extra_args)),
        durability_(std::move(options.durability)) {
    start();
  }
  ~NpacdProcess() { stopHard(); }

  pid_t pid() const { return pid_; }  // -1 when not running

  void start() {
    const fs::path log = dir() / "npacd.log";
    const std::size_t before = fs::exists(log) ? slurp(log).size() : 0;
    std::vector<std::string> argv{binDir() + "/npacd", "--db", db().string(), "--listen",
                                  "127.0.0.1:0", "--api", "127.0.0.1:0", "--durability", durability_};
    if (onPostgres()) argv.insert(argv.end(), {"--token-file", tokenFile().string()});
    argv.insert(argv.end(), extra_args_.begin(), extra_args_.end());
    pid_ = spawn(argv, log);
    const std::regex ready(R"(listening for associations on 127\.0\.0\.1:(\d+), admin API on 127\.0\.0\.1:(\d+))");
    std::string text;
    std::smatch m;
    bool exited = false;
    const bool started = eventually(
        [&] {
          text = slurp(log).substr(before);
          if (std::regex_search(text, m, ready)) return true;
          int status = 0;
          exited = waitpid(pid_, &status, WNOHANG) == pid_;
          return exited;
        },
        10s, 20ms);
    if (exited) {
      pid_ = -1;
      FAIL("npacd exited at start: " << slurp(log));
    }
    if (!started) FAIL("npacd did not start: " << slurp(log));
    setPorts(static_cast<std::uint16_t>(std::stoi(m[1])), static_cast<std::uint16_t>(std::stoi(m[2])));
  }
  // SIGTERM and the exit code (graceful shutdown).
  int stop() {
    if (pid_ <= 0) return -1;
    kill(pid_, SIGTERM);
    int code = waitFor(pid_, 10s);
    pid_ = -1;
    return code;
  }
  void stopHard() {
    if (pid_ <= 0) return;
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }


 private:
  std::vector<std::string> extra_args_;
  pid_t pid_ = -1;
  std::string durability_;
};

// A new API token named `name` with `role`, made through this npacd's API; its secret.
inline std::string tokenFor(NpacdProcess& npacd, const std::string& name, const std::string& role) {
  Reply made = npacd.call(http::verb::post, "/v1/tokens", Json{{"name", name}, {"role", role}});
  REQUIRE(made.status == 201);
  return made.body["token"].get<std::string>();
}

// npacctl `args` against this npacd's admin API with its operator token; stdout and stderr.
inline npac::testing::ProgramRun npacctlOn(const NpacdProcess& npacd, const std::string& args) {
  return npac::testing::runNpacctl(args + " --api 127.0.0.1:" + std::to_string(npacd.apiPort()) + " --token-file " +
                                   npacd.tokenFile().string());
}

}  // namespace npacd_test
