// npacd end to end when its storage is in trouble: a database file that exists but holds
// no database (refused unless --init), a bind while the disk is full (a transient storage
// refusal, not a replay), an unwritable WAL (one log line per state change, naming the
// file and the cause), a taken admin API port, a bind without / with an undecodable NPAC
// access control or with another application context, a COTP ER instead of a CR, and a
// file with a damaged page (refused at start). The real binary, real SQLite files, a real
// tmpfs, real loopback TCP.
//
// Mounting a tmpfs and setting the immutable attribute need root (CI runs the tests as
// root); where either is refused the case says so with WARN and checks nothing more —
// it never passes as if it had run.
#include "tests/support/immutable_file.h"
#include "tests/npac/npacd/npacd_fixture.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/mount.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "cmip/acse.h"
#include "cmip/cmip.h"
#include "cmip/npac_bind_refusal.h"
#include "cmip/oids.h"
#include "cmip/upper_layers.h"
#include "db/database.h"
#include "tests/npac/npacd/small_disk.h"

using namespace npacd_test;

namespace {

std::size_t occurrences(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// A fresh directory for one case, removed with everything in it.
class CaseDir {
 public:
  explicit CaseDir(const char* name) {
    static std::atomic<int> counter{0};
    path_ = fs::temp_directory_path() / label(name, getpid()).append("-").append(std::to_string(counter++));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~CaseDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// Sets the immutable attribute on `path` (even root's writes then fail with EPERM);
// cleared on destruction.
class ImmutableFile {
 public:
  explicit ImmutableFile(fs::path path) : path_(std::move(path)) { on_ = set(true); }
  ~ImmutableFile() { clear(); }
  bool on() const { return on_; }
  void clear() {
    if (on_) set(false);
    on_ = false;
  }

 private:
  bool set(bool on) {
    return npac::testing::setImmutable(path_, on);
  }
  fs::path path_;
  bool on_ = false;
};

// Runs npacd expected to refuse to start; its exit code, and its output in *output.
int runRefused(const CaseDir& dir, std::vector<std::string> args, std::string* output) {
  const fs::path log = dir.path() / "npacd.log";
  fs::remove(log);
  std::vector<std::string> argv{binDir() + "/npacd"};
  argv.insert(argv.end(), args.begin(), args.end());
  const int code = waitFor(spawn(argv, log), 10s);
  *output = slurp(log);
  return code;
}

// An OSI initiator on a blocking loopback socket: sends one AARQ, returns the AARE.
std::optional<npac::cmip::Aare> bindWith(std::uint16_t port, const npac::cmip::Aarq& aarq) {
  using namespace npac::cmip;
  namespace asio = boost::asio;
  asio::io_context io;
  asio::ip::tcp::socket socket(io);
  socket.connect({asio::ip::make_address("127.0.0.1"), port});
  UpperLayersConfig config;
  config.role = UpperLayersRole::kInitiator;
  const std::vector<std::uint8_t> selector{0, 0, 0, 1};
  config.calling_tsap = config.called_tsap = selector;
  config.calling_ssel = config.called_ssel = selector;
  config.calling_psel = config.called_psel = selector;
  UpperLayers upper(config);
  std::vector<std::uint8_t> out;
  REQUIRE(upper.connect(aarq, out).isOk());
  asio::write(socket, asio::buffer(out));
  std::vector<std::uint8_t> buffer(16 * 1024);
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (std::chrono::steady_clock::now() < deadline) {
    boost::system::error_code ec;
    const std::size_t n = socket.read_some(asio::buffer(buffer), ec);
    if (ec) return std::nullopt;
    std::vector<UpperLayersEvent> events;
    out.clear();
    upper.receive(Bytes(buffer.begin(), buffer.begin() + static_cast<std::ptrdiff_t>(n)), events, out);
    if (!out.empty()) asio::write(socket, asio::buffer(out), ec);
    for (auto& event : events) {
      if (auto* confirm = std::get_if<ConnectConfirm>(&event)) return confirm->aare;
    }
  }
  return std::nullopt;
}

// An AARQ for systems management whose user information is `info` (none if nullopt).
npac::cmip::Aarq aarqCarrying(std::optional<std::vector<std::uint8_t>> info) {
  using namespace npac::cmip;
  Aarq aarq;
  aarq.protocolVersion = BitString::withBits(1);
  aarq.protocolVersion->setBit(0);
  aarq.applicationContext = oids::kSystemsManagementContext;
  if (info) {
    External ext;
    ext.indirect_reference = 3;  // the CMIP presentation context (docs/PROTOCOL.md)
    ext.data = std::move(*info);
    aarq.userInformation.push_back(std::move(ext));
  }
  return aarq;
}

std::vector<std::uint8_t> cmipUserInfoWithout() {
  npac::cmip::CmipUserInfo info;
  info.protocolVersion = npac::cmip::BitString::withBits(2);
  info.protocolVersion->setBit(npac::cmip::kCmipVersion2Bit);
  return npac::cmip::encodeCmipUserInfo(info);
}

}  // namespace

TEST_CASE("npacd refuses an existing empty database file with exit 2 naming the file and writes nothing") {
  CaseDir dir("npacd-empty-db-");
  const fs::path db = dir.path() / "npacd.db";
  { std::ofstream touch(db); }
  std::string output;
  CHECK(runRefused(dir, {"--db", db.string(), "--listen", "127.0.0.1:0", "--api", "127.0.0.1:0"}, &output) == 2);
  INFO(output);
  CHECK(output.find("npacd: cannot open the database: database not initialised") != std::string::npos);
  CHECK(output.find("[file " + db.string() + "]") != std::string::npos);
  CHECK(output.find("0 bytes") != std::string::npos);
  CHECK(output.find("--init") != std::string::npos);
  CHECK(fs::file_size(db) == 0);
  CHECK_FALSE(fs::exists(db.string() + "-wal"));
}

TEST_CASE("npacd --init initialises an existing empty database file and serves it") {
  const CaseDir dir("npacd-init-db-");
  const fs::path db = dir.path() / "npacd.db";
  { std::ofstream touch(db); }
  NpacdProcess npacd(NpacdProcess::Options{db, {"--init"}});
  CHECK(npacd.call(http::verb::post, "/v1/providers",
                   Json{{"spid", "0001"}, {"name", "Provider 0001"}, {"system_type", "soa"}})
            .status == 201);
  CHECK(fs::file_size(db) > 0);
}

TEST_CASE("npacd --init still refuses a file holding another application's data") {
  CaseDir dir("npacd-init-foreign-");
  const fs::path db = dir.path() / "npacd.db";
  {
    std::ofstream out(db, std::ios::binary);
    out << std::string(8192, 'x');
  }
  std::string output;
  CHECK(runRefused(dir, {"--db", db.string(), "--init", "--listen", "127.0.0.1:0", "--api", "127.0.0.1:0"},
                   &output) == 2);
  INFO(output);
  CHECK(output.find("npacd: cannot open the database: database corrupt") != std::string::npos);
  CHECK(fs::file_size(db) == 8192);
}

TEST_CASE("npacd names --api and no database when the admin API port is taken") {
  namespace asio = boost::asio;
  asio::io_context io;
  asio::ip::tcp::acceptor taken(io, {asio::ip::make_address("127.0.0.1"), 0});
  const std::uint16_t port = taken.local_endpoint().port();
  CaseDir dir("npacd-api-taken-");
  std::string output;
  CHECK(runRefused(dir, {"--db", (dir.path() / "npacd.db").string(), "--listen", "127.0.0.1:0", "--api",
                         "127.0.0.1:" + std::to_string(port)},
                   &output) == 2);
  INFO(output);
  CHECK(output.find("npacd: the admin API cannot start: admin API cannot listen on 127.0.0.1:" +
                    std::to_string(port)) != std::string::npos);
  CHECK(output.find("choose another --api host:port") != std::string::npos);
  CHECK(output.find("database") == std::string::npos);
  CHECK(output.find("--api-listen") == std::string::npos);
}

TEST_CASE("a second npacd on the association port of a running one fails before creating its database, key or token") {
  NpacdProcess first;
  CaseDir dir("npacd-port-busy-");
  const fs::path db = dir.path() / "npacd.db";
  std::string output;
  CHECK(runRefused(dir, {"--db", db.string(), "--listen", "127.0.0.1:" + std::to_string(first.port()), "--api",
                         "127.0.0.1:0"},
                   &output) == 2);
  INFO(output);
  CHECK(output.find("npacd: associations: cannot listen on 127.0.0.1:" + std::to_string(first.port())) !=
        std::string::npos);
  CHECK(output.find("choose another --listen host:port") != std::string::npos);
  CHECK(output.find("nothing was created or changed") != std::string::npos);
  CHECK_FALSE(fs::exists(db));
  CHECK_FALSE(fs::exists(db.string() + ".token"));
  CHECK(output.find("NPAC key") == std::string::npos);
}

TEST_CASE("a bind while the disk is full is refused as storage-unavailable rejected-transient and logged as a storage failure") {
  SmallDisk disk(4 << 20);
  if (!disk.mounted()) {
    WARN("SKIPPED: cannot mount a tmpfs here (" << disk.error() << "): the full-disk bind is not exercised");
    return;
  }
  NpacdProcess npacd(NpacdProcess::Options{disk.file("npacd.db"), {}});
  const fs::path key = npacd.provision("0001");
  const fs::path npac_keys = npacd.exportNpacKeys();
  REQUIRE(disk.fill());
  auto refused = npacd.sim("0001", key, {"--from", "127.0.0.2", "--npac-key", npac_keys.string(), "--duration", "5s"});
  CHECK(refused->wait() == 5);
  INFO("sim: " << slurp(refused->log) << "\nnpacd: " << npacd.log());
  REQUIRE(refused->result.is_object());
  const Json& bind = refused->result["associations"][0]["bind"];
  CHECK(bind["outcome"] == "rejected");
  CHECK(bind["result"] == 2);  // rejected-transient (X.227 §7.1.5.4)
  CHECK(bind["diagnostic_source"] == "acse-service-user");
  CHECK(bind["diagnostic"] == 1);  // no-reason-given
  REQUIRE(bind.contains("refusal"));
  CHECK(bind["refusal"]["reason"] == "storage-unavailable");
  const std::string log = npacd.log();
  CHECK(log.find("(storage-unavailable)") != std::string::npos);
  CHECK(log.find("sequence-replayed") == std::string::npos);
  CHECK(log.find("storage failing: database full") != std::string::npos);
  CHECK(log.find(npacd.db().string()) != std::string::npos);

  // Room again: the same provider binds (its sequence number was never recorded).
  disk.makeRoom();
  // --expect 0: its goal is met once bound, so it releases and ends at once.
  auto bound = npacd.sim("0001", key, {"--from", "127.0.0.2", "--npac-key", npac_keys.string(), "--expect", "0",
                                       "--duration", "20s"});
  CHECK(bound->wait() == 0);
  CHECK(bound->result["associations"][0]["bind"]["accepted"] == true);
  CHECK(npacd.log().find("storage writable again: " + npacd.db().string()) != std::string::npos);
}

TEST_CASE("an unwritable WAL is logged once naming the file and the cause however many requests fail") {
  NpacdProcess npacd;
  REQUIRE(npacd.call(http::verb::post, "/v1/providers",
                     Json{{"spid", "0001"}, {"name", "Provider 0001"}, {"system_type", "soa"}})
              .status == 201);
  const std::string wal = npacd.db().string() + "-wal";
  REQUIRE(fs::exists(wal));
  ImmutableFile immutable(wal);
  if (!immutable.on()) {
    WARN("SKIPPED: cannot set the immutable attribute on " << wal
                                                         << " (not root, or the filesystem lacks it)");
    return;
  }
  int failed = 0;
  std::string first_error;
  for (int i = 0; i < 100; ++i) {
    Reply r = npacd.call(http::verb::post, "/v1/providers",
                         Json{{"spid", label("1", 100 + i).substr(0, 4)}, {"name", "P"}, {"system_type", "soa"}});
    if (r.status == 500) ++failed;
    if (first_error.empty() && r.status == 500) first_error = r.body.dump();
  }
  CHECK(failed == 100);
  INFO("first answer: " << first_error);
  const std::string log = npacd.log();
  INFO(log);
  CHECK(occurrences(log, "storage failing") == 1);
  CHECK(log.find("storage failing: database read-only") != std::string::npos);
  CHECK(log.find("errno 1 EPERM") != std::string::npos);
  CHECK(log.find(wal + " has the immutable or append-only attribute (lsattr " + wal) != std::string::npos);
  CHECK(log.find("dmesg") == std::string::npos);

  immutable.clear();
  CHECK(npacd.call(http::verb::post, "/v1/providers",
                   Json{{"spid", "0002"}, {"name", "Provider 0002"}, {"system_type", "soa"}})
            .status == 201);
  eventually([&] { return npacd.log().find("storage writable again") != std::string::npos; }, 5s);
  CHECK(occurrences(npacd.log(), "storage writable again: " + npacd.db().string()) == 1);
}

TEST_CASE("a bind without NPAC access control is refused with authentication-required") {
  NpacdProcess npacd;
  for (const auto& info : {std::optional<std::vector<std::uint8_t>>{}, std::optional(cmipUserInfoWithout())}) {
    INFO((info ? "CMIPUserInfo without accessControl" : "no user information"));
    auto aare = bindWith(npacd.port(), aarqCarrying(info));
    REQUIRE(aare.has_value());
    CHECK(aare->result == npac::cmip::AssociateResult::kRejectedPermanent);
    CHECK(aare->diagnostic.source == npac::cmip::DiagnosticSource::kServiceUser);
    CHECK(aare->diagnostic.value == npac::cmip::user_diagnostic::kAuthenticationRequired);
    auto refusal = npac::cmip::bindRefusalFrom(*aare);
    REQUIRE(refusal.isOk());
    REQUIRE(refusal->has_value());
    CHECK((*refusal)->reason == "no-access-control");
  }
  CHECK(occurrences(npacd.log(), "(no-access-control)") == 2);
}

TEST_CASE("a bind whose NPAC access control does not decode is refused with authentication-failure") {
  NpacdProcess npacd;
  npac::cmip::CmipUserInfo info;
  info.protocolVersion = npac::cmip::BitString::withBits(2);
  info.protocolVersion->setBit(npac::cmip::kCmipVersion2Bit);
  npac::cmip::External garbage;
  garbage.direct_reference = npac::cmip::oids::kSystemsManagementContext;  // not the NPAC syntax
  garbage.data = {0x04, 0x01, 0x00};
  info.accessControl = garbage;
  auto aare = bindWith(npacd.port(), aarqCarrying(npac::cmip::encodeCmipUserInfo(info)));
  REQUIRE(aare.has_value());
  CHECK(aare->result == npac::cmip::AssociateResult::kRejectedPermanent);
  CHECK(aare->diagnostic.value == npac::cmip::user_diagnostic::kAuthenticationFailure);
  auto refusal = npac::cmip::bindRefusalFrom(*aare);
  REQUIRE(refusal.isOk());
  REQUIRE(refusal->has_value());
  CHECK((*refusal)->reason == "bad-access-control");
  CHECK(npacd.log().find("(bad-access-control)") != std::string::npos);
}

TEST_CASE("a bind naming another application context gets its AARE, a log line and an association-log row") {
  NpacdProcess npacd;
  npac::cmip::Aarq aarq = aarqCarrying(cmipUserInfoWithout());
  aarq.applicationContext = npac::cmip::Oid{{1, 3, 6, 1, 4, 1, 99999, 1}};
  auto aare = bindWith(npacd.port(), aarq);
  REQUIRE(aare.has_value());
  CHECK(aare->result == npac::cmip::AssociateResult::kRejectedPermanent);
  CHECK(aare->diagnostic.value == npac::cmip::user_diagnostic::kApplicationContextNameNotSupported);
  const std::string log = npacd.log();
  INFO(log);
  CHECK(log.find("bind rejected: SPID - NSAP") != std::string::npos);
  CHECK(log.find("the AARQ's application context 1.3.6.1.4.1.99999.1 is not systems-management (2.9.0.0.2) "
                 "(application-context-not-supported)") != std::string::npos);
  Reply events = npacd.call(http::verb::get, "/v1/association-log?limit=5");
  REQUIRE(events.status == 200);
  REQUIRE(events.body["events"].size() == 1);
  CHECK(events.body["events"][0]["event"] == "reject");
  CHECK(events.body["events"][0]["diagnostic"] == "application-context-not-supported");
}

TEST_CASE("a COTP ER sent instead of a CR closes the connection with a log line naming the peer and the cause") {
  NpacdProcess npacd;
  namespace asio = boost::asio;
  asio::io_context io;
  asio::ip::tcp::socket socket(io);
  socket.connect({asio::ip::make_address("127.0.0.1"), npacd.port()});
  // RFC 1006 TPKT (version 3, length 9) carrying an X.224 ER TPDU: LI 4, code 0x70,
  // DST-REF 0, reject cause 2 (invalid parameter code).
  const std::uint8_t er[] = {0x03, 0x00, 0x00, 0x09, 0x04, 0x70, 0x00, 0x00, 0x02};
  asio::write(socket, asio::buffer(er));
  std::uint8_t byte = 0;
  boost::system::error_code ec;
  socket.read_some(asio::buffer(&byte, 1), ec);  // npacd closes the connection
  CHECK(ec);
  eventually([&] { return npacd.log().find("ended by the peer before a bind") != std::string::npos; }, 5s);
  const std::string log = npacd.log();
  INFO(log);
  CHECK(log.find("connection from 127.0.0.1") != std::string::npos);
  CHECK(log.find("ended by the peer before a bind: ") != std::string::npos);
  CHECK(log.find("peer sent COTP ER, cause 2") != std::string::npos);
}

namespace {

// Overwrites the middle of one page of `table`'s b-tree (not its first page: the root
// stays readable) in the SQLite file at `db`, as a bad disk sector would.
void damageOnePage(const fs::path& db, const std::string& table) {
  std::int64_t page_size = 0, page = 0;
  {
    auto opened = npac::db::Database::open(db.string(), [] {
      npac::db::OpenOptions o;
      o.apply_schema = false;
      return o;
    }());
    REQUIRE(opened.isOk());
    page_size = (*opened)->pageSize().value();
    {
      auto pages = (*opened)->prepare("SELECT MAX(pageno) FROM dbstat WHERE name = ? AND pagetype = 'leaf'");
      REQUIRE(pages.isOk());
      pages->bindText(0, table);
      if (pages->step().value()) page = pages->columnInt64(0);
    }  // the statement is done before the checkpoint
    REQUIRE((*opened)->execute("PRAGMA wal_checkpoint(TRUNCATE)").isOk());
  }
  REQUIRE(page > 1);
  std::fstream file(db, std::ios::in | std::ios::out | std::ios::binary);
  file.seekp((page - 1) * page_size + 8);  // past the page header's first bytes
  const std::string garbage(static_cast<std::size_t>(page_size / 2), '\xA5');
  file.write(garbage.data(), static_cast<std::streamsize>(garbage.size()));
}

}  // namespace

TEST_CASE("npacd refuses at start a database file with one damaged page, and --check-db off starts anyway") {
  CaseDir dir("npacd-damaged-page-");
  const fs::path db = dir.path() / "npacd.db";
  {
    NpacdProcess npacd(NpacdProcess::Options{db, {}});
    for (int i = 0; i < 200; ++i) {  // pages of audit entries, a table npacd's start does not read
      REQUIRE(npacd.call(http::verb::post, "/v1/providers",
                         Json{{"spid", label("9", 1000 + i).substr(1)}, {"name", std::string(100, 'n')},
                              {"system_type", "soa"}})
                  .status == 201);
    }
    REQUIRE(npacd.stop() == 0);
  }
  damageOnePage(db, "audit_log");
  std::string output;
  CHECK(runRefused(dir, {"--db", db.string(), "--listen", "127.0.0.1:0", "--api", "127.0.0.1:0"}, &output) == 2);
  INFO(output);
  CHECK(output.find("npacd: the database " + db.string() + " is damaged (PRAGMA quick_check):") != std::string::npos);
  CHECK(output.find("restore the latest backup") != std::string::npos);
  CHECK(output.find("listening") == std::string::npos);
  // The operator's explicit choice: it starts and says it is ready, the damage found only
  // when a request reads the page — what every start did before the check.
  NpacdProcess anyway(NpacdProcess::Options{db, {"--check-db", "off"}});
  CHECK(anyway.call(http::verb::get, "/ready").status == 200);
  CHECK(anyway.call(http::verb::get, "/v1/audit-log?limit=10000").status == 500);
}
