// `npacctl plan`: run a dispatch scenario offline and show every decision.
//
// runPlan builds the scenario's policy with dispatch::makePolicy, adds its members, then
// executes the steps on a scenario clock that starts at 0 and moves only on "advance"
// steps. Every pick that returns a member is followed by onSent (the PDU goes out), as
// the source documents' tables assume, unless the step says "send": false. Step 0 is the
// initial table. Each step reaches the PlanWriter as it happens — its header, then each
// pick and each released message one by one, then its tables — so the output of a
// scenario with millions of picks is streamed, never held. Format: docs/DISPATCH.md.
//
// Threading: single-threaded, no I/O of its own (the writer decides where output goes).
#pragma once

#include <iosfwd>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "npac/npacctl/scenario.h"

namespace CLI {
class App;
}

namespace npac::npacctl {

// Receives one step at a time. For every step: beginStep once (step, op, the op's
// fields, comment, time_ms, error), then item() for each entry of the step's "picks"
// list and then of its "released" list, in order, then endStep once (members, groups,
// status, throttle, refused, release_blocked).
class PlanWriter {
 public:
  virtual ~PlanWriter() = default;
  virtual void beginStep(const nlohmann::json& header) = 0;
  virtual void item(const char* list, const nlohmann::json& entry) = 0;  // "picks" or "released"
  virtual void endStep(const nlohmann::json& tables) = 0;
};

// Runs the scenario into `writer`; an error (nothing written) when the policy cannot be built.
std::optional<std::string> runPlan(const Scenario& scenario, PlanWriter& writer);

// `--json`: one JSON object per step per line, the step's keys sorted, "picks" and
// "released" as arrays. Text: the human-readable form.
std::unique_ptr<PlanWriter> makeJsonLinesWriter(std::ostream& out);
std::unique_ptr<PlanWriter> makeTextWriter(std::ostream& out);

// Registers `plan SCENARIO.json [--json]` on the npacctl application; when it runs it
// stores its exit status in `exit_code` (0 ok, 1 unreadable or invalid scenario, or out
// of memory).
void addPlanCommand(CLI::App& app, int& exit_code);

}  // namespace npac::npacctl
