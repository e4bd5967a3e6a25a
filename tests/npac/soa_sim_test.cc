// npac-soa-sim against a minimal NPAC responder built in this file from the responder
// half of cmip::UpperLayers, on real loopback sockets. The responder verifies every
// bind's signature with SignatureVerifier (so the simulator's signing is really checked),
// then plays a short script: M-EVENT-REPORTs, answers to the simulator's requests, the
// recovery sequence. The simulator runs as a child process ($NPAC_BIN/npac-soa-sim) with
// a bounded --duration; its JSON report and exit code are checked.
//
// The responder is a test fixture, not a product: one thread per connection, blocking
// I/O with poll() so nothing outlives a failed test.
#include <catch2/catch.hpp>

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <utility>

#include <boost/asio.hpp>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "associations/signature.h"
#include "cmip/cmip_operations.h"
#include "cmip/npac_bind.h"
#include "cmip/oids.h"
#include "cmip/upper_layers.h"

using namespace npac::cmip;
namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using Json = nlohmann::json;

namespace {

// A notification type under the IIS notification arc (npac-facts.md): the responder's
// ordinary messages, distinct from the heartbeat.
const Oid kTestEvent{1, 3, 6, 1, 4, 1, 103, 7, 0, 0, 5, 99};

std::string hexOf(const std::vector<uint8_t>& v) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string s;
  for (uint8_t b : v) {
    s.push_back(kDigits[b >> 4]);
    s.push_back(kDigits[b & 0xF]);
  }
  return s;
}

// "prefix" + n, appended: g++ 12 warns (-Wrestrict, PR105651) on "literal" + std::string.
std::string label(const char* prefix, size_t n) {
  std::string s(prefix);
  s.append(std::to_string(n));
  return s;
}

OpaqueBer octets(const std::string& text) {
  EncodeBuffer b(0);
  BerWriter w(b);
  w.writeOctetString(std::vector<uint8_t>(text.begin(), text.end()));
  return OpaqueBer{b.toVector()};
}

RoseApdu eventReport(int32_t invoke_id, const Oid& type, OpaqueBer info) {
  EventReportArgument arg;
  arg.managedObjectClass = ObjectClass::global(oids::kLnpNpacSmsClass);
  arg.managedObjectInstance.form = ObjectInstance::Form::kDistinguishedName;
  arg.eventType = EventTypeId::global(type);
  arg.eventInfo = std::move(info);
  return toRose(CmipInvoke{invoke_id, std::nullopt, CmipOpcode::kEventReportConfirmed, arg});
}

// What the responder does on each connection once it has accepted the bind.
struct Script {
  std::string public_pem;      // binds are verified with this key
  bool reject_all = false;     // refuse every bind (authentication-failure) even if it verifies
  int events = 0;              // M-EVENT-REPORTs per connection after the accept
  bool heartbeat_first = false;
  bool answer_on_other = false;  // answer the simulator's requests on the other connection
  int recovery_messages = 0;   // on lnpRecoveryRequest: this many events, then messageCount
  int held_messages = 0;       // sent after lnpRecoveryComplete is answered
  bool resend_last = false;    // send the last event again, same invoke id and argument
  int leaked_messages = 0;     // sent right after messageCount, before lnpRecoveryComplete
                               // (an NPAC that does not hold new messages in recovery)
};

struct ConnectionLog {
  std::string peer_address;
  std::optional<LnpAccessControl> access_control;
  bool signature_verified = false;
  bool accepted = false;
  std::vector<RoseApdu> from_sim;  // APDUs after the bind, in arrival order
  bool release_requested = false;
  bool ended_without_release = false;  // EOF, RST or ABRT
  bool abrt = false;
};

