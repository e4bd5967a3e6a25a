// npacctl — the npacd control tool. Each subcommand lives in its own file and registers
// itself here (plan.cc: `npacctl plan`, offline dispatch planning; server commands are
// added beside it).
#include <CLI/CLI.hpp>

#include "npac/npacctl/plan.h"
#include "npac/npacctl/server_command.h"
#include "npac/npacctl/token_source.h"
#include "npac/version.h"

int main(int argc, char** argv) {
  CLI::App app{"npacctl — control and planning tool for npacd"};
  app.set_version_flag("--version", npac::versionLine("npacctl"));
  app.require_subcommand(1);
  // --token/--token-file may come after the subcommand too (`npacctl sp list --token-file
  // F`): subcommands made after this pass options they do not know to the top level.
  app.fallthrough();
  npac::npacctl::addTokenOptions(app);
  npac::npacctl::addTlsOptions(app);  // --tls, --ca-file (client.h)
  int exit_code = 0;
  npac::npacctl::addPlanCommand(app, exit_code);
  npac::npacctl::addServerCommands(app, exit_code);
  npac::npacctl::addCoreCommands(app, exit_code);
  npac::npacctl::addInboundCommands(app, exit_code);
  npac::npacctl::addNpacKeyCommands(app, exit_code);
  npac::npacctl::addQueueCommands(app, exit_code);
  npac::npacctl::addLogLevelCommand(app, exit_code);
  npac::npacctl::addTokenCommands(app, exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version are "errors" with code 0; every real usage error exits 2 as
    // docs/API.md says (CLI11's own codes run past 100: 106, 108, ...).
    return app.exit(e) == 0 ? npac::npacctl::kExitOk : npac::npacctl::kExitUsage;
  }
  return exit_code;
}
