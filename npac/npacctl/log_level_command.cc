// `npacctl log-level [LEVEL]`: npacd's log level at run time (GET / PUT /v1/log-level,
// docs/API.md "Log level"). Without LEVEL it prints the level; with one it changes it
// (audited under --actor) until npacd stops. Exit codes as every server command
// (client.h): 1 when npacd refuses the level, 3 when it cannot be reached.
#include "npac/npacctl/server_command.h"

namespace npac::npacctl {

using nlohmann::json;
using V = boost::beast::http::verb;

void addLogLevelCommand(CLI::App& app, int& exit_code) {
  auto* c = app.add_subcommand("log-level", "show npacd's log level, or change it until npacd stops");
  auto f = std::make_shared<ServerFlags>();
  auto level = std::make_shared<std::string>();
  c->add_option("LEVEL", *level, "trace, debug, info, warn, error, critical, off");
  addServerFlags(*c, *f);
  c->callback([=, &exit_code] {
    if (level->empty()) {
      exit_code = runRequest(*f, V::get, "/v1/log-level", std::nullopt,
                             [](const json& b) { return text(b["level"]) + "\n"; });
      return;
    }
    exit_code = runRequest(*f, V::put, "/v1/log-level", json{{"level", *level}, {"actor", actorOf(*f)}},
                           [](const json& b) { return "log level " + text(b["previous"]) + " -> " + text(b["level"]) + "\n"; });
  });
}

}  // namespace npac::npacctl
