// npacd end to end: admission refusals, nothing lost across kill -9 and association loss,
// garbage bytes and silent connections. The real binary, real SQLite, loopback TCP,
// providers played by npac-soa-sim.
#include "tests/npac/npacd/npacd_fixture.h"

#include <map>

#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>

#include "db/database.h"
#include "db/outbound_queue.h"

using namespace npacd_test;
namespace asio = boost::asio;

namespace {

std::size_t countIn(const fs::path& db_path, npac::db::MessageState state) {
  auto db = npac::db::Database::open(db_path.string());
  REQUIRE(db.isOk());
  auto n = npac::db::OutboundQueue(**db).count(state);
  REQUIRE(n.isOk());
  return *n;
}

bool waitUntilAcknowledged(const fs::path& db_path, std::size_t count, std::chrono::seconds limit) {
  return eventually([&] { return countIn(db_path, npac::db::MessageState::kAcknowledged) == count; }, limit, 50ms);
}

// The order of the tags a sim report received (info hex), first copies only.
std::vector<std::string> receivedOrder(const Json& report) {
  std::vector<std::string> order;
  for (const Json& r : report["received"]) {
    if (!r["retransmission"].get<bool>()) order.push_back(r["info"].get<std::string>());
  }
  return order;
}

}  // namespace

TEST_CASE("binds with an unknown SPID or a bad signature are refused with their diagnostic while another provider keeps working") {
  NpacdProcess npacd;
  auto good_key = npacd.provision("0001");
  auto other_key = npacd.provision("0002");
  auto working = npacd.sim("0001", good_key, {"--from", "127.0.0.2", "--expect", "20", "--duration", "15s"});
  REQUIRE(npacd.waitForAssociations(1));

  auto unknown = npacd.sim("9999", good_key, {"--from", "127.0.0.3", "--duration", "5s"});
  // 0002's bind signed with 0001's key: the signature does not verify with 0002's key.
  auto forged = npacd.sim("0002", good_key, {"--from", "127.0.0.4", "--duration", "5s"});
  CHECK(unknown->wait() == 5);
  CHECK(forged->wait() == 5);
  npacd.submit("0001", "w", 20);
  REQUIRE(working->wait() == 0);
  CHECK(working->result["totals"]["received"] == 20);

  const Json& unknown_bind = unknown->result["associations"][0]["bind"];
  CHECK(unknown_bind["outcome"] == "rejected");
  CHECK(unknown_bind["diagnostic_source"] == "acse-service-user");
  const Json& forged_bind = forged->result["associations"][0]["bind"];
  CHECK(forged_bind["outcome"] == "rejected");
  CHECK(forged_bind["diagnostic"] == 13);  // authentication-failure (X.227)
  const std::string log = npacd.log();
  CHECK(log.find("bind rejected: SPID 9999") != std::string::npos);
  CHECK(log.find("(unknown-spid)") != std::string::npos);
  CHECK(log.find("bind rejected: SPID 0002") != std::string::npos);
  CHECK(log.find("(signature-invalid)") != std::string::npos);
  (void)other_key;
}

TEST_CASE("messages queued while no association is up survive kill -9 and a normal bind delivers them in order") {
  NpacdProcess npacd;
  auto key = npacd.provision("0001");
  // 10 go out on an association that never answers, then npacd is killed with them in
  // flight; 40 more wait in the queue with no association at all.
  auto silent = npacd.sim("0001", key, {"--from", "127.0.0.2", "--silent", "1", "--duration", "20s"});
  REQUIRE(npacd.waitForAssociations(1));
  npacd.submit("0001", "k", 10);
  eventually([&] { return countIn(npacd.dir() / "npacd.db", npac::db::MessageState::kSent) >= 10; }, 10s);
  REQUIRE(countIn(npacd.dir() / "npacd.db", npac::db::MessageState::kSent) == 10);
  npacd.stopHard();
  silent.reset();  // SIGKILL the silent provider too
  npacd.start();
  REQUIRE(npacd.waitForAssociations(0));
  std::vector<std::int64_t> ids = npacd.submit("0001", "q", 40);
  CHECK(countIn(npacd.dir() / "npacd.db", npac::db::MessageState::kQueued) == 50);

  npacd.stopHard();
  npacd.start();
  auto normal = npacd.sim("0001", key, {"--from", "127.0.0.3", "--expect", "50", "--duration", "15s"});
  const int normal_exit = normal->wait();
  INFO(npacd.log());
  REQUIRE(normal_exit == 0);
  std::vector<std::string> expected;
  for (int i = 0; i < 10; ++i) expected.push_back(NpacdProcess::tagHex(label("k", i)));
  for (int i = 0; i < 40; ++i) expected.push_back(NpacdProcess::tagHex(label("q", i)));
  CHECK(receivedOrder(normal->result) == expected);
  CHECK(waitUntilAcknowledged(npacd.dir() / "npacd.db", 50, 10s));
}

