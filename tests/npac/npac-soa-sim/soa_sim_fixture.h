// SoaSimFixture: npac-soa-sim against a minimal NPAC responder built from the responder
// half of cmip::UpperLayers, on real loopback sockets, shared by the simulator's tests
// (soa_sim_test.cc, soa_sim_recovery_test.cc). The responder verifies every bind's
// signature with SignatureVerifier (so the simulator's signing is really checked), then
// plays a short script: M-EVENT-REPORTs, answers to the simulator's requests, the
// recovery sequence. Like npacd, it answers an accepted bind with the NPAC's own signed
// access control (npacKeys(), the fixture's NPAC key pair), and baseArgs() installs that
// key in the simulator (--npac-key), so every run authenticates the NPAC; Script's
// npac_answer makes it answer wrongly on purpose. The simulator runs as a child process ($NPAC_BIN/npac-soa-sim) with
// a bounded --duration; its JSON report and exit code are checked.
//
// The responder is a test fixture, not a product: one thread per connection, blocking
// I/O with poll() so nothing outlives a failed test.
#pragma once

#include <catch2/catch.hpp>

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <boost/asio.hpp>
#include <nlohmann/json.hpp>

#include "associations/cmip_bind.h"
#include "associations/signature.h"
#include "cmip/cmip_operations.h"
#include "cmip/npac_bind.h"
#include "cmip/oids.h"
#include "cmip/upper_layers.h"
#include "tests/support/eventually.h"
#include "tests/support/test_paths.h"

namespace soa_sim_test {

using namespace npac::cmip;
namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using Json = nlohmann::json;
using npac::testing::eventually;

// A notification type under the IIS notification arc (NPAC IIS notification(5)): the responder's
// ordinary messages, distinct from the heartbeat.
inline const Oid kTestEvent{1, 3, 6, 1, 4, 1, 103, 7, 0, 0, 5, 99};

inline std::string hexOf(const std::vector<uint8_t>& v) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string s;
  for (uint8_t b : v) {
    s.push_back(kDigits[b >> 4]);
    s.push_back(kDigits[b & 0xF]);
  }
  return s;
}

// "prefix" + n, appended: g++ 12 warns (-Wrestrict, PR105651) on "literal" + std::string.
inline std::string label(const char* prefix, size_t n) {
  std::string s(prefix);
  s.append(std::to_string(n));
  return s;
}

inline OpaqueBer octets(const std::string& text) {
  EncodeBuffer b(0);
  BerWriter w(b);
  w.writeOctetString(std::vector<uint8_t>(text.begin(), text.end()));
  return OpaqueBer{b.toVector()};
}

inline RoseApdu eventReport(int32_t invoke_id, const Oid& type, OpaqueBer info) {
  EventReportArgument arg;
  arg.managedObjectClass = ObjectClass::global(oids::kLnpNpacSmsClass);
  arg.managedObjectInstance = npacSmsInstance();  // docs/PROTOCOL.md: CN=NPAC
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
  // The NPAC's access control in the accepting AARE: kSigned (npacKeys()), kNone (absent),
  // kWrongKey (signed with another key), kNotNpac (well signed, systemType soa).
  enum class NpacAnswer { kSigned, kNone, kWrongKey, kNotNpac };
  NpacAnswer npac_answer = NpacAnswer::kSigned;
};

// The fixture NPAC's key pair (Ed25519), made once per test process.
inline const npac::associations::KeyPairPem& npacKeys() {
  static const npac::associations::KeyPairPem pair =
      npac::associations::generateKeyPair(npac::associations::SignatureAlgorithm::kEd25519).value();
  return pair;
}

