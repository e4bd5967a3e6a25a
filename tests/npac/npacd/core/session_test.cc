// Session in-process (npac/npacd/core/session.h): one real loopback TCP connection, the
// provider's side an initiator cmip::UpperLayers driven synchronously by the test, the
// owner a recorder that decides as told. No npacd process, no sleeps: the test runs the
// io_context until the event it waits for has happened (bounded).
#include "npac/npacd/core/session.h"

#include <array>
#include <chrono>
#include <memory>
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
  enum class Answer { kAccept, kReject };
  Answer answer = Answer::kAccept;
  int connect_indications = 0;
  std::vector<cmip::RoseApdu> received;
  std::vector<std::string> closed;  // the reasons, one per onClosed
  std::vector<std::int64_t> written;

  void onConnectIndication(const std::shared_ptr<Session>& session, const cmip::ConnectIndication& ind) override {
    ++connect_indications;
    if (answer == Answer::kAccept) {
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

}  // namespace
}  // namespace npac::npacd