class Responder {
 public:
  explicit Responder(Script script) : script_(std::move(script)), acceptor_(io_, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)) {
    acceptor_.non_blocking(true);
    accept_thread_ = std::thread([this] { acceptLoop(); });
  }
  ~Responder() {
    stop_ = true;
    accept_thread_.join();
    for (auto& t : threads_) t.join();
  }
  uint16_t port() const { return acceptor_.local_endpoint().port(); }
  size_t acceptedBinds() {
    std::lock_guard<std::mutex> lock(mutex_);
    size_t n = 0;
    for (const ConnectionLog& l : logs_) n += l.accepted ? 1 : 0;
    return n;
  }
  // Problems the responder threads met (Catch2 assertions are for the test thread only).
  std::vector<std::string> problems() {
    std::lock_guard<std::mutex> lock(mutex_);
    return problems_;
  }
  // Valid once the simulator has exited (the connection threads are done by then or soon).
  std::vector<ConnectionLog> logs() {
    for (int i = 0; i < 200 && active_ > 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    std::lock_guard<std::mutex> lock(mutex_);
    return logs_;
  }

 private:
  struct Connection {
    explicit Connection(tcp::socket s) : socket(std::move(s)) {}
    tcp::socket socket;
    UpperLayers upper{UpperLayersConfig{}};
    std::mutex mutex;  // guards upper and writes: another connection may answer through us
    size_t index = 0;
    std::vector<std::pair<std::shared_ptr<Connection>, RoseApdu>> deferred;  // own thread only
  };

  static bool readable(int fd, const std::atomic<bool>& stop) {
    while (!stop) {
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, 50) > 0) return true;
    }
    return false;
  }

  void acceptLoop() {
    while (readable(acceptor_.native_handle(), stop_)) {
      boost::system::error_code ec;
      tcp::socket s(io_);
      acceptor_.accept(s, ec);
      if (ec) continue;
      s.non_blocking(false);
      auto c = std::make_shared<Connection>(std::move(s));
      {
        std::lock_guard<std::mutex> lock(mutex_);
        c->index = logs_.size();
        logs_.push_back(ConnectionLog{});
        logs_.back().peer_address = c->socket.remote_endpoint().address().to_string();
        connections_.push_back(c);
      }
      ++active_;
      threads_.emplace_back([this, c] {
        serve(*c);
        --active_;
      });
    }
  }

  bool ensure(bool ok, const std::string& what) {
    if (!ok) {
      std::lock_guard<std::mutex> lock(mutex_);
      problems_.push_back(what);
    }
    return ok;
  }

  void write(Connection& c, const std::vector<uint8_t>& bytes) {
    boost::system::error_code ec;
    if (!bytes.empty()) asio::write(c.socket, asio::buffer(bytes), ec);
  }
  void sendRose(Connection& c, const RoseApdu& apdu) {
    std::vector<uint8_t> out;
    if (ensure(c.upper.sendRose(apdu, out).isOk(), "sendRose")) write(c, out);
  }
  int32_t nextInvoke() { return ++invoke_id_; }

  void onBind(Connection& c, const ConnectIndication& ind) {
    std::vector<uint8_t> out;
    bool verified = false;
    if (ind.access_control) {
      verified = npac::associations::SignatureVerifier::verify(
                     npac::associations::SignatureAlgorithm::kEd25519, script_.public_pem,
                     signedContent(*ind.access_control), ind.access_control->signature)
                     .ok() ||
                 npac::associations::SignatureVerifier::verify(
                     npac::associations::SignatureAlgorithm::kRsaSha256, script_.public_pem,
                     signedContent(*ind.access_control), ind.access_control->signature)
                     .ok();
    }
    bool accept = verified && !script_.reject_all;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      ConnectionLog& log = logs_[c.index];
      log.access_control = ind.access_control;
      log.signature_verified = verified;
      log.accepted = accept;
    }
    if (!accept) {
      Aare refusal = refusalFor(ind.aarq, {DiagnosticSource::kServiceUser, user_diagnostic::kAuthenticationFailure});
      ensure(c.upper.rejectAssociation(refusal, out).isOk(), "rejectAssociation");
      write(c, out);
      return;
    }
    Aare aare;
    aare.applicationContext = oids::kSystemsManagementContext;
    ensure(c.upper.acceptAssociation(aare, out).isOk(), "acceptAssociation");
    write(c, out);
    if (ind.access_control->recoveryMode) return;  // wait for lnpRecoveryRequest
    if (script_.heartbeat_first) {
      sendRose(c, eventReport(nextInvoke(), oids::kNpacHeartbeatEvent,
                              encodeHeartbeat(GeneralizedTime::fromUnixMillis(1795964353000))));
    }
    std::optional<RoseApdu> last;
    for (int i = 0; i < script_.events; ++i) {
      last = eventReport(nextInvoke(), kTestEvent, octets(label("c", c.index).append(label("-m", static_cast<size_t>(i)))));
      sendRose(c, *last);
    }
    if (script_.resend_last && last) sendRose(c, *last);
  }

  void onInvokeFromSim(Connection& c, const RoseInvoke& inv) {
    auto decoded = fromRose(inv);
    if (!ensure(decoded.isOk() && std::holds_alternative<ActionArgument>(decoded->argument),
                "the simulator's request is not a decodable M-ACTION")) {
      return;
    }
    const auto& action = std::get<ActionArgument>(decoded->argument);
    ActionResult result;
    if (action.actionType == ActionTypeId::global(oids::kLnpRecoveryRequestAction)) {
      for (int i = 0; i < script_.recovery_messages; ++i) {
        sendRose(c, eventReport(nextInvoke(), kTestEvent, octets(label("recovered-", static_cast<size_t>(i)))));
      }
      result.actionReply = ActionResult::ActionReply{action.actionType, encodeRecoveryReply(script_.recovery_messages)};
    }
    RoseApdu reply = toRose(CmipResult{inv.invokeId, CmipOpcode::kActionConfirmed, result});
    if (script_.leaked_messages > 0 && action.actionType == ActionTypeId::global(oids::kLnpRecoveryRequestAction)) {
      sendRose(c, reply);
      for (int i = 0; i < script_.leaked_messages; ++i) {
        sendRose(c, eventReport(nextInvoke(), kTestEvent, octets(label("leaked-", static_cast<size_t>(i)))));
      }
      return;
    }
    if (script_.answer_on_other) {
      std::shared_ptr<Connection> other;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        other = connections_[(c.index + 1) % connections_.size()];
      }
      if (other.get() != &c) {
        // Sent once this thread has let go of its own connection: two connections
        // answering through each other must not wait on each other's locks.
        c.deferred.emplace_back(other, reply);
        return;
      }
    }
    sendRose(c, reply);
    if (action.actionType == ActionTypeId::global(oids::kLnpRecoveryCompleteAction)) {
      for (int i = 0; i < script_.held_messages; ++i) {
        sendRose(c, eventReport(nextInvoke(), kTestEvent, octets(label("held-", static_cast<size_t>(i)))));
      }
    }
  }

  void serve(Connection& c) {
    std::vector<uint8_t> buf(16 * 1024);
    while (readable(c.socket.native_handle(), stop_)) {
      boost::system::error_code ec;
      size_t n = c.socket.read_some(asio::buffer(buf), ec);
      if (ec) {
        std::lock_guard<std::mutex> lock(mutex_);
        if (!logs_[c.index].release_requested) logs_[c.index].ended_without_release = true;
        return;
      }
      bool closed = false;
      {
        std::lock_guard<std::mutex> conn_lock(c.mutex);
        handleInput(c, Bytes(buf.data(), n));
        closed = c.upper.state() == UpperLayers::State::kClosed;
      }
      for (auto& [other, apdu] : c.deferred) {
        std::lock_guard<std::mutex> lock(other->mutex);
        sendRose(*other, apdu);
      }
      c.deferred.clear();
      if (closed) return;
    }
  }

  void handleInput(Connection& c, Bytes chunk) {
    std::vector<UpperLayersEvent> events;
    std::vector<uint8_t> out;
    c.upper.receive(chunk, events, out);
    write(c, out);
    for (auto& e : events) {
      if (auto* ind = std::get_if<ConnectIndication>(&e)) {
        onBind(c, *ind);
      } else if (auto* d = std::get_if<DataIndication>(&e)) {
        {
          std::lock_guard<std::mutex> lock(mutex_);
          logs_[c.index].from_sim.push_back(d->apdu);
        }
        if (auto* inv = std::get_if<RoseInvoke>(&d->apdu)) onInvokeFromSim(c, *inv);
      } else if (std::get_if<ReleaseIndication>(&e)) {
        {
          std::lock_guard<std::mutex> lock(mutex_);
          logs_[c.index].release_requested = true;
        }
        out.clear();
        ensure(c.upper.respondRelease(Rlre{ReleaseResponseReason::kNormal, {}}, out).isOk(), "respondRelease");
        write(c, out);
      } else if (std::get_if<AbortIndication>(&e)) {
        std::lock_guard<std::mutex> lock(mutex_);
        logs_[c.index].abrt = true;
        logs_[c.index].ended_without_release = true;
      }
    }
  }

  Script script_;
  asio::io_context io_;
  tcp::acceptor acceptor_;
  std::atomic<bool> stop_{false};
  std::atomic<int> active_{0};
  std::atomic<int32_t> invoke_id_{100};
  std::thread accept_thread_;
  std::vector<std::thread> threads_;  // touched by the accept thread only, joined after it
  std::mutex mutex_;
  std::vector<ConnectionLog> logs_;
  std::vector<std::string> problems_;
  std::vector<std::shared_ptr<Connection>> connections_;
};