// npacKeys()'s public half in a file, for --npac-key; removed when the process ends.
inline const std::string& npacPublicKeyFile() {
  struct File {
    std::filesystem::path path = std::filesystem::temp_directory_path() /
                                 ("soa-sim-npac-" + std::to_string(::getpid()) + ".pub.pem");
    File() { std::ofstream(path, std::ios::binary | std::ios::trunc) << npacKeys().public_pem; }
    ~File() {
      std::error_code ignored;
      std::filesystem::remove(path, ignored);
    }
  };
  static const File file;
  static const std::string text = file.path.string();
  return text;
}

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
    eventually([&] { return active_ <= 0; }, std::chrono::seconds(2), std::chrono::milliseconds(10));
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

  // The NPAC's side of mutual authentication, as Script::npac_answer says.
  void attachNpacAnswer(Aare& aare, const ConnectIndication& ind) {
    namespace as = npac::associations;
    if (script_.npac_answer == Script::NpacAnswer::kNone) return;
    const std::string private_pem = script_.npac_answer == Script::NpacAnswer::kWrongKey
                                        ? as::generateKeyPair(as::SignatureAlgorithm::kEd25519).value().private_pem
                                        : npacKeys().private_pem;
    auto signer = as::SignatureSigner::fromPem(as::SignatureAlgorithm::kEd25519, private_pem).value();
    as::NpacAccessControlFields fields;
    fields.system_id = "NPAC";
    fields.key_list_id = 1;
    fields.key_id = 1;
    fields.sequence_number = ++npac_sequence_;
    fields.departure_time = as::WallClock::now();
    fields.functions = as::functionMaskFrom(ind.access_control->functions);
    fields.recovery_mode = ind.access_control->recoveryMode;
    auto signed_ac = as::signedNpacAccessControl(fields, signer);
    if (!ensure(signed_ac.isOk(), "signing the NPAC's access control")) return;
    LnpAccessControl ac = signed_ac.value();
    if (script_.npac_answer == Script::NpacAnswer::kNotNpac) {
      ac.systemType = SystemType::kSoa;
      ac.signature = signer.sign(signedContent(ac)).value();
    }
    attachNpacAccessControl(aare, ac, findCmipUserInfo(ind.aarq.userInformation, std::nullopt));
  }

  void onBind(Connection& c, const ConnectIndication& ind) {
    std::vector<uint8_t> out;
    bool verified = false;
    if (ind.access_control) {
      verified = npac::associations::SignatureVerifier::verify(
                     npac::associations::SignatureAlgorithm::kEd25519, script_.public_pem,
                     signedContent(*ind.access_control), ind.access_control->signature)
                     .isOk() ||
                 npac::associations::SignatureVerifier::verify(
                     npac::associations::SignatureAlgorithm::kRsaSha256, script_.public_pem,
                     signedContent(*ind.access_control), ind.access_control->signature)
                     .isOk();
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
    attachNpacAnswer(aare, ind);
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
  std::atomic<int64_t> npac_sequence_{0};
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

inline std::string simPath() {
  const char* bin = std::getenv("NPAC_BIN");
  return (bin != nullptr ? std::string(bin) : npac::testing::binaryDir() + "/bin") + "/npac-soa-sim";
}

inline std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

struct SimOutcome {
  int exit_code = -1;
  Json report;
  std::string stderr_text;
  std::string transcript;  // command, exit code, stderr and report, for INFO()
};

// Runs the simulator to its end (it is bounded by --duration) and parses its report.
inline SimOutcome runSim(const Scratch& scratch, const std::string& args, const std::string& duration = "10s") {
  std::string err = scratch.file("stderr.txt");
  std::string cmd = simPath() + " " + args + " --duration " + duration + " --log-level warn 2>" + err;
  SimOutcome r;
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
inline std::pair<std::string, std::string> makeKey(const Scratch& scratch, const std::string& algorithm,
                                            const std::string& name = "sp") {
  std::string priv = scratch.file(name + ".pem"), pub = scratch.file(name + ".pub.pem");
  std::string cmd = simPath() + " keygen --algorithm " + algorithm + " --out " + priv + " --public-out " + pub +
                    " >/dev/null";
  REQUIRE(std::system(cmd.c_str()) == 0);
  return {priv, slurp(pub)};
}

// The simulator as a child we can signal: stdout and stderr go to files.
inline pid_t spawnSim(const Scratch& scratch, const std::string& args) {
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

inline std::string baseArgs(uint16_t port, const std::string& key) {
  return "--npac 127.0.0.1:" + std::to_string(port) + " --spid 0001 --key-list 3 --key-id 7 --key " + key +
         " --npac-key " + npacPublicKeyFile();
}


}  // namespace soa_sim_test
