// `npacctl npac-key add|list|export|revoke`: the NPAC's own signing keys through the
// admin API's npac-keys routes (docs/API.md "NPAC keys"). npacd generates each pair; the
// public half is exported for providers to install (docs/OPERATIONS.md "NPAC keys and
// their rotation").
#include <fstream>
#include <iostream>
#include <memory>

#include "npac/npacctl/server_command.h"

namespace npac::npacctl {

using nlohmann::json;
using V = boost::beast::http::verb;

namespace {

std::string keyName(const json& k) { return text(k["key_list_id"]) + "/" + text(k["key_id"]); }

std::string npacKeyTable(const json& body) {
  std::vector<std::vector<std::string>> rows{
      {"LIST", "KEY", "ALGORITHM", "STATE", "NOT BEFORE", "NOT AFTER", "LAST SEQ", "SIGNS", "FINGERPRINT"}};
  const json& signing = body["signing"];
  for (const json& k : body["npac_keys"]) {
    const bool signs = signing.is_object() && signing["key_list_id"] == k["key_list_id"] &&
                       signing["key_id"] == k["key_id"];
    rows.push_back({text(k["key_list_id"]), text(k["key_id"]), text(k["algorithm"]), text(k["state"]),
                    text(k["not_before"]), text(k["not_after"]), text(k["last_sequence"]), signs ? "yes" : "",
                    text(k["fingerprint"])});
  }
  return table(rows);
}

std::string target(std::int64_t list, std::int64_t key, const std::string& what) {
  return "/v1/npac-keys/" + std::to_string(list) + "/" + std::to_string(key) + "/" + what;
}

}  // namespace

void addNpacKeyCommands(CLI::App& app, int& exit_code) {
  CLI::App* npac_key = app.add_subcommand("npac-key", "the NPAC's own signing keys: add, list, export, revoke");
  npac_key->require_subcommand(1);
  {
    auto* c = npac_key->add_subcommand("add", "generate a new NPAC key pair in npacd");
    auto f = std::make_shared<ServerFlags>();
    auto list = std::make_shared<std::int64_t>(0);
    auto id = std::make_shared<std::int64_t>(0);
    auto algorithm = std::make_shared<std::string>("ed25519");
    auto not_before = std::make_shared<std::string>();
    auto not_after = std::make_shared<std::string>();
    c->add_option("--list", *list, "key list id")->required();
    c->add_option("--key", *id, "key id")->required();
    c->add_option("--algorithm", *algorithm, "ed25519 or rsa-sha256")->capture_default_str();
    c->add_option("--not-before", *not_before, "validity start, 2026-11-29T15:00:00Z (default now)");
    c->add_option("--not-after", *not_after, "validity end (default not-before + key_lifetime)");
    addServerFlags(*c, *f);
    c->callback([=, &exit_code] {
      json body{{"key_list_id", *list}, {"key_id", *id}, {"algorithm", *algorithm}, {"actor", actorOf(*f)}};
      if (!not_before->empty()) body["not_before"] = *not_before;
      if (!not_after->empty()) body["not_after"] = *not_after;
      exit_code = runRequest(*f, V::post, "/v1/npac-keys", body, [](const json& k) {
        return "added NPAC key " + keyName(k) + " " + text(k["algorithm"]) + " valid " + text(k["not_before"]) +
               " .. " + text(k["not_after"]) + " " + text(k["fingerprint"]) + "\n";
      });
    });
  }
  {
    auto* c = npac_key->add_subcommand("list", "list the NPAC keys and which one signs now");
    auto f = std::make_shared<ServerFlags>();
    addServerFlags(*c, *f);
    c->callback([=, &exit_code] {
      exit_code = runRequest(*f, V::get, "/v1/npac-keys", std::nullopt, npacKeyTable);
    });
  }
  {
    auto* c = npac_key->add_subcommand("export", "print or write an NPAC public key (PEM) for providers");
    auto f = std::make_shared<ServerFlags>();
    auto list = std::make_shared<std::int64_t>(0);
    auto id = std::make_shared<std::int64_t>(0);
    auto out = std::make_shared<std::string>();
    c->add_option("LIST", *list)->required();
    c->add_option("KEY", *id)->required();
    c->add_option("--out", *out, "write the PEM to this file instead of stdout");
    addServerFlags(*c, *f);
    c->callback([=, &exit_code] {
      exit_code = runRequest(*f, V::get, target(*list, *id, "public"), std::nullopt, [out](const json& k) {
        const std::string pem = k.value("public_key_pem", "");
        if (out->empty()) return pem;
        std::ofstream file(*out, std::ios::binary | std::ios::trunc);
        file << pem;
        if (!file) return "npacctl: cannot write " + *out + "\n";
        return "wrote NPAC key " + keyName(k) + " " + text(k["fingerprint"]) + " to " + *out + "\n";
      });
    });
  }
  {
    auto* c = npac_key->add_subcommand("revoke", "revoke an NPAC key: new binds are signed by another");
    auto f = std::make_shared<ServerFlags>();
    auto list = std::make_shared<std::int64_t>(0);
    auto id = std::make_shared<std::int64_t>(0);
    c->add_option("LIST", *list)->required();
    c->add_option("KEY", *id)->required();
    addServerFlags(*c, *f);
    c->callback([=, &exit_code] {
      exit_code = runRequest(*f, V::post, target(*list, *id, "revoke"), json{{"actor", actorOf(*f)}},
                             [](const json& k) { return "revoked NPAC key " + keyName(k) + "\n"; });
    });
  }
}

}  // namespace npac::npacctl
