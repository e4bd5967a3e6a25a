// npacd --config FILE (npac/npacd/config_file.h): the file sets what the command line does
// not, the command line wins, every refusal names the file, the line and the key and
// exits 2 before anything is created, only a regular file of bounded size is read, and the
// shipped packaging/npacd.toml is accepted and lists every option.
#include "service_fixture.h"

#include <sys/stat.h>

#include "npac/npacd/config_file.h"
#include "tests/support/test_paths.h"

using namespace service_test;

namespace {

struct Outcome {
  int exit_code = -1;
  std::string output;
  fs::path file;
};

// Starts npacd on `config` (written to npacd.toml in `dir`) with `extra` on the command
// line, expecting it to refuse: the exit code and what it printed.
Outcome startOn(const ScratchDir& dir, const std::string& config, std::vector<std::string> extra = {}) {
  Outcome o;
  o.file = dir.path / "npacd.toml";
  writeFile(o.file, config);
  std::vector<std::string> args{"--config", o.file.string(), "--db", (dir.path / "npacd.db").string(),
                                "--listen", "127.0.0.1:0", "--api", "127.0.0.1:0"};
  args.insert(args.end(), extra.begin(), extra.end());
  ServiceProcess npacd(dir.path, {args, {}, false, {}, {}});
  o.exit_code = npacd.wait(10s);
  o.output = npacd.output();
  return o;
}

// The durability named in the start-up line "…, database PATH (full)".
std::string startedDurability(ServiceProcess& npacd) {
  REQUIRE(npacd.waitListening());
  std::smatch m;
  const std::string log = npacd.log();
  REQUIRE(std::regex_search(log, m, std::regex(R"(database .* \((full|normal)\))")));
  return m[1];
}

}  // namespace

TEST_CASE("a setting in the configuration file applies when the command line leaves it out") {
  ScratchDir dir;
  writeFile(dir.path / "npacd.toml", "# test\ndurability = \"normal\"\n");
  ServiceProcess npacd(dir.path, {{"--config", (dir.path / "npacd.toml").string(), "--db",
                                   (dir.path / "npacd.db").string(), "--listen", "127.0.0.1:0", "--api",
                                   "127.0.0.1:0"},
                                  {}, false, {}, {}});
  CHECK(startedDurability(npacd) == "normal");
  CHECK(npacd.terminate() == 0);
}

TEST_CASE("the command line wins over the configuration file") {
  ScratchDir dir;
  writeFile(dir.path / "npacd.toml", "durability = \"normal\"\nlisten = \"127.0.0.1:1\"\n");
  ServiceProcess npacd(dir.path, {{"--config", (dir.path / "npacd.toml").string(), "--durability", "full",
                                   "--db", (dir.path / "npacd.db").string(), "--listen", "127.0.0.1:0",
                                   "--api", "127.0.0.1:0"},
                                  {}, false, {}, {}});
  CHECK(startedDurability(npacd) == "full");
  CHECK(npacd.port() != 1);
  CHECK(npacd.terminate() == 0);
}

TEST_CASE("an unknown key in the configuration file is refused with the file and the line and the key") {
  ScratchDir dir;
  Outcome o = startOn(dir, "# comment\n\nlsten = \"0.0.0.0:102\"\n");
  CHECK(o.exit_code == 2);
  CHECK_THAT(o.output, Catch::Contains(o.file.string() + ":3: unknown key 'lsten'"));
  CHECK_FALSE(fs::exists(dir.path / "npacd.db"));  // refused before anything is opened
}

TEST_CASE("a configuration line that is not key = value is refused with its line") {
  ScratchDir dir;
  Outcome o = startOn(dir, "durability = \"full\"\ninit\n");
  CHECK(o.exit_code == 2);
  CHECK_THAT(o.output, Catch::Contains(o.file.string() + ":2: expected key = value, got 'init'"));
}

