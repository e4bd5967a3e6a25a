#include "associations/bind_gate.h"

#include <algorithm>
#include <ctime>

namespace npac::associations {
namespace {

std::string utc(WallTime time) {
  const std::time_t seconds = WallClock::to_time_t(time);
  std::tm parts{};
  gmtime_r(&seconds, &parts);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &parts);
  return buffer;
}

BindVerdict refuse(BindDiagnostic why, std::string specifics,
                   std::optional<std::uint64_t> consume = std::nullopt) {
  BindVerdict verdict;
  verdict.rejection = why;
  verdict.reason = std::string(describe(why)) + ": " + std::move(specifics);
  verdict.decision = BindDecision::reject(why);
  verdict.consume_sequence = consume;
  return verdict;
}

bool systemTypeFits(SystemType claimed, SystemType provisioned) {
  if (claimed == provisioned) return true;
  return provisioned == SystemType::kSoaAndLsms &&
         (claimed == SystemType::kSoa || claimed == SystemType::kLsms);
}

std::string keyName(const BindRequest& request) {
  return "key list " + std::to_string(request.key_list_id) + " key " +
         std::to_string(request.key_id);
}

}  // namespace

BindVerdict BindGate::check(const BindInput& input) {
  const BindRequest& request = input.request;
  const std::string spid = "SPID " + request.spid;

  // 1. SPID provisioned and enabled.
  if (input.provider == nullptr || input.provider->spid != request.spid) {
    return refuse(BindDiagnostic::kUnknownSpid, spid);
  }
  const ProviderRecord& provider = *input.provider;
  if (!provider.enabled) return refuse(BindDiagnostic::kSpidDisabled, spid);

  // 2. System type.
  if (!systemTypeFits(request.system_type, provider.system_type)) {
    return refuse(BindDiagnostic::kSystemTypeMismatch,
                  spid + " bound as " + std::string(toString(request.system_type)) +
                      " but is provisioned as " + std::string(toString(provider.system_type)));
  }

  // 3. Function mask for the system type.
  const FunctionMask allowed = allowedFunctions(request.system_type);
  if (request.functions.empty() || !request.functions.subsetOf(allowed)) {
    return refuse(BindDiagnostic::kFunctionMaskNotAllowed,
                  spid + " asked for " + request.functions.toString() + "; " +
                      std::string(toString(request.system_type)) + " may use " +
                      allowed.toString());
  }

  // 4. Key: known, not revoked, not expired, already valid.
  const KeyRecord* key = input.key;
  if (key == nullptr || key->key_list_id != request.key_list_id || key->key_id != request.key_id) {
    return refuse(BindDiagnostic::kUnknownKey, spid + " " + keyName(request));
  }
  if (key->state == KeyState::kRevoked) {
    return refuse(BindDiagnostic::kKeyRevoked, spid + " " + keyName(request));
  }
  if (key->state == KeyState::kExpired || input.now >= key->not_after) {
    return refuse(BindDiagnostic::kKeyExpired,
                  spid + " " + keyName(request) + " expired at " + utc(key->not_after));
  }
  if (input.now < key->not_before) {
    return refuse(BindDiagnostic::kKeyNotYetValid,
                  spid + " " + keyName(request) + " is valid from " + utc(key->not_before));
  }

  // 5. Signature.
  // The key's PEM text is parsed once (parsed_key_cache.h): OpenSSL's PEM decoding costs
  // several times the verification itself.
  auto verifier = keys_.verifier(key->algorithm, key->public_pem);
  const Status signature = verifier.isOk() ? verifier.value().verify(request.signed_bytes, request.signature)
                                           : verifier.status();
  if (!signature.isOk()) {
    return refuse(BindDiagnostic::kSignatureInvalid, spid + " " + keyName(request) + " (" +
                                                         std::string(describe(signature.code())) +
                                                         "): " + signature.message());
  }

  // 6. Departure time within the window, either side of now.
  const auto skew = request.departure_time > input.now ? request.departure_time - input.now
                                                       : input.now - request.departure_time;
  if (skew > input.tunables.departure_time_window) {
    return refuse(BindDiagnostic::kDepartureTimeOutOfWindow,
                  spid + " departure " + utc(request.departure_time) + ", NPAC clock " +
                      utc(input.now) + ", window " +
                      std::to_string(input.tunables.departure_time_window.count()) + " s");
  }

  // 7. Replay.
  if (key->last_sequence_number && request.sequence_number <= *key->last_sequence_number) {
    return refuse(BindDiagnostic::kSequenceReplayed,
                  spid + " " + keyName(request) + " sequence " +
                      std::to_string(request.sequence_number) + ", last accepted " +
                      std::to_string(*key->last_sequence_number));
  }
  const std::optional<std::uint64_t> consume = request.sequence_number;

  // 8. Provisioned NSAPs.
  const auto& nsaps = provider.provisioned_nsaps;
  if (!nsaps.empty() && std::find(nsaps.begin(), nsaps.end(), input.peer_nsap) == nsaps.end()) {
    return refuse(BindDiagnostic::kNsapNotProvisioned,
                  spid + " from " + input.peer_nsap.toAddressString() + " (NSAP " +
                      input.peer_nsap.toHex() + ")",
                  consume);
  }

  // 9–10. Association count, then the SRR and recovery rules.
  const BindDecision decision =
      decideBind(input.live, input.peer_nsap, request.functions, request.recovery_mode,
                 input.tunables.srr, input.tunables.duplicate_bind);
  if (decision.kind != BindDecision::Kind::kAcceptReplacing &&
      input.live.size() >= input.tunables.max_associations_per_sp) {
    return refuse(BindDiagnostic::kTooManyAssociations,
                  spid + " holds " + std::to_string(input.live.size()) + " of " +
                      std::to_string(input.tunables.max_associations_per_sp),
                  consume);
  }
  if (!decision.admitted()) {
    return refuse(*decision.rejection,
                  spid + " mask " + request.functions.toString() + " from " +
                      input.peer_nsap.toAddressString() + " (srr " +
                      (input.tunables.srr ? "on" : "off") + ")",
                  consume);
  }

  BindVerdict verdict;
  verdict.decision = decision;
  verdict.consume_sequence = consume;
  verdict.reason = decision.kind == BindDecision::Kind::kAcceptReplacing
                       ? "admitted, replacing association " + std::to_string(*decision.replaced)
                       : "admitted";
  return verdict;
}

}  // namespace npac::associations
