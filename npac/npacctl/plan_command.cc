// `npacctl plan SCENARIO.json [--json]`: reads the file, runs the plan, prints it as it
// runs (the two PlanWriters: JSON lines and text).
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <new>
#include <sstream>
#include <string_view>

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

// The tables after a step (what endStep receives), as text.
std::string renderTables(const json& step) {
  std::ostringstream o;
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

// Every string in a plan came through the JSON parser, which accepts only valid UTF-8,
// but a dump must never throw on the way out: replace rather than fail.
std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

// `--json`: the header's fields, then "picks" and "released" as arrays written entry by
// entry, then the tables' fields; one line per step.
class JsonLinesWriter final : public PlanWriter {
 public:
  explicit JsonLinesWriter(std::ostream& out) : out_(out) {}

  void beginStep(const json& header) override {
    std::string text = dump(header);
    text.pop_back();  // the closing brace: lists and tables follow
    out_ << text;
    open_.clear();
  }

  void item(const char* list, const json& entry) override {
    if (open_ != list) {
      if (!open_.empty()) out_ << ']';
      open_ = list;
      out_ << ",\"" << open_ << "\":[";
    } else {
      out_ << ',';
    }
    out_ << dump(entry);
  }

  void endStep(const json& tables) override {
    if (!open_.empty()) out_ << ']';
    const std::string text = dump(tables);
    if (text.size() > 2) out_ << ',' << std::string_view(text).substr(1);
    else out_ << '}';
    out_ << '\n';
  }

 private:
  std::ostream& out_;
  std::string open_;  // the list being written, or empty
};

class TextWriter final : public PlanWriter {
 public:
  explicit TextWriter(std::ostream& out) : out_(out) {}

  void beginStep(const json& step) override {
    out_ << "== step " << step.value("step", 0) << ": " << step.value("op", std::string());
    if (step.contains("member") && step["member"].is_string()) out_ << " " << step["member"].get<std::string>();
    for (const char* k : {"state", "weight", "latency_ms", "monitor", "rtt_ms", "ms", "peer"}) {
      if (step.contains(k)) out_ << " " << k << "=" << num(step[k]);
    }
    if (step.contains("count")) out_ << " ×" << num(step["count"]);
    out_ << "  (t=" << num(step.value("time_ms", json(0))) << " ms)";
    if (step.contains("title")) out_ << "  " << step["title"].get<std::string>();
    if (step.contains("source")) out_ << "  [" << step["source"].get<std::string>() << "]";
    if (step.contains("comment")) out_ << "  — " << step["comment"].get<std::string>();
    out_ << "\n";
    if (step.contains("error")) out_ << "  error: " << step["error"].get<std::string>() << "\n";
  }

  void item(const char* list, const json& p) override {
    if (std::string_view(list) == "released") {
      out_ << "  released #" << num(p["n"]) << " → " << p["member"].get<std::string>() << " (priority "
           << num(p["priority"]) << ")\n";
      return;
    }
    out_ << "  #" << p["n"].get<std::uint64_t>() << " → ";
    if (p["member"].is_null()) {
      out_ << "none (" << p["reason"].get<std::string>() << ")";
      if (p.contains("level")) out_ << " at level " << num(p["level"]) << ", priority " << num(p["priority"]);
    } else {
      out_ << p["member"].get<std::string>();
      if (p.contains("n_before")) {
        out_ << "   N " << num(p["n_before"]) << " → " << num(p["n_after"]) << "   Nw "
             << num(p["nw_before"]) << " → " << num(p["nw_after"]);
      }
    }
    out_ << "\n";
  }

  void endStep(const json& tables) override { out_ << renderTables(tables); }

 private:
  std::ostream& out_;
};

int runCommand(const std::string& path, bool as_json) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::cerr << "npacctl plan: cannot read " << path << "\n";
    return 1;
  }
  std::stringstream text;
  text << in.rdbuf();
  Result<Scenario> parsed = parseScenario(text.str());
  if (!parsed.isOk()) {
    std::cerr << "npacctl plan: " << path << ": " << parsed.status().message() << "\n";
    return 1;
  }
  std::unique_ptr<PlanWriter> writer = as_json ? makeJsonLinesWriter(std::cout) : makeTextWriter(std::cout);
  if (auto error = runPlan(*parsed, *writer)) {
    std::cerr << "npacctl plan: " << path << ": " << *error << "\n";
    return 1;
  }
  std::cout.flush();
  return 0;
}

// The plan's top level: whatever goes wrong ends as exit status 1 and a message, never an
// abort (an allocation failure on a huge scenario file, or a throttle holding millions).
int runCommandSafely(const std::string& path, bool as_json) {
  try {
    return runCommand(path, as_json);
  } catch (const std::bad_alloc&) {
    std::cout.flush();
    std::cerr << "npacctl plan: " << path << ": out of memory (the scenario is too large for this machine)\n";
  } catch (const std::exception& e) {
    std::cout.flush();
    std::cerr << "npacctl plan: " << path << ": internal error: " << e.what() << "\n";
  }
  return 1;
}

}  // namespace

std::unique_ptr<PlanWriter> makeJsonLinesWriter(std::ostream& out) {
  return std::make_unique<JsonLinesWriter>(out);
}

std::unique_ptr<PlanWriter> makeTextWriter(std::ostream& out) { return std::make_unique<TextWriter>(out); }

void addPlanCommand(CLI::App& app, int& exit_code) {
  CLI::App* plan = app.add_subcommand(
      "plan", "Run a dispatch scenario offline and show every pick (docs/DISPATCH.md)");
  auto path = std::make_shared<std::string>();
  auto as_json = std::make_shared<bool>(false);
  plan->add_option("scenario", *path, "Scenario JSON file")->required();
  plan->add_flag("--json", *as_json, "Print one JSON object per step");
  plan->callback([path, as_json, &exit_code] { exit_code = runCommandSafely(*path, *as_json); });
}

}  // namespace npac::npacctl
