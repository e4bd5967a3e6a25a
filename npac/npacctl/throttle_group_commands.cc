// `npacctl throttle-group add|list|show|set|remove`: the provisioned egress throttle groups
// (docs/API.md "Throttle groups"; DSR "Egress Throttle Groups" / "Egress Throttle Lists"):
// one far end serving several SPIDs, whose members together every npacd node keeps under
// the group's limits.
//
//   npacctl throttle-group add bureau-a --members 0001,0002,0003 --max-rate 10000
//   npacctl throttle-group list            one line per group: limits, level, effective maxima
//   npacctl throttle-group show bureau-a   definition and live state: maxima, level, aggregate,
//                                          this node's share, each node's report, unreachable peers
//   npacctl throttle-group set bureau-a --max-rate 8000    only the options given change (PUT)
//   npacctl throttle-group remove bureau-a
//
// The limit options are the API's fields with dashes (--max-rate is "max_rate"); add leaves
// out what npacd defaults. npacctl checks only what is plainly wrong before asking (an empty
// --members, a member that is not a SPID, a number that is not one, set with nothing to
// change: exit 2); npacd judges the rest and its message is printed (exit 1). --json prints
// the API's answer. Exit codes: client.h.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <limits>
#include <sstream>

#include "npac/npacctl/server_command.h"

namespace npac::npacctl {

using nlohmann::json;
using V = boost::beast::http::verb;

namespace {

// A listing shows this many members of a group, then how many more.
constexpr std::size_t kMembersListed = 5;

// "0001,0002, 0003" → {"0001","0002","0003"}; an empty item is kept (and refused).
std::vector<std::string> splitMembers(const std::string& text) {
  std::vector<std::string> out;
  std::string item;
  std::istringstream in(text);
  while (std::getline(in, item, ',')) {
    const auto first = item.find_first_not_of(" \t");
    const auto last = item.find_last_not_of(" \t");
    out.push_back(first == std::string::npos ? std::string() : item.substr(first, last - first + 1));
  }
  if (!text.empty() && text.back() == ',') out.emplace_back();
  return out;
}

// CLI11 check of --members: at least one SPID, each 4 ASCII letters or digits.
std::string membersError(const std::string& text) {
  const std::vector<std::string> members = splitMembers(text);
  if (members.empty()) return "name at least one SPID (--members 0001,0002)";
  for (const std::string& spid : members) {
    if (spid.empty()) return "an empty SPID in '" + text + "' (SPIDs are separated by single commas)";
    const bool valid = spid.size() == 4 && std::all_of(spid.begin(), spid.end(), [](unsigned char c) {
                         return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
                       });
    if (!valid) return "'" + spid + "' is not a SPID (4 ASCII letters or digits)";
  }
  return "";
}

// The options of add and set, each sent only when given.
struct GroupOptions {
  std::string members;
  CLI::Option* members_option = nullptr;
  struct Integer {
    const char* field;  // the API's name ("max_rate")
    std::int64_t value = 0;
    CLI::Option* option = nullptr;
  };
  std::vector<Integer> integers{{"max_rate"},   {"max_pending"}, {"onset_1"},     {"abatement_1"},
                                {"onset_2"},    {"abatement_2"}, {"onset_3"},     {"abatement_3"},
                                {"peer_loss_reduction_percent"}};
  std::string min_abatement_time;
  CLI::Option* min_abatement_option = nullptr;

