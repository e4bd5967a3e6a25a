// libFuzzer target: the `npacctl plan` scenario parser on arbitrary bytes, and, for
// every input it accepts with a small plan, the plan itself run through both output
// writers (JSON lines and text) into a stream that discards. A parse must answer a
// scenario or an error with a JSON path (never throw, never both nor neither); a run
// must not throw. The plan is bounded here (picks, members) only to keep each
// execution fast; npacctl enforces its own limits (scenario.h kMaxPicksPerScenario).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <ostream>
#include <streambuf>
#include <string_view>

#include "npac/npacctl/plan.h"
#include "npac/npacctl/scenario.h"

using namespace npac::npacctl;

namespace {

constexpr std::uint64_t kMaxFuzzPicks = 2000;
constexpr std::size_t kMaxFuzzMembers = 64;
constexpr std::size_t kMaxFuzzSteps = 256;

class DiscardBuffer final : public std::streambuf {
 protected:
  int_type overflow(int_type c) override { return traits_type::not_eof(c); }
  std::streamsize xsputn(const char*, std::streamsize n) override { return n; }
};

bool smallEnough(const Scenario& s) {
  if (s.members.size() > kMaxFuzzMembers || s.steps.size() > kMaxFuzzSteps) return false;
  std::uint64_t picks = 0;
  std::size_t added = 0;
  for (const Step& st : s.steps) {
    if (st.op == StepOp::kPick) picks += st.count;
    if (st.op == StepOp::kAdd) ++added;
  }
  return picks <= kMaxFuzzPicks && s.members.size() + added <= kMaxFuzzMembers;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  npac::Result<Scenario> parsed = parseScenario(text);
  if (!parsed.isOk()) {
    // Every refusal is a bad document and says why.
    if (parsed.status().code() != npac::StatusCode::kBadDocument || parsed.status().message().empty()) std::abort();
    return 0;
  }
  if (!smallEnough(*parsed)) return 0;
  DiscardBuffer discard;
  std::ostream out(&discard);
  for (auto make : {makeJsonLinesWriter, makeTextWriter}) {
    auto writer = make(out);
    (void)runPlan(*parsed, *writer);
  }
  return 0;
}
