// `npacctl queue [SPID]`: what each provider's durable queue holds and why its queued
// messages wait (GET /v1/providers/{spid}/queue, docs/API.md "Provider queue"; the wait
// reasons are docs/OPERATIONS.md "Why a message waits").
//
//   npacctl queue        one line per provider (GET /v1/providers, then each queue)
//   npacctl queue 0001   the full view: totals, wait reason per function, counts by state
//                        and function, throttle, storage, load per association
//
// --json prints the API's JSON ({"providers":[…views…]} without SPID). Exit codes as every
// server command (client.h): 1 when npacd refuses (unknown or malformed SPID), 3 when it
// cannot be reached.
#include <iostream>

#include "npac/npacctl/server_command.h"
#include "npac/npacctl/token_source.h"

namespace npac::npacctl {

using nlohmann::json;
using V = boost::beast::http::verb;

namespace {

std::string reasonText(const json& reason) { return reason.is_string() ? reason.get<std::string>() : "none"; }

std::string boundText(const json& view) {
  if (!view.value("live", false)) return "no core";
  return view.value("bound", false) ? "bound" : "not bound";
}

// "notifications: not-bound, queries: all-congested"; "-" when nothing waits.
std::string waitSummary(const json& view) {
  std::string out;
  for (const json& w : view["waits"]) {
    if (w.value("queued", 0) == 0 && w["reason"].is_null()) continue;
    if (!out.empty()) out += ", ";
    out += text(w["function"]) + ": " + reasonText(w["reason"]);
  }
  return out.empty() ? "-" : out;
}

std::string throttleText(const json& view) {
  const json& t = view["throttle"];
  if (!t.is_object()) return "-";
  const int level = t.value("level", 0);
  if (level == 0) return "none";
  const std::string detail = t.value("detail", std::string());
  return "level " + std::to_string(level) + (detail.empty() ? "" : " (" + detail + ")");
}

std::string storageText(const json& view) {
  const json& s = view["storage_ok"];
  if (!s.is_boolean()) return "-";
  return s.get<bool>() ? "ok" : "unavailable";
}

std::string fullView(const json& v) {
  const json& totals = v["totals"];
  std::string out = "provider " + text(v["spid"]) + ": " + boundText(v) + ", queued " + text(totals["queued"]) +
                    ", sent " + text(totals["sent"]) + ", acknowledged " + text(totals["acknowledged"]) +
                    ", failed " + text(totals["failed"]) + "\n";
  out += "oldest queued: " + (v["oldest_queued_at"].is_string()
                                  ? ageText(v["oldest_queued_age_ms"]) + " ago (" + text(v["oldest_queued_at"]) + ")"
                                  : std::string("-")) +
         "\n";
  out += "throttle: " + throttleText(v) + "   storage: " + storageText(v) + "\n";

  out += "\n";
  if (v["waits"].empty()) {
    out += "nothing is waiting\n";
  } else {
    std::vector<std::vector<std::string>> rows{{"FUNCTION", "QUEUED", "OLDEST", "WAIT REASON"}};
    for (const json& w : v["waits"]) {
      rows.push_back({text(w["function"]), text(w["queued"]), ageText(w["oldest_queued_age_ms"]), reasonText(w["reason"])});
    }
    out += table(rows);
  }
  if (!v["counts"].empty()) {
    std::vector<std::vector<std::string>> rows{{"STATE", "FUNCTIONS", "COUNT", "OLDEST CREATED"}};
    for (const json& c : v["counts"]) {
      rows.push_back({text(c["state"]), text(c["functions"]), text(c["count"]), text(c["oldest_created_at"])});
    }
    out += "\n" + table(rows);
  }
  if (!v["associations"].empty()) {
    std::vector<std::vector<std::string>> rows{{"ASSOC", "OUTSTANDING", "CONGESTED", "SILENT"}};
    for (const json& a : v["associations"]) {
      rows.push_back({text(a["id"]), text(a["outstanding"]), a.value("congested", false) ? "yes" : "no",
                      a.value("silent", false) ? "yes" : "no"});
    }
    out += "\n" + table(rows);
  }
  return out;
}

std::string overview(const json& views) {
  if (views.empty()) return "no provider is provisioned\n";
  std::vector<std::vector<std::string>> rows{{"SPID", "CORE", "QUEUED", "SENT", "FAILED", "OLDEST", "WAITING"}};
  for (const json& v : views) {
    const json& totals = v["totals"];
    rows.push_back({text(v["spid"]), boundText(v), text(totals["queued"]), text(totals["sent"]), text(totals["failed"]),
                    ageText(v["oldest_queued_age_ms"]), waitSummary(v)});
  }
  return table(rows);
}

// Reports a failed call as runRequest does; the exit code.
int failure(const ServerFlags& flags, const ApiClient& client, const ApiOutcome& outcome) {
  if (!outcome.reply) {
    std::cerr << "npacctl: " << outcome.failure << "\n";
    return kExitUnreachable;
  }
  if (flags.json && !outcome.reply->body.is_discarded()) std::cout << outcome.reply->body.dump() << "\n";
  std::cerr << "npacctl: " << outcome.reply->errorText() << "\n";
  if (std::string hint = operatorHint(*outcome.reply, client); !hint.empty()) std::cerr << "npacctl: " << hint << "\n";
  return kExitApiError;
}

// Every provider's view: GET /v1/providers, then one GET per provider.
int allProviders(const ServerFlags& flags) {
  ApiClient client(apiAddress());
  if (!authorize(client)) return kExitUsage;  // token_source.h: no token found
  ApiOutcome listed = client.call(V::get, "/v1/providers");
  if (!listed.reply || !listed.reply->ok()) return failure(flags, client, listed);
  json views = json::array();
  const json& providers = listed.reply->body["providers"];
  for (const json& p : providers.is_array() ? providers : json::array()) {
    ApiOutcome queue = client.call(V::get, "/v1/providers/" + urlEncode(text(p["spid"])) + "/queue");
    if (!queue.reply || !queue.reply->ok()) return failure(flags, client, queue);
    views.push_back(queue.reply->body);
  }
  if (flags.json) std::cout << json{{"providers", views}}.dump() << "\n";
  else std::cout << overview(views);
  return kExitOk;
}

}  // namespace

void addQueueCommands(CLI::App& app, int& exit_code) {
  auto* c = app.add_subcommand("queue", "what each provider's queue holds and why its messages wait");
  auto f = std::make_shared<ServerFlags>();
  auto spid = std::make_shared<std::string>();
  c->add_option("SPID", *spid, "one provider: its full queue view");
  addServerFlags(*c, *f);
  c->callback([=, &exit_code] {
    if (spid->empty()) {
      exit_code = allProviders(*f);
      return;
    }
    exit_code = runRequest(*f, V::get, "/v1/providers/" + urlEncode(*spid) + "/queue", std::nullopt, fullView);
  });
}

}  // namespace npac::npacctl