TEST_CASE("a string without its closing quote in the configuration file is refused with its line and key") {
  ScratchDir dir;
  Outcome o = startOn(dir, "durability = \"full\n");
  CHECK(o.exit_code == 2);
  CHECK_THAT(o.output, Catch::Contains(o.file.string() + ":1: key 'durability': the string has no closing quote"));
}

TEST_CASE("an unquoted string in the configuration file is refused as not TOML") {
  ScratchDir dir;
  Outcome o = startOn(dir, "listen = 127.0.0.1:0\n");
  CHECK(o.exit_code == 2);
  CHECK_THAT(o.output, Catch::Contains(o.file.string() + ":1: key 'listen' takes a quoted string, got 127.0.0.1:0"));
}

TEST_CASE("a value of the wrong type in the configuration file is refused with its line and key") {
  ScratchDir dir;
  Outcome number = startOn(dir, "log-max-size = \"big\"\n");
  CHECK(number.exit_code == 2);
  CHECK_THAT(number.output, Catch::Contains(":1: key 'log-max-size' takes an integer, got \"big\""));
  Outcome flag = startOn(dir, "\ninit = \"yes\"\n");
  CHECK(flag.exit_code == 2);
  CHECK_THAT(flag.output, Catch::Contains(":2: key 'init' takes true or false, got \"yes\""));
}

TEST_CASE("a section in the configuration file is refused with its line") {
  ScratchDir dir;
  Outcome o = startOn(dir, "[npacd]\ndurability = \"full\"\n");
  CHECK(o.exit_code == 2);
  CHECK_THAT(o.output, Catch::Contains(o.file.string() + ":1: sections are not used"));
}

TEST_CASE("a key set twice in the configuration file is refused with both lines") {
  ScratchDir dir;
  Outcome o = startOn(dir, "durability = \"full\"\n# again\ndurability = \"normal\"\n");
  CHECK(o.exit_code == 2);
  CHECK_THAT(o.output, Catch::Contains(o.file.string() + ":3: key 'durability' is set twice (first on line 1)"));
}

TEST_CASE("a refused value in the configuration file exits 2 naming the file and the line and the key and the option's reason") {
  ScratchDir dir;
  Outcome o = startOn(dir, "durability = \"fast\"\n");
  CHECK(o.exit_code == 2);
  CHECK_THAT(o.output, Catch::Contains(o.file.string() + ":1: key 'durability': must be full or normal, got 'fast'"));
  Outcome level = startOn(dir, "log-level = \"loud\"\n");
  CHECK(level.exit_code == 2);
  CHECK_THAT(level.output, Catch::Contains(level.file.string() + ":1: key 'log-level': must be one of trace, debug"));
}

TEST_CASE("a configuration file that does not exist is refused") {
  ScratchDir dir;
  ServiceProcess npacd(dir.path, {{"--config", (dir.path / "missing.toml").string(), "--db",
                                   (dir.path / "npacd.db").string()},
                                  {}, false, {}, {}});
  CHECK(npacd.wait() == 2);
  CHECK_THAT(npacd.output(), Catch::Contains("missing.toml"));
  CHECK_FALSE(fs::exists(dir.path / "npacd.db"));
}

TEST_CASE("the shipped default configuration is accepted by npacd") {
  ScratchDir dir;
  ServiceProcess npacd(dir.path, {{"--config", npac::testing::sourceDir() + "/packaging/npacd.toml", "--db",
                                   (dir.path / "npacd.db").string(), "--listen", "127.0.0.1:0", "--api",
                                   "127.0.0.1:0"},
                                  {}, false, {}, {}});
  REQUIRE(npacd.waitListening());
  CHECK(npacd.terminate() == 0);
}

