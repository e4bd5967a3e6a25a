// `npacctl inbound list|answer`: the requests a provider's SOA/LSMS sent to the NPAC
// (docs/API.md "Inbound requests"), taken and answered as the NPAC application does.
//
// The API hands each request to one poll only (GET /v1/inbound moves it from waiting to
// open), so `inbound list` shows a request once; it stays answerable by its id until
// answered. The answer is committed to the durable queue and leaves through the
// provider's round robin (NANC 353 7.b.iv), possibly on another association.
#include <algorithm>
#include <cctype>
#include <iostream>

#include "npac/npacctl/server_command.h"

namespace npac::npacctl {

using nlohmann::json;
using V = boost::beast::http::verb;

namespace {

bool allDigits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c) != 0; });
}

std::string requestTable(const json& body) {
  if (body["requests"].empty()) return "no provider request is waiting\n";
  std::vector<std::vector<std::string>> rows{
      {"ID", "SPID", "ASSOC", "NSAP", "INVOKE", "OPERATION", "RECEIVED"}};
  for (const json& r : body["requests"]) {
    rows.push_back({text(r["id"]), text(r["spid"]), text(r["association_id"]), text(r["nsap"]),
                    text(r["invoke_id"]), text(r["operation"]), text(r["received_at"])});
  }
  return table(rows);
}

void addList(CLI::App& inbound, int& exit_code) {
  auto* c = inbound.add_subcommand(
      "list", "take the provider requests waiting for an answer (each is shown once, then stays answerable)");
  auto f = std::make_shared<ServerFlags>();
  auto spid = std::make_shared<std::string>();
  auto wait = std::make_shared<std::string>("0s");
  auto max = std::make_shared<int>(100);
  c->add_option("--spid", *spid, "one provider's requests only");
  c->add_option("--wait", *wait, "wait this long for a first request (0s..60s)")->capture_default_str();
  c->add_option("--max", *max, "at most this many requests (1..1000)")->capture_default_str();
  addServerFlags(*c, *f);
  c->callback([=, &exit_code] {
    std::string target = "/v1/inbound?wait=" + urlEncode(*wait) + "&max=" + std::to_string(*max);
    if (!spid->empty()) target += "&spid=" + urlEncode(*spid);
    exit_code = runRequest(*f, V::get, target, std::nullopt, requestTable);
  });
}

void addAnswer(CLI::App& inbound, int& exit_code) {
  auto* c = inbound.add_subcommand("answer", "answer one provider request: a result (default) or an X.711 error");
  auto f = std::make_shared<ServerFlags>();
  auto id = std::make_shared<std::int64_t>(0);
  auto result = std::make_shared<std::string>();
  auto error = std::make_shared<std::string>();
  auto parameter = std::make_shared<std::string>();
  c->add_option("ID", *id, "the request's id from npacctl inbound list")->required();
  auto* result_opt = c->add_option("--result", *result, "the operation's result value, BER hex (optional)");
  auto* error_opt =
      c->add_option("--error", *error, "answer with this CMIP error: a name (noSuchAction) or number 0..23");
  c->add_option("--parameter", *parameter, "the error's parameter, BER hex")->needs(error_opt);
  result_opt->excludes(error_opt);
  addServerFlags(*c, *f);
  c->callback([=, &exit_code] {
    json body{{"outcome", error->empty() ? "result" : "error"}};
    if (!result->empty()) body["result"] = *result;
    if (!error->empty()) {
      body["error_code"] = allDigits(*error) ? json(std::stoi(error->substr(0, 9))) : json(*error);
      if (!parameter->empty()) body["parameter"] = *parameter;
    }
    exit_code = runRequest(*f, V::post, "/v1/inbound/" + std::to_string(*id) + "/response", body,
                           [](const json& b) {
                             // message_id: the answer's queue row, readable with npacctl msg status.
                             return "answered request " + text(b["request"]) + " (committed" +
                                    (b.contains("message_id") ? " as message " + text(b["message_id"]) : "") + ")\n";
                           });
  });
}

}  // namespace

void addInboundCommands(CLI::App& app, int& exit_code) {
  CLI::App* inbound = app.add_subcommand("inbound", "provider requests to the NPAC: list, answer");
  inbound->require_subcommand(1);
  addList(*inbound, exit_code);
  addAnswer(*inbound, exit_code);
}

}  // namespace npac::npacctl
