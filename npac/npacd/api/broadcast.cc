#include "npac/npacd/api/broadcast.h"

#include <algorithm>
#include <unordered_map>

#include "associations/bind_facts.h"

namespace npac::npacd {

using nlohmann::json;

namespace {

std::string functionNames(std::uint32_t mask) {
  return associations::FunctionMask(static_cast<std::uint8_t>(mask)).toString();
}

// A value as an error message shows it: a string quoted and cut short (the answer echoes
// no megabyte of a client's body), anything else by its JSON type.
std::string shown(const json& value) {
  constexpr std::size_t kShown = 40;
  if (!value.is_string()) return std::string("a JSON ") + value.type_name();
  const std::string& text = value.get_ref<const std::string&>();
  std::size_t cut = std::min(text.size(), kShown);
  while (cut > 0 && cut < text.size() && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;  // not mid-character
  const std::string quoted = json(text.substr(0, cut)).dump(-1, ' ', false, json::error_handler_t::replace);
  return cut < text.size() ? quoted + "..." : quoted;
}

}  // namespace

namespace {

// "to": "all", or 1..kMaxBroadcastProviders distinct SPIDs, into `out`.
Status readRecipients(const json& body, BroadcastRequest& out) {
  auto to = body.find("to");
  if (to == body.end()) {
    return Status::error(StatusCode::kInvalidRecipients, "to is required: \"all\" or a list of SPIDs");
  }
  if (to->is_string()) {
    if (to->get<std::string>() != "all") {
      return Status::error(StatusCode::kInvalidRecipients,
                           "to must be \"all\" or a list of SPIDs, not the string " + shown(*to));
    }
    out.to_all = true;
    return Status::ok();
  }
  if (!to->is_array()) {
    return Status::error(StatusCode::kInvalidRecipients, "to must be \"all\" or a list of SPIDs, not " + shown(*to));
  }
  if (to->empty()) {
    return Status::error(StatusCode::kInvalidRecipients, "to is an empty list: name at least one SPID, or \"all\"");
  }
  if (to->size() > kMaxBroadcastProviders) {
    return Status::error(StatusCode::kTooManyRecipients, "to names " + std::to_string(to->size()) +
                                                             " providers; a broadcast reaches at most " +
                                                             std::to_string(kMaxBroadcastProviders));
  }
  std::unordered_map<std::string, std::size_t> seen;
  out.spids.reserve(to->size());
  for (std::size_t i = 0; i < to->size(); ++i) {
    const json& element = (*to)[i];
    const std::string at = "to[" + std::to_string(i) + "]";
    if (!element.is_string() || !db::isValidSpid(element.get<std::string>())) {
      return Status::error(StatusCode::kInvalidSpid,
                           at + ": " + shown(element) + " is not a SPID: 4 ASCII letters or digits");
    }
    const std::string spid = element.get<std::string>();
    auto [it, added] = seen.emplace(spid, i);
    if (!added) {
      return Status::error(StatusCode::kDuplicateRecipient,
                           at + ": provider " + spid + " is already named at to[" + std::to_string(it->second) + "]");
    }
    out.spids.push_back(spid);
  }
  return Status::ok();
}

}  // namespace

Result<BroadcastRequest> parseBroadcast(const json& body) {
  if (!body.is_object()) return Status::error(StatusCode::kInvalidBroadcast, "the body must be a JSON object");
  // A broadcast is one message for the providers named in "to": a "spid" or a
  // "messages" list is a client mixing it up with POST /v1/messages, not a detail to drop.
  if (body.contains("spid")) {
    return Status::error(StatusCode::kInvalidBroadcast, "a broadcast names its providers in \"to\", not \"spid\"");
  }
  if (body.contains("messages")) {
    return Status::error(StatusCode::kInvalidBroadcast, "a broadcast carries one message's fields, not \"messages\" "
                                                        "(use POST /v1/messages for a batch)");
  }
  if (!body.contains("function")) {
    return Status::error(StatusCode::kInvalidFunction,
                         "function is required: the association function the message is sent on (" +
                             common::associationFunctionNames() + ")");
  }
  Result<std::uint32_t> functions = parseFunctions(body["function"]);
  if (!functions.isOk()) return Status::error(StatusCode::kInvalidFunction, functions.status().message());
  BroadcastRequest out;
  NPAC_RETURN_IF_ERROR(readRecipients(body, out));
  Result<OutboundMessage> content = parseMessageContent(body);
  if (!content.isOk()) return content.status();
  out.content = std::move(content).value();
  return out;
}

bool systemTypeTakes(db::SystemType type, std::uint32_t function_mask) {
  const associations::FunctionMask wanted(static_cast<std::uint8_t>(function_mask));
  return function_mask <= 0xffu && wanted.subsetOf(associations::allowedFunctions(type));
}

Result<std::vector<std::string>> resolveRecipients(const BroadcastRequest& request,
                                                   const std::vector<db::ServiceProvider>& provisioned) {
  const std::uint32_t mask = request.content.message.function_mask;
  std::vector<std::string> spids;
  if (request.to_all) {
    for (const db::ServiceProvider& provider : provisioned) {
      if (provider.enabled && systemTypeTakes(provider.system_type, mask)) spids.push_back(provider.spid);
    }
    if (spids.empty()) {
      return Status::error(StatusCode::kNoRecipients,
                           "no enabled provider has a system type that binds for " + functionNames(mask) +
                               " (SOA: soa-management, LSMS: lsms-data-download; both: network-data-management, "
                               "notifications, queries): nothing was queued");
    }
    if (spids.size() > kMaxBroadcastProviders) {
      return Status::error(StatusCode::kTooManyRecipients,
                           "\"all\" is " + std::to_string(spids.size()) + " providers; a broadcast reaches at most " +
                               std::to_string(kMaxBroadcastProviders) + ": name them in lists");
    }
    return spids;
  }
  std::unordered_map<std::string, const db::ServiceProvider*> by_spid;
  for (const db::ServiceProvider& provider : provisioned) by_spid.emplace(provider.spid, &provider);
  for (std::size_t i = 0; i < request.spids.size(); ++i) {
    const std::string& spid = request.spids[i];
    const std::string at = "to[" + std::to_string(i) + "]";
    auto it = by_spid.find(spid);
    if (it == by_spid.end()) {
      return Status::error(StatusCode::kProviderNotFound, at + ": no provider " + spid + " is provisioned");
    }
    if (!systemTypeTakes(it->second->system_type, mask)) {
      return Status::error(StatusCode::kFunctionNotAllowed,
                           at + ": provider " + spid + " is of system type " + db::toString(it->second->system_type) +
                               ", which never binds for " + functionNames(mask) + ": the message could never leave");
    }
    spids.push_back(spid);
  }
  return spids;
}

std::vector<OutboundMessage> broadcastMessages(const BroadcastRequest& request,
                                               const std::vector<std::string>& spids) {
  std::vector<OutboundMessage> rows;
  rows.reserve(spids.size());
  for (const std::string& spid : spids) {
    rows.push_back(request.content);
    rows.back().message.spid = spid;
  }
  return rows;
}

}  // namespace npac::npacd