  // The body: the options given, by their API names.
  json body() const {
    json out = json::object();
    if (members_option->count() > 0) out["members"] = splitMembers(members);
    for (const Integer& i : integers) {
      if (i.option->count() > 0) out[i.field] = i.value;
    }
    if (min_abatement_option->count() > 0) out["min_abatement_time"] = min_abatement_time;
    return out;
  }
};

// "--max-rate" for "max_rate".
std::string optionName(const char* field) {
  std::string name = std::string("--") + field;
  std::replace(name.begin(), name.end(), '_', '-');
  return name;
}

std::string optionHelp(const std::string& field, bool adding) {
  const std::string fallback = adding ? " (npacd's default: " : "";
  const auto with = [&](const std::string& text, const std::string& def) {
    return text + (adding ? fallback + def + ")" : "");
  };
  if (field == "max_rate") return with("egress messages per second to the members together, all nodes; 0: not limited", "0");
  if (field == "max_pending") return with("unanswered requests to the members together, all nodes; 0: not limited", "0");
  if (field == "peer_loss_reduction_percent") {
    return with("the maxima lose this percentage per peer node whose counts do not arrive", "50");
  }
  const bool onset = field.rfind("onset_", 0) == 0;
  const std::string level = field.substr(field.size() - 1);
  const std::string def = level == "1" ? (onset ? "100" : "80") : "0";
  return with(std::string(onset ? "onset" : "abatement") + " of level " + level + ", % of the effective maxima", def);
}

void addGroupOptions(CLI::App& c, GroupOptions& o, bool adding) {
  o.members_option = c.add_option("--members", o.members, "the SPIDs the group's far end serves, comma-separated: 0001,0002")
                         ->check([](const std::string& text) { return membersError(text); });
  if (adding) o.members_option->required();
  for (GroupOptions::Integer& i : o.integers) {
    i.option = c.add_option(optionName(i.field), i.value, optionHelp(i.field, adding));
  }
  o.min_abatement_option = c.add_option("--min-abatement-time", o.min_abatement_time,
                                        std::string("the least time a level is held, 0..1min: 2s, 500ms") +
                                            (adding ? " (npacd's default: 2s)" : ""));
  // The level rules (tunables/throttle_levels.h), which npacd checks.
  c.footer("Level 1 is always in use; level 2 and 3 when both their onset and abatement are set. Each "
           "abatement is below its onset, and each level's onset and abatement above the level's before.\n\n" +
           c.get_footer());
}

// 10000 → "10000", 2.5 → "2.5"; 0 is "unlimited" where a limit is meant.
std::string number(const json& v) {
  if (!v.is_number()) return text(v);
  if (v.is_number_integer()) return v.dump();
  const double d = v.get<double>();
  char buf[32];
  if (d == static_cast<double>(static_cast<std::int64_t>(d))) {
    std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(d));
  } else {
    std::snprintf(buf, sizeof buf, "%.1f", d);
  }
  return buf;
}
std::string limit(const json& v) { return v.is_number() && v.get<double>() == 0 ? "unlimited" : number(v); }

std::string joined(const json& names, std::size_t at_most = std::numeric_limits<std::size_t>::max()) {
  if (!names.is_array() || names.empty()) return "-";
  std::string out;
  std::size_t shown = 0;
  for (const json& n : names) {
    if (shown == at_most) return out + " +" + std::to_string(names.size() - shown) + " more";
    out += (shown++ == 0 ? "" : ",") + text(n);
  }
  return out;
}

std::string groupLine(const std::string& verb, const json& g) {
  return verb + " throttle group " + text(g["name"]) + ": members " + joined(g["members"]) + ", max rate " +
         limit(g["max_rate"]) + ", max pending " + limit(g["max_pending"]) + "\n";
}

std::string listText(const json& body) {
  const json& groups = body["throttle_groups"];
  if (!groups.is_array() || groups.empty()) return "no throttle group is provisioned\n";
  std::vector<std::vector<std::string>> rows{
      {"NAME", "MEMBERS", "MAX RATE", "MAX PENDING", "LEVEL", "EFFECTIVE RATE", "EFFECTIVE PENDING", "UNREACHABLE"}};
  for (const json& g : groups) {
    const json& live = g["live"];
    const bool known = live.is_object();
    rows.push_back({text(g["name"]), joined(g["members"], kMembersListed), limit(g["max_rate"]),
                    limit(g["max_pending"]), known ? text(live["level"]) : "-",
                    known ? limit(live["max_rate"]) : "-", known ? limit(live["max_pending"]) : "-",
                    known ? joined(live["unreachable"]) : "-"});
  }
  return table(rows);
}

// What the group says: its limits and levels, who changed it last.
std::string definitionText(const json& g) {
  std::string out = "throttle group " + text(g["name"]) + ": members " + joined(g["members"]) + "\n";
  std::vector<std::vector<std::string>> levels{{"LEVEL", "ONSET %", "ABATEMENT %"}};
  for (int n = 1; n <= 3; ++n) {
    const std::string level = std::to_string(n);
    const json& onset = g["onset_" + level];
    const json& abatement = g["abatement_" + level];
    const bool in_use = n == 1 || (onset != 0 && abatement != 0);
    levels.push_back({level, in_use ? text(onset) : "-", in_use ? text(abatement) : "-"});
  }
  out += "\n" + table(levels);
  out += "min abatement time " + text(g["min_abatement_time"]) + "; the maxima lose " +
         text(g["peer_loss_reduction_percent"]) + "% per unreachable peer\n";
  if (g.contains("updated_at")) out += "updated " + text(g["updated_at"]) + " by " + text(g["updated_by"]) + "\n";
  return out;
}

// What this node knows live: the maxima in force, the aggregate, its share, each node.
std::string liveText(const json& g) {
  const json& live = g["live"];
  const std::string node = g.contains("node") ? text(g["node"]) : "this node";
  if (!live.is_object()) {
    return "\nnot in force on node " + node + " yet (npacd reads a new group within a moment)\n" +
           "\nLIMIT    CONFIGURED\nrate     " + limit(g["max_rate"]) + "\npending  " + limit(g["max_pending"]) + "\n";
  }
  std::string out = "\non node " + node + ": level " + text(live["level"]) + ", delivery rounds held " + text(live["holds"]) +
                    ", messages admitted " + text(live["admitted"]) + "\n\n";
  const json& share = live["share"];
  const bool rate_limited = g["max_rate"] != 0;
  const bool pending_limited = g["max_pending"] != 0;
  out += table({{"LIMIT", "CONFIGURED", "EFFECTIVE", "AGGREGATE", "THIS NODE'S SHARE"},
                {"rate (msg/s)", limit(g["max_rate"]), limit(live["max_rate"]), number(live["rate"]),
                 rate_limited ? number(share["rate"]) : "unlimited"},
                {"pending", limit(g["max_pending"]), limit(live["max_pending"]), number(live["pending"]),
                 pending_limited ? number(share["pending"]) : "unlimited"}});
  std::vector<std::vector<std::string>> nodes{{"NODE", "RATE", "PENDING", "WANTING", "AGE", "REACHABLE"}};
  for (const json& n : live["nodes"]) {
    const json age = json(static_cast<std::int64_t>(n.value("age_seconds", 0.0) * 1000.0 + 0.5));
    nodes.push_back({text(n["node"]) + (n.value("local", false) ? " (this node)" : ""), number(n["rate"]),
                     number(n["pending"]), n.value("wanting", false) ? "yes" : "no", ageText(age),
                     n.value("reachable", false) ? "yes" : "no"});
  }
  out += "\n" + table(nodes);
  out += "\nunreachable peers: " + (live["unreachable"].empty() ? std::string("none") : joined(live["unreachable"])) + "\n";
  return out;
}

std::string showText(const json& g) { return definitionText(g) + liveText(g); }

std::string groupPath(const std::string& name) { return "/v1/throttle-groups/" + urlEncode(name); }

}  // namespace

