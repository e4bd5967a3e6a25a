// The admin API's JSON vocabulary: request bodies parsed into domain values (with the
// specific reason when they are wrong) and domain values rendered as JSON. docs/API.md
// shows every shape; the conversions live here so npacd's HTTP routes stay thin and so
// other callers (tests, the core) can reuse them.
//
// A submitted message (POST /v1/messages) becomes an OutboundMessage whose PDU is the
// ROSE Invoke of the CMIP operation it describes (encodeQueuedInvoke, core_service.h):
//
//   {"spid":"0001","function":"notifications","priority":0,"key":"3035551212",
//    "operation":"event-report","confirmed":true,
//    "object_class":"1.3.6.1.4.1.103.7.0.0.1.3",
//    "instance":{"dn":[[{"id":"2.5.4.3","value":"13044e504143"}]]},
//    "type":"1.3.6.1.4.1.103.7.0.0.5.1","information":"0400"}
//
// Threading: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/status.h"
#include "db/clock.h"
#include "db/key_store.h"
#include "db/nsap_store.h"
#include "db/outbound_queue.h"
#include "db/provider_store.h"
#include "npac/npacd/core/core_service.h"

namespace npac::npacd {

// A parser answers Result<T> (common/status.h): the value, or a Status in the kRequest
// group whose code is the answer's "code" (StatusCode::kInvalidMessage is
// "invalid_message") and whose message is the sentence for a person
// ("messages[2].information: not hex"). statusResponse (request.h) makes it the answer.

// Most messages in one submission.
inline constexpr std::size_t kMaxBatchMessages = 1000;

// One message object, or {"messages":[...]} (1..kMaxBatchMessages).
Result<std::vector<OutboundMessage>> parseMessages(const nlohmann::json& body);
Result<OutboundMessage> parseMessage(const nlohmann::json& object);
// A message's fields but its "spid" (left empty, whatever the object holds): the content
// POST /v1/broadcasts sends to each of its providers (broadcast.h).
Result<OutboundMessage> parseMessageContent(const nlohmann::json& object);

// "soa-management", "lsms-data-download", "network-data-management" ("network-data" is
// accepted too), "notifications", "queries", or an array of them → the function mask bits
// (common/vocabulary.h AssociationFunction).
Result<std::uint32_t> parseFunctions(const nlohmann::json& value);

// The provider's answer to an inbound request (POST /v1/inbound/{id}/response).
Result<InboundResponse> parseInboundResponse(const nlohmann::json& body);

// Lower-case hex → bytes that are exactly one well-formed BER TLV.
Result<cmip::OpaqueBer> parseBerHex(const nlohmann::json& value, const std::string& field);

// The offset of the first byte that makes `text` not well-formed UTF-8 (RFC 3629 §4:
// no overlong forms, no surrogates U+D800..U+DFFF, nothing above U+10FFFF), or nullopt
// when all of it is. JSON text exchanged between systems is UTF-8 (RFC 8259 §8.1), so
// every string the API takes in is checked with this before it can reach an answer.
std::optional<std::size_t> invalidUtf8At(std::string_view text);
// "<what> is not valid UTF-8 (byte 0xff at offset 3)" for a 400 bad_utf8.
std::string describeInvalidUtf8(const std::string& what, std::string_view text, std::size_t offset);

// "2026-11-29T15:00:00Z" (or with milliseconds) or a number of ms since the epoch.
std::optional<db::TimeMs> parseTime(const nlohmann::json& value);
std::string formatTime(db::TimeMs at);  // "2026-11-29T15:00:00.000Z" (common/utc_time.h)

nlohmann::json toJson(const db::ServiceProvider& provider);
nlohmann::json toJson(const db::ProvisionedNsap& nsap);
nlohmann::json toJson(const db::ProviderKey& key);
nlohmann::json toJson(const db::QueuedMessage& message);  // without the PDU bytes' meaning
nlohmann::json toJson(const InboundRequest& request);
nlohmann::json toJson(const AssociationInfo& association);
// GET /v1/providers/{spid}/egress; `bound`: the core knows the provider in this run.
nlohmann::json toJson(const ProviderEgressView& view, bool bound);

}  // namespace npac::npacd