// A scratch directory for keys and reports, removed afterwards.
struct Scratch {
  std::filesystem::path dir;
  Scratch() {
    static int counter = 0;
    dir = std::filesystem::temp_directory_path() /
          ("soa-sim-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    std::filesystem::create_directories(dir);
  }
  ~Scratch() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  std::string file(const std::string& name) const { return (dir / name).string(); }
};

std::string simPath() {
  const char* bin = std::getenv("NPAC_BIN");
  return (bin != nullptr ? std::string(bin) : std::string(NPAC_BINARY_DIR) + "/bin") + "/npac-soa-sim";
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

struct SimRun {
  int exit_code = -1;
  Json report;
  std::string stderr_text;
  std::string transcript;  // command, exit code, stderr and report, for INFO()
};

// Runs the simulator to its end (it is bounded by --duration) and parses its report.
SimRun runSim(const Scratch& scratch, const std::string& args, const std::string& duration = "10s") {
  std::string err = scratch.file("stderr.txt");
  std::string cmd = simPath() + " " + args + " --duration " + duration + " --log-level warn 2>" + err;
  SimRun r;
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  int status = pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.stderr_text = slurp(err);
  r.report = Json::parse(out, nullptr, false);
  r.transcript = std::string("npac-soa-sim ").append(args).append("\nexit ").append(std::to_string(r.exit_code));
  r.transcript.append("\nstderr: ").append(r.stderr_text).append("\nreport: ").append(out);
  return r;
}

// keygen through the simulator itself; returns {private path, public PEM}.
std::pair<std::string, std::string> makeKey(const Scratch& scratch, const std::string& algorithm,
                                            const std::string& name = "sp") {
  std::string priv = scratch.file(name + ".pem"), pub = scratch.file(name + ".pub.pem");
  std::string cmd = simPath() + " keygen --algorithm " + algorithm + " --out " + priv + " --public-out " + pub +
                    " >/dev/null";
  REQUIRE(std::system(cmd.c_str()) == 0);
  return {priv, slurp(pub)};
}

// The simulator as a child we can signal: stdout and stderr go to files.
pid_t spawnSim(const Scratch& scratch, const std::string& args) {
  std::vector<std::string> words{simPath()};
  std::istringstream in(args + " --duration 10s --log-level warn");
  for (std::string w; in >> w;) words.push_back(w);
  std::string out = scratch.file("spawned.json"), err = scratch.file("spawned.err");
  pid_t pid = ::fork();
  if (pid == 0) {
    std::freopen(out.c_str(), "w", stdout);
    std::freopen(err.c_str(), "w", stderr);
    std::vector<char*> argv;
    for (auto& w : words) argv.push_back(w.data());
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    std::_Exit(127);
  }
  return pid;
}

std::string baseArgs(uint16_t port, const std::string& key) {
  return "--npac 127.0.0.1:" + std::to_string(port) + " --spid 0001 --key-list 3 --key-id 7 --key " + key;
}

}  // namespace

TEST_CASE("The simulator signs its bind and answers each event report with a ReturnResult of the same invoke id and opcode then releases",
          "[soa-sim]") {
  Scratch scratch;
  auto [key, pub] = makeKey(scratch, "ed25519");
  Responder npac(Script{pub, false, 5, true});
  SimRun run = runSim(scratch, baseArgs(npac.port(), key) + " --from 127.0.0.2 --expect 5");
  INFO(run.transcript);
  REQUIRE(run.exit_code == 0);

  auto logs = npac.logs();
  CHECK(npac.problems().empty());
  REQUIRE(logs.size() == 1);
  CHECK(logs[0].signature_verified);
  REQUIRE(logs[0].access_control.has_value());
  CHECK(logs[0].access_control->systemId == "0001");
  CHECK(logs[0].access_control->listId == 3);
  CHECK(logs[0].access_control->keyId == 7);
  CHECK_FALSE(logs[0].access_control->recoveryMode);
  CHECK(logs[0].release_requested);
  // Heartbeat (invoke 101) and events 102..106, each answered once with its id and opcode.
  REQUIRE(logs[0].from_sim.size() == 6);
  for (size_t i = 0; i < 6; ++i) {
    const auto* rr = std::get_if<RoseReturnResult>(&logs[0].from_sim[i]);
    REQUIRE(rr != nullptr);
    CHECK(rr->invokeId.present == static_cast<int32_t>(101 + i));
    REQUIRE(rr->result.has_value());
    CHECK(rr->result->opcode == Code::local(static_cast<int32_t>(CmipOpcode::kEventReportConfirmed)));
  }

  const Json& rep = run.report;
  CHECK(rep["exit_code"] == 0);
  CHECK(rep["stop_reason"] == "goals-met");
  CHECK(rep["associations"][0]["received"] == 5);
  CHECK(rep["associations"][0]["answered"] == 5);
  CHECK(rep["associations"][0]["heartbeats"] == 1);
  CHECK(rep["associations"][0]["end"]["reason"] == "released");
  REQUIRE(rep["received"].size() == 5);
  for (int i = 0; i < 5; ++i) {
    const Json& m = rep["received"][i];
    CHECK(m["seq"] == i + 1);
    CHECK(m["invoke_id"] == 102 + i);
    CHECK(m["operation"] == "m-EventReport-Confirmed");
    CHECK(m["type"] == kTestEvent.toString());
    CHECK(m["info"] == hexOf(octets(label("c0-m", static_cast<size_t>(i))).bytes));
    CHECK(m["retransmission"] == false);
  }
}

TEST_CASE("An RSA key made by keygen signs a bind the NPAC side verifies", "[soa-sim]") {
  Scratch scratch;
  auto [key, pub] = makeKey(scratch, "rsa");
  Responder npac(Script{pub, false, 1});
  SimRun run = runSim(scratch, baseArgs(npac.port(), key) + " --expect 1");
  INFO(run.transcript);
  CHECK(run.exit_code == 0);
  CHECK(run.report["key_algorithm"] == "rsa-sha256");
  auto logs = npac.logs();
  CHECK(npac.problems().empty());
  REQUIRE(logs.size() == 1);
  CHECK(logs[0].signature_verified);
}

TEST_CASE("Associations bound with --from arrive from those local addresses in order with increasing sequence numbers",
          "[soa-sim]") {
  Scratch scratch;
  auto [key, pub] = makeKey(scratch, "ed25519");
  Responder npac(Script{pub, false, 2});
  SimRun run = runSim(scratch, baseArgs(npac.port(), key) + " --from 127.0.0.2 --from 127.0.0.3 --expect 4");
  INFO(run.transcript);
  REQUIRE(run.exit_code == 0);
  auto logs = npac.logs();
  CHECK(npac.problems().empty());
  REQUIRE(logs.size() == 2);
  CHECK(logs[0].peer_address == "127.0.0.2");
  CHECK(logs[1].peer_address == "127.0.0.3");
  REQUIRE(logs[0].access_control.has_value());
  REQUIRE(logs[1].access_control.has_value());
  CHECK(logs[1].access_control->sequenceNumber == logs[0].access_control->sequenceNumber + 1);
  const Json& a = run.report["associations"];
  CHECK(a[0]["local_address"] == "127.0.0.2");
  CHECK(a[0]["nsap"] == "540072872203127000000002");
  CHECK(a[1]["local_address"] == "127.0.0.3");
  CHECK(a[0]["received"] == 2);
  CHECK(a[1]["received"] == 2);
}

TEST_CASE("A bind whose signature the NPAC cannot verify is rejected and the simulator exits 5 with the AARE diagnostic",
          "[soa-sim]") {
  Scratch scratch;
  auto [key, pub] = makeKey(scratch, "ed25519", "signer");
  auto [other_key, other_pub] = makeKey(scratch, "ed25519", "provisioned");
  (void)other_key;
  Responder npac(Script{other_pub, false, 0});
  SimRun run = runSim(scratch, baseArgs(npac.port(), key) + " --expect 1");
  INFO(run.transcript);
  CHECK(run.exit_code == 5);
  CHECK(run.stderr_text.find("authentication-failure") != std::string::npos);
  CHECK(run.report["stop_reason"] == "bind-rejected");
  CHECK(run.report["associations"][0]["bind"]["diagnostic"] == user_diagnostic::kAuthenticationFailure);
  auto logs = npac.logs();
  CHECK(npac.problems().empty());
  REQUIRE(logs.size() == 1);
  CHECK_FALSE(logs[0].signature_verified);
}

TEST_CASE("Replies to the simulator's own requests are counted on the association they arrive on", "[soa-sim]") {
  Scratch scratch;
  auto [key, pub] = makeKey(scratch, "ed25519");
  Script script{pub, false, 0};
  script.answer_on_other = true;
  Responder npac(script);
  SimRun run = runSim(scratch, baseArgs(npac.port(), key) + " --from 127.0.0.2 --from 127.0.0.3 --send-requests 4");
  INFO(run.transcript);
  REQUIRE(run.exit_code == 0);
  const Json& reqs = run.report["requests"];
  REQUIRE(reqs.size() == 4);
  for (size_t i = 0; i < 4; ++i) {
    CHECK(reqs[i]["sent_on"] == 1 + i % 2);  // round robin over the two associations
    CHECK(reqs[i]["reply_on"] == 2 - i % 2);  // answered on the other one
    CHECK(reqs[i]["reply"] == "returnResult");
  }
  CHECK(run.report["associations"][0]["requests_sent"] == 2);
  CHECK(run.report["associations"][0]["replies_received"] == 2);
  std::set<int> ids;
  for (const Json& r : reqs) ids.insert(r["invoke_id"].get<int>());
  CHECK(ids.size() == 4);
}

TEST_CASE("The recovery sequence binds in recovery mode and counts the recovered messages before it completes", "[soa-sim]") {
  Scratch scratch;
  auto [key, pub] = makeKey(scratch, "ed25519");
  Script script{pub, false, 0};
  script.recovery_messages = 3;
  script.held_messages = 2;
  Responder npac(script);
  SimRun run = runSim(scratch, baseArgs(npac.port(), key) + " --recovery --recover-all --expect 5");
  INFO(run.transcript);
  REQUIRE(run.exit_code == 0);
  auto logs = npac.logs();
  CHECK(npac.problems().empty());
  REQUIRE(logs.size() == 1);
  REQUIRE(logs[0].access_control.has_value());
  CHECK(logs[0].access_control->recoveryMode);
  const Json& rec = run.report["recovery"];
  CHECK(rec["message_count"] == 3);
  CHECK(rec["received_during"] == 3);
  CHECK(rec["completed"] == true);
  const Json& order = run.report["received"];
  REQUIRE(order.size() == 5);
  for (int i = 0; i < 3; ++i) CHECK(order[i]["during_recovery"] == true);
  for (int i = 3; i < 5; ++i) CHECK(order[i]["during_recovery"] == false);
  CHECK(order[3]["info"] == hexOf(octets("held-0").bytes));
  // On the wire: recovery request, 3 answers, complete, 2 answers (the ReturnResults
  // interleave with the requests in exactly this order).
  REQUIRE(logs[0].from_sim.size() == 7);
  const auto* first = std::get_if<RoseInvoke>(&logs[0].from_sim[0]);
  REQUIRE(first != nullptr);
  auto action = fromRose(*first);
  REQUIRE(action.isOk());
  CHECK(std::get<ActionArgument>(action->argument).actionType == ActionTypeId::global(oids::kLnpRecoveryRequestAction));
  const auto* complete = std::get_if<RoseInvoke>(&logs[0].from_sim[4]);
  REQUIRE(complete != nullptr);
}

TEST_CASE("Drop mode tcp resets the TCP connection without release after the given number of messages", "[soa-sim]") {
  Scratch scratch;
  auto [key, pub] = makeKey(scratch, "ed25519");
  Responder npac(Script{pub, false, 4});
  SimRun run = runSim(scratch, baseArgs(npac.port(), key) + " --drop-after 1=2 --drop-mode tcp");
  INFO(run.transcript);
  CHECK(run.exit_code == 0);  // no goals; every association ended by our own hand
  CHECK(run.report["stop_reason"] == "all-associations-down");
  CHECK(run.report["associations"][0]["received"] == 2);
  CHECK(run.report["associations"][0]["end"]["reason"] == "dropped-tcp");
  auto logs = npac.logs();
  CHECK(npac.problems().empty());
  REQUIRE(logs.size() == 1);
  CHECK(logs[0].ended_without_release);
  CHECK_FALSE(logs[0].release_requested);
  // A reset may discard what the peer had not read yet: at most the two answers arrived.
  CHECK(logs[0].from_sim.size() <= 2);
}

TEST_CASE("Drop mode close ends the TCP connection with FIN after the answers and without release", "[soa-sim]") {
  Scratch scratch;
  auto [key, pub] = makeKey(scratch, "ed25519");
  Responder npac(Script{pub, false, 4});
  SimRun run = runSim(scratch, baseArgs(npac.port(), key) + " --drop-after 3 --drop-mode close");
  INFO(run.transcript);
  CHECK(run.exit_code == 0);
  CHECK(run.report["associations"][0]["end"]["reason"] == "dropped-close");
  auto logs = npac.logs();
  CHECK(npac.problems().empty());
  REQUIRE(logs.size() == 1);
  CHECK(logs[0].ended_without_release);
  CHECK_FALSE(logs[0].release_requested);
  CHECK(logs[0].from_sim.size() == 3);
}

TEST_CASE("Drop mode abort sends an ACSE ABRT", "[soa-sim]") {
  Scratch scratch;
  auto [key, pub] = makeKey(scratch, "ed25519");
  Responder npac(Script{pub, false, 3});
  SimRun run = runSim(scratch, baseArgs(npac.port(), key) + " --drop-after 1 --drop-mode abort");
  INFO(run.transcript);
  CHECK(run.exit_code == 0);
  CHECK(run.report["associations"][0]["end"]["reason"] == "dropped-abort");
  auto logs = npac.logs();
  CHECK(npac.problems().empty());
  REQUIRE(logs.size() == 1);
  CHECK(logs[0].abrt);
}

TEST_CASE("A silent association answers nothing and --expect is still met by receipt", "[soa-sim]") {
  Scratch scratch;
  auto [key, pub] = makeKey(scratch, "ed25519");
  Responder npac(Script{pub, false, 2, true});
  SimRun run = runSim(scratch, baseArgs(npac.port(), key) + " --silent 1 --expect 2");
  INFO(run.transcript);
  CHECK(run.exit_code == 0);
  CHECK(run.report["associations"][0]["answered"] == 0);
  CHECK(run.report["associations"][0]["heartbeats"] == 1);
  auto logs = npac.logs();
  CHECK(npac.problems().empty());
  REQUIRE(logs.size() == 1);
  CHECK(logs[0].from_sim.empty());
  CHECK(logs[0].release_requested);
}

TEST_CASE("Goals not met when the duration runs out exit 6", "[soa-sim]") {
  Scratch scratch;
  auto [key, pub] = makeKey(scratch, "ed25519");
  Responder npac(Script{pub, false, 1});
  SimRun run = runSim(scratch, baseArgs(npac.port(), key) + " --expect 3", "1s");
  INFO(run.transcript);
  CHECK(run.exit_code == 6);
  CHECK(run.report["stop_reason"] == "duration");
  CHECK(run.report["goals_met"] == false);
  CHECK(run.report["associations"][0]["received"] == 1);
}

TEST_CASE("A refused connection exits 4 with the reason on stderr", "[soa-sim]") {
  Scratch scratch;
  auto [key, pub] = makeKey(scratch, "ed25519");
  uint16_t closed_port = 0;
  {
    asio::io_context io;
    tcp::acceptor a(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
    closed_port = a.local_endpoint().port();
  }  // nothing listens there any more
  SimRun refused = runSim(scratch, baseArgs(closed_port, key));
  INFO(refused.transcript);
  CHECK(refused.exit_code == 4);
  CHECK(refused.stderr_text.find("Connection refused") != std::string::npos);
  CHECK(refused.report["associations"][0]["bind"]["outcome"] == "connect-failed");
}

TEST_CASE("A flag naming an association that does not exist exits 2 before connecting", "[soa-sim]") {
  Scratch scratch;
  auto [key, pub] = makeKey(scratch, "ed25519");
  SimRun bad_flag = runSim(scratch, baseArgs(1, key) + " --delay 3=50ms");
  INFO(bad_flag.transcript);
  CHECK(bad_flag.exit_code == 2);
  CHECK(bad_flag.stderr_text.find("association 3 does not exist") != std::string::npos);
}

TEST_CASE("A key file that is not a private key exits 3 naming the file", "[soa-sim]") {
  Scratch scratch;
  std::ofstream(scratch.file("garbage.pem")) << "not a key\n";
  SimRun bad_key = runSim(scratch, baseArgs(1, scratch.file("garbage.pem")));
  INFO(bad_key.transcript);
  CHECK(bad_key.exit_code == 3);
  CHECK(bad_key.stderr_text.find("garbage.pem") != std::string::npos);
  SimRun missing = runSim(scratch, baseArgs(1, scratch.file("missing.pem")));
  INFO(missing.transcript);
  CHECK(missing.exit_code == 3);
  CHECK(missing.stderr_text.find("cannot read key file") != std::string::npos);
}

TEST_CASE("keygen writes a key pair whose private half signs and whose public half verifies", "[soa-sim]") {
  Scratch scratch;
  for (const char* algorithm : {"ed25519", "rsa"}) {
    auto [key, pub] = makeKey(scratch, algorithm, algorithm);
    auto alg = std::string(algorithm) == "rsa" ? npac::associations::SignatureAlgorithm::kRsaSha256
                                               : npac::associations::SignatureAlgorithm::kEd25519;
    auto signer = npac::associations::SignatureSigner::fromPem(alg, slurp(key));
    REQUIRE(signer.ok());
    const std::vector<uint8_t> message{1, 2, 3, 4};
    auto sig = signer.value().sign(message);
    REQUIRE(sig.ok());
    CHECK(npac::associations::SignatureVerifier::verify(alg, pub, message, sig.value()).ok());
    std::vector<uint8_t> other{1, 2, 3, 5};
    CHECK_FALSE(npac::associations::SignatureVerifier::verify(alg, pub, other, sig.value()).ok());
    CHECK((std::filesystem::status(key).permissions() & std::filesystem::perms::others_read) ==
          std::filesystem::perms::none);
  }
}

TEST_CASE("SIGTERM releases every association with RLRQ and RLRE before the report is written", "[soa-sim]") {
  Scratch scratch;
  auto [key, pub] = makeKey(scratch, "ed25519");
  Responder npac(Script{pub, false, 1});
  pid_t pid = spawnSim(scratch, baseArgs(npac.port(), key) + " --from 127.0.0.2 --from 127.0.0.3");
  REQUIRE(pid > 0);
  // Wait (bounded) until both binds are accepted; the simulator has no goal and waits.
  for (int i = 0; i < 1000 && npac.acceptedBinds() < 2; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  REQUIRE(npac.acceptedBinds() == 2);
  REQUIRE(::kill(pid, SIGTERM) == 0);
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  std::string out = slurp(scratch.file("spawned.json"));
  INFO("stderr: " << slurp(scratch.file("spawned.err")) << "\nreport: " << out);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  Json report = Json::parse(out, nullptr, false);
  CHECK(report["stop_reason"] == "signal");
  CHECK(report["associations"][0]["end"]["reason"] == "released");
  CHECK(report["associations"][1]["end"]["reason"] == "released");
  auto logs = npac.logs();
  CHECK(npac.problems().empty());
  REQUIRE(logs.size() == 2);
  CHECK(logs[0].release_requested);
  CHECK(logs[1].release_requested);
}

TEST_CASE("An invoke received again with the same invoke id and argument is marked as a retransmission", "[soa-sim]") {
  Scratch scratch;
  auto [key, pub] = makeKey(scratch, "ed25519");
  Script script{pub, false, 2};
  script.resend_last = true;
  Responder npac(script);
  SimRun run = runSim(scratch, baseArgs(npac.port(), key) + " --expect 3");
  INFO(run.transcript);
  REQUIRE(run.exit_code == 0);
  const Json& order = run.report["received"];
  REQUIRE(order.size() == 3);
  CHECK(order[0]["retransmission"] == false);
  CHECK(order[1]["retransmission"] == false);
  CHECK(order[2]["retransmission"] == true);
  CHECK(order[2]["duplicate_of"] == 2);
  CHECK(order[2]["invoke_id"] == order[1]["invoke_id"]);
  CHECK(order[2]["answered"] == true);
}

TEST_CASE("The departure offset option shifts the bind's departure time from the clock by a signed amount", "[soa-sim]") {
  Scratch scratch;
  auto [key, pub] = makeKey(scratch, "ed25519");
  auto nowMs = [] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
  };
  for (auto [flag, offset_ms] : {std::pair<std::string, int64_t>{"--departure-offset=-10m", -600'000},
                                 std::pair<std::string, int64_t>{"--departure-offset +2h", 7'200'000}}) {
    Responder npac(Script{pub, false, 1});
    const int64_t before = nowMs();
    SimRun run = runSim(scratch, baseArgs(npac.port(), key) + " " + flag + " --expect 1");
    const int64_t after = nowMs();
    INFO(run.transcript);
    REQUIRE(run.exit_code == 0);
    auto logs = npac.logs();
    REQUIRE(logs.size() == 1);
    REQUIRE(logs[0].access_control.has_value());
    CHECK(logs[0].signature_verified);
    const GeneralizedTime sent = logs[0].access_control->departureTime;
    // Whole seconds of (the sim's clock + offset), taken between `before` and `after`.
    CHECK(sent.toUnixMillis() >= (before + offset_ms) / 1000 * 1000);
    CHECK(sent.toUnixMillis() <= after + offset_ms);
    CHECK(run.report["associations"][0]["departure_time"] == sent.toString());
  }
}

TEST_CASE("A departure offset that is not a signed duration or is over a year exits 2 with the reason", "[soa-sim]") {
  Scratch scratch;
  auto [key, pub] = makeKey(scratch, "ed25519");
  SimRun garbled = runSim(scratch, baseArgs(1, key) + " --departure-offset 10x");
  INFO(garbled.transcript);
  CHECK(garbled.exit_code == 2);
  CHECK(garbled.stderr_text.find("--departure-offset: '10x' is not a signed duration") != std::string::npos);
  SimRun far = runSim(scratch, baseArgs(1, key) + " --departure-offset=-9000h");
  INFO(far.transcript);
  CHECK(far.exit_code == 2);
  CHECK(far.stderr_text.find("more than a year away from the clock") != std::string::npos);
  // Past what 64-bit milliseconds hold: refused as too long, not wrapped round.
  SimRun huge = runSim(scratch, baseArgs(1, key) + " --departure-offset=-9999999999999999h");
  INFO(huge.transcript);
  CHECK(huge.exit_code == 2);
  CHECK(huge.stderr_text.find("'-9999999999999999h' is too long") != std::string::npos);
}

TEST_CASE("A recovery hold delays recovery complete and what the NPAC sends after it arrives outside recovery", "[soa-sim]") {
  Scratch scratch;
  auto [key, pub] = makeKey(scratch, "ed25519");
  Script script{pub, false, 0};
  script.recovery_messages = 2;
  script.held_messages = 2;
  Responder npac(script);
  SimRun run = runSim(scratch, baseArgs(npac.port(), key) + " --recovery --recovery-hold 300ms --expect 4");
  INFO(run.transcript);
  REQUIRE(run.exit_code == 0);
  CHECK(npac.problems().empty());
  const Json& rec = run.report["recovery"];
  CHECK(rec["hold_ms"] == 300);
  CHECK(rec["received_during"] == 2);
  CHECK(rec["received_while_holding"] == 0);
  CHECK(rec["completed"] == true);
  const Json& order = run.report["received"];
  REQUIRE(order.size() == 4);
  CHECK(order[1]["info"] == hexOf(octets("recovered-1").bytes));
  CHECK(order[1]["during_recovery"] == true);
  CHECK(order[2]["info"] == hexOf(octets("held-0").bytes));
  CHECK(order[2]["during_recovery"] == false);
  // On the wire: recovery request, 2 answers, then (after the hold) complete.
  auto logs = npac.logs();
  REQUIRE(logs.size() == 1);
  REQUIRE(logs[0].from_sim.size() == 6);
  const auto* complete = std::get_if<RoseInvoke>(&logs[0].from_sim[3]);
  REQUIRE(complete != nullptr);
  auto action = fromRose(*complete);
  REQUIRE(action.isOk());
  CHECK(std::get<ActionArgument>(action->argument).actionType == ActionTypeId::global(oids::kLnpRecoveryCompleteAction));
}

TEST_CASE("A message pushed during the recovery hold fails the run with exit 8 and recovery complete is never sent", "[soa-sim]") {
  Scratch scratch;
  auto [key, pub] = makeKey(scratch, "ed25519");
  Script script{pub, false, 0};
  script.recovery_messages = 2;
  script.leaked_messages = 1;
  Responder npac(script);
  SimRun run = runSim(scratch, baseArgs(npac.port(), key) + " --recovery --recovery-hold 5s");
  INFO(run.transcript);
  CHECK(run.exit_code == 8);
  CHECK(run.report["stop_reason"] == "recovery-failed");
  const Json& rec = run.report["recovery"];
  CHECK(rec["received_while_holding"] == 1);
  CHECK(rec["completed"] == false);
  CHECK(rec["error"].get<std::string>().find("during --recovery-hold") != std::string::npos);
  CHECK(run.stderr_text.find("the NPAC should have held them") != std::string::npos);
  const Json& order = run.report["received"];
  REQUIRE(order.size() == 3);
  CHECK(order[2]["info"] == hexOf(octets("leaked-0").bytes));
  CHECK(order[2]["during_recovery"] == true);
  for (const Json& r : run.report["requests"]) CHECK(r["purpose"] != "recovery-complete");
}

TEST_CASE("A recovery hold that is not a duration or comes without recovery exits 2 with the reason", "[soa-sim]") {
  Scratch scratch;
  auto [key, pub] = makeKey(scratch, "ed25519");
  SimRun garbled = runSim(scratch, baseArgs(1, key) + " --recovery --recovery-hold 2x");
  INFO(garbled.transcript);
  CHECK(garbled.exit_code == 2);
  CHECK(garbled.stderr_text.find("--recovery-hold: '2x' is not a duration") != std::string::npos);
  SimRun alone = runSim(scratch, baseArgs(1, key) + " --recovery-hold 2s");
  INFO(alone.transcript);
  CHECK(alone.exit_code == 2);
  CHECK(alone.stderr_text.find("--recovery-hold needs --recovery") != std::string::npos);
}

TEST_CASE("The duration ends a recovery hold with exit 6 and a release and recovery complete is never sent", "[soa-sim]") {
  Scratch scratch;
  auto [key, pub] = makeKey(scratch, "ed25519");
  Script script{pub, false, 0};
  script.recovery_messages = 1;
  Responder npac(script);
  SimRun run = runSim(scratch, baseArgs(npac.port(), key) + " --recovery --recovery-hold 1h", "1s");
  INFO(run.transcript);
  CHECK(run.exit_code == 6);
  CHECK(run.report["stop_reason"] == "duration");
  CHECK(run.report["recovery"]["completed"] == false);
  CHECK(run.report["associations"][0]["end"]["reason"] == "released");
  for (const Json& r : run.report["requests"]) CHECK(r["purpose"] != "recovery-complete");
  auto logs = npac.logs();
  CHECK(npac.problems().empty());
  REQUIRE(logs.size() == 1);
  CHECK(logs[0].release_requested);
  // Recovery request and the answer to the one recovered message: nothing after them.
  CHECK(logs[0].from_sim.size() == 2);
}
