// `npacctl plan SCENARIO.json [--json]`: reads the file, runs the plan, prints it.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include <CLI/CLI.hpp>

#include "npac/npacctl/plan.h"

namespace npac::npacctl {
namespace {

using nlohmann::json;

std::string num(const json& v) {
  if (v.is_number_float()) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f", v.get<double>());
    std::string s(buf);
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
    return s;
  }
  return v.is_string() ? v.get<std::string>() : v.dump();
}

std::string cell(const std::string& s, int width) {
  return s.size() >= static_cast<std::size_t>(width) ? s + " " : s + std::string(width - s.size(), ' ');
}

int runCommand(const std::string& path, bool as_json) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::cerr << "npacctl plan: cannot read " << path << "\n";
    return 1;
  }
  std::stringstream text;
  text << in.rdbuf();
  ScenarioOrError parsed = parseScenario(text.str());
  if (parsed.error) {
    std::cerr << "npacctl plan: " << path << ": " << parsed.error->message() << "\n";
    return 1;
  }
  PlanOutput out = runPlan(*parsed.scenario);
  if (out.error) {
    std::cerr << "npacctl plan: " << path << ": " << *out.error << "\n";
    return 1;
  }
  for (const json& step : out.steps) {
    if (as_json) std::cout << step.dump() << "\n";
    else std::cout << renderText(step);
  }
  return 0;
}

}  // namespace

std::string renderText(const json& step) {
  std::ostringstream o;
  o << "== step " << step.value("step", 0) << ": " << step.value("op", std::string());
  if (step.contains("member") && step["member"].is_string()) o << " " << step["member"].get<std::string>();
  for (const char* k : {"state", "weight", "latency_ms", "monitor", "rtt_ms", "ms", "peer"}) {
    if (step.contains(k)) o << " " << k << "=" << num(step[k]);
  }
  if (step.contains("picks")) o << " ×" << step["picks"].size();
  o << "  (t=" << num(step.value("time_ms", json(0))) << " ms)";
  if (step.contains("title")) o << "  " << step["title"].get<std::string>();
  if (step.contains("source")) o << "  [" << step["source"].get<std::string>() << "]";
  if (step.contains("comment")) o << "  — " << step["comment"].get<std::string>();
  o << "\n";
  if (step.contains("error")) o << "  error: " << step["error"].get<std::string>() << "\n";
  if (step.contains("picks")) {
    for (const json& p : step["picks"]) {
      o << "  #" << p["n"].get<std::uint64_t>() << " → ";
      if (p["member"].is_null()) {
        o << "none (" << p["reason"].get<std::string>() << ")";
        if (p.contains("level")) o << " at level " << num(p["level"]) << ", priority " << num(p["priority"]);
      } else {
        o << p["member"].get<std::string>();
        if (p.contains("n_before")) {
          o << "   N " << num(p["n_before"]) << " → " << num(p["n_after"]) << "   Nw "
            << num(p["nw_before"]) << " → " << num(p["nw_after"]);
        }
      }
      o << "\n";
    }
  }
  if (step.contains("released")) {
    for (const json& r : step["released"]) {
      o << "  released #" << num(r["n"]) << " → " << r["member"].get<std::string>() << " (priority "
        << num(r["priority"]) << ")\n";
    }
  }
  if (step.contains("release_blocked")) {
    o << "  release blocked: " << step["release_blocked"].get<std::string>() << "\n";
  }
  const json& members = step["members"];
  const bool weighted = step.contains("groups");
  const bool lrtm = !members.empty() && members[0].contains("n");
  o << "  " << cell("member", 16) << cell("rc", 5) << cell("weight", 7) << cell("state", 11)
    << cell("active", 7) << cell("picks", 7) << cell("share%", 7);
  if (weighted) o << cell("avail.wt", 9) << cell("load%", 6);
  if (lrtm) o << cell("resp.ms", 9) << cell("N", 10) << cell("Nw", 10);
  o << "\n";
  for (const json& m : members) {
    o << "  " << cell(m["name"].get<std::string>(), 16) << cell(num(m["rc"]), 5)
      << cell(num(m["weight"]), 7) << cell(m["state"].get<std::string>(), 11)
      << cell(num(m["active"]), 7) << cell(num(m["picks"]), 7)
      << cell(num(m["pick_share_percent"]), 7);
    if (weighted) o << cell(num(m["entity_available_weight"]), 9) << cell(num(m["load_percent"]), 6);
    if (lrtm) {
      o << cell(num(m["response_ms"]) + (m["measured"].get<bool>() ? "" : "*"), 9)
        << cell(num(m["n"]), 10) << cell(num(m["nw"]), 10);
    }
    o << "\n";
  }
  if (weighted) {
    for (const json& g : step["groups"]) {
      o << "  RC " << num(g["rc"]) << ": weight " << num(g["group_weight"]) << ", threshold "
        << num(g["threshold_percent"]) << " %, required " << num(g["required_weight"])
        << ", available " << num(g["available_weight"]) << " → " << g["state"].get<std::string>()
        << (g["in_use"].get<bool>() ? " (in use)" : "") << "\n";
    }
    o << "  group status: " << step["status"].get<std::string>() << "\n";
  }
  if (step.contains("throttle")) {
    const json& t = step["throttle"];
    const json& g = t["group"];
    o << "  throttle: level " << num(t["level"]) << ", held " << num(t["held"]) << " (ever "
      << num(t["held_total"]) << ")\n";
    o << "    group: EMR " << num(g["emr"]) << "/s (level " << num(g["rate_level"]) << "), EPT "
      << num(g["ept"]) << " (level " << num(g["pending_level"]) << ")\n";
    if (t.contains("list")) {
      const json& l = t["list"];
      o << "    list: lost peers " << num(l["lost_peers"]) << ", max EMR " << num(l["rate_maximum"])
        << "/s, max EPT " << num(l["pending_maximum"]) << "; EMR " << num(l["emr"]) << "/s (level "
        << num(l["rate_level"]) << "), EPT " << num(l["ept"]) << " (level " << num(l["pending_level"])
        << ")\n";
    }
  }
  return o.str();
}

void addPlanCommand(CLI::App& app, int& exit_code) {
  CLI::App* plan = app.add_subcommand(
      "plan", "Run a dispatch scenario offline and show every pick (docs/DISPATCH.md)");
  auto path = std::make_shared<std::string>();
  auto as_json = std::make_shared<bool>(false);
  plan->add_option("scenario", *path, "Scenario JSON file")->required();
  plan->add_flag("--json", *as_json, "Print one JSON object per step");
  plan->callback([path, as_json, &exit_code] { exit_code = runCommand(*path, *as_json); });
}

}  // namespace npac::npacctl