TEST_CASE("the shipped configuration's commented defaults are accepted when every one is enabled") {
  ScratchDir dir;
  // "#key = value" lines are the built-in defaults: enable each one.
  std::istringstream shipped(slurp(npac::testing::sourceDir() + "/packaging/npacd.toml"));
  std::string line, enabled;
  int defaults = 0;
  const std::regex option_line(R"(^#([a-z][a-z0-9-]*) = (.*)$)");
  while (std::getline(shipped, line)) {
    std::smatch m;
    if (std::regex_match(line, m, option_line)) {
      line = line.substr(1);
      ++defaults;
    }
    enabled += line + "\n";
  }
  CHECK(defaults >= 8);
  writeFile(dir.path / "all.toml", enabled);
  ServiceProcess npacd(dir.path, {{"--config", (dir.path / "all.toml").string(), "--db",
                                   (dir.path / "npacd.db").string(), "--listen", "127.0.0.1:0", "--api",
                                   "127.0.0.1:0"},
                                  {}, false, {}, {}});
  INFO(npacd.output());
  REQUIRE(npacd.waitListening());
  CHECK(npacd.terminate() == 0);
}

TEST_CASE("the shipped default configuration lists every option of npacd --help") {
  Run help = runCommand(binDir() + "/npacd --help 2>&1");
  REQUIRE(help.exit_code == 0);
  const std::string shipped = slurp(npac::testing::sourceDir() + "/packaging/npacd.toml");
  const std::regex option(R"((^|\n)\s+(-\w, )?--([a-z][a-z0-9-]*))");
  int options = 0;
  for (std::sregex_iterator it(help.output.begin(), help.output.end(), option), end; it != end; ++it) {
    const std::string name = (*it)[3];
    if (name == "help" || name == "version" || name == "config") continue;
    ++options;
    INFO("option --" << name);
    CHECK(std::regex_search(shipped, std::regex("(^|\n)#?" + name + " = ")));
  }
  CHECK(options >= 8);
}

TEST_CASE("a FIFO as the configuration file is refused at once instead of waited on") {
  ScratchDir dir;
  const fs::path fifo = dir.path / "npacd.toml";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  ServiceProcess npacd(dir.path, {{"--config", fifo.string(), "--db", (dir.path / "npacd.db").string(), "--listen",
                                   "127.0.0.1:0", "--api", "127.0.0.1:0"},
                                  {}, false, {}, {}});
  CHECK(npacd.wait(10s) == 2);  // before: blocked opening it until a writer came, forever
  CHECK_THAT(npacd.output(), Catch::Contains("npacd: --config: " + fifo.string() +
                                             " is a FIFO: npacd reads its configuration from a regular file only"));
  CHECK_FALSE(fs::exists(dir.path / "npacd.db"));
}

TEST_CASE("a device as the configuration file is refused without reading it") {
  ScratchDir dir;
  // Bounded memory should /dev/zero ever be read again (it once was, until bad_alloc);
  // sanitizers reserve more address space than any such bound.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  const std::string bound;
#else
  const std::string bound = "ulimit -v 4194304; ";
#endif
  const std::string npacd_command = bound + "exec '" + binDir() + "/npacd' --config /dev/zero --db '" +
                                    (dir.path / "npacd.db").string() + "' --listen 127.0.0.1:0 --api 127.0.0.1:0";
  ServiceProcess npacd(dir.path, {{"-c", npacd_command}, {}, false, {}, "/bin/sh"});
  CHECK(npacd.wait(10s) == 2);
  CHECK_THAT(npacd.output(), Catch::Contains("npacd: --config: /dev/zero is a character device"));
  CHECK_FALSE(fs::exists(dir.path / "npacd.db"));
}

TEST_CASE("a configuration file larger than 1 MiB is refused") {
  ScratchDir dir;
  std::string big;
  while (big.size() <= npac::npacd::kMaxConfigFileBytes) big += "# " + std::string(98, 'x') + "\n";
  Outcome o = startOn(dir, big);
  CHECK(o.exit_code == 2);
  CHECK_THAT(o.output, Catch::Contains(o.file.string() + " has " + std::to_string(big.size()) +
                                       " bytes: a configuration file has at most 1048576 bytes"));
  CHECK_FALSE(fs::exists(dir.path / "npacd.db"));
}

