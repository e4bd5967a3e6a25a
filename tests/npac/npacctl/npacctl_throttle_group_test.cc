// `npacctl throttle-group` end to end: a real npacd (npacd_fixture.h) on a temp SQLite
// file and npacctl as a child process — a group added, listed, shown with what npacd knows
// live, changed and removed; each refusal exits 1 with npacd's own message; --json prints
// the API's answer; every change is in the audit log.
#include "tests/npac/npacd/npacd_fixture.h"

#include <cstdio>
#include <functional>

using namespace npacd_test;

namespace {

using npac::testing::ProgramRun;

// Providers provisioned through the API (no key: nothing here binds).
void provision(const NpacdProcess& npacd, std::initializer_list<const char*> spids) {
  for (const char* spid : spids) {
    REQUIRE(npacd.call(http::verb::post, "/v1/providers",
                       Json{{"spid", spid}, {"name", std::string("Provider ") + spid}, {"system_type", "soa"}})
                .status == 201);
  }
}

// `npacctl <args>` again until its output satisfies `done` (npacd puts a new group in force
// within a moment); the last run.
ProgramRun npacctlUntil(const NpacdProcess& npacd, const std::string& args, const std::function<bool(const ProgramRun&)>& done) {
  ProgramRun r;
  eventually(
      [&] {
        r = npacctlOn(npacd, args);
        return done(r);
      },
      10s, 50ms);
  return r;
}

}  // namespace

TEST_CASE("npacctl throttle-group adds, lists, shows, changes and removes a group") {
  NpacdProcess npacd;
  provision(npacd, {"0001", "0002", "0003"});

  ProgramRun added = npacctlOn(npacd, "throttle-group add bureau-a --members 0001,0002 --max-rate 100 --max-pending 40");
  INFO(added.output);
  REQUIRE(added.exit_code == 0);
  CHECK(contains(added.output, "added throttle group bureau-a: members 0001,0002, max rate 100, max pending 40"));

  ProgramRun listed = npacctlUntil(npacd, "throttle-group list", [](const ProgramRun& r) { return !contains(r.output, "  -  "); });
  INFO(listed.output);
  REQUIRE(listed.exit_code == 0);
  CHECK(contains(listed.output, "NAME      MEMBERS    MAX RATE  MAX PENDING  LEVEL  EFFECTIVE RATE  EFFECTIVE PENDING  UNREACHABLE"));
  CHECK(contains(listed.output, "bureau-a  0001,0002  100       40           0      100             40                 -"));

  ProgramRun shown = npacctlUntil(npacd, "throttle-group show bureau-a", [](const ProgramRun& r) { return contains(r.output, "on node"); });
  INFO(shown.output);
  REQUIRE(shown.exit_code == 0);
  CHECK(contains(shown.output, "throttle group bureau-a: members 0001,0002"));
  CHECK(contains(shown.output, "1      100      80"));
  CHECK(contains(shown.output, "2      -        -"));
  CHECK(contains(shown.output, "min abatement time 2s; the maxima lose 50% per unreachable peer"));
  CHECK(contains(shown.output, ": level 0, delivery rounds held 0, messages admitted 0"));
  CHECK(contains(shown.output, "LIMIT         CONFIGURED  EFFECTIVE  AGGREGATE  THIS NODE'S SHARE"));
  CHECK(contains(shown.output, "rate (msg/s)  100         100        0          100"));
  CHECK(contains(shown.output, "pending       40          40         0          40"));
  CHECK(contains(shown.output, "NODE"));
  CHECK(contains(shown.output, " (this node)"));
  CHECK(contains(shown.output, "unreachable peers: none"));

  ProgramRun changed = npacctlOn(npacd, "throttle-group set bureau-a --members 0001,0002,0003 --max-rate 50");
  INFO(changed.output);
  REQUIRE(changed.exit_code == 0);
  CHECK(contains(changed.output, "changed throttle group bureau-a: members 0001,0002,0003, max rate 50, max pending 40"));
  const Json after = npacd.call(http::verb::get, "/v1/throttle-groups/bureau-a").body;
  CHECK(after["max_rate"] == 50);
  CHECK(after["max_pending"] == 40);  // not given: kept
  CHECK(after["members"] == Json::array({"0001", "0002", "0003"}));

  ProgramRun removed = npacctlOn(npacd, "throttle-group remove bureau-a");
  INFO(removed.output);
  REQUIRE(removed.exit_code == 0);
  CHECK(contains(removed.output, "removed throttle group bureau-a"));
  ProgramRun empty = npacctlOn(npacd, "throttle-group list");
  CHECK(empty.exit_code == 0);
  CHECK(contains(empty.output, "no throttle group is provisioned"));
}

TEST_CASE("npacctl throttle-group add naming a SPID npacd does not know exits 1 with npacd's message") {
  NpacdProcess npacd;
  provision(npacd, {"0001"});
  ProgramRun r = npacctlOn(npacd, "throttle-group add bureau-a --members 0001,0009 --max-rate 100");
  INFO(r.output);
  CHECK(r.exit_code == 1);
  CHECK(contains(r.output, "npacctl: provider_not_found: "));
  CHECK(contains(r.output, "0009"));
}