void addThrottleGroupCommands(CLI::App& app, int& exit_code) {
  CLI::App* group = app.add_subcommand(
      "throttle-group", "egress throttle groups (one far end serving several SPIDs): add, list, show, set, remove");
  group->require_subcommand(1);
  {
    auto* c = group->add_subcommand("add", "provision a group: its members and their limits together");
    auto f = std::make_shared<ServerFlags>();
    auto name = std::make_shared<std::string>();
    auto o = std::make_shared<GroupOptions>();
    c->add_option("NAME", *name, "the group's name: 1-64 of A-Z a-z 0-9 . _ -")->required();
    addServerFlags(*c, *f);
    addGroupOptions(*c, *o, true);
    c->callback([=, &exit_code] {
      json body = o->body();
      body["name"] = *name;
      exit_code = runRequest(*f, V::post, "/v1/throttle-groups", body, [](const json& g) { return groupLine("added", g); });
    });
  }
  {
    auto* c = group->add_subcommand("list", "every group: members, limits, and its level and effective maxima here");
    auto f = std::make_shared<ServerFlags>();
    addServerFlags(*c, *f);
    c->callback([=, &exit_code] { exit_code = runRequest(*f, V::get, "/v1/throttle-groups", std::nullopt, listText); });
  }
  {
    auto* c = group->add_subcommand(
        "show", "one group: its definition, level, effective maxima, aggregate, this node's share, each node, "
                "unreachable peers");
    auto f = std::make_shared<ServerFlags>();
    auto name = std::make_shared<std::string>();
    c->add_option("NAME", *name)->required();
    addServerFlags(*c, *f);
    c->callback([=, &exit_code] { exit_code = runRequest(*f, V::get, groupPath(*name), std::nullopt, showText); });
  }
  {
    auto* c = group->add_subcommand("set", "change a group: the options given change, the others keep their values");
    auto f = std::make_shared<ServerFlags>();
    auto name = std::make_shared<std::string>();
    auto o = std::make_shared<GroupOptions>();
    c->add_option("NAME", *name)->required();
    addServerFlags(*c, *f);
    addGroupOptions(*c, *o, false);
    c->callback([=, &exit_code] {
      const json body = o->body();
      if (body.empty()) {
        std::cerr << "npacctl throttle-group set: nothing to change: give --members, --max-rate, --max-pending, "
                     "--onset-N, --abatement-N, --min-abatement-time or --peer-loss-reduction-percent\n";
        exit_code = kExitUsage;
        return;
      }
      exit_code = runRequest(*f, V::put, groupPath(*name), body, [](const json& g) { return groupLine("changed", g); });
    });
  }
  {
    auto* c = group->add_subcommand("remove", "remove a group: its members are no longer held by it");
    auto f = std::make_shared<ServerFlags>();
    auto name = std::make_shared<std::string>();
    c->add_option("NAME", *name)->required();
    addServerFlags(*c, *f);
    c->callback([=, &exit_code] {
      exit_code = runRequest(*f, V::delete_, groupPath(*name), std::nullopt,
                             [](const json& b) { return "removed throttle group " + text(b["removed"]) + "\n"; });
    });
  }
}

}  // namespace npac::npacctl