TEST_CASE("losing one association mid-stream leaves every PDU acknowledged, repeated only as marked retransmissions") {
  NpacdProcess npacd;
  auto key = npacd.provision("0001", /*srr=*/true);
  constexpr int kMessages = 10000;
  // Association 2 drops after its 1,500th PDU: about the 4,500th of the stream.
  constexpr int kDropAfter = 1500;
  auto sim = npacd.sim("0001", key, {"--from", "127.0.0.2", "--from", "127.0.0.3", "--from", "127.0.0.4",
                                     "--drop-after", "2=" + std::to_string(kDropAfter), "--keep-going", "--duration", "90s"});
  REQUIRE(npacd.waitForAssociations(3));
  std::vector<std::int64_t> ids = npacd.submit("0001", "d", kMessages);
  CHECK(waitUntilAcknowledged(npacd.dir() / "npacd.db", kMessages, 75s));
  kill(sim->pid, SIGTERM);
  sim->wait(10s);
  const Json& report = sim->result;
  REQUIRE(report.is_object());
  std::map<std::string, int> copies;
  for (const Json& r : report["received"]) ++copies[r["info"].get<std::string>()];
  // Every PDU arrived; one that arrived more than once was in flight on the lost
  // association and its queue row is marked as a retransmission. (Its copies carry one
  // invoke id, derived from its queue id: checked by the kill -9 case below.)
  int repeated = 0;
  for (int i = 0; i < kMessages; ++i) {
    auto it = copies.find(NpacdProcess::tagHex(label("d", i)));
    REQUIRE(it != copies.end());
    if (it->second > 1) {
      ++repeated;
      const Reply row = npacd.call(http::verb::get, "/v1/messages/" + std::to_string(ids[i]));
      CHECK(row.body["retransmission"] == true);
    }
  }
  // Only what was in flight on the dropped association can repeat: at most its window.
  CHECK(repeated <= 100);
  CHECK(report["associations"][1]["received"] == kDropAfter);
  CHECK(npacd.log().find("aborted") != std::string::npos);
}

