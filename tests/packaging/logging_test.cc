// npacd's logs (npac/npacd/logging.h): a rotating --log-file, --log-format json (one
// object per line), and the level changed at run time through PUT /v1/log-level, audited.
#include "service_fixture.h"

#include <sys/stat.h>

#include <spdlog/details/log_msg.h>

#include "npac/npacd/logging.h"

using namespace service_test;

namespace {

std::vector<std::string> linesOf(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) lines.push_back(line);
  }
  return lines;
}

ServiceProcess::Options onDb(const ScratchDir& dir, std::vector<std::string> extra) {
  ServiceProcess::Options o;
  o.args = {"--db", (dir.path / "npacd.db").string(), "--listen", "127.0.0.1:0", "--api", "127.0.0.1:0",
            "--durability", "normal"};
  o.args.insert(o.args.end(), extra.begin(), extra.end());
  return o;
}

}  // namespace

TEST_CASE("npacd writes its log to --log-file instead of stdout") {
  ScratchDir dir;
  ServiceProcess::Options o = onDb(dir, {"--log-file", (dir.path / "npacd.log").string()});
  o.log_file = dir.path / "npacd.log";
  ServiceProcess npacd(dir.path, o);
  REQUIRE(npacd.waitListening());
  CHECK(npacd.terminate() == 0);
  CHECK_THAT(slurp(dir.path / "npacd.log"), Catch::Contains("npacd stopped"));
  CHECK_THAT(npacd.output(), !Catch::Contains("listening for associations"));
}

TEST_CASE("the log file rotates at --log-max-size and keeps --log-max-files") {
  ScratchDir dir;
  const fs::path log = dir.path / "npacd.log";
  ServiceProcess::Options o = onDb(dir, {"--log-file", log.string(), "--log-max-size", "2000",
                                         "--log-max-files", "2", "--log-level", "debug"});
  o.log_file = log;
  ServiceProcess npacd(dir.path, o);
  REQUIRE(npacd.waitListening());
  // Each admin API request is one debug line: enough of them fill several files.
  for (int i = 0; i < 100; ++i) {
    boost::asio::io_context io;
    boost::beast::tcp_stream stream(io);
    stream.expires_after(10s);
    stream.connect({boost::asio::ip::make_address("127.0.0.1"), npacd.apiPort()});
    http::request<http::string_body> request{http::verb::get, "/v1/log-level?n=" + std::to_string(i), 11};
    request.set(http::field::host, "127.0.0.1");
    http::write(stream, request);
    boost::beast::flat_buffer buffer;
    http::response<http::string_body> response;
    http::read(stream, buffer, response);
  }
  CHECK(eventually([&] { return fs::exists(dir.path / "npacd.2.log"); }, 10s));
  CHECK(fs::exists(dir.path / "npacd.1.log"));
  CHECK_FALSE(fs::exists(dir.path / "npacd.3.log"));  // only --log-max-files rotated files
  for (const fs::path& file : {log, dir.path / "npacd.1.log", dir.path / "npacd.2.log"}) {
    INFO(file);
    CHECK(fs::file_size(file) <= 2000);
  }
  CHECK_THAT(slurp(dir.path / "npacd.1.log"), Catch::Contains("admin API: GET /v1/log-level?n="));
  CHECK(npacd.terminate() == 0);
}

