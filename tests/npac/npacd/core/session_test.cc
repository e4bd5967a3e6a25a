// Session in-process (npac/npacd/core/session.h): one real loopback TCP connection, the
// provider's side an initiator cmip::UpperLayers driven synchronously by the test, the
// owner a recorder that decides as told. No npacd process, no sleeps: the test runs the
// io_context until the event it waits for has happened (bounded). Its parts, SessionWriter
// and SessionReader, are driven alone the same way, their hooks recorded.
#include "npac/npacd/core/session.h"

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <catch2/catch.hpp>

#include "cmip/acse.h"
#include "cmip/oids.h"
#include "cmip/rose.h"
#include "cmip/upper_layers.h"
#include "common/time_source.h"
#include "common/timer.h"

namespace npac::npacd {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

// The owner: records what the session reports and answers the AARQ as the test says.
class RecordingOwner final : public SessionOwner {
 public:
  enum class Answer { kAccept, kReject, kHandOff };
  Answer answer = Answer::kAccept;
  int connect_indications = 0;
  std::optional<Session::Handoff> handoff;  // kHandOff: what the session handed over
  std::vector<cmip::RoseApdu> received;
  std::vector<std::string> closed;  // the reasons, one per onClosed
  std::vector<std::int64_t> written;

  void onConnectIndication(const std::shared_ptr<Session>& session, const cmip::ConnectIndication& ind) override {
    ++connect_indications;
    if (answer == Answer::kHandOff) {
      session->handOff([this](Session::Handoff h) { handoff.emplace(std::move(h)); });
    } else if (answer == Answer::kAccept) {
      cmip::Aare aare;
      aare.applicationContext = cmip::oids::kSystemsManagementContext;
      session->accept(42, aare);
    } else {
      session->reject(cmip::refusalFor(ind.aarq, {cmip::DiagnosticSource::kServiceUser, 1}));
    }
  }
  void onRose(const std::shared_ptr<Session>&, cmip::RoseApdu apdu) override { received.push_back(std::move(apdu)); }
  void onClosed(const std::shared_ptr<Session>&, const std::string& reason, bool) override {
    closed.push_back(reason);
  }
  void onWritten(const std::shared_ptr<Session>&, std::int64_t tag) override { written.push_back(tag); }
};

// The provider's end: a blocking socket and an initiator stack.
class Provider {
 public:
  explicit Provider(asio::io_context& io) : socket_(io), upper_(config()) {}
  tcp::socket& socket() { return socket_; }
  cmip::UpperLayers& upper() { return upper_; }

  void send(const std::vector<std::uint8_t>& bytes) { asio::write(socket_, asio::buffer(bytes)); }
  // Reads what the session wrote (it is in the kernel's buffer once its write completed)
  // and returns the events it makes; answers the stack produced are sent back.
  std::vector<cmip::UpperLayersEvent> receive() {
    std::vector<cmip::UpperLayersEvent> events;
    std::array<std::uint8_t, 65536> buffer;
    boost::system::error_code ec;
    const std::size_t n = socket_.read_some(asio::buffer(buffer), ec);
    if (ec) return events;
    std::vector<std::uint8_t> out;
    upper_.receive(cmip::Bytes(buffer.data(), n), events, out);
    if (!out.empty()) send(out);
    return events;
  }

 private:
  static cmip::UpperLayersConfig config() {
    cmip::UpperLayersConfig c;
    c.role = cmip::UpperLayersRole::kInitiator;
    const std::vector<std::uint8_t> selector{0, 0, 0, 1};
    c.calling_tsap = c.called_tsap = selector;
    c.calling_ssel = c.called_ssel = selector;
    c.calling_psel = c.called_psel = selector;
    return c;
  }
  tcp::socket socket_;
  cmip::UpperLayers upper_;
};

// A session on an accepted loopback connection, and the provider's end of it.
struct Connection {
  asio::io_context io;
  common::ManualTimeSource time;
  common::ManualTimers timers{time};  // the release timeout's
  RecordingOwner owner;
  Provider provider{io};
  std::shared_ptr<Session> session;
  bool unbound_end = false;

