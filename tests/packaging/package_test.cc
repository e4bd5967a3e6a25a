// The Debian package (cmake/NpacPackaging.cmake): cpack builds it from this build tree
// into a scratch directory, `dpkg -x` extracts it into a scratch root (nothing is
// installed on the machine), and the extracted npacd answers --version, starts on its
// shipped configuration with a temporary --db and binds its ports. The manual pages, the
// unit, the configuration and the maintainer scripts are in the package.
#include "service_fixture.h"

#include "npac/version.h"
#include "tests/support/test_paths.h"

using namespace service_test;

namespace {

// Builds the package once per test process into `dir`/out; the .deb's path.
fs::path buildPackage(const ScratchDir& dir) {
  const fs::path out = dir.path / "out";
  Run cpack = runCommand("cpack -G DEB --config " + npac::testing::binaryDir() + "/CPackConfig.cmake -B " + out.string() + " 2>&1");
  INFO(cpack.output);
  REQUIRE(cpack.exit_code == 0);
  for (const auto& entry : fs::directory_iterator(out)) {
    if (entry.path().extension() == ".deb") return entry.path();
  }
  FAIL("cpack wrote no .deb: " << cpack.output);
  return {};
}

}  // namespace

TEST_CASE("the Debian package extracts to an npacd that answers --version and binds its ports") {
  ScratchDir dir;
  const fs::path deb = buildPackage(dir);
  CHECK_THAT(deb.filename().string(), Catch::StartsWith(std::string("npacd_") + npac::kVersion + "_"));

  // Its control fields: the name, and Depends from the libraries actually linked.
  Run fields = runCommand("dpkg-deb -f " + deb.string() + " Package Depends 2>&1");
  REQUIRE(fields.exit_code == 0);
  CHECK_THAT(fields.output, Catch::Contains("Package: npacd") && Catch::Contains("libsqlite3") &&
                                Catch::Contains("libssl3") && Catch::Contains("libsystemd0"));
  Run control = runCommand("dpkg-deb -I " + deb.string() + " 2>&1");
  CHECK_THAT(control.output, Catch::Contains("postinst") && Catch::Contains("prerm") && Catch::Contains("conffiles"));

  const fs::path root = dir.path / "root";
  REQUIRE(runCommand("dpkg -x " + deb.string() + " " + root.string() + " 2>&1").exit_code == 0);
  for (const char* program : {"npacd", "npacctl", "npac-soa-sim", "npac-pdu", "npac-tunables-doc"}) {
    INFO(program);
    const fs::path exe = root / "usr/bin" / program;
    REQUIRE(fs::exists(exe));
    Run version = runCommand(exe.string() + " --version 2>&1");
    CHECK(version.exit_code == 0);
    // The packaged program is the one this tree built (its revision line, not a stale one).
    CHECK(version.output == runCommand(binDir() + "/" + program + " --version 2>&1").output);
    CHECK_THAT(version.output, Catch::StartsWith(std::string(program) + " " + npac::kVersion + " (git "));
    const fs::path page = root / "usr/share/man/man1" / (std::string(program) + ".1.gz");
    REQUIRE(fs::exists(page));
    CHECK_THAT(runCommand("zcat " + page.string()).output, Catch::Contains(".TH") && Catch::Contains("\\-\\-version"));  // roff escapes each -
  }
  CHECK(fs::exists(root / "usr/lib/systemd/system/npacd.service"));
  REQUIRE(fs::exists(root / "etc/npacd/npacd.toml"));

  ServiceProcess npacd(dir.path, {{"--config", (root / "etc/npacd/npacd.toml").string(), "--db",
                                   (dir.path / "npacd.db").string(), "--listen", "127.0.0.1:0", "--api",
                                   "127.0.0.1:0"},
                                  {}, false, {}, (root / "usr/bin/npacd").string()});
  REQUIRE(npacd.waitListening());
  CHECK(accepts(npacd.port()));
  CHECK(accepts(npacd.apiPort()));
  CHECK(npacd.terminate() == 0);
}

TEST_CASE("the package's postinst is a POSIX shell script that makes the user and the state directory") {
  const std::string postinst = slurp(npac::testing::sourceDir() + "/packaging/debian/postinst");
  CHECK_THAT(postinst, Catch::StartsWith("#!/bin/sh") && Catch::Contains("getent passwd npacd") &&
                           Catch::Contains("install -d -o npacd -g npacd -m 0750 /var/lib/npacd"));
  for (const char* script : {"postinst", "prerm"}) {
    INFO(script);
    CHECK(runCommand(std::string("sh -n " + npac::testing::sourceDir() + "/packaging/debian/") + script + " 2>&1").exit_code == 0);
  }
}
