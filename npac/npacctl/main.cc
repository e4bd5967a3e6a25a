// npacctl — the npacd control tool. Each subcommand lives in its own file and registers
// itself here (plan.cc: `npacctl plan`, offline dispatch planning; server commands are
// added beside it).
#include <CLI/CLI.hpp>

#include "npac/npacctl/plan.h"
#include "npac/npacctl/server_command.h"

int main(int argc, char** argv) {
  CLI::App app{"npacctl — control and planning tool for npacd"};
  app.require_subcommand(1);
  int exit_code = 0;
  npac::npacctl::addPlanCommand(app, exit_code);
  npac::npacctl::addServerCommands(app, exit_code);
  npac::npacctl::addCoreCommands(app, exit_code);
  npac::npacctl::addNpacKeyCommands(app, exit_code);
  CLI11_PARSE(app, argc, argv);
  return exit_code;
}