  Connection() {
    tcp::acceptor acceptor(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
    provider.socket().connect(acceptor.local_endpoint());
    tcp::socket accepted(io);
    acceptor.accept(accepted);
    const auto nsap = associations::Nsap::fromIpv4({127, 0, 0, 1});
    session = std::make_shared<Session>(std::move(accepted), nsap, "127.0.0.1", owner, timers.makeTimer());
    session->setUnboundEndHandler([this] { unbound_end = true; });
    session->start();
  }
  // Runs the session's handlers until `done()` holds; false if it never did.
  template <class Done>
  bool runUntil(Done done) {
    const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!done() && std::chrono::steady_clock::now() < limit) io.run_one_for(std::chrono::milliseconds(50));
    return done();
  }
  // The provider binds: CR → CC (answered by the stack), then CN with the AARQ.
  void sendAarq() {
    cmip::Aarq aarq;
    aarq.applicationContext = cmip::oids::kSystemsManagementContext;
    std::vector<std::uint8_t> out;
    REQUIRE(provider.upper().connect(aarq, out).isOk());
    provider.send(out);
  }
  // The provider reads until the association is confirmed (or refused).
  std::optional<cmip::ConnectConfirm> awaitConfirm() {
    for (int i = 0; i < 10; ++i) {
      REQUIRE(runUntil([&] { return provider.socket().available() > 0; }));
      for (auto& event : provider.receive()) {
        if (auto* confirm = std::get_if<cmip::ConnectConfirm>(&event)) return *confirm;
      }
    }
    return std::nullopt;
  }
};

cmip::RoseInvoke invokeOf(std::int32_t invoke_id, std::int32_t opcode) {
  cmip::RoseInvoke invoke;
  invoke.invokeId = invoke_id;
  invoke.opcode = cmip::Code::local(opcode);
  return invoke;
}

TEST_CASE("A Session reports the provider's AARQ to its owner and answers the accepting AARE", "[session]") {
  Connection c;
  c.sendAarq();
  std::optional<cmip::ConnectConfirm> confirm = c.awaitConfirm();
  REQUIRE(confirm);
  CHECK(confirm->accepted);
  CHECK(c.owner.connect_indications == 1);
  CHECK(c.session->bound());
  CHECK(c.session->associationId() == 42);
}

TEST_CASE("A Session its owner refuses answers the rejecting AARE and ends unbound", "[session]") {
  Connection c;
  c.owner.answer = RecordingOwner::Answer::kReject;
  c.sendAarq();
  std::optional<cmip::ConnectConfirm> confirm = c.awaitConfirm();
  REQUIRE(confirm);
  CHECK_FALSE(confirm->accepted);
  REQUIRE(c.runUntil([&] { return c.session->closed(); }));
  CHECK(c.unbound_end);
  CHECK(c.owner.closed.empty());  // onClosed is for bound associations only
}

TEST_CASE("A bound Session hands the provider's ROSE APDUs to its owner", "[session]") {
  Connection c;
  c.sendAarq();
  REQUIRE(c.awaitConfirm());
  const cmip::RoseInvoke invoke = invokeOf(7, 6);  // m-Action (X.711 §7.4)
  std::vector<std::uint8_t> out;
  REQUIRE(c.provider.upper().sendRose(invoke, out).isOk());
  c.provider.send(out);
  REQUIRE(c.runUntil([&] { return !c.owner.received.empty(); }));
  REQUIRE(std::holds_alternative<cmip::RoseInvoke>(c.owner.received.front()));
  CHECK(std::get<cmip::RoseInvoke>(c.owner.received.front()) == invoke);
}

TEST_CASE("A bound Session writes its owner's ROSE APDU and reports it written by its tag", "[session]") {
  Connection c;
  c.sendAarq();
  REQUIRE(c.awaitConfirm());
  const cmip::RoseInvoke invoke = invokeOf(11, 3);  // m-EventReport-Confirmed
  REQUIRE(c.session->sendRoseEncoded(cmip::encodeRoseApdu(invoke), 99));
  REQUIRE(c.runUntil([&] { return !c.owner.written.empty(); }));
  CHECK(c.owner.written == std::vector<std::int64_t>{99});
  std::vector<cmip::UpperLayersEvent> events = c.provider.receive();
  REQUIRE(events.size() == 1);
  auto* data = std::get_if<cmip::DataIndication>(&events.front());
  REQUIRE(data != nullptr);
  CHECK(std::get<cmip::RoseInvoke>(data->apdu) == invoke);
}

TEST_CASE("A bound Session whose RLRQ gets no RLRE closes at the release timeout and not before", "[session]") {
  Connection c;
  c.sendAarq();
  REQUIRE(c.awaitConfirm());
  c.session->requestRelease();
  // The provider reads the RLRQ and does not answer it.
  REQUIRE(c.runUntil([&] { return c.provider.socket().available() > 0; }));
  c.io.poll();
  c.timers.advance(kReleaseTimeout - std::chrono::milliseconds(1));
  c.io.poll();
  CHECK_FALSE(c.session->closed());
  CHECK(c.owner.closed.empty());
  c.timers.advance(std::chrono::milliseconds(1));
  REQUIRE(c.runUntil([&] { return !c.owner.closed.empty(); }));
  CHECK(c.session->closed());
  CHECK_THAT(c.owner.closed.front(), Catch::Contains("no RLRE within the release timeout"));
}

TEST_CASE("A bound Session tells its owner once when the provider's connection is lost", "[session]") {
  Connection c;
  c.sendAarq();
  REQUIRE(c.awaitConfirm());
  c.provider.socket().close();
  REQUIRE(c.runUntil([&] { return !c.owner.closed.empty(); }));
  c.io.poll();
  CHECK(c.owner.closed.size() == 1);
  CHECK(c.session->closed());
  CHECK_FALSE(c.unbound_end);
}

TEST_CASE("A bound Session counts the ROSE APDUs it sends and receives in its traffic", "[session]") {
  Connection c;
  c.sendAarq();
  REQUIRE(c.awaitConfirm());
  REQUIRE(c.session->sendRoseEncoded(cmip::encodeRoseApdu(invokeOf(1, 3)), 1));
  REQUIRE(c.session->sendRoseEncoded(cmip::encodeRoseApdu(invokeOf(2, 3)), 2));
  std::vector<std::uint8_t> out;
  REQUIRE(c.provider.upper().sendRose(invokeOf(7, 6), out).isOk());
  c.provider.send(out);
  REQUIRE(c.runUntil([&] { return !c.owner.received.empty() && c.owner.written.size() == 2; }));
  const SessionTraffic& traffic = c.session->traffic();
  CHECK(traffic.sent == 2);
  CHECK(traffic.received == 1);
  CHECK(traffic.retransmissions == 0);  // the owner's to count
}

TEST_CASE("A Session handed off goes on as the Session made from its Handoff, whose owner hears the AARQ again",
          "[session]") {
  Connection c;
  c.owner.answer = RecordingOwner::Answer::kHandOff;
  c.sendAarq();
  REQUIRE(c.runUntil([&] { return c.provider.socket().available() > 0; }));
  REQUIRE(c.provider.receive().empty());  // the CC: the provider answers with the AARQ
  REQUIRE(c.runUntil([&] { return c.owner.handoff.has_value(); }));
  CHECK(c.owner.connect_indications == 1);
  CHECK(c.session->closed());
  CHECK_FALSE(c.unbound_end);  // the owner let go of it when it handed it off
  Session::Handoff handoff = std::move(*c.owner.handoff);
  REQUIRE(handoff.fd >= 0);
  REQUIRE(handoff.upper != nullptr);
  tcp::socket socket(c.io);
  socket.assign(handoff.protocol_v6 ? tcp::v6() : tcp::v4(), handoff.fd);
  RecordingOwner next;
  c.io.restart();  // it ran out of work once the session was handed off
  auto resumed = std::make_shared<Session>(std::move(socket), std::move(handoff), next, c.timers.makeTimer());
  resumed->resume();
  std::optional<cmip::ConnectConfirm> confirm = c.awaitConfirm();
  REQUIRE(confirm);
  CHECK(confirm->accepted);
  CHECK(next.connect_indications == 1);
  CHECK(resumed->bound());
  CHECK(c.owner.connect_indications == 1);  // the first owner heard nothing more
}

// A connected loopback pair: `ours`, the part's socket, and `theirs`, the peer's (blocking).
struct LoopbackPair {
  asio::io_context io;
  tcp::socket ours{io};
  tcp::socket theirs{io};

