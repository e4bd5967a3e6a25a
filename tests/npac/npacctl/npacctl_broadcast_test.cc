// `npacctl broadcast` as a child process ($NPAC_BIN/npacctl) against the admin API in this
// process over a real SQLite file and a real QueueWriter: the rows it reports are the
// committed ones, and a refusal is the API's error with exit 1.
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>

#include <catch2/catch.hpp>

#include "db/statement.h"
#include "tests/npac/npacd/api/admin_api_fixture.h"
#include "tests/support/program_run.h"

namespace npac::npacd {
namespace {

using npac::testing::ProgramRun;
using npac::testing::runNpacctl;

using namespace testing;

const char* kMessage =
    " --function lsms-data-download --class 1.3.6.1.4.1.103.7.0.0.1.3"
    " --instance '{\"dn\":[[{\"id\":\"2.5.4.3\",\"value\":\"13044e504143\"}]]}'"
    " --type 1.3.6.1.4.1.103.7.0.0.5.1 --info 0400";

// Providers 0001 soa, 0002 and 0003 lsms, and a core whose submissions go to a real writer.
struct CtlFixture : QueuedApiFixture {
  CtlFixture() : QueuedApiFixture({{"0001", "soa"}, {"0002", "lsms"}, {"0003", "lsms"}}) {}
  std::string api() const { return " --api " + f.apiAddress() + " --token-file " + f.tokenFile(); }
  // "<id> <spid>" of every outbound row, by id.
  std::vector<std::string> rows() {
    auto connection = f.openConnection();
    auto query = connection->prepare("SELECT id, spid FROM outbound_queue ORDER BY id");
    REQUIRE(query.isOk());
    std::vector<std::string> out;
    for (;;) {
      auto row = query->step();
      REQUIRE(row.isOk());
      if (!*row) return out;
      out.push_back(std::to_string(query->columnInt64(0)) + " " + query->columnText(1));
    }
  }
};

}  // namespace

TEST_CASE("npacctl broadcast --to all prints each provider's committed id") {
  CtlFixture c;
  ProgramRun run = runNpacctl(std::string("broadcast --to all") + kMessage + c.api());
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  CHECK_THAT(run.output, Catch::Contains("accepted for 2 providers"));
  const std::vector<std::string> rows = c.rows();
  REQUIRE(rows.size() == 2);
  for (const std::string& row : rows) {
    const std::string id = row.substr(0, row.find(' ')), spid = row.substr(row.find(' ') + 1);
    CHECK_THAT(run.output, Catch::Matches("(.|\\n)*" + spid + " +" + id + " +no(.|\\n)*"));
  }
}

TEST_CASE("npacctl broadcast --to a list naming an unknown provider exits 1 with the API's error") {
  CtlFixture c;
  ProgramRun run = runNpacctl(std::string("broadcast --to 0002,0009") + kMessage + c.api());
  INFO(run.output);
  CHECK(run.exit_code == 1);
  CHECK_THAT(run.output, Catch::Contains("provider_not_found") && Catch::Contains("0009"));
  CHECK(c.rows().empty());
}

}  // namespace npac::npacd
