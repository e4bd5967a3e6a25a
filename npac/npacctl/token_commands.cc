// `npacctl token create|list|revoke`: the admin API's bearer tokens (docs/API.md
// "Authentication"). The operator role is needed for all three. create prints the secret
// once: npacd keeps only its SHA-256, so a lost secret means a new token.
#include <iostream>

#include "npac/npacctl/server_command.h"
#include "npac/npacctl/token_source.h"

namespace npac::npacctl {

using nlohmann::json;
using V = boost::beast::http::verb;

namespace {

std::string tokenTable(const json& body) {
  std::vector<std::vector<std::string>> rows{{"NAME", "ROLE", "CREATED AT", "CREATED BY", "REVOKED AT"}};
  const json& tokens = body["tokens"];
  for (const json& t : tokens.is_array() ? tokens : json::array()) {
    rows.push_back({text(t["name"]), text(t["role"]), text(t["created_at"]), text(t["created_by"]),
                    text(t["revoked_at"])});
  }
  return table(rows);
}

}  // namespace

void addTokenCommands(CLI::App& app, int& exit_code) {
  auto* token = app.add_subcommand("token", "the admin API's bearer tokens: create, list, revoke");
  token->require_subcommand(1);
  {
    auto* c = token->add_subcommand("create", "create a token; its secret is printed once");
    auto f = std::make_shared<ServerFlags>();
    auto name = std::make_shared<std::string>();
    auto role = std::make_shared<std::string>();
    c->add_option("NAME", *name, "the token's name: the actor in the audit log (1-64 visible ASCII)")->required();
    c->add_option("--role", *role, "operator, application or reader")
        ->required()
        ->transform(CLI::IsMember({"operator", "application", "reader"}, CLI::ignore_case));
    addServerFlags(*c, *f);
    c->callback([=, &exit_code] {
      exit_code = runRequest(*f, V::post, "/v1/tokens", json{{"name", *name}, {"role", *role}}, [](const json& t) {
        return "created token " + text(t["name"]) + " (role " + text(t["role"]) +
               "); its secret, shown only now:\n" + text(t["token"]) + "\n";
      });
    });
  }
  {
    auto* c = token->add_subcommand("list", "every token with its role and dates (never a secret)");
    auto f = std::make_shared<ServerFlags>();
    addServerFlags(*c, *f);
    c->callback([=, &exit_code] { exit_code = runRequest(*f, V::get, "/v1/tokens", std::nullopt, tokenTable); });
  }
  {
    auto* c = token->add_subcommand("revoke", "revoke a token: refused from its next request on");
    auto f = std::make_shared<ServerFlags>();
    auto name = std::make_shared<std::string>();
    c->add_option("NAME", *name)->required();
    addServerFlags(*c, *f);
    c->callback([=, &exit_code] {
      exit_code = runRequest(*f, V::post, "/v1/tokens/" + urlEncode(*name) + "/revoke", std::nullopt,
                             [](const json& t) { return "revoked token " + text(t["name"]) + "\n"; });
    });
  }
}

}  // namespace npac::npacctl