  LoopbackPair() {
    tcp::acceptor acceptor(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
    theirs.connect(acceptor.local_endpoint());
    acceptor.accept(ours);
    ours.non_blocking(true);  // as Session::start() leaves it
  }
  // Runs handlers until `done()` holds; false if it never did.
  template <class Done>
  bool runUntil(Done done) {
    const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!done() && std::chrono::steady_clock::now() < limit) {
      if (io.stopped()) io.restart();
      io.run_one_for(std::chrono::milliseconds(50));
    }
    return done();
  }
  // Runs every handler ready or pending until none is left (returns at once when idle).
  void runOut() {
    io.restart();
    io.run();
  }
  std::vector<std::uint8_t> readTheirs(std::size_t n) {
    std::vector<std::uint8_t> bytes(n);
    asio::read(theirs, asio::buffer(bytes));
    return bytes;
  }
};

// A SessionWriter on a pair's `ours`, recording what its hooks hear, in order.
struct RecordedWriter {
  std::shared_ptr<int> session = std::make_shared<int>(0);  // what keep_alive holds
  std::vector<std::string> heard;
  SessionWriter writer;

  explicit RecordedWriter(tcp::socket& socket)
      : writer(socket, SessionWriter::Hooks{
            .keep_alive = [this] { return std::shared_ptr<void>(session); },
            .written = [this](std::int64_t tag) { heard.push_back("written " + std::to_string(tag)); },
            .over_limit = [this](std::size_t queued) { heard.push_back("over-limit " + std::to_string(queued)); },
            .failed = [this](const boost::system::error_code&) { heard.push_back("failed"); },
            .drained = [this] { heard.push_back("drained"); },
        }) {}
  bool heardLast(const std::string& what) const { return !heard.empty() && heard.back() == what; }
};

TEST_CASE("A SessionWriter writes its frames in order and reports each tag once written, then drains", "[session]") {
  LoopbackPair p;
  RecordedWriter w(p.ours);
  w.writer.enqueue({1, 2, 3}, 7);
  w.writer.enqueue({4, 5});  // tag 0: nothing to report
  w.writer.enqueue({6}, 8);
  CHECK(w.writer.writing());
  CHECK(w.heard.empty());  // the write starts from a posted handler
  REQUIRE(p.runUntil([&] { return w.heardLast("drained"); }));
  CHECK(w.heard == std::vector<std::string>{"written 7", "written 8", "drained"});
  CHECK(p.readTheirs(6) == std::vector<std::uint8_t>{1, 2, 3, 4, 5, 6});
  CHECK_FALSE(w.writer.writing());
  CHECK(w.writer.empty());
}

TEST_CASE("A SessionWriter over its queue limit drops the queue and reports the bytes that were queued",
          "[session]") {
  LoopbackPair p;
  RecordedWriter w(p.ours);
  w.writer.enqueue(std::vector<std::uint8_t>(100, 1), 5);
  w.writer.enqueue(std::vector<std::uint8_t>(kMaxQueuedWriteBytes - 99, 2), 6);
  CHECK(w.heard == std::vector<std::string>{"over-limit " + std::to_string(kMaxQueuedWriteBytes + 1)});
  CHECK(w.writer.empty());
  p.runOut();  // the write posted for the first frame finds nothing to write
  CHECK(w.heard == std::vector<std::string>{"over-limit " + std::to_string(kMaxQueuedWriteBytes + 1), "drained"});
  CHECK(p.theirs.available() == 0);
}

TEST_CASE("A SessionWriter stopped mid-write completes that write and gives up the frames not yet written",
          "[session]") {
  LoopbackPair p;
  RecordedWriter w(p.ours);
  w.writer.enqueue({1, 2}, 1);
  REQUIRE(p.io.run_one() == 1);  // the posted handler: the write of {1, 2} is under way
  w.writer.enqueue({3}, 2);      // queued behind it
  w.writer.stopBetweenFrames([&] { w.heard.push_back("stopped"); });
  CHECK(w.heard.empty());
  REQUIRE(p.runUntil([&] { return w.heardLast("stopped"); }));
  CHECK(w.heard == std::vector<std::string>{"written 1", "stopped"});
  std::vector<SessionWriter::Frame> frames = w.writer.takeFrames();
  REQUIRE(frames.size() == 1);
  CHECK(frames.front().bytes == std::vector<std::uint8_t>{3});
  CHECK(frames.front().tag == 2);
  CHECK(w.writer.empty());
  CHECK_FALSE(w.writer.writing());
  CHECK(p.readTheirs(2) == std::vector<std::uint8_t>{1, 2});
  CHECK(p.theirs.available() == 0);
}

TEST_CASE("A SessionWriter stopped with no write under way stops at once and writes nothing more", "[session]") {
  LoopbackPair p;
  RecordedWriter w(p.ours);
  w.writer.enqueue({1}, 1);  // its write is posted, not started
  w.writer.stopBetweenFrames([&] { w.heard.push_back("stopped"); });
  CHECK(w.heard == std::vector<std::string>{"stopped"});
  p.runOut();
  CHECK(w.heard == std::vector<std::string>{"stopped"});
  CHECK_FALSE(w.writer.writing());
  CHECK(w.writer.takeFrames().size() == 1);
  CHECK(p.theirs.available() == 0);
}

TEST_CASE("A SessionWriter whose write fails reports it once and drops its queue", "[session]") {
  LoopbackPair p;
  RecordedWriter w(p.ours);
  p.ours.shutdown(tcp::socket::shutdown_send);  // every write now fails (EPIPE)
  w.writer.enqueue({1}, 1);
  w.writer.enqueue({2}, 2);
  REQUIRE(p.runUntil([&] { return w.heardLast("failed"); }));
  p.runOut();
  CHECK(w.heard == std::vector<std::string>{"failed"});
  CHECK(w.writer.empty());
  CHECK_FALSE(w.writer.writing());
}

TEST_CASE("A SessionWriter queues nothing once its socket is closed", "[session]") {
  LoopbackPair p;
  RecordedWriter w(p.ours);
  p.ours.close();
  w.writer.enqueue({1}, 1);
  CHECK(w.writer.empty());
  CHECK_FALSE(w.writer.writing());
}

// A SessionReader on a pair's `ours`, recording what its hooks hear.
struct RecordedReader {
  std::shared_ptr<int> session = std::make_shared<int>(0);  // what keep_alive holds
  bool ended = false;
  bool may_read = true;
  int reads = 0;
  std::vector<std::uint8_t> octets;
  std::vector<std::string> lost;
  std::function<void()> after_read;  // the session's handling, if the test wants one
  SessionReader reader;

