// POST /v1/backup in-process (docs/API.md "Backup"): the admin API over a real SQLite file,
// a real HTTP client on loopback. The answer is the database as one commit left it, with
// the length, digest and schema version the client checks it by; the route takes no
// input, is the operator's alone, audited, one at a time, and leaves no copy behind.
#include <openssl/evp.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <limits>

#include "db/migrations.h"
#include "db/sqlite_backup.h"
#include "tests/npac/npacd/api/admin_api_fixture.h"
#include "tests/support/eventually.h"

namespace npac::npacd {
namespace {

using namespace testing;
using ::npac::testing::eventually;
namespace beast = boost::beast;

struct Backup {
  int status = 0;
  std::map<std::string, std::string> headers;
  std::string body;
  std::string header(const std::string& name) const {
    auto it = headers.find(name);
    return it == headers.end() ? "" : it->second;
  }
  json error() const { return json::parse(body, nullptr, false); }
};

// One POST /v1/backup (target may add a query) with `token`, read to its end.
Backup postBackup(const AdminApiFixture& f, const std::string& token, const std::string& body = "",
                  const std::string& target = "/v1/backup") {
  boost::asio::io_context io;
  beast::tcp_stream stream(io);
  stream.connect(boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), f.port));
  http::request<http::string_body> request{http::verb::post, target, 11};
  request.set(http::field::host, "127.0.0.1");
  request.set(http::field::authorization, "Bearer " + token);
  if (!body.empty()) {
    request.set(http::field::content_type, "application/json");
    request.body() = body;
  }
  request.prepare_payload();
  http::write(stream, request);
  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(std::numeric_limits<std::uint64_t>::max());  // not boost::none (Beast 1.74)
  stream.expires_after(std::chrono::seconds(60));
  http::read(stream, buffer, parser);
  Backup backup;
  backup.status = static_cast<int>(parser.get().result_int());
  for (const auto& field : parser.get()) backup.headers[std::string(field.name_string())] = std::string(field.value());
  backup.body = parser.get().body();
  return backup;
}

std::string sha256(const std::string& data) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int length = 0;
  EVP_Digest(data.data(), data.size(), digest.data(), &length, EVP_sha256(), nullptr);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < length; ++i) {
    out.push_back(kHex[digest[i] >> 4]);
    out.push_back(kHex[digest[i] & 0xf]);
  }
  return out;
}

// Fills the database with `megabytes` of incompressible rows: a backup of it outlasts the
// loopback socket buffers, so its stream is still open while a client holds it unread.
void fill(AdminApiFixture& f, int megabytes) {
  auto db = f.openConnection();
  REQUIRE(db->execute("CREATE TABLE filler(b BLOB)").isOk());
  REQUIRE(db->execute("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < " +
                      std::to_string(megabytes) + ") INSERT INTO filler SELECT randomblob(1048576) FROM n")
              .isOk());
}

// A backup asked for and held: its head read, its body left unread.
struct HeldBackup {
  boost::asio::io_context io;
  beast::tcp_stream stream{io};
  beast::flat_buffer buffer;
  http::response_parser<http::buffer_body> parser;
  HeldBackup(const AdminApiFixture& f, const std::string& token) {
    stream.connect(boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), f.port));
    http::request<http::string_body> request{http::verb::post, "/v1/backup", 11};
    request.set(http::field::host, "127.0.0.1");
    request.set(http::field::authorization, "Bearer " + token);
    request.prepare_payload();
    http::write(stream, request);
    stream.expires_after(std::chrono::seconds(60));
    http::read_header(stream, buffer, parser);
  }
  int status() const { return static_cast<int>(parser.get().result_int()); }
};

bool copyLeftBeside(const AdminApiFixture& f) { return std::filesystem::exists(f.path() + ".backup.tmp"); }

// npacd removes the copy once the stream has closed, which it learns a moment after the
// client has the last byte: polled, at most 10 s.
bool copyRemoved(const AdminApiFixture& f) {
  return eventually([&] { return !copyLeftBeside(f); }, std::chrono::seconds(10), std::chrono::milliseconds(10));
}

}  // namespace

TEST_CASE("A backup is the database as npacd holds it, with its length, digest and schema version") {
  AdminApiFixture f;
  REQUIRE(f.call(V::post, "/v1/providers", json{{"spid", "0001"}, {"name", "One"}, {"system_type", "soa"}}).status ==
          201);
  Backup backup = postBackup(f, f.token(AdminApiFixture::kDefaultTokenName));
  INFO(backup.body.substr(0, 300));
  REQUIRE(backup.status == 200);
  CHECK(backup.header("Content-Type") == "application/vnd.sqlite3");
  CHECK(backup.header("Cache-Control") == "no-store");
  CHECK(backup.header("X-Npac-Backup-Bytes") == std::to_string(backup.body.size()));
  CHECK(backup.header("X-Npac-Backup-Sha256") == sha256(backup.body));
  CHECK(backup.header("X-Npac-Backup-Schema-Version") == std::to_string(db::kCurrentSchemaVersion));
  const std::string file = f.dir() + "/received.db";
  std::ofstream(file, std::ios::binary) << backup.body;
  db::Result<db::BackupSummary> summary = db::inspectSqliteBackup(file);
  INFO(summary.status().toString());
  REQUIRE(summary.isOk());
  CHECK(summary->sound());
  CHECK(summary->providers == 1);
  CHECK(summary->tokens >= 1);     // the token digests travel with it
  CHECK(summary->npac_keys == 0);  // this fixture made none; npacd's first start does (npacd_backup_test)
  CHECK(copyRemoved(f));  // the copy beside the database is gone once sent
}