TEST_CASE("npacctl throttle-group add naming a SPID of another group exits 1 with npacd's message") {
  NpacdProcess npacd;
  provision(npacd, {"0001", "0002"});
  REQUIRE(npacctlOn(npacd, "throttle-group add bureau-a --members 0001 --max-rate 100").exit_code == 0);
  ProgramRun r = npacctlOn(npacd, "throttle-group add bureau-b --members 0002,0001 --max-rate 100");
  INFO(r.output);
  CHECK(r.exit_code == 1);
  CHECK(contains(r.output, "npacctl: throttle_group_conflict: "));
  CHECK(contains(r.output, "SPID 0001 is a member of throttle group bureau-a"));
}

TEST_CASE("npacctl throttle-group add with level 2 below level 1 exits 1 with npacd's message") {
  NpacdProcess npacd;
  provision(npacd, {"0001"});
  ProgramRun r = npacctlOn(npacd, "throttle-group add bureau-a --members 0001 --max-rate 100 --onset-1 90 --abatement-1 70 "
                         "--onset-2 80 --abatement-2 75");
  INFO(r.output);
  CHECK(r.exit_code == 1);
  CHECK(contains(r.output, "npacctl: invalid_throttle_group: onset_2 (80%) must exceed onset_1 (90%)"));
}

TEST_CASE("npacctl throttle-group show, set and remove of an unknown group exit 1 naming it") {
  NpacdProcess npacd;
  for (const std::string args : {"show nobody", "set nobody --max-rate 5", "remove nobody"}) {
    ProgramRun r = npacctlOn(npacd, "throttle-group " + args);
    INFO(args << ":\n" << r.output);
    CHECK(r.exit_code == 1);
    CHECK(contains(r.output, "npacctl: throttle_group_not_found: no throttle group named 'nobody'"));
  }
}

TEST_CASE("npacctl throttle-group refuses plainly wrong input before asking npacd") {
  NpacdProcess npacd;
  for (const std::string args : {"add bureau-a --members ''", "add bureau-a --members 0001,,0002",
                                 "add bureau-a --members 00011", "add bureau-a --members 0001 --max-rate ten",
                                 "set bureau-a"}) {
    ProgramRun r = npacctlOn(npacd, "throttle-group " + args);
    INFO(args << ":\n" << r.output);
    CHECK(r.exit_code == 2);
  }
  ProgramRun empty = npacctlOn(npacd, "throttle-group add bureau-a --members ''");
  CHECK(contains(empty.output, "--members: name at least one SPID"));
  ProgramRun nothing = npacctlOn(npacd, "throttle-group set bureau-a");
  CHECK(contains(nothing.output, "nothing to change"));
  CHECK(npacd.call(http::verb::get, "/v1/audit-log").body["entries"].dump().find("throttle-group") == std::string::npos);
}

TEST_CASE("npacctl throttle-group --json prints npacd's answers") {
  NpacdProcess npacd;
  provision(npacd, {"0001"});
  ProgramRun added = npacctlOn(npacd, "throttle-group add bureau-a --members 0001 --max-pending 30 --json");
  INFO(added.output);
  REQUIRE(added.exit_code == 0);
  const Json group = Json::parse(added.output, nullptr, false);
  REQUIRE(group.is_object());
  CHECK(group["name"] == "bureau-a");
  CHECK(group["max_pending"] == 30);

  ProgramRun listed = npacctlOn(npacd, "throttle-group list --json");
  INFO(listed.output);
  const Json list = Json::parse(listed.output, nullptr, false);
  REQUIRE(list.is_object());
  REQUIRE(list["throttle_groups"].size() == 1);
  CHECK(list["throttle_groups"][0]["name"] == "bureau-a");

  ProgramRun shown = npacctlOn(npacd, "throttle-group show bureau-a --json");
  INFO(shown.output);
  const Json one = Json::parse(shown.output, nullptr, false);
  REQUIRE(one.is_object());
  CHECK(one["members"] == Json::array({"0001"}));
  CHECK(one.contains("live"));

  ProgramRun refused = npacctlOn(npacd, "throttle-group show nobody --json");
  CHECK(refused.exit_code == 1);
  const Json error = Json::parse(refused.output.substr(0, refused.output.find('\n')), nullptr, false);
  CHECK(error["error"]["code"] == "throttle_group_not_found");
}

TEST_CASE("Each npacctl throttle-group change is in the audit log as throttle-group.add, .set and .remove") {
  NpacdProcess npacd;
  provision(npacd, {"0001"});
  REQUIRE(npacctlOn(npacd, "throttle-group add bureau-a --members 0001 --max-rate 100").exit_code == 0);
  REQUIRE(npacctlOn(npacd, "throttle-group set bureau-a --max-rate 60").exit_code == 0);
  REQUIRE(npacctlOn(npacd, "throttle-group remove bureau-a").exit_code == 0);
  const Json entries = npacd.call(http::verb::get, "/v1/audit-log").body["entries"];
  INFO(entries.dump(2));
  std::vector<std::string> actions;
  for (const Json& e : entries) {
    const std::string action = e.value("action", "");
    if (action.rfind("throttle-group.", 0) != 0) continue;
    actions.push_back(action);
    CHECK(e["subject"] == "throttle group bureau-a");
  }
  // Newest first.
  CHECK(actions == std::vector<std::string>{"throttle-group.remove", "throttle-group.set", "throttle-group.add"});
}
