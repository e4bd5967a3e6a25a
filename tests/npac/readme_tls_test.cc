// README.md's TLS lines, run as written: the npacd flags and the npacctl command are read
// out of README.md (so this test breaks when the README changes), then npacd is started
// with those flags on a database in a fresh directory holding api.crt and api.key (a
// certificate for 127.0.0.1 made by the test), and the npacctl line is run from that
// directory, where it finds the operator token npacd wrote as the README says. Only what a
// reader must substitute is substituted: HOST, and the address and port (loopback and an
// ephemeral port, so the test never meets another npacd or leaves the machine).
#include <sys/wait.h>

#include <cstdio>
#include <regex>

#include "tests/npac/npacd/npacd_fixture.h"
#include "tests/npac/npacd/api/http_server_fixture.h"
#include "tests/support/test_paths.h"

using namespace npacd_test;
using npac::npacd::testing::TestCertificate;

namespace {

// The text of the first `code span` of README.md that opens with `start` (a code span
// found by its opening words rather than by pairing backticks, which the ``` fences of
// the README's code blocks would throw off).
std::string readmeSpan(const std::string& start) {
  const std::string readme = slurp(fs::path(npac::testing::sourceDir()) / "README.md");
  REQUIRE_FALSE(readme.empty());
  const std::size_t at = readme.find("`" + start);
  if (at == std::string::npos) FAIL("README.md has no code span opening with '" << start << "'");
  const std::size_t end = readme.find('`', at + 1);
  REQUIRE(end != std::string::npos);
  return readme.substr(at + 1, end - at - 1);
}

std::vector<std::string> words(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> out;
  for (std::string word; in >> word;) out.push_back(word);
  return out;
}

std::string replaced(std::string text, const std::string& what, const std::string& with) {
  const std::size_t at = text.find(what);
  REQUIRE(at != std::string::npos);
  return text.replace(at, what.size(), with);
}

// fork + chdir + exec, output to `log`.
pid_t spawnIn(const fs::path& dir, const std::vector<std::string>& argv, const fs::path& log) {
  pid_t pid = fork();
  if (pid == 0) {
    if (::chdir(dir.c_str()) != 0) _exit(126);
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

}  // namespace

TEST_CASE("README.md's TLS lines work as written: npacd's flags and the npacctl command") {
  // "`--api 0.0.0.0:10180 --api-cert api.crt --api-key api.key`" and
  // "`npacctl --api https://HOST:10180 --ca-file api.crt sp list`"
  const std::string npacd_flags = readmeSpan("--api 0.0.0.0:10180 --api-cert");  // may wrap a line
  const std::string npacctl_line = readmeSpan("npacctl --api https://");
  REQUIRE(npacd_flags.find("--api-key") != std::string::npos);
  INFO("npacd " << npacd_flags);
  INFO(npacctl_line);

  TestCertificate certificate;  // a certificate for IP 127.0.0.1, and its key
  const fs::path dir = certificate.dir / "site";
  fs::create_directories(dir);
  fs::copy_file(certificate.cert, dir / "api.crt");
  fs::copy_file(certificate.key, dir / "api.key");

  std::vector<std::string> argv{binDir() + "/npacd", "--db", "npacd.db", "--listen", "127.0.0.1:0"};
  for (const std::string& word : words(replaced(npacd_flags, "0.0.0.0:10180", "127.0.0.1:0"))) argv.push_back(word);
  const fs::path log = dir / "npacd.log";
  const pid_t npacd = spawnIn(dir, argv, log);
  const std::regex ready(R"(admin API on 127\.0\.0\.1:(\d+) \(HTTPS\))");
  std::smatch m;
  std::string text;
  eventually([&] { return std::regex_search(text = slurp(log), m, ready); }, 10s);
  INFO(text);
  if (!std::regex_search(text, m, ready)) {
    kill(npacd, SIGKILL);
    waitpid(npacd, nullptr, 0);
    FAIL("npacd did not start with README.md's TLS flags");
  }
  const std::string port = m[1];

  // The README's command, run from the directory npacd writes npacd.db.token in.
  std::string command = replaced(npacctl_line, "HOST:10180", "127.0.0.1:" + port);
  command = binDir() + "/npacctl" + command.substr(std::string("npacctl").size());
  FILE* pipe = popen(("cd " + dir.string() + " && " + command + " 2>&1").c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::string output;
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, pipe)) > 0;) output.append(buf, n);
  const int status = pclose(pipe);
  INFO(command);
  INFO(output);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK_THAT(output, Catch::Contains("SPID"));  // sp list's table header: npacd answered over TLS

  kill(npacd, SIGTERM);
  CHECK(waitFor(npacd, 10s) == 0);
}
