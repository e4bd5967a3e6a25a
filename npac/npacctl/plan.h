// `npacctl plan`: run a dispatch scenario offline and show every decision.
//
// runPlan builds the scenario's policy with dispatch::makePolicy, adds its members, then
// executes the steps on a scenario clock that starts at 0 and moves only on "advance"
// steps. Every pick that returns a member is followed by onSent (the PDU goes out), as
// the seed tables assume, unless the step says "send": false. The result is one JSON
// object per step (step 0 is the initial table); renderText turns one into the
// human-readable form. Format: docs/DISPATCH.md.
//
// Threading: single-threaded, no I/O (the command wrapper reads the file and prints).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "npac/npacctl/scenario.h"

namespace CLI {
class App;
}

namespace npac::npacctl {

struct PlanOutput {
  std::vector<nlohmann::json> steps;   // step 0 = initial state, then one per scenario step
  std::optional<std::string> error;    // the policy could not be built
};

PlanOutput runPlan(const Scenario& scenario);

// One step object as text lines (what `npacctl plan` prints without --json).
std::string renderText(const nlohmann::json& step);

// Registers `plan SCENARIO.json [--json]` on the npacctl application; when it runs it
// stores its exit status in `exit_code` (0 ok, 1 unreadable or invalid scenario).
void addPlanCommand(CLI::App& app, int& exit_code);

}  // namespace npac::npacctl