TEST_CASE("npacd with --log-format json writes one JSON object per line with time level logger and message") {
  ScratchDir dir;
  ServiceProcess npacd(dir.path, onDb(dir, {"--log-format", "json"}));
  REQUIRE(npacd.waitListening());
  CHECK(npacd.terminate() == 0);
  const auto lines = linesOf(npacd.output());
  REQUIRE(lines.size() >= 3);
  bool saw_listening = false;
  for (const std::string& line : lines) {
    INFO(line);
    const Json entry = Json::parse(line, nullptr, false);
    REQUIRE(entry.is_object());
    CHECK(entry.size() == 4);
    CHECK(std::regex_match(entry.value("time", ""), std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)")));
    // A first start also warns that it made the NPAC key.
    CHECK_THAT(entry.value("level", ""), Catch::Equals("info") || Catch::Equals("warn"));
    CHECK(entry.value("logger", "") == "npacd");
    saw_listening |= entry.value("message", "").find("listening for associations") != std::string::npos;
  }
  CHECK(saw_listening);
}

TEST_CASE("a JSON log line escapes quotes and control characters and replaces bytes that are not UTF-8") {
  npac::npacd::JsonLogFormatter formatter;
  const std::string payload = "say \"hi\"\n\ttab \\ \x01 bad \xff end";
  spdlog::details::log_msg msg(spdlog::source_loc{}, "npacd", spdlog::level::warn,
                               spdlog::string_view_t(payload.data(), payload.size()));
  spdlog::memory_buf_t out;
  formatter.format(msg, out);
  const std::string line(out.data(), out.size());
  REQUIRE(line.back() == '\n');
  CHECK(line.find('\n') == line.size() - 1);  // one line, whatever the message holds
  const Json entry = Json::parse(line, nullptr, false);
  REQUIRE(entry.is_object());
  CHECK(entry["message"] == "say \"hi\"\n\ttab \\ \x01 bad \xEF\xBF\xBD end");
  CHECK(entry["level"] == "warn");
}

TEST_CASE("GET /v1/log-level answers the level npacd started with") {
  NpacdProcess npacd({{}, {"--log-level", "debug"}});
  Reply r = npacd.call(http::verb::get, "/v1/log-level");
  CHECK(r.status == 200);
  CHECK(r.body["level"] == "debug");
}

TEST_CASE("PUT /v1/log-level debug makes debug lines appear at once") {
  NpacdProcess npacd;
  REQUIRE(npacd.call(http::verb::get, "/v1/tunables").status == 200);
  CHECK_THAT(npacd.log(), !Catch::Contains("admin API: GET /v1/tunables"));  // info: no debug lines
  Reply put = npacd.call(http::verb::put, "/v1/log-level", Json{{"level", "debug"}});
  REQUIRE(put.status == 200);
  CHECK(put.body["level"] == "debug");
  CHECK(put.body["previous"] == "info");
  REQUIRE(npacd.call(http::verb::get, "/v1/tunables").status == 200);
  CHECK(eventually([&] { return npacd.log().find("admin API: GET /v1/tunables") != std::string::npos; }, 10s));
  CHECK(npacd.call(http::verb::get, "/v1/log-level").body["level"] == "debug");
}

TEST_CASE("a log level change is written to the audit log with its actor and both levels") {
  NpacdProcess npacd;
  REQUIRE(npacd.call(http::verb::put, "/v1/log-level", Json{{"level", "error"}}).status == 200);
  Reply audit = npacd.call(http::verb::get, "/v1/audit-log?limit=5");
  REQUIRE(audit.status == 200);
  REQUIRE_FALSE(audit.body["entries"].empty());
  const Json& newest = audit.body["entries"][0];
  CHECK(newest["action"] == "log-level.set");
  CHECK_FALSE(newest["actor"].get<std::string>().empty());  // who: the caller (its token's name)
  CHECK(newest["old_value"] == "info");
  CHECK(newest["new_value"] == "error");
}

TEST_CASE("PUT /v1/log-level with an unknown level or no level is 400 and changes nothing") {
  NpacdProcess npacd;
  Reply bad = npacd.call(http::verb::put, "/v1/log-level", Json{{"level", "loud"}});
  CHECK(bad.status == 400);
  CHECK(bad.body["error"]["code"] == "invalid_log_level");
  CHECK_THAT(bad.body["error"]["message"].get<std::string>(), Catch::Contains("'loud' is not one of trace"));
  CHECK(npacd.call(http::verb::put, "/v1/log-level", Json{{"level", 5}}).status == 400);
  CHECK(npacd.call(http::verb::put, "/v1/log-level", Json::object()).status == 400);
  CHECK(npacd.call(http::verb::get, "/v1/log-level").body["level"] == "info");
  Reply audit = npacd.call(http::verb::get, "/v1/audit-log?limit=5");
  for (const Json& e : audit.body["entries"]) CHECK(e["action"] != "log-level.set");
}

TEST_CASE("npacctl log-level prints the level and changes it and says why it refuses a bad one") {
  NpacdProcess npacd;
  const std::string npacctl = binDir() + "/npacctl log-level --api 127.0.0.1:" + std::to_string(npacd.apiPort()) +
                              " --token-file " + npacd.tokenFile().string();
  Run set = runCommand(npacctl + " debug 2>&1");
  CHECK(set.exit_code == 0);
  CHECK(set.output == "log level info -> debug\n");
  Run get = runCommand(npacctl + " 2>&1");
  CHECK(get.exit_code == 0);
  CHECK(get.output == "debug\n");
  Run bad = runCommand(npacctl + " loud 2>&1");
  CHECK(bad.exit_code == 1);
  CHECK_THAT(bad.output, Catch::Contains("invalid_log_level"));
}

namespace {

// The process umask set for one test (npacd, its child, inherits it).
class ScopedUmask {
 public:
  explicit ScopedUmask(mode_t mask) : previous_(::umask(mask)) {}
  ~ScopedUmask() { ::umask(previous_); }
  ScopedUmask(const ScopedUmask&) = delete;
  ScopedUmask& operator=(const ScopedUmask&) = delete;

 private:
  mode_t previous_;
};

mode_t modeOf(const fs::path& file) {
  struct stat st {};
  REQUIRE(::stat(file.c_str(), &st) == 0);
  return st.st_mode & 07777;
}

}  // namespace

TEST_CASE("a log file npacd creates is owner-only even under umask 000") {
  ScratchDir dir;
  const fs::path log = dir.path / "logs" / "npacd.log";  // its directory made too
  ScopedUmask open_umask(0);
  ServiceProcess::Options o = onDb(dir, {"--log-file", log.string()});
  o.log_file = log;
  ServiceProcess npacd(dir.path, o);
  REQUIRE(npacd.waitListening());
  CHECK(modeOf(log) == 0600);  // before: 0666, where any user could append a forged line
  CHECK(npacd.terminate() == 0);
}

TEST_CASE("the log file a rotation creates is owner-only even under umask 000") {
  ScratchDir dir;
  const fs::path log = dir.path / "npacd.log";
  ScopedUmask open_umask(0);
  ServiceProcess::Options o =
      onDb(dir, {"--log-file", log.string(), "--log-max-size", "2000", "--log-max-files", "1", "--log-level", "debug"});
  o.log_file = log;
  ServiceProcess npacd(dir.path, o);
  REQUIRE(npacd.waitListening());
  // Each admin API request is one debug line: enough of them rotate the file.
  for (int i = 0; i < 60 && !fs::exists(dir.path / "npacd.1.log"); ++i) {
    boost::asio::io_context io;
    boost::beast::tcp_stream stream(io);
    stream.expires_after(10s);
    stream.connect({boost::asio::ip::make_address("127.0.0.1"), npacd.apiPort()});
    http::request<http::string_body> request{http::verb::get, "/v1/log-level?n=" + std::to_string(i), 11};
    request.set(http::field::host, "127.0.0.1");
    http::write(stream, request);
    boost::beast::flat_buffer buffer;
    http::response<http::string_body> response;
    http::read(stream, buffer, response);
  }
  REQUIRE(eventually([&] { return fs::exists(dir.path / "npacd.1.log") && fs::exists(log); }, 10s));
  CHECK(modeOf(log) == 0600);  // created anew by the rotation
  CHECK(modeOf(dir.path / "npacd.1.log") == 0600);
  CHECK(npacd.terminate() == 0);
}

TEST_CASE("npacd warns when its existing log file can be written by other users") {
  ScratchDir dir;
  const fs::path log = dir.path / "npacd.log";
  writeFile(log, "");
  fs::permissions(log, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_write |
                           fs::perms::others_read | fs::perms::others_write);
  ServiceProcess::Options o = onDb(dir, {"--log-file", log.string()});
  o.log_file = log;
  ServiceProcess npacd(dir.path, o);
  REQUIRE(npacd.waitListening());
  CHECK_THAT(slurp(log), Catch::Contains("--log-file " + log.string() +
                                         " can be written by other users (mode 0626): anyone may add lines to it"));
  CHECK(modeOf(log) == 0626);  // an existing file keeps its mode
  CHECK(npacd.terminate() == 0);
}