TEST_CASE("A backup takes no fields and no query parameters") {
  AdminApiFixture f;
  const std::string token = f.token(AdminApiFixture::kDefaultTokenName);
  Backup field = postBackup(f, token, R"({"file":"/tmp/x.db"})");
  CHECK(field.status == 400);
  CHECK(field.error()["error"]["code"] == "invalid_backup_request");
  CHECK_THAT(field.error()["error"]["message"].get<std::string>(), Catch::Contains("'file'"));
  Backup query = postBackup(f, token, "", "/v1/backup?tables=providers");
  CHECK(query.status == 400);
  CHECK(query.error()["error"]["code"] == "invalid_backup_request");
  CHECK_THAT(query.error()["error"]["message"].get<std::string>(), Catch::Contains("'tables'"));
  Backup not_json = postBackup(f, token, "{file");
  CHECK(not_json.status == 400);
  // "actor", ignored by every route (the token is the actor), is no reason to refuse.
  CHECK(postBackup(f, token, R"({"actor":"ops"})").status == 200);
  CHECK(f.call(V::get, "/v1/backup").status == 405);
}

TEST_CASE("Only an operator's token may take a backup: it holds the NPAC's keys and the token digests") {
  AdminApiFixture f;
  Backup reader = postBackup(f, f.token("viewer", db::TokenRole::kReader));
  CHECK(reader.status == 403);
  Backup application = postBackup(f, f.token("app", db::TokenRole::kApplication));
  CHECK(application.status == 403);
  CHECK(f.callWith(std::nullopt, V::post, "/v1/backup").status == 401);
  CHECK_FALSE(copyLeftBeside(f));
}

TEST_CASE("A backup is written to the audit log with the name of the token that took it") {
  AdminApiFixture f;
  REQUIRE(postBackup(f, f.token("night-shift")).status == 200);
  Reply log = f.call(V::get, "/v1/audit-log?limit=5");
  REQUIRE(log.status == 200);
  bool found = false;
  for (const json& e : log.body["entries"]) {
    if (e["action"] == "database.backup" && e["actor"] == "night-shift") found = true;
  }
  INFO(log.raw);
  CHECK(found);
}

TEST_CASE("A second backup while one is being sent is refused 429, and taken once the first client leaves") {
  AdminApiFixture f;
  fill(f, 48);
  const std::string token = f.token(AdminApiFixture::kDefaultTokenName);
  {
    HeldBackup first(f, token);
    REQUIRE(first.status() == 200);
    Backup second = postBackup(f, token);
    CHECK(second.status == 429);
    CHECK(second.error()["error"]["code"] == "backup_in_progress");
    CHECK(second.header("Retry-After") == "10");
  }  // the first client goes away with its body unread
  // Bounded: npacd notices the closed connection, ends that backup and frees the slot.
  Backup third;
  eventually(
      [&] {
        third = postBackup(f, token);
        return third.status != 429;
      },
      std::chrono::seconds(10), std::chrono::milliseconds(50));
  CHECK(third.status == 200);
  CHECK(third.header("X-Npac-Backup-Bytes") == std::to_string(third.body.size()));
  CHECK(copyRemoved(f));
}

TEST_CASE("A backup being sent when the API stops is cut short and its copy removed") {
  AdminApiFixture f;
  fill(f, 48);
  HeldBackup held(f, f.token(AdminApiFixture::kDefaultTokenName));
  REQUIRE(held.status() == 200);
  const std::uint64_t announced = std::stoull(std::string(held.parser.get()["X-Npac-Backup-Bytes"]));
  CHECK(copyLeftBeside(f));
  f.onApiThread([&] { f.api->stop(); });
  CHECK_FALSE(copyLeftBeside(f));
  // The client reads what was on its way, then the connection ends before the last chunk.
  std::vector<char> piece(1 << 16);
  std::uint64_t received = 0;
  beast::error_code ec;
  while (!held.parser.is_done()) {
    held.parser.get().body().data = piece.data();
    held.parser.get().body().size = piece.size();
    http::read(held.stream, held.buffer, held.parser, ec);
    if (ec == http::error::need_buffer) ec = {};
    if (ec) break;
    received += piece.size() - held.parser.get().body().size;
  }
  CHECK(ec);
  CHECK(received < announced);
}

}  // namespace npac::npacd