TEST_CASE("an empty db in the configuration file is refused and leaves no lock file behind") {
  ScratchDir dir;
  writeFile(dir.path / "npacd.toml", "db = \"\"\n");
  // npacd runs in the scratch directory: an empty path once made it create ./.lock there.
  ServiceProcess npacd(dir.path, {{"-c", "cd '" + dir.path.string() + "' && exec '" + binDir() +
                                             "/npacd' --config npacd.toml --listen 127.0.0.1:0 --api 127.0.0.1:0"},
                                  {}, false, {}, "/bin/sh"});
  CHECK(npacd.wait(10s) == 2);
  CHECK_THAT(npacd.output(),
             Catch::Contains("npacd: npacd.toml:1: key 'db': must name a SQLite file or a postgresql:// URL, not be empty"));
  CHECK_FALSE(fs::exists(dir.path / ".lock"));
}

TEST_CASE("a NUL inside db in the configuration file is refused and creates no file") {
  ScratchDir dir;
  const std::string db = (dir.path / "npacd.db").string();
  const fs::path config = dir.path / "npacd.toml";
  writeFile(config, "\ndb = \"" + db + std::string(1, '\0') + "/elsewhere.db\"\n");
  ServiceProcess npacd(dir.path, {{"--config", config.string(), "--listen", "127.0.0.1:0", "--api", "127.0.0.1:0"},
                                  {}, false, {}, {}});
  CHECK(npacd.wait(10s) == 2);
  CHECK_THAT(npacd.output(), Catch::Contains(config.string() + ":2: a control character (0x00)"));
  CHECK_FALSE(fs::exists(db));  // before: the path cut short at the NUL was opened
  CHECK_FALSE(fs::exists(db + ".lock"));
}

TEST_CASE("a string escape in the configuration file reaches the option decoded") {
  ScratchDir dir;
  writeFile(dir.path / "npacd.toml",
            "db = \"" + (dir.path / "a \\\"quoted\\\" back\\\\slash \\u00e9.db").string() + "\"\n");
  ServiceProcess npacd(dir.path, {{"--config", (dir.path / "npacd.toml").string(), "--listen", "127.0.0.1:0", "--api",
                                   "127.0.0.1:0"},
                                  {}, false, {}, {}});
  INFO(npacd.output());
  REQUIRE(npacd.waitListening());
  CHECK(fs::exists(dir.path / "a \"quoted\" back\\slash \xC3\xA9.db"));  // before: named with the escapes as typed
  CHECK(npacd.terminate() == 0);
}

TEST_CASE("a connection limit of -1 in the configuration file is refused with the file and the line and the key") {
  ScratchDir dir;
  Outcome o = startOn(dir, "durability = \"full\"\napi-max-connections = -1\n");
  CHECK(o.exit_code == 2);  // before: npacd started with no connection limit at all
  CHECK_THAT(o.output, Catch::Contains(o.file.string() +
                                       ":2: key 'api-max-connections': must be an integer from 1 to 65536, got '-1'"));
  CHECK_FALSE(fs::exists(dir.path / "npacd.db"));
  Outcome huge = startOn(dir, "api-max-per-token = 99999999999999999999999\n");
  CHECK(huge.exit_code == 2);
  CHECK_THAT(huge.output, Catch::Contains(":1: key 'api-max-per-token': must be an integer from 1 to 65536"));
}

TEST_CASE("an integer with a doubled underscore in the configuration file is refused with the file and the line and the key") {
  ScratchDir dir;
  Outcome o = startOn(dir, "api-max-per-client = 1__2\n");
  CHECK(o.exit_code == 2);
  CHECK_THAT(o.output, Catch::Contains(o.file.string() + ":1: key 'api-max-per-client' takes an integer, got 1__2"));
}