  explicit RecordedReader(tcp::socket& socket)
      : reader(socket, SessionReader::Hooks{
            .keep_alive = [this] { return std::shared_ptr<void>(session); },
            .ended = [this] { return ended; },
            .may_read = [this] { return may_read; },
            .received =
                [this](cmip::Bytes bytes) {
                  ++reads;
                  octets.insert(octets.end(), bytes.begin(), bytes.end());
                  if (after_read) after_read();
                },
            .lost = [this](const std::string& reason) { lost.push_back(reason); },
        }) {}
};

TEST_CASE("A SessionReader hands the octets read to its session and reads on while allowed", "[session]") {
  LoopbackPair p;
  RecordedReader r(p.ours);
  asio::write(p.theirs, asio::buffer(std::vector<std::uint8_t>{1, 2, 3}));
  r.reader.start();
  REQUIRE(p.runUntil([&] { return r.octets.size() == 3; }));
  asio::write(p.theirs, asio::buffer(std::vector<std::uint8_t>{4, 5}));
  REQUIRE(p.runUntil([&] { return r.octets.size() == 5; }));
  CHECK(r.octets == std::vector<std::uint8_t>{1, 2, 3, 4, 5});
  CHECK(r.lost.empty());
}

TEST_CASE("A SessionReader paused by its session reads nothing more until told to read on", "[session]") {
  LoopbackPair p;
  RecordedReader r(p.ours);
  r.after_read = [&] { r.may_read = false; };  // as while the owner decides
  asio::write(p.theirs, asio::buffer(std::vector<std::uint8_t>{1}));
  r.reader.start();
  REQUIRE(p.runUntil([&] { return r.reads == 1; }));
  asio::write(p.theirs, asio::buffer(std::vector<std::uint8_t>{2}));
  p.runOut();  // returns at once: no read is pending
  CHECK(r.reads == 1);
  CHECK(p.ours.available() == 1);
  r.may_read = true;
  r.after_read = nullptr;
  r.reader.readOn();
  REQUIRE(p.runUntil([&] { return r.reads == 2; }));
  CHECK(r.octets == std::vector<std::uint8_t>{1, 2});
}

TEST_CASE("A SessionReader reports the peer's close as connection closed by peer and reads no more", "[session]") {
  LoopbackPair p;
  RecordedReader r(p.ours);
  p.theirs.close();
  r.reader.start();
  REQUIRE(p.runUntil([&] { return !r.lost.empty(); }));
  p.runOut();
  CHECK(r.lost == std::vector<std::string>{"connection closed by peer"});
  CHECK(r.reads == 0);
}

TEST_CASE("A SessionReader drops unread a read that completes after its session ended", "[session]") {
  LoopbackPair p;
  RecordedReader r(p.ours);
  asio::write(p.theirs, asio::buffer(std::vector<std::uint8_t>{1}));
  r.reader.start();
  r.ended = true;
  p.runOut();
  CHECK(r.reads == 0);
  CHECK(r.lost.empty());
  CHECK(p.ours.available() == 1);  // left in the socket
}

}  // namespace
}  // namespace npac::npacd
