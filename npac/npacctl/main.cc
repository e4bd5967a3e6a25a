// npacctl — the npacd control tool. Each subcommand lives in its own file and registers
// itself here (plan.cc: `npacctl plan`, offline dispatch planning; server commands are
// added beside it).
#include <iostream>

#include <CLI/CLI.hpp>

#include "npac/npacctl/command_words.h"
#include "npac/npacctl/plan.h"
#include "npac/npacctl/server_command.h"
#include "npac/npacctl/token_source.h"
#include "npac/version.h"

int main(int argc, char** argv) {
  CLI::App app{"npacctl — control and planning tool for npacd"};
  app.set_version_flag("--version", npac::versionLine("npacctl"));
  app.require_subcommand(1);
  // The connection options are npacctl's own: before the command (`npacctl --api
  // https://HOST:10180 --ca-file api.crt sp list`, as README.md writes it) or after it
  // (`npacctl sp list --api …`): subcommands made after this pass options they do not know
  // to the top level.
  app.fallthrough();
  npac::npacctl::addConnectionOptions(app);  // --api, --tls, --ca-file (client.h)
  npac::npacctl::addTokenOptions(app);       // --token, --token-file (token_source.h)
  int exit_code = 0;
  npac::npacctl::addPlanCommand(app, exit_code);
  npac::npacctl::addServerCommands(app, exit_code);
  npac::npacctl::addCoreCommands(app, exit_code);
  npac::npacctl::addInboundCommands(app, exit_code);
  npac::npacctl::addNpacKeyCommands(app, exit_code);
  npac::npacctl::addQueueCommands(app, exit_code);
  npac::npacctl::addThrottleGroupCommands(app, exit_code);
  npac::npacctl::addLogLevelCommand(app, exit_code);
  npac::npacctl::addTokenCommands(app, exit_code);
  npac::npacctl::addBackupCommand(app, exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version are "errors" with code 0; every real usage error exits 2 as
    // docs/API.md says (CLI11's own codes run past 100: 106, 108, ...). A wrong command
    // word is named, with the nearest command (command_words.h).
    if (e.get_exit_code() != 0) {
      if (auto error = npac::npacctl::commandWordError(app, std::vector<std::string>(argv + 1, argv + argc))) {
        std::cerr << *error << "\n";
        return npac::npacctl::kExitUsage;
      }
    }
    return app.exit(e) == 0 ? npac::npacctl::kExitOk : npac::npacctl::kExitUsage;
  }
  return exit_code;
}