TEST_CASE("garbage bytes abort only their own connection and a silent connection is dropped at bind_timeout") {
  NpacdProcess npacd;
  REQUIRE(npacd.call(http::verb::put, "/v1/tunables/bind_timeout", Json{{"value", "1s"}}).status == 200);
  auto key = npacd.provision("0001");
  auto sim = npacd.sim("0001", key, {"--from", "127.0.0.2", "--expect", "3", "--duration", "15s"});
  REQUIRE(npacd.waitForAssociations(1));

  asio::io_context io;
  const asio::ip::tcp::endpoint npac(asio::ip::make_address("127.0.0.1"), npacd.port());
  asio::ip::tcp::socket garbage(io), silent(io);
  garbage.connect(npac);
  silent.connect(npac);
  const std::string junk = "GET / HTTP/1.1\r\n\r\n";
  asio::write(garbage, asio::buffer(junk));
  // Both are closed by npacd: read until EOF (bounded by the socket timeout below).
  for (auto* s : {&garbage, &silent}) {
    timeval tv{5, 0};
    setsockopt(s->native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    char buf[256];
    boost::system::error_code ec;
    while (!ec) s->read_some(asio::buffer(buf), ec);
    CHECK(ec == asio::error::eof);
  }
  CHECK(npacd.waitForAssociations(1));
  npacd.submit("0001", "g", 3);
  REQUIRE(sim->wait() == 0);
  CHECK(npacd.log().find("not bound within bind_timeout") != std::string::npos);
}

TEST_CASE("a recovery-mode bind gets exactly the missed messages on its recovery request, then normal delivery after recovery complete") {
  NpacdProcess npacd;
  auto key = npacd.provision("0001");
  npacd.submit("0001", "missed", 5);
  auto sim = npacd.sim("0001", key, {"--from", "127.0.0.2", "--recovery", "--recover-all",
                                     "--keep-running", "--duration", "20s"});
  eventually([&] { return npacd.log().find("recovery complete") != std::string::npos; }, 10s);
  REQUIRE(npacd.log().find("recovery request answered with 5 message(s)") != std::string::npos);
  REQUIRE(npacd.log().find("recovery complete") != std::string::npos);
  npacd.submit("0001", "after", 3);
  CHECK(waitUntilAcknowledged(npacd.dir() / "npacd.db", 8, 10s));
  kill(sim->pid, SIGTERM);
  sim->wait(10s);
  const Json& report = sim->result;
  REQUIRE(report.is_object());
  CHECK(report["recovery"]["message_count"] == 5);
  CHECK(report["recovery"]["received_during"] == 5);
  CHECK(report["recovery"]["completed"] == true);
  REQUIRE(report["received"].size() == 8);
  for (int i = 0; i < 8; ++i) {
    const Json& r = report["received"][i];
    CHECK(r["during_recovery"] == (i < 5));
    CHECK(r["info"] == NpacdProcess::tagHex(i < 5 ? label("missed", i) : label("after", i - 5)));
  }
}

TEST_CASE("a segmented PDU beyond the size limit aborts only its own connection and the log names the cap") {
  NpacdProcess npacd;
  auto key = npacd.provision("0001");
  auto sim = npacd.sim("0001", key, {"--from", "127.0.0.2", "--expect", "3", "--duration", "15s"});
  REQUIRE(npacd.waitForAssociations(1));

  asio::io_context io;
  asio::ip::tcp::socket huge(io);
  huge.connect({asio::ip::make_address("127.0.0.1"), npacd.port()});
  timeval tv{5, 0};
  setsockopt(huge.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  // RFC 1006 TPKT + X.224 class 0 CR: TPDU size 2048 (C0 0B), calling and called TSAP 1.
  const std::vector<std::uint8_t> cr{0x03, 0x00, 0x00, 0x16, 0x11, 0xE0, 0x00, 0x00, 0x00, 0x01, 0x00,
                                     0xC0, 0x01, 0x0B, 0xC1, 0x02, 0x00, 0x01, 0xC2, 0x02, 0x00, 0x01};
  asio::write(huge, asio::buffer(cr));
  std::uint8_t header[4];
  asio::read(huge, asio::buffer(header));
  REQUIRE(header[0] == 0x03);
  std::vector<std::uint8_t> cc((header[2] << 8 | header[3]) - 4);
  asio::read(huge, asio::buffer(cc));
  REQUIRE(cc[1] == 0xD0);  // CC
  // DT TPDUs without end-of-TSDU, 2,000 octets each: 40 of them is 80,000 octets, past the
  // 64 KiB cap on a PDU (cmip::DecodeLimits). npacd closes before the last ones; a write
  // failing then is expected.
  std::vector<std::uint8_t> dt(4 + 3 + 2000, 0x30);
  dt[0] = 0x03;
  dt[1] = 0x00;
  dt[2] = static_cast<std::uint8_t>(dt.size() >> 8);
  dt[3] = static_cast<std::uint8_t>(dt.size() & 0xFF);
  dt[4] = 0x02;  // LI
  dt[5] = 0xF0;  // DT
  dt[6] = 0x00;  // TPDU-NR 0, EOT not set
  boost::system::error_code ec;
  for (int i = 0; i < 40 && !ec; ++i) asio::write(huge, asio::buffer(dt), ec);
  char buf[256];
  ec = {};
  while (!ec) huge.read_some(asio::buffer(buf), ec);
  CHECK((ec == asio::error::eof || ec == asio::error::connection_reset));
  CHECK(npacd.log().find("exceeds the cap of") != std::string::npos);
  // The provider's association was not touched.
  CHECK(npacd.waitForAssociations(1));
  npacd.submit("0001", "still", 3);
  REQUIRE(sim->wait() == 0);
}

TEST_CASE("every association has TCP keepalive on as NANC 301 asks") {
  NpacdProcess npacd;
  auto key = npacd.provision("0001", /*srr=*/true);
  auto sim = npacd.sim("0001", key, {"--from", "127.0.0.2", "--from", "127.0.0.3", "--keep-running",
                                     "--duration", "10s"});
  REQUIRE(npacd.waitForAssociations(2));
  // Another program with a connection on the same port number on another address (a
  // shared machine): it must not be counted as one of npacd's.
  asio::io_context io;
  asio::ip::tcp::acceptor other(io, asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.9"), npacd.port()));
  asio::ip::tcp::socket other_client(io), other_server(io);
  other_client.connect(other.local_endpoint());
  other.accept(other_server);
  // npacd's side of each connection (its listening address and port), with timers. ss
  // shows one timer per socket: right after a write it is the retransmission timer, so
  // look again (bounded) until both idle connections show their keepalive timer.
  // Filtered by npacd's address and port: a port number alone also matches other
  // programs' sockets on other addresses.
  const std::string command = "ss -tnoH state established '( src 127.0.0.1:" + std::to_string(npacd.port()) +
                              " )' > " + (npacd.dir() / "ss.txt").string();
  std::string ss;
  std::size_t lines = 0, keepalive = 0;
  eventually(
      [&] {
        REQUIRE(std::system(command.c_str()) == 0);
        ss = slurp(npacd.dir() / "ss.txt");
        lines = keepalive = 0;
        for (std::size_t at = 0; (at = ss.find('\n', at)) != std::string::npos; ++at) ++lines;
        for (std::size_t at = 0; (at = ss.find("timer:(keepalive,", at)) != std::string::npos; ++at) ++keepalive;
        return keepalive >= 2;
      },
      5s, 100ms);
  INFO(ss);
  CHECK(lines == 2);
  CHECK(keepalive == 2);
  kill(sim->pid, SIGTERM);
  sim->wait(10s);
}

// The provider answers after 30 ms and takes 4 requests at a time, so every kill lands
// with requests in flight and PDUs being written. A message the provider receives twice
// must have its queue row flagged a retransmission (sent again after a `sent` state that
// survived the kill) and must carry the same invoke id both times: a copy that left
// before its row read `sent` would come back unflagged, as a fresh message.
TEST_CASE("kill -9 while a slow provider answers never sends a message again unflagged, nor under a new invoke id") {
  NpacdProcess npacd(NpacdProcess::Options{{}, {}, "full"});
  auto key = npacd.provision("0001");
  REQUIRE(npacd.call(http::verb::put, "/v1/tunables/congestion_window", Json{{"value", "4"}}).status == 200);
  constexpr int kMessages = 400;
  const std::vector<std::int64_t> ids = npacd.submit("0001", "s", kMessages);
  std::vector<Json> reports;
  // A fixed schedule (ms of delivery before each kill -9): reproducible, and every kill
  // mid-stream (about 130 messages a second leave).
  for (int ms : {450, 700, 300, 850}) {
    auto sim = npacd.sim("0001", key, {"--from", "127.0.0.2", "--delay", "1=30ms", "--duration", "20s"});
    REQUIRE(npacd.waitForAssociations(1));
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    npacd.stopHard();
    sim->wait(20s);
    REQUIRE(sim->result.is_object());
    reports.push_back(sim->result);
    npacd.start();
  }
  auto last = npacd.sim("0001", key, {"--from", "127.0.0.2", "--delay", "1=30ms", "--duration", "40s"});
  CHECK(waitUntilAcknowledged(npacd.dir() / "npacd.db", kMessages, 35s));
  kill(last->pid, SIGTERM);
  last->wait(10s);
  REQUIRE(last->result.is_object());
  reports.push_back(last->result);

  std::map<std::string, std::vector<std::int64_t>> invoke_ids;  // by tag, every copy received
  for (const Json& report : reports) {
    for (const Json& r : report["received"]) invoke_ids[r["info"].get<std::string>()].push_back(r["invoke_id"].get<std::int64_t>());
  }
  int repeated = 0;
  for (int i = 0; i < kMessages; ++i) {
    auto it = invoke_ids.find(NpacdProcess::tagHex(label("s", i)));
    REQUIRE(it != invoke_ids.end());
    if (it->second.size() < 2) continue;
    ++repeated;
    INFO("message " << ids[i] << " received " << it->second.size() << " times");
    const Reply row = npacd.call(http::verb::get, "/v1/messages/" + std::to_string(ids[i]));
    CHECK(row.body["retransmission"] == true);
    CHECK(row.body["attempts"].get<int>() >= 2);
    for (std::int64_t id : it->second) CHECK(id == it->second.front());
  }
  CHECK(repeated > 0);  // the kills did land mid-stream
}
