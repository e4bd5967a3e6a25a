// `npacctl plan --json` on every docs/examples scenario, checked against the source
// documents' tables: Oracle EAGLE "Weighted GTT Load Sharing" §2.5 Tables 2-1, 2-3, 2-4,
// 2-5; the Citrix ADC "LRTM method" two request tables; the Oracle DSR/UDR Diameter
// User's Guide "Egress Throttle Lists" example; the NANC 353 order. Runs the real binary
// from $NPAC_BIN.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <random>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/npac/npacctl/npacctl_plan_fixture.h"
#include "tests/support/test_paths.h"

using nlohmann::json;

namespace {

using Run = npac::test::PlanRun;

Run plan(const std::string& file, bool json_mode = true) { return npac::test::runPlanFile(file, json_mode); }

std::string readFile(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

Run example(const std::string& name) {
  Run r = plan(npac::testing::sourceDir() + "/docs/examples/" + name);
  INFO(r.out);
  REQUIRE(r.status == 0);
  REQUIRE(!r.steps.empty());
  return r;
}

std::vector<std::string> pickedNames(const json& step) {
  std::vector<std::string> out;
  for (const json& p : step.at("picks")) out.push_back(p.at("member").is_null() ? "-" : p.at("member").get<std::string>());
  return out;
}

std::map<std::string, json> byName(const json& step) {
  std::map<std::string, json> out;
  for (const json& m : step.at("members")) out[m.at("name").get<std::string>()] = m;
  return out;
}

std::map<std::string, int> tally(const json& step) {
  std::map<std::string, int> out;
  for (const std::string& n : pickedNames(step)) ++out[n];
  return out;
}

}  // namespace

TEST_CASE("npacctl plan reproduces EAGLE weighted GTT Table 2-1 load percentages and cycle", "[npacctl][eagle]") {
  Run r = example("seed000-table-2-1.json");
  REQUIRE(r.steps.size() == 3);
  auto m = byName(r.steps[0]);
  CHECK(m["A"]["load_percent"] == 36);
  CHECK(m["B"]["load_percent"] == 27);
  CHECK(m["C"]["load_percent"] == 9);
  CHECK(m["D"]["load_percent"] == 28);
  auto after = byName(r.steps[2]);  // 11 + 99 = one cycle of 110
  CHECK(after["A"]["picks"] == 40);
  CHECK(after["B"]["picks"] == 30);
  CHECK(after["C"]["picks"] == 10);
  CHECK(after["D"]["picks"] == 30);
}

TEST_CASE("npacctl plan reproduces EAGLE weighted GTT Table 2-3 group states", "[npacctl][eagle]") {
  Run r = example("seed000-table-2-3.json");
  const json& groups = r.steps[0].at("groups");
  REQUIRE(groups.size() == 4);
  const int required[] = {82, 40, 35, 25};
  const int available[] = {70, 40, 0, 0};
  const char* state[] = {"threshold-prohibited", "available", "prohibited", "threshold-prohibited"};
  for (int i = 0; i < 4; ++i) {
    CHECK(groups[i]["required_weight"] == required[i]);
    CHECK(groups[i]["available_weight"] == available[i]);
    CHECK(groups[i]["state"] == state[i]);
  }
  auto m = byName(r.steps[0]);
  CHECK(m["A"]["entity_available_weight"] == 40);
  CHECK(m["B"]["entity_available_weight"] == 0);
  CHECK(m["I"]["entity_available_weight"] == 0);
  for (const std::string& n : pickedNames(r.steps[1])) CHECK((n == "E" || n == "F"));
  CHECK(r.steps[3]["picks"][0]["member"].is_null());
  CHECK(r.steps[3]["picks"][0]["reason"] == "threshold-prohibited");
  CHECK(r.steps[3]["status"] == "threshold-prohibited");
  CHECK(pickedNames(r.steps[4]) == std::vector<std::string>{"I", "I"});
}

TEST_CASE("npacctl plan reproduces EAGLE weighted GTT Table 2-4 current load", "[npacctl][eagle]") {
  Run r = example("seed000-table-2-4.json");
  const json& g = r.steps[0].at("groups").at(0);
  CHECK(g["required_weight"] == 55);
  CHECK(g["available_weight"] == 80);
  CHECK(g["state"] == "available");
  CHECK(r.steps[0]["status"] == "available");
  auto m = byName(r.steps[0]);
  CHECK(m["A"]["load_percent"] == 50);
  CHECK(m["B"]["load_percent"] == 0);
  CHECK(m["C"]["load_percent"] == 13);
  CHECK(m["D"]["load_percent"] == 37);
  CHECK(tally(r.steps[1]) == std::map<std::string, int>{{"A", 40}, {"C", 10}, {"D", 30}});
}

TEST_CASE("npacctl plan reproduces EAGLE weighted GTT Table 2-5 with failover and return", "[npacctl][eagle]") {
  Run r = example("seed000-table-2-5.json");
  auto m = byName(r.steps[0]);
  for (const char* n : {"A", "B", "C", "D"}) CHECK(m[n]["load_percent"] == 0);
  CHECK(m["E"]["load_percent"] == 75);
  CHECK(m["F"]["load_percent"] == 25);
  CHECK(m["G"]["load_percent"] == 100);
  CHECK(r.steps[0]["groups"][0]["state"] == "threshold-prohibited");
  CHECK(r.steps[0]["groups"][2]["required_weight"] == 1);
  CHECK(r.steps[0]["status"] == "available");
  CHECK(tally(r.steps[1]) == std::map<std::string, int>{{"E", 30}, {"F", 10}});
  CHECK(tally(r.steps[3]) == std::map<std::string, int>{{"G", 3}});
  CHECK(tally(r.steps[5]) == std::map<std::string, int>{{"E", 3}, {"F", 1}});
  for (const std::string& n : pickedNames(r.steps[7])) CHECK((n == "A" || n == "B" || n == "D"));
}

TEST_CASE("npacctl plan reproduces the LRTM method's first request table", "[npacctl][lrtm]") {
  Run r = example("seed002-lrtm.json");
  const json& picks = r.steps[1].at("picks");
  const std::vector<std::string> who = {"3", "3", "3", "3", "2", "3", "2", "2"};
  const double before[] = {0, 2, 4, 6, 7, 8, 8, 9};
  const double after[] = {2, 4, 6, 8, 8, 10, 9, 10};
  REQUIRE(picks.size() == 8);
  for (std::size_t i = 0; i < 8; ++i) {
    INFO("Request-" << i + 1);
    CHECK(picks[i]["member"] == "Service-HTTP-" + who[i]);
    CHECK(picks[i]["n_before"].get<double>() == Approx(before[i]));
    CHECK(picks[i]["n_after"].get<double>() == Approx(after[i]));
  }
}

TEST_CASE("npacctl plan reproduces the LRTM method's weighted request table", "[npacctl][lrtm]") {
  Run r = example("seed002-lrtm-weights.json");
  const json& picks = r.steps[1].at("picks");
  const std::vector<std::string> who = {"3", "3", "3", "3", "3", "2", "3", "2"};
  // The document prints 23333.34 for 7 × 10000 / 3 = 23333.33…; we print 2 decimals rounded.
  const double before[] = {0, 5000, 10000, 15000, 20000, 23333.33, 25000, 26666.67};
  const double after[] = {5000, 10000, 15000, 20000, 25000, 26666.67, 30000, 30000};
  REQUIRE(picks.size() == 8);
  for (std::size_t i = 0; i < 8; ++i) {
    INFO("Request-" << i + 1);
    CHECK(picks[i]["member"] == "Service-HTTP-" + who[i]);
    CHECK(picks[i]["nw_before"].get<double>() == Approx(before[i]).margin(0.011));
    CHECK(picks[i]["nw_after"].get<double>() == Approx(after[i]).margin(0.011));
  }
  CHECK(byName(r.steps[1])["Service-HTTP-1"]["picks"] == 0);
}

TEST_CASE("npacctl plan shows the NANC 353 round-robin order through join, loss and retry",
          "[npacctl][nanc353]") {
  Run r = example("nanc353-round-robin.json");
  using V = std::vector<std::string>;
  CHECK(pickedNames(r.steps[1]) == V{"soa-1", "soa-2", "soa-3", "soa-1"});
  CHECK(pickedNames(r.steps[3]) == V{"soa-2", "soa-3", "soa-4", "soa-1"});
  CHECK(pickedNames(r.steps[5]) == V{"soa-2", "soa-4", "soa-1", "soa-2", "soa-4", "soa-1"});
  CHECK(pickedNames(r.steps[6]) == V{"soa-2"});
  CHECK(pickedNames(r.steps[7]) == V{"soa-4", "soa-1", "soa-2"});
}

TEST_CASE("npacctl plan prints a readable table without --json", "[npacctl]") {
  Run r = plan(npac::testing::sourceDir() + "/docs/examples/seed000-table-2-4.json", false);
  REQUIRE(r.status == 0);
  CHECK(r.out.find("RC 10: weight 110, threshold 50 %, required 55, available 80 → available") !=
        std::string::npos);
  CHECK(r.out.find("group status: available") != std::string::npos);
}

TEST_CASE("npacctl plan refuses a bad scenario with the JSON path and exit status 1", "[npacctl]") {
  const std::string path = npac::testing::binaryDir() + "/npacctl_plan_bad_scenario.json";
  {
    std::ofstream f(path);
    f << R"({"policy": {"name": "weighted"}, "members": [{"name": "A", "weight": 120}]})";
  }
  Run r = plan(path);
  CHECK(r.status == 1);
  CHECK(r.out.find("members[0].weight") != std::string::npos);
  {
    std::ofstream f(path);
    f << R"({"policy": {"name": "fastest"}, "members": []})";
  }
  r = plan(path);
  CHECK(r.status == 1);
  CHECK(r.out.find("unknown policy \"fastest\"") != std::string::npos);
  {
    std::ofstream f(path);
    f << R"({"policy": {"name": "round-robin"}, "members": [{"name": "A"}], "steps": [{"op": "state", "member": "Z", "state": "available"}]})";
  }
  r = plan(path);
  CHECK(r.status == 1);
  CHECK(r.out.find("steps[0].member") != std::string::npos);
  {
    std::ofstream f(path);
    f << "{ not json";
  }
  r = plan(path);
  CHECK(r.status == 1);
  CHECK(r.out.find("not valid JSON") != std::string::npos);
  r = plan(path + ".missing");
  CHECK(r.status == 1);
  CHECK(r.out.find("cannot read") != std::string::npos);
}

TEST_CASE("npacctl plan reproduces the Egress Throttle Lists reduction: 10,000/12,000 → 5,000/6,000",
          "[npacctl][throttle]") {
  Run r = example("seed003-throttle-list.json");
  REQUIRE(r.steps.size() == 5);
  const json& before = r.steps[1].at("throttle").at("list");
  CHECK(before["rate_maximum"] == 10000);
  CHECK(before["pending_maximum"] == 12000);
  CHECK(before["lost_peers"] == 0);
  CHECK(before["ept"] == 5000);  // the peer's report counts in the list aggregate
  CHECK(r.steps[2].at("throttle").at("list")["ept"] == 5002);
  const json& lost = r.steps[3].at("throttle").at("list");
  CHECK(lost["lost_peers"] == 1);
  CHECK(lost["rate_maximum"] == 5000);
  CHECK(lost["pending_maximum"] == 6000);
  const json& back = r.steps[4].at("throttle").at("list");
  CHECK(back["rate_maximum"] == 10000);
  CHECK(back["pending_maximum"] == 12000);
}

TEST_CASE("npacctl plan shows throttled messages held, never dropped, and released in order",
          "[npacctl][throttle]") {
  Run r = example("throttle-group-hold-release.json");
  REQUIRE(r.steps.size() == 8);
  CHECK(r.steps[1]["throttle"]["level"] == 1);
  for (const json& p : r.steps[2]["picks"]) {
    CHECK(p["member"].is_null());
    CHECK(p["held"] == true);
  }
  CHECK(r.steps[2]["throttle"]["held"] == 2);
  CHECK(r.steps[3]["picks"][0]["member"].is_string());  // priority 2 passes level 1
  CHECK_FALSE(r.steps[6].contains("released"));         // EPT 1 is not below 25 % of 4
  const json& released = r.steps[7].at("released");
  REQUIRE(released.size() == 2);
  CHECK(released[0]["n"] == 4);
  CHECK(released[1]["n"] == 5);
  CHECK(r.steps[7]["throttle"]["held"] == 0);
  CHECK(r.steps[7]["refused"] == 0);
}

TEST_CASE("npacctl plan answers mutated scenarios with a result or a message, never a crash",
          "[npacctl][robustness]") {
  const std::vector<std::string> names = {"seed000-table-2-3.json", "seed002-lrtm-weights.json",
                                          "seed003-throttle-list.json", "nanc353-round-robin.json"};
  const std::string alphabet = "{}[]\":,0123456789-.e aAzZ\\";
  std::mt19937 rng(3530003);  // seeded: the same mutations every run
  const std::string path = npac::testing::binaryDir() + "/npacctl_plan_mutated.json";
  for (const std::string& name : names) {
    std::ifstream in(npac::testing::sourceDir() + "/docs/examples/" + name);
    const std::string original((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    REQUIRE(!original.empty());
    for (int k = 0; k < 40; ++k) {
      std::string text = original;
      const std::size_t at = rng() % text.size();
      switch (rng() % 3) {
        case 0: text[at] = alphabet[rng() % alphabet.size()]; break;
        case 1: text.erase(at, 1 + rng() % 8); break;
        default: text.resize(at); break;
      }
      {
        std::ofstream f(path, std::ios::trunc);
        f << text;
      }
      Run r = plan(path, false);
      INFO(name << " mutation " << k << ":\n" << text << "\noutput:\n" << r.out.substr(0, 400));
      REQUIRE((r.status == 0 || r.status == 1));
      if (r.status == 1) CHECK(r.out.rfind("npacctl plan: ", 0) == 0);
    }
  }
}

TEST_CASE("npacctl plan runs every docs/examples scenario and DISPATCH.md lists each one",
          "[npacctl][docs]") {
  const std::string dispatch_md = readFile(npac::testing::sourceDir() + "/docs/DISPATCH.md");
  REQUIRE(!dispatch_md.empty());
  int examples = 0;
  for (const auto& entry : std::filesystem::directory_iterator(npac::testing::sourceDir() + "/docs/examples")) {
    if (entry.path().extension() != ".json") continue;
    ++examples;
    const std::string name = entry.path().filename().string();
    INFO(name);
    Run r = plan(entry.path().string());
    INFO(r.out.substr(0, 400));
    CHECK(r.status == 0);
    CHECK(r.steps.size() >= 2);  // the initial table and at least one step
    CHECK(dispatch_md.find("| `" + name + "` |") != std::string::npos);
  }
  CHECK(examples >= 9);
}

TEST_CASE("Every docs/examples file that a document names exists", "[npacctl][docs]") {
  const std::string root = npac::testing::sourceDir();
  std::vector<std::string> docs = {root + "/README.md"};
  for (const char* dir : {"/docs", "/docs/dispatch"}) {
    for (const auto& entry : std::filesystem::directory_iterator(root + dir)) {
      if (entry.path().extension() == ".md") docs.push_back(entry.path().string());
    }
  }
  const std::regex named(R"(examples/([A-Za-z0-9._-]+\.json))");
  int references = 0;
  for (const std::string& doc : docs) {
    const std::string text = readFile(doc);
    for (std::sregex_iterator it(text.begin(), text.end(), named), end; it != end; ++it) {
      ++references;
      INFO(doc << " names docs/examples/" << (*it)[1]);
      CHECK(std::filesystem::exists(root + "/docs/examples/" + (*it)[1].str()));
    }
  }
  CHECK(references >= 2);
}
