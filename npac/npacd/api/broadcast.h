// A broadcast (POST /v1/broadcasts): one message's content for many providers — as a
// subscription version's activation goes to every LSMS (NANC 111 names the LSMS data
// download association function that carries it). The body is one message of POST
// /v1/messages (json.h) without its "spid", plus "to", the providers it goes to:
//
//   {"function":"lsms-data-download","to":"all", "operation":"event-report", ...}
//   {"function":"notifications","to":["0001","0002"], ..., "idempotency_key":"act-17"}
//
// "to":"all" means every ENABLED provider whose system type may bind for the message's
// functions — the rule the BindGate applies to a bind's function mask
// (associations::allowedFunctions, bind_facts.h): an SOA takes soa-management, an LSMS
// lsms-data-download, an SOA-and-LSMS both, and all three take network-data-management,
// notifications and queries. A list names providers explicitly: each must be provisioned
// and of a system type that takes the functions (disabled ones are accepted: their rows
// wait queued, as POST /v1/messages does). The PDU is encoded once; every provider's row
// stores those bytes.
// The route hands all rows to the core as ONE submission (one commit, all or nothing).
//
// The parsing and the recipient rule are pure functions here, so the admin API fuzz
// target (fuzz/admin_api_input.h) and the unit tests reach them without a server.
//
// Threading: pure functions and plain values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "db/provider_store.h"
#include "npac/npacd/api/json.h"
#include "npac/npacd/core/core_service.h"

namespace npac::npacd {

// Most providers one broadcast may reach (the list given, or what "all" resolves to): one
// submission is committed whole, so this bounds one transaction and one answer.
inline constexpr std::size_t kMaxBroadcastProviders = 10000;

struct BroadcastRequest {
  OutboundMessage content;         // its message.spid is empty; set per provider
  bool to_all = false;             // "to":"all"
  std::vector<std::string> spids;  // "to":[...], in the order given (when !to_all)
};

// The body of POST /v1/broadcasts. Refusals (each a 400 but too_many_recipients, 413):
//   invalid_broadcast     a "spid" or "messages" field (a broadcast names providers in "to")
//   invalid_function      "function" missing or not an association function name
//   invalid_recipients    "to" missing, neither "all" nor an array, or an empty array
//   invalid_spid          an element of "to" that is not a SPID
//   duplicate_recipient   a SPID named twice in "to"
//   too_many_recipients   more than kMaxBroadcastProviders in "to"
// and the message content's own refusals (invalid_message, invalid_idempotency_key).
Result<BroadcastRequest> parseBroadcast(const nlohmann::json& body);

// True when a provider of `type` may bind an association for every function in
// `function_mask` (associations::allowedFunctions: the bind's function-mask check).
bool systemTypeTakes(db::SystemType type, std::uint32_t function_mask);

// The providers a broadcast goes to, or why none: resolved against the provisioned
// providers (ProviderStore::list()). "all": the enabled providers whose system type takes
// the functions, by SPID. A list: its SPIDs in the order given. Refused with
// kProviderNotFound (404 provider_not_found), kFunctionNotAllowed or kNoRecipients (409)
// or kTooManyRecipients (413): statusResponse (request.h) answers each.
Result<std::vector<std::string>> resolveRecipients(const BroadcastRequest& request,
                                                   const std::vector<db::ServiceProvider>& provisioned);

// One OutboundMessage per recipient, each a copy of the content (the same PDU bytes)
// with its SPID: the rows of the one submission.
std::vector<OutboundMessage> broadcastMessages(const BroadcastRequest& request,
                                               const std::vector<std::string>& spids);

}  // namespace npac::npacd
