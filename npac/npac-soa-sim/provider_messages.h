// The CMIP the simulated provider speaks, as pure functions: the answer to each NPAC
// request, the requests it sends of its own (M-ACTION / M-CREATE), the recovery actions
// (lnpRecoveryRequest / lnpRecoveryComplete, docs/npac-bind.asn1) and the description of
// a received invoke for the report.
//
// Answers: every confirmed invoke gets a ReturnResult with the same invoke id and
// opcode (X.711 §7.4: the result type of the operation, with the managed object class
// and instance of the request echoed in its header); unconfirmed operations get none;
// an invoke whose argument does not decode gets a ROSE Reject (invoke problem
// mistypedArgument, or unrecognizedOperation for an opcode outside X.711).
//
// Threading: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "cmip/cmip_operations.h"
#include "cmip/npac_bind.h"
#include "cmip/rose.h"
#include "common/hex.h"
#include "npac/npac-soa-sim/options.h"

namespace npac::soasim {

// The object a request of ours targets: lnpNpacSms, instance {commonName "NPAC"}.
cmip::ObjectInstance npacInstance();

std::optional<cmip::RoseApdu> answerFor(const cmip::RoseInvoke& invoke, const cmip::GeneralizedTime& now);

// What the report shows about an invoke from the NPAC.
struct InvokeDescription {
  std::string operation;  // "m-EventReport-Confirmed", or "opcode N"
  std::string type;       // event/action type ("1.3.6…" or "local:5"), or the object class
  std::string info_hex;   // event info / action info, or the whole argument
  bool heartbeat = false;
  bool on_npac_sms = false;  // an event report on lnpNpacSms, instance CN=NPAC
  std::string decode_error;
};
InvokeDescription describeInvoke(const cmip::RoseInvoke& invoke);

// Request `n` (1-based) of --send-requests: a confirmed M-ACTION or an M-CREATE whose
// information names the request ("npac-soa-sim request <n>").
cmip::RoseInvoke providerRequest(RequestKind kind, int32_t invoke_id, uint64_t n);

cmip::RoseInvoke recoveryRequest(int32_t invoke_id, const RecoveryPlan& plan);
cmip::RoseInvoke recoveryComplete(int32_t invoke_id);
// The messageCount of an lnpRecoveryRequest's ReturnResult, or an error sentence.
struct RecoveryCount {
  std::optional<int64_t> count;
  std::string error;
};
RecoveryCount recoveryMessageCount(const cmip::RoseReturnResult& result);

using common::toHex;  // lower-case hex of octets (common/hex.h)

}  // namespace npac::soasim
