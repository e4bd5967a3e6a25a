// `npacctl assoc|audit|send|broadcast|msg`: the routes npacd's association core answers, and the logs.
#include <algorithm>
#include <iostream>
#include <optional>

#include "common/vocabulary.h"
#include "npac/npacctl/server_command.h"

namespace npac::npacctl {

using nlohmann::json;
using V = boost::beast::http::verb;

namespace {

// An event's diagnostic, "-" when it has none (binds, releases).
std::string diagnosticText(const json& event) {
  const json& d = event.contains("diagnostic") ? event["diagnostic"] : json();
  return d.is_string() && d.get_ref<const std::string&>().empty() ? "-" : text(d);
}

void addAssoc(CLI::App& app, int& exit_code) {
  CLI::App* assoc = app.add_subcommand("assoc", "live associations and their log: list, abort, log");
  assoc->require_subcommand(1);
  {
    auto* c = assoc->add_subcommand("list", "list live associations");
    auto f = std::make_shared<ServerFlags>();
    addServerFlags(*c, *f);
    c->callback([=, &exit_code] {
      exit_code = runRequest(*f, V::get, "/v1/associations", std::nullopt, [](const json& b) {
        std::vector<std::vector<std::string>> rows{
            {"ID", "SPID", "NSAP", "PEER", "FUNCTIONS", "STATE", "BOUND AT", "SENT", "RECEIVED", "OUTSTANDING",
             "RETRANSMITTED"}};
        for (const json& a : b["associations"]) {
          rows.push_back({text(a["id"]), text(a["spid"]), text(a["nsap"]), text(a["peer"]), text(a["functions"]),
                          text(a["state"]), text(a["bound_at"]), text(a["sent"]), text(a["received"]),
                          text(a["outstanding"]), text(a["retransmissions"])});
        }
        return table(rows);
      });
    });
  }
  {
    auto* c = assoc->add_subcommand("abort", "abort one association (its in-flight messages move to the others)");
    auto f = std::make_shared<ServerFlags>();
    auto id = std::make_shared<std::int64_t>(0);
    c->add_option("ID", *id)->required();
    addServerFlags(*c, *f);
    c->callback([=, &exit_code] {
      exit_code = runRequest(*f, V::post, "/v1/associations/" + std::to_string(*id) + "/abort", json::object(),
                             [](const json& b) { return "aborted association " + text(b["aborted"]) + "\n"; });
    });
  }
  {
    auto* c = assoc->add_subcommand("log", "the association log, newest first: binds, rejects, releases, aborts");
    auto f = std::make_shared<ServerFlags>();
    auto spid = std::make_shared<std::string>();
    auto limit = std::make_shared<int>(20);
    c->add_option("--spid", *spid, "one provider's events only");
    c->add_option("--limit", *limit, "at most this many events (1..10000)")->capture_default_str();
    addServerFlags(*c, *f);
    c->callback([=, &exit_code] {
      std::string target = "/v1/association-log?limit=" + std::to_string(*limit);
      if (!spid->empty()) target += "&spid=" + *spid;
      exit_code = runRequest(*f, V::get, target, std::nullopt, [](const json& b) {
        // DIAGNOSTIC is the admission check's log name (docs/OPERATIONS.md "Admission"),
        // the column an operator reads to know what to fix.
        std::vector<std::vector<std::string>> rows{
            {"AT", "EVENT", "SPID", "NSAP", "FUNCTIONS", "ASSOC", "DIAGNOSTIC", "REASON"}};
        for (const json& e : b["events"]) {
          rows.push_back({text(e["at"]), text(e["event"]), text(e["spid"]), text(e["nsap"]), text(e["functions"]),
                          text(e["association"]), diagnosticText(e), text(e["reason"])});
        }
        return table(rows);
      });
    });
  }
}

void addAudit(CLI::App& app, int& exit_code) {
  auto* c = app.add_subcommand("audit", "the audit log, newest first: who changed what");
  auto f = std::make_shared<ServerFlags>();
  auto limit = std::make_shared<int>(20);
  c->add_option("--limit", *limit, "at most this many entries (1..10000)")->capture_default_str();
  addServerFlags(*c, *f);
  c->callback([=, &exit_code] {
    exit_code = runRequest(*f, V::get, "/v1/audit-log?limit=" + std::to_string(*limit), std::nullopt,
                           [](const json& b) {
                             std::vector<std::vector<std::string>> rows{{"AT", "ACTOR", "ACTION", "SUBJECT", "OLD", "NEW"}};
                             for (const json& e : b["entries"]) {
                               rows.push_back({text(e["at"]), text(e["actor"]), text(e["action"]), text(e["subject"]),
                                               text(e["old_value"]), text(e["new_value"])});
                             }
                             return table(rows);
                           });
  });
}

// The fields of one message (POST /v1/messages), shared by `send` and `broadcast`.
struct MessageFlags {
  std::string function;
  std::string operation = "event-report";
  std::string object_class;
  std::string instance;
  std::string type;
  std::string info;
  std::string key;
  std::string idempotency_key;
  int priority = 0;
  bool unconfirmed = false;
};

void addMessageFlags(CLI::App& c, MessageFlags& m, const std::string& idempotency_help) {
  c.add_option("--function", m.function, "association function it needs: " + npac::common::associationFunctionNames())
      ->required()
      ->check([](const std::string& text) {
        return npac::common::parseAssociationFunction(text) ? std::string()
                                                            : "not one of " + npac::common::associationFunctionNames();
      });
  c.add_option("--operation", m.operation, "event-report, action, create, delete, set, get")->capture_default_str();
  c.add_option("--class", m.object_class, "managed object class OID")->required();
  c.add_option("--instance", m.instance, "managed object instance as JSON: {\"dn\":[[{\"id\":OID,\"value\":HEX}]]}")
      ->required();
  c.add_option("--type", m.type, "event or action type OID");
  c.add_option("--info", m.info, "event/action information, BER hex");
  c.add_option("--key", m.key, "ordering key");
  c.add_option("--idempotency-key", m.idempotency_key, idempotency_help);
  c.add_option("--priority", m.priority, "0..9, higher first")->capture_default_str();
  c.add_flag("--unconfirmed", m.unconfirmed, "no response expected");
}

// The message's JSON body, or nullopt (and the reason on stderr) when --instance is not JSON.
std::optional<json> messageBody(const MessageFlags& m) {
  json message{{"function", m.function},  {"operation", m.operation},        {"priority", m.priority},
               {"confirmed", !m.unconfirmed}, {"object_class", m.object_class}};
  message["instance"] = json::parse(m.instance, nullptr, false);
  if (message["instance"].is_discarded()) {
    std::cerr << "npacctl: --instance is not JSON: " << m.instance << "\n";
    return std::nullopt;
  }
  if (!m.type.empty()) message["type"] = m.type;
  if (!m.info.empty()) message["information"] = m.info;
  if (!m.key.empty()) message["key"] = m.key;
  if (!m.idempotency_key.empty()) message["idempotency_key"] = m.idempotency_key;
  return message;
}

void addSend(CLI::App& app, int& exit_code) {
  auto* c = app.add_subcommand("send", "submit one message to a provider (ids printed once committed)");
  auto f = std::make_shared<ServerFlags>();
  auto m = std::make_shared<MessageFlags>();
  auto spid = std::make_shared<std::string>();
  c->add_option("--spid", *spid, "provider")->required();
  addMessageFlags(*c, *m, "1..128 visible ASCII characters: repeating the send with it answers the original id");
  addServerFlags(*c, *f);
  c->callback([=, &exit_code] {
    std::optional<json> message = messageBody(*m);
    if (!message) {
      exit_code = kExitUsage;
      return;
    }
    (*message)["spid"] = *spid;
    exit_code = runRequest(*f, V::post, "/v1/messages", *message, [](const json& b) {
      std::string out = "accepted";
      for (const json& id : b["ids"]) out += " " + text(id);
      const json& messages = b.contains("messages") ? b["messages"] : json::array();
      if (!messages.empty() && messages[0].value("duplicate", false)) out += " (duplicate: already accepted)";
      return out + "\n";
    });
  });
}

// `npacctl broadcast --to all|SPID,SPID,...`: POST /v1/broadcasts (docs/API.md "Broadcasts").
void addBroadcast(CLI::App& app, int& exit_code) {
  auto* c = app.add_subcommand("broadcast", "submit one message to many providers, committed as one (ids printed once committed)");
  auto f = std::make_shared<ServerFlags>();
  auto m = std::make_shared<MessageFlags>();
  auto to = std::make_shared<std::string>();
  c->add_option("--to", *to, "all (every enabled provider whose system type takes --function) or SPIDs separated by ','")
      ->required();
  addMessageFlags(*c, *m, "1..128 visible ASCII characters, given to every provider's row: repeating the broadcast "
                          "with it answers the original ids");
  addServerFlags(*c, *f);
  c->callback([=, &exit_code] {
    std::optional<json> message = messageBody(*m);
    if (!message) {
      exit_code = kExitUsage;
      return;
    }
    if (*to == "all") {
      (*message)["to"] = "all";
    } else {
      json spids = json::array();
      for (std::size_t start = 0; start <= to->size();) {
        const std::size_t comma = std::min(to->find(',', start), to->size());
        spids.push_back(to->substr(start, comma - start));
        start = comma + 1;
      }
      (*message)["to"] = spids;
    }
    exit_code = runRequest(*f, V::post, "/v1/broadcasts", *message, [](const json& b) {
      std::vector<std::vector<std::string>> rows{{"SPID", "ID", "DUPLICATE"}};
      for (const json& r : b["messages"]) {
        rows.push_back({text(r["spid"]), text(r["id"]), r.value("duplicate", false) ? "yes" : "no"});
      }
      return "accepted for " + text(b["providers"]) + " providers\n" + table(rows);
    });
  });
}

void addMsg(CLI::App& app, int& exit_code) {
  CLI::App* msg = app.add_subcommand("msg", "messages: status");
  msg->require_subcommand(1);
  auto* c = msg->add_subcommand("status", "state of one submitted message");
  auto f = std::make_shared<ServerFlags>();
  auto id = std::make_shared<std::int64_t>(0);
  c->add_option("ID", *id)->required();
  addServerFlags(*c, *f);
  c->callback([=, &exit_code] {
    exit_code = runRequest(*f, V::get, "/v1/messages/" + std::to_string(*id), std::nullopt, [](const json& m) {
      std::string out = "message " + text(m["id"]) + " for " + text(m["spid"]) + ": " + text(m["state"]) +
                        " (attempts " + text(m["attempts"]) + ", created " + text(m["created_at"]);
      if (m.contains("acknowledged_at")) out += ", acknowledged " + text(m["acknowledged_at"]);
      if (m.contains("failure_reason")) out += ", failed: " + text(m["failure_reason"]);
      out += ")\n";
      // A queued message's wait reason (docs/OPERATIONS.md "Why a message waits"); null
      // when nothing holds it back and the next delivery round takes it.
      if (m.contains("wait_reason")) {
        out += m["wait_reason"].is_string() ? "waiting: " + text(m["wait_reason"]) + "\n"
                                            : std::string("waiting: nothing holds it back (being delivered)\n");
      }
      return out;
    });
  });
}

}  // namespace

void addCoreCommands(CLI::App& app, int& exit_code) {
  addAssoc(app, exit_code);
  addAudit(app, exit_code);
  addSend(app, exit_code);
  addBroadcast(app, exit_code);
  addMsg(app, exit_code);
}

}  // namespace npac::npacctl
