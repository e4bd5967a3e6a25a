// npacd's admin API transport end to end: the real npacd binary with --api-cert/--api-key
// (a certificate this test makes), refusals at start (exit 2, naming the file and the
// reason), npacctl over https with and without --ca-file and against the wrong kind of
// port, and the connection limits keeping a second client served while one client holds
// hundreds of idle connections.
#include <sys/wait.h>

#include <cstdio>

#include "tests/npac/npacd/npacd_fixture.h"
#include "tests/npac/npacd/api/http_server_fixture.h"

using namespace npacd_test;
using npac::npacd::testing::Connection;
using npac::npacd::testing::TestCertificate;

namespace {

using npac::testing::ProgramRun;
using npac::testing::runNpacctl;

// npacd started with `args` on a fresh database: its exit code within 10 s and its output.
ProgramRun npacdRefusal(const std::vector<std::string>& args) {
  const fs::path dir = fs::temp_directory_path() / label("npacd-tls-start-", getpid());
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path log = dir / "npacd.log";
  std::vector<std::string> argv{binDir() + "/npacd", "--db", (dir / "npacd.db").string(), "--listen",
                                "127.0.0.1:0"};
  argv.insert(argv.end(), args.begin(), args.end());
  ProgramRun run;
  run.exit_code = waitFor(spawn(argv, log), 10s);
  run.output = slurp(log);
  fs::remove_all(dir);
  return run;
}

std::vector<std::string> tlsArgs(const TestCertificate& certificate) {
  return {"--api-cert", certificate.cert.string(), "--api-key", certificate.key.string()};
}

std::string https(const NpacdProcess& npacd) { return "https://127.0.0.1:" + std::to_string(npacd.apiPort()); }

}  // namespace

TEST_CASE("npacd refuses --api-cert without --api-key and says which is missing") {
  TestCertificate certificate;
  ProgramRun run = npacdRefusal({"--api", "127.0.0.1:0", "--api-cert", certificate.cert.string()});
  CHECK(run.exit_code == 2);
  CHECK(run.output.find("npacd: --api-cert needs --api-key") != std::string::npos);
}

TEST_CASE("npacd refuses an unreadable --api-key naming the file and the reason") {
  TestCertificate certificate;
  const std::string directory = certificate.dir.string();  // unreadable as a file, even for root
  ProgramRun run = npacdRefusal({"--api", "127.0.0.1:0", "--api-cert", certificate.cert.string(), "--api-key", directory});
  CHECK(run.exit_code == 2);
  CHECK(run.output.find("--api-key " + directory + ": Is a directory") != std::string::npos);
}

TEST_CASE("npacd refuses a key that does not match its certificate") {
  TestCertificate certificate;
  ProgramRun run = npacdRefusal({"--api", "127.0.0.1:0", "--api-cert", certificate.cert.string(), "--api-key",
                          certificate.other_key.string()});
  CHECK(run.exit_code == 2);
  CHECK(run.output.find("does not match the certificate in " + certificate.cert.string()) != std::string::npos);
}

TEST_CASE("npacd serves a non-loopback admin API address over TLS") {
  TestCertificate certificate;
  const fs::path log = certificate.dir / "npacd.log";
  std::vector<std::string> argv{binDir() + "/npacd", "--db", (certificate.dir / "npacd.db").string(), "--listen",
                                "127.0.0.1:0", "--api", "0.0.0.0:0"};
  for (const std::string& arg : tlsArgs(certificate)) argv.push_back(arg);
  pid_t pid = spawn(argv, log);
  const std::regex ready(R"(admin API on 0\.0\.0\.0:(\d+) \(HTTPS\))");
  std::smatch m;
  std::string text;
  eventually([&] { return std::regex_search(text = slurp(log), m, ready); }, 10s);
  INFO(text);
  REQUIRE(std::regex_search(text, m, ready));
  auto outcome = npac::npacd::testing::httpsGet(static_cast<std::uint16_t>(std::stoi(m[1])), "/v1/providers",
                                                certificate.cert);
  INFO(outcome.failure);
  CHECK(outcome.reply);  // answered (401 without a token) over TLS
  kill(pid, SIGTERM);
  CHECK(waitFor(pid, 10s) == 0);
}

TEST_CASE("npacctl over https with --ca-file reaches a TLS npacd") {
  TestCertificate certificate;
  NpacdProcess npacd(NpacdProcess::Options{{}, tlsArgs(certificate)});
  ProgramRun run = runNpacctl("sp list --api " + https(npacd) + " --ca-file " + certificate.cert.string() + " --token-file " +
                    npacd.tokenFile().string());
  INFO(run.output);
  CHECK(run.exit_code == 0);
}

TEST_CASE("npacctl over https without --ca-file fails saying npacd's certificate is not trusted") {
  TestCertificate certificate;
  NpacdProcess npacd(NpacdProcess::Options{{}, tlsArgs(certificate)});
  ProgramRun run = runNpacctl("sp list --api " + https(npacd) + " --token-file " + npacd.tokenFile().string());
  INFO(run.output);
  CHECK(run.exit_code == 3);
  CHECK(run.output.find("is not trusted") != std::string::npos);
  CHECK(run.output.find("--ca-file") != std::string::npos);
}

TEST_CASE("npacctl in plain HTTP against a TLS npacd fails and points to https") {
  TestCertificate certificate;
  NpacdProcess npacd(NpacdProcess::Options{{}, tlsArgs(certificate)});
  ProgramRun run = runNpacctl("sp list --api 127.0.0.1:" + std::to_string(npacd.apiPort()) + " --token-file " +
                    npacd.tokenFile().string());
  INFO(run.output);
  CHECK(run.exit_code == 3);
  CHECK(run.output.find("use --api https://127.0.0.1:") != std::string::npos);
  // npacd keeps serving HTTPS after the plain request.
  ProgramRun after = runNpacctl("sp list --api " + https(npacd) + " --ca-file " + certificate.cert.string() +
                      " --token-file " + npacd.tokenFile().string());
  CHECK(after.exit_code == 0);
}

TEST_CASE("npacctl over https against a plain HTTP npacd says it serves plain HTTP") {
  TestCertificate certificate;
  NpacdProcess npacd;
  ProgramRun run = runNpacctl("sp list --api https://127.0.0.1:" + std::to_string(npacd.apiPort()) + " --ca-file " +
                    certificate.cert.string() + " --token-file " + npacd.tokenFile().string());
  INFO(run.output);
  CHECK(run.exit_code == 3);
  CHECK(run.output.find("did not answer in TLS") != std::string::npos);
}

TEST_CASE("One client holding 300 idle connections to npacd's admin API does not lock out another client") {
  NpacdProcess npacd;
  std::vector<std::unique_ptr<Connection>> held;
  for (int i = 0; i < 300; ++i) held.push_back(std::make_unique<Connection>("127.0.0.2", npacd.apiPort()));
  Connection other("127.0.0.3", npacd.apiPort());
  std::optional<npac::npacd::testing::TestReply> reply = other.get("/v1/providers", "Bearer " + npacd.token());
  REQUIRE(reply);
  CHECK(reply->status == 200);
}
