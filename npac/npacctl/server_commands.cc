// `npacctl sp|nsap|key|srr|tunable`: provisioning and tunables through npacd's admin API.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

#include "common/vocabulary.h"
#include "npac/npacctl/server_command.h"
#include "npac/npacctl/token_source.h"

namespace npac::npacctl {

using nlohmann::json;
using V = boost::beast::http::verb;

void addServerFlags(CLI::App& command, ServerFlags& flags) {
  command.footer("Connection options (npacctl --help), before or after the command: --api ADDRESS "
                 "(else $NPACCTL_API, else " + std::string(kDefaultApi) + "), --tls, --ca-file FILE, --token TOKEN, "
                 "--token-file FILE.");
  command.add_flag("--json", flags.json, "print the API's JSON answer");
  command.add_option("--actor", flags.actor, "ignored by npacd, which records the token's name as the actor of every change "
                     "(docs/API.md \"Authentication\"); kept so existing scripts still run");
}

std::string operatorHint(const ApiReply& reply, const ApiClient& client) {
  const std::string code = reply.body.is_object() && reply.body.contains("error") && reply.body["error"].is_object()
                               ? reply.body["error"].value("code", std::string())
                               : std::string();
  const std::string source = client.tokenSource().empty() ? "" : " (from " + client.tokenSource() + ")";
  if (reply.status == 401) {
    return "npacd refused the token" + source + ": give another with --token, $NPACCTL_TOKEN, --token-file or "
           "$NPACCTL_TOKEN_FILE (docs/API.md \"Authentication\")";
  }
  if (reply.status == 403) {
    return "the token" + source + " may not do this: an operator gives you one that may with npacctl token "
           "create NAME --role ROLE";
  }
  if (code == "unknown_tunable") return "npacctl tunable list shows every tunable";
  if (code == "unknown_route") {
    return "this npacd does not know the request npacctl sent: is it older than npacctl? (npacd --version, "
           "npacctl --version)";
  }
  return "";
}

std::string actorOf(const ServerFlags& flags) {
  if (!flags.actor.empty()) return flags.actor;
  const char* user = std::getenv("USER");
  return user != nullptr && *user != '\0' ? std::string("npacctl:") + user : "npacctl";
}

std::string text(const json& value) {
  if (value.is_null()) return "-";
  if (value.is_string()) return value.get<std::string>();
  return value.dump();
}

std::string ageText(const json& ms) {
  if (!ms.is_number_integer()) return "-";
  const std::int64_t v = ms.get<std::int64_t>();
  char buf[32];
  if (v < 1000) std::snprintf(buf, sizeof buf, "%lldms", static_cast<long long>(v));
  else if (v < 60'000) std::snprintf(buf, sizeof buf, "%.1fs", static_cast<double>(v) / 1000.0);
  else if (v < 3'600'000) std::snprintf(buf, sizeof buf, "%lldm%02llds", static_cast<long long>(v / 60'000),
                                        static_cast<long long>(v / 1000 % 60));
  else std::snprintf(buf, sizeof buf, "%lldh%02lldm", static_cast<long long>(v / 3'600'000),
                     static_cast<long long>(v / 60'000 % 60));
  return buf;
}

std::string table(const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> widths;
  for (const auto& row : rows) {
    for (std::size_t i = 0; i < row.size(); ++i) {
      if (widths.size() <= i) widths.push_back(0);
      widths[i] = std::max(widths[i], row[i].size());
    }
  }
  std::ostringstream out;
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line += std::string(widths[i] - row[i].size() + 2, ' ');
    }
    out << line << "\n";
  }
  return out.str();
}

int runRequest(const ServerFlags& flags, V method, const std::string& target, const std::optional<json>& body,
               const std::function<std::string(const json&)>& render) {
  ApiClient client(apiAddress());
  if (!authorize(client)) return kExitUsage;  // token_source.h: no token found
  const bool mutating = method != V::get;
  ApiOutcome outcome = client.call(method, target, body, mutating ? actorOf(flags) : "");
  if (!outcome.reply) {
    std::cerr << "npacctl: " << outcome.failure << "\n";
    return kExitUnreachable;
  }
  const ApiReply& reply = *outcome.reply;
  if (!reply.ok()) {
    if (flags.json && !reply.body.is_discarded()) std::cout << reply.body.dump() << "\n";
    std::cerr << "npacctl: " << reply.errorText() << "\n";
    if (std::string hint = operatorHint(reply, client); !hint.empty()) std::cerr << "npacctl: " << hint << "\n";
    return kExitApiError;
  }
  if (flags.json) std::cout << reply.body.dump() << "\n";
  else std::cout << render(reply.body);
  return kExitOk;
}

namespace {

std::string providerLine(const json& p) {
  return p["spid"].get<std::string>() + "  " + text(p["name"]) + "  " + text(p["system_type"]) + "  " +
         (p.value("enabled", false) ? "enabled" : "disabled") + "\n";
}

std::string providerTable(const json& body) {
  std::vector<std::vector<std::string>> rows{{"SPID", "NAME", "TYPE", "STATE", "SRR"}};
  for (const json& p : body["providers"]) {
    rows.push_back({text(p["spid"]), text(p["name"]), text(p["system_type"]),
                    p.value("enabled", false) ? "enabled" : "disabled", p.value("srr", false) ? "on" : "off"});
  }
  return table(rows);
}

std::string nsapTable(const json& list) {
  std::vector<std::vector<std::string>> rows{{"NSAP", "ADDRESS", "WEIGHT", "RELATIVE_COST"}};
  for (const json& n : list) {
    rows.push_back({text(n["nsap"]), n.contains("address") ? text(n["address"]) : "-", text(n["weight"]),
                    text(n["relative_cost"])});
  }
  return table(rows);
}

std::string keyTable(const json& list) {
  std::vector<std::vector<std::string>> rows{{"LIST", "KEY", "ALGORITHM", "STATE", "NOT_BEFORE", "NOT_AFTER"}};
  for (const json& k : list) {
    rows.push_back({text(k["key_list_id"]), text(k["key_id"]), text(k["algorithm"]), text(k["state"]),
                    text(k["not_before"]), text(k["not_after"])});
  }
  return table(rows);
}

std::string tunableQuery(const std::string& spid) { return spid.empty() ? "" : "?spid=" + urlEncode(spid); }

void addSp(CLI::App& app, int& exit_code) {
  CLI::App* sp = app.add_subcommand("sp", "service providers: add, list, show, disable, enable");
  sp->require_subcommand(1);
  {
    auto* c = sp->add_subcommand("add", "provision a service provider");
    auto f = std::make_shared<ServerFlags>();
    auto spid = std::make_shared<std::string>();
    auto name = std::make_shared<std::string>();
    auto type = std::make_shared<std::string>("soa");
    auto disabled = std::make_shared<bool>(false);
    c->add_option("SPID", *spid, "4-character service provider id")->required();
    c->add_option("--name", *name, "provider name")->required();
    // The names of common/vocabulary.h, checked here so a typo fails before any request.
    c->add_option("--type", *type, "system type: " + npac::common::systemTypeNames())
        ->capture_default_str()
        ->check([](const std::string& text) {
          return npac::common::parseSystemType(text) ? std::string()
                                                     : "not one of " + npac::common::systemTypeNames();
        });
    c->add_flag("--disabled", *disabled, "provision it disabled (may not bind)");
    addServerFlags(*c, *f);
    c->callback([=, &exit_code] {
      json body{{"spid", *spid}, {"name", *name}, {"system_type", *type}, {"enabled", !*disabled}};
      exit_code = runRequest(*f, V::post, "/v1/providers", body,
                             [](const json& p) { return "added " + providerLine(p); });
    });
  }
  {
    auto* c = sp->add_subcommand("list", "list service providers");
    auto f = std::make_shared<ServerFlags>();
    addServerFlags(*c, *f);
    c->callback([=, &exit_code] { exit_code = runRequest(*f, V::get, "/v1/providers", std::nullopt, providerTable); });
  }
  {
    auto* c = sp->add_subcommand("show", "one provider with its NSAPs and keys");
    auto f = std::make_shared<ServerFlags>();
    auto spid = std::make_shared<std::string>();
    c->add_option("SPID", *spid)->required();
    addServerFlags(*c, *f);
    c->callback([=, &exit_code] {
      exit_code = runRequest(*f, V::get, "/v1/providers/" + urlEncode(*spid), std::nullopt, [](const json& p) {
        return providerLine(p) + "srr: " + (p.value("srr", false) ? "on" : "off") + "\nNSAPs:\n" +
               nsapTable(p["nsaps"]) + "keys:\n" + keyTable(p["keys"]);
      });
    });
  }
  for (const char* verb : {"disable", "enable"}) {
    auto* c = sp->add_subcommand(verb, std::string(verb) + " a service provider");
    auto f = std::make_shared<ServerFlags>();
    auto spid = std::make_shared<std::string>();
    c->add_option("SPID", *spid)->required();
    addServerFlags(*c, *f);
    std::string action = verb;
    c->callback([=, &exit_code] {
      exit_code = runRequest(*f, V::post, "/v1/providers/" + urlEncode(*spid) + "/" + action, json::object(),
                             [action](const json& p) { return action + "d " + providerLine(p); });
    });
  }
}

void addNsap(CLI::App& app, int& exit_code) {
  CLI::App* nsap = app.add_subcommand("nsap", "a provider's NSAPs: add, list, remove");
  nsap->require_subcommand(1);
  {
    auto* c = nsap->add_subcommand("add", "provision an NSAP (from an IPv4 address or 24 hex digits)");
    auto f = std::make_shared<ServerFlags>();
    auto spid = std::make_shared<std::string>();
    auto where = std::make_shared<std::string>();
    auto weight = std::make_shared<int>(0);
    auto cost = std::make_shared<int>(-1);
    c->add_option("SPID", *spid)->required();
    c->add_option("ADDRESS_OR_NSAP", *where, "IPv4 address (127.0.0.2) or NSAP hex")->required();
    c->add_option("--weight", *weight, "weight 1..99 for the weighted policy");
    c->add_option("--cost", *cost, "relative cost group for the weighted policy");
    addServerFlags(*c, *f);
    c->callback([=, &exit_code] {
      json body{{where->find('.') != std::string::npos ? "address" : "nsap", *where}};
      if (*weight != 0) body["weight"] = *weight;
      if (*cost >= 0) body["relative_cost"] = *cost;
      exit_code = runRequest(*f, V::post, "/v1/providers/" + urlEncode(*spid) + "/nsaps", body,
                             [](const json& n) { return "added " + text(n["nsap"]) + "\n"; });
    });
  }
  {
    auto* c = nsap->add_subcommand("list", "list a provider's NSAPs");
    auto f = std::make_shared<ServerFlags>();
    auto spid = std::make_shared<std::string>();
    c->add_option("SPID", *spid)->required();
    addServerFlags(*c, *f);
    c->callback([=, &exit_code] {
      exit_code = runRequest(*f, V::get, "/v1/providers/" + urlEncode(*spid) + "/nsaps", std::nullopt,
                             [](const json& b) { return nsapTable(b["nsaps"]); });
    });
  }
  {
    auto* c = nsap->add_subcommand("remove", "remove an NSAP");
    auto f = std::make_shared<ServerFlags>();
    auto spid = std::make_shared<std::string>();
    auto where = std::make_shared<std::string>();
    c->add_option("SPID", *spid)->required();
    c->add_option("ADDRESS_OR_NSAP", *where)->required();
    addServerFlags(*c, *f);
    c->callback([=, &exit_code] {
      exit_code = runRequest(*f, V::delete_, "/v1/providers/" + urlEncode(*spid) + "/nsaps/" + urlEncode(*where),
                             std::nullopt, [](const json& b) { return "removed " + text(b["removed"]) + "\n"; });
    });
  }
}

void addKey(CLI::App& app, int& exit_code) {
  CLI::App* key = app.add_subcommand("key", "a provider's keys: add, list, revoke");
  key->require_subcommand(1);
  {
    auto* c = key->add_subcommand("add", "add a public key from a PEM file");
    auto f = std::make_shared<ServerFlags>();
    auto spid = std::make_shared<std::string>();
    auto list = std::make_shared<std::int64_t>(0);
    auto id = std::make_shared<std::int64_t>(0);
    auto algorithm = std::make_shared<std::string>();
    auto pem = std::make_shared<std::string>();
    auto not_before = std::make_shared<std::string>();
    auto not_after = std::make_shared<std::string>();
    c->add_option("SPID", *spid)->required();
    c->add_option("--list", *list, "key list id")->required();
    c->add_option("--key", *id, "key id")->required();
    c->add_option("--algorithm", *algorithm,
                  "ed25519 or rsa-sha256; by default read from the key in --pem (npacd checks that they agree)");
    c->add_option("--pem", *pem, "file with the public key (BEGIN PUBLIC KEY)")->required();
    c->add_option("--not-before", *not_before, "validity start, 2026-11-29T15:00:00Z (default now)");
    c->add_option("--not-after", *not_after, "validity end (default now + key_lifetime)");
    addServerFlags(*c, *f);
    c->callback([=, &exit_code] {
      std::ifstream in(*pem, std::ios::binary);
      if (!in) {
        std::cerr << "npacctl: cannot read " << *pem << "\n";
        exit_code = kExitUsage;
        return;
      }
      std::stringstream content;
      content << in.rdbuf();
      json body{{"key_list_id", *list}, {"key_id", *id}, {"public_key_pem", content.str()}};
      if (!algorithm->empty()) body["algorithm"] = *algorithm;
      if (!not_before->empty()) body["not_before"] = *not_before;
      if (!not_after->empty()) body["not_after"] = *not_after;
      exit_code = runRequest(*f, V::post, "/v1/providers/" + urlEncode(*spid) + "/keys", body, [](const json& k) {
        return "added key " + text(k["spid"]) + "/" + text(k["key_list_id"]) + "/" + text(k["key_id"]) + " " +
               text(k["algorithm"]) + " valid " + text(k["not_before"]) + " .. " + text(k["not_after"]) + "\n";
      });
    });
  }
  {
    auto* c = key->add_subcommand("list", "list a provider's keys");
    auto f = std::make_shared<ServerFlags>();
    auto spid = std::make_shared<std::string>();
    c->add_option("SPID", *spid)->required();
    addServerFlags(*c, *f);
    c->callback([=, &exit_code] {
      exit_code = runRequest(*f, V::get, "/v1/providers/" + urlEncode(*spid) + "/keys", std::nullopt,
                             [](const json& b) { return keyTable(b["keys"]); });
    });
  }
  {
    auto* c = key->add_subcommand("revoke", "revoke a key");
    auto f = std::make_shared<ServerFlags>();
    auto spid = std::make_shared<std::string>();
    auto list = std::make_shared<std::int64_t>(0);
    auto id = std::make_shared<std::int64_t>(0);
    c->add_option("SPID", *spid)->required();
    c->add_option("LIST", *list)->required();
    c->add_option("KEY", *id)->required();
    addServerFlags(*c, *f);
    c->callback([=, &exit_code] {
      std::string target = "/v1/providers/" + urlEncode(*spid) + "/keys/" + std::to_string(*list) + "/" +
                           std::to_string(*id) + "/revoke";
      exit_code = runRequest(*f, V::post, target, json::object(), [](const json& k) {
        return "revoked key " + text(k["spid"]) + "/" + text(k["key_list_id"]) + "/" + text(k["key_id"]) + "\n";
      });
    });
  }
}

void addSrr(CLI::App& app, int& exit_code) {
  auto* c = app.add_subcommand("srr", "switch SOA Round Robin on or off for a provider");
  auto f = std::make_shared<ServerFlags>();
  auto spid = std::make_shared<std::string>();
  auto state = std::make_shared<std::string>();
  c->add_option("SPID", *spid)->required();
  // ON, Off: the tunable itself takes any case (tunables/value.cc), so the command does too.
  c->add_option("STATE", *state, "on or off (any case)")->required()->transform(CLI::IsMember({"on", "off"}, CLI::ignore_case));
  addServerFlags(*c, *f);
  c->callback([=, &exit_code] {
    exit_code = runRequest(*f, V::put, "/v1/providers/" + urlEncode(*spid) + "/srr", json{{"on", *state == "on"}},
                           [](const json& b) {
                             return "srr " + text(b["spid"]) + " " + (b.value("srr", false) ? "on" : "off") + "\n";
                           });
  });
}

void addTunable(CLI::App& app, int& exit_code) {
  CLI::App* tunable = app.add_subcommand("tunable", "tunables: get, set, clear, list");
  tunable->require_subcommand(1);
  auto valueLine = [](const json& b) {
    return text(b["name"]) + (text(b["spid"]).empty() ? "" : "@" + text(b["spid"])) + " = " + text(b["value"]) + "\n";
  };
  {
    auto* c = tunable->add_subcommand("get", "effective value of a tunable");
    auto f = std::make_shared<ServerFlags>();
    auto name = std::make_shared<std::string>();
    auto spid = std::make_shared<std::string>();
    c->add_option("NAME", *name)->required();
    c->add_option("--spid", *spid, "for this provider");
    addServerFlags(*c, *f);
    c->callback([=, &exit_code] {
      exit_code = runRequest(*f, V::get, "/v1/tunables/" + urlEncode(*name) + tunableQuery(*spid), std::nullopt, valueLine);
    });
  }
  {
    auto* c = tunable->add_subcommand("set", "set a tunable (global, or for one provider with --spid)");
    auto f = std::make_shared<ServerFlags>();
    auto name = std::make_shared<std::string>();
    auto value = std::make_shared<std::string>();
    auto spid = std::make_shared<std::string>();
    c->add_option("NAME", *name)->required();
    c->add_option("VALUE", *value)->required();
    c->add_option("--spid", *spid, "for this provider");
    addServerFlags(*c, *f);
    c->callback([=, &exit_code] {
      json body{{"value", *value}};
      if (!spid->empty()) body["spid"] = *spid;
      exit_code = runRequest(*f, V::put, "/v1/tunables/" + urlEncode(*name), body, valueLine);
    });
  }
  {
    auto* c = tunable->add_subcommand("clear", "remove an override (falls back to the next level)");
    auto f = std::make_shared<ServerFlags>();
    auto name = std::make_shared<std::string>();
    auto spid = std::make_shared<std::string>();
    c->add_option("NAME", *name)->required();
    c->add_option("--spid", *spid, "for this provider");
    addServerFlags(*c, *f);
    c->callback([=, &exit_code] {
      exit_code = runRequest(*f, V::delete_, "/v1/tunables/" + urlEncode(*name) + tunableQuery(*spid), std::nullopt,
                             valueLine);
    });
  }
  {
    auto* c = tunable->add_subcommand("list", "every tunable with its effective value");
    auto f = std::make_shared<ServerFlags>();
    auto spid = std::make_shared<std::string>();
    c->add_option("--spid", *spid, "values as this provider sees them");
    addServerFlags(*c, *f);
    c->callback([=, &exit_code] {
      exit_code = runRequest(*f, V::get, "/v1/tunables" + tunableQuery(*spid), std::nullopt, [](const json& b) {
        std::vector<std::vector<std::string>> rows{{"NAME", "VALUE", "DEFAULT", "SCOPE", "RANGE"}};
        for (const json& t : b["tunables"]) {
          rows.push_back({text(t["name"]), text(t["value"]), text(t["default"]), text(t["scope"]), text(t["range"])});
        }
        return table(rows);
      });
    });
  }
}

}  // namespace

void addServerCommands(CLI::App& app, int& exit_code) {
  addSp(app, exit_code);
  addNsap(app, exit_code);
  addKey(app, exit_code);
  addSrr(app, exit_code);
  addTunable(app, exit_code);
}

}  // namespace npac::npacctl
