#include "npac/npacd/api/json.h"

#include <cstdio>
#include <ctime>

#include "associations/bind_facts.h"
#include "cmip/ber.h"
#include "common/utc_time.h"
#include "common/vocabulary.h"

namespace npac::npacd {

using nlohmann::json;

namespace {

// Priorities an application may give: higher leaves first (db/outbound_queue.h).
constexpr int kMinPriority = 0;
constexpr int kMaxPriority = 9;

// 400 invalid_message / invalid_response: `why` names the field and what is wrong with it.
Status invalidMessage(std::string why) { return Status::error(StatusCode::kInvalidMessage, std::move(why)); }
Status invalidResponse(std::string why) { return Status::error(StatusCode::kInvalidResponse, std::move(why)); }

Result<cmip::GlobalOrLocal> parseId(const json& object, const char* field) {
  auto it = object.find(field);
  if (it == object.end()) return invalidMessage(std::string(field) + " is required");
  if (it->is_number_integer()) return cmip::GlobalOrLocal::local(it->get<std::int64_t>());
  if (it->is_string()) {
    cmip::Result<cmip::Oid> oid = cmip::Oid::parse(it->get<std::string>());
    if (oid.isOk()) return cmip::GlobalOrLocal::global(oid.value());
    return invalidMessage(std::string(field) + ": '" + it->get<std::string>() +
                          "' is not a dotted object identifier (" + oid.status().message() + ")");
  }
  return invalidMessage(std::string(field) + " must be an OID string or a local integer");
}

Result<cmip::RdnSequence> parseRdns(const json& value, const std::string& field) {
  if (!value.is_array()) return invalidMessage(field + " must be an array of RDNs");
  cmip::RdnSequence rdns;
  for (std::size_t i = 0; i < value.size(); ++i) {
    const json& rdn = value[i];
    std::string at = field + "[" + std::to_string(i) + "]";
    if (!rdn.is_array() || rdn.empty()) return invalidMessage(at + " must be a non-empty array of {id, value}");
    cmip::RelativeDistinguishedName avas;
    for (std::size_t j = 0; j < rdn.size(); ++j) {
      std::string ava_at = at + "[" + std::to_string(j) + "]";
      if (!rdn[j].is_object() || !rdn[j].contains("id") || !rdn[j]["id"].is_string()) {
        return invalidMessage(ava_at + " needs an OID string 'id'");
      }
      cmip::Result<cmip::Oid> oid = cmip::Oid::parse(rdn[j]["id"].get<std::string>());
      if (!oid.isOk()) return invalidMessage(ava_at + ".id is not an OID");
      Result<cmip::OpaqueBer> v = parseBerHex(rdn[j].value("value", json()), ava_at + ".value");
      if (!v.isOk()) return v.status();
      avas.push_back(cmip::Ava{oid.value(), v.value()});
    }
    rdns.push_back(std::move(avas));
  }
  return rdns;
}

Result<cmip::ObjectInstance> parseInstance(const json& object) {
  using Form = cmip::ObjectInstance::Form;
  auto it = object.find("instance");
  if (it == object.end() || !it->is_object() || it->size() != 1) {
    return invalidMessage(
        "instance is required: {\"dn\":[[{id,value}]]}, {\"local_dn\":...} or {\"non_specific\":hex}");
  }
  cmip::ObjectInstance instance;
  if (it->contains("non_specific")) {
    std::optional<db::Bytes> octets;
    if ((*it)["non_specific"].is_string()) octets = db::fromHex((*it)["non_specific"].get<std::string>());
    if (!octets) return invalidMessage("instance.non_specific must be hex");
    instance.form = Form::kNonSpecific;
    instance.nonSpecific = std::move(*octets);
    return instance;
  }
  const bool local = it->contains("local_dn");
  if (!local && !it->contains("dn")) {
    return invalidMessage("instance must have dn, local_dn or non_specific");
  }
  Result<cmip::RdnSequence> rdns = parseRdns(local ? (*it)["local_dn"] : (*it)["dn"],
                                             local ? "instance.local_dn" : "instance.dn");
  if (!rdns.isOk()) return rdns.status();
  instance.form = local ? Form::kLocalDistinguishedName : Form::kDistinguishedName;
  instance.rdns = std::move(rdns.value());
  return instance;
}

// [{"id": OID|int, "value": hex}] for create and set.
Result<std::vector<cmip::Attribute>> parseAttributes(const json& object, bool values_required) {
  std::vector<cmip::Attribute> attributes;
  auto it = object.find("attributes");
  if (it == object.end()) return attributes;
  if (!it->is_array()) return invalidMessage("attributes must be an array");
  for (std::size_t i = 0; i < it->size(); ++i) {
    const json& a = (*it)[i];
    std::string at = "attributes[" + std::to_string(i) + "]";
    if (!a.is_object()) return invalidMessage(at + " must be an object");
    Result<cmip::GlobalOrLocal> id = parseId(a, "id");
    if (!id.isOk()) return invalidMessage(at + "." + id.status().message());
    cmip::Attribute attribute{id.value(), {}};
    if (a.contains("value")) {
      Result<cmip::OpaqueBer> v = parseBerHex(a["value"], at + ".value");
      if (!v.isOk()) return v.status();
      attribute.value = v.value();
    } else if (values_required) {
      return invalidMessage(at + ".value is required");
    }
    attributes.push_back(std::move(attribute));
  }
  return attributes;
}

struct OperationName {
  const char* name;
  cmip::CmipOpcode unconfirmed;
  cmip::CmipOpcode confirmed;
  bool confirmable;  // false: X.711 defines only the confirmed form
};
constexpr OperationName kOperations[] = {
    {"event-report", cmip::CmipOpcode::kEventReport, cmip::CmipOpcode::kEventReportConfirmed, true},
    {"action", cmip::CmipOpcode::kAction, cmip::CmipOpcode::kActionConfirmed, true},
    {"set", cmip::CmipOpcode::kSet, cmip::CmipOpcode::kSetConfirmed, true},
    {"create", cmip::CmipOpcode::kCreate, cmip::CmipOpcode::kCreate, false},
    {"delete", cmip::CmipOpcode::kDelete, cmip::CmipOpcode::kDelete, false},
    {"get", cmip::CmipOpcode::kGet, cmip::CmipOpcode::kGet, false},
};

}  // namespace

Result<cmip::OpaqueBer> parseBerHex(const json& value, const std::string& field) {
  if (!value.is_string()) return invalidMessage(field + " must be a hex string");
  std::optional<db::Bytes> bytes = db::fromHex(value.get<std::string>());
  if (!bytes) return invalidMessage(field + " is not an even number of hex digits");
  cmip::Result<cmip::Tlv> tlv = cmip::decodeSingleTlv(*bytes);
  if (!tlv.isOk()) {
    return invalidMessage(field + " is not one BER value: " + tlv.status().toString());
  }
  return cmip::OpaqueBer{std::move(*bytes)};
}

Result<std::uint32_t> parseFunctions(const json& value) {
  std::vector<json> names;
  if (value.is_string()) names.push_back(value);
  else if (value.is_array() && !value.empty()) names.assign(value.begin(), value.end());
  else return invalidMessage("function is required: a function name or a list of them");
  std::uint32_t mask = 0;
  for (const json& name : names) {
    // The one name table (common/vocabulary.h): the simulator's and the bind profile's
    // names, and "network-data", this API's earlier spelling of bit 2.
    std::optional<common::AssociationFunction> f;
    if (name.is_string()) f = common::parseAssociationFunction(name.get<std::string>());
    if (!f) {
      return invalidMessage("unknown function " + name.dump() + ": " + common::associationFunctionNames());
    }
    mask |= 1u << static_cast<unsigned>(*f);
  }
  return mask;
}

Result<OutboundMessage> parseMessage(const json& object) {
  if (!object.is_object()) return invalidMessage("a message must be a JSON object");
  std::string spid = object.value("spid", json()).is_string() ? object["spid"].get<std::string>() : "";
  if (!db::isValidSpid(spid)) return invalidMessage("spid must be 4 ASCII letters or digits");
  Result<OutboundMessage> out = parseMessageContent(object);
  if (out.isOk()) out->message.spid = spid;
  return out;
}

namespace {

// A message's envelope: its association functions, priority, key and idempotency key.
Status readEnvelope(const json& object, OutboundMessage& out) {
  Result<std::uint32_t> functions = parseFunctions(object.value("function", json()));
  if (!functions.isOk()) return functions.status();
  out.message.function_mask = functions.value();
  if (object.contains("priority")) {
    const json& p = object["priority"];
    if (!p.is_number_integer() || p.get<std::int64_t>() < kMinPriority || p.get<std::int64_t>() > kMaxPriority) {
      return invalidMessage("priority must be an integer 0..9 (higher leaves first)");
    }
    out.message.priority = p.get<int>();
  }
  if (object.contains("key")) {
    if (!object["key"].is_string()) return invalidMessage("key must be a string");
    out.key = object["key"].get<std::string>();
  }
  if (object.contains("idempotency_key")) {
    const json& k = object["idempotency_key"];
    if (!k.is_string() || !db::isValidIdempotencyKey(k.get<std::string>())) {
      return Status::error(StatusCode::kInvalidIdempotencyKey,
                           "idempotency_key must be a string of 1.." +
                               std::to_string(db::kMaxIdempotencyKeyLength) + " visible ASCII characters (0x21..0x7e)");
    }
    out.message.idempotency_key = k.get<std::string>();
  }
  return Status::ok();
}

// The CMIP operation and whether it is confirmed (X.711 §7.4), stored with the row
// (db/outbound_queue.h MessageKind): delivery never decodes it.
Result<const OperationName*> readOperation(const json& object, OutboundMessage& out) {
  std::string operation = object.value("operation", json()).is_string() ? object["operation"].get<std::string>() : "";
  const OperationName* op = nullptr;
  for (const OperationName& candidate : kOperations) {
    if (operation == candidate.name) op = &candidate;
  }
  if (op == nullptr) return invalidMessage("operation must be event-report, action, create, delete, set or get");
  bool confirmed = true;
  if (object.contains("confirmed")) {
    if (!object["confirmed"].is_boolean()) return invalidMessage("confirmed must be true or false");
    confirmed = object["confirmed"].get<bool>();
  }
  if (!confirmed && !op->confirmable) {
    return invalidMessage(std::string(op->name) + " is always confirmed (X.711 defines no unconfirmed form)");
  }
  out.opcode = confirmed ? op->confirmed : op->unconfirmed;
  out.confirmed = confirmed;
  out.message.kind = db::MessageKind::kPush;
  out.message.opcode = static_cast<int>(out.opcode);
  out.message.confirmed = confirmed;
  return op;
}

// The argument of a create or set: the attributes (at least one for set).
Result<cmip::CmipArgument> createOrSetArgument(const json& object, const std::string& name,
                                               const cmip::Selection& selection) {
  Result<std::vector<cmip::Attribute>> attributes = parseAttributes(object, true);
  if (!attributes.isOk()) return attributes.status();
  if (name == "create") {
    cmip::CreateArgument create;
    create.managedObjectClass = selection.baseClass;
    create.managedObjectInstance = selection.baseInstance;
    if (!attributes->empty()) create.attributeList = attributes.value();
    return cmip::CmipArgument(std::move(create));
  }
  if (attributes->empty()) return invalidMessage("set needs at least one attribute");
  cmip::SetArgument set{selection, {}};
  for (const cmip::Attribute& a : attributes.value()) {
    set.modificationList.push_back(cmip::Modification{std::nullopt, a.id, a.value});
  }
  return cmip::CmipArgument(std::move(set));
}

// The operation's argument: the managed object (class, instance) and what the operation
// carries — the event or action type and information, the attributes.
Result<cmip::CmipArgument> readArgument(const json& object, const OperationName& op) {
  Result<cmip::GlobalOrLocal> object_class = parseId(object, "object_class");
  if (!object_class.isOk()) return object_class.status();
  Result<cmip::ObjectInstance> instance = parseInstance(object);
  if (!instance.isOk()) return instance.status();
  std::optional<cmip::OpaqueBer> information;
  if (object.contains("information")) {
    Result<cmip::OpaqueBer> info = parseBerHex(object["information"], "information");
    if (!info.isOk()) return info.status();
    information = info.value();
  }
  cmip::Selection selection{object_class.value(), instance.value(), {}, {}, {}, {}};
  const std::string name = op.name;
  if (name == "event-report" || name == "action") {
    Result<cmip::GlobalOrLocal> type = parseId(object, "type");
    if (!type.isOk()) {
      return Status::error(type.status().code(), type.status().message() + " (the event or action type)");
    }
    if (name == "event-report") {
      return cmip::CmipArgument(cmip::EventReportArgument{object_class.value(), instance.value(), std::nullopt,
                                                          type.value(), information});
    }
    return cmip::CmipArgument(cmip::ActionArgument{selection, type.value(), information});
  }
  if (name == "create" || name == "set") return createOrSetArgument(object, name, selection);
  if (name == "delete") return cmip::CmipArgument(cmip::DeleteArgument{selection});
  // get
  Result<std::vector<cmip::Attribute>> attributes = parseAttributes(object, false);
  if (!attributes.isOk()) return attributes.status();
  cmip::GetArgument get{selection, std::nullopt};
  if (!attributes->empty()) {
    get.attributeIdList.emplace();
    for (const cmip::Attribute& a : attributes.value()) get.attributeIdList->push_back(a.id);
  }
  return cmip::CmipArgument(std::move(get));
}

}  // namespace

Result<OutboundMessage> parseMessageContent(const json& object) {
  if (!object.is_object()) return invalidMessage("a message must be a JSON object");
  OutboundMessage out;
  if (Status refused = readEnvelope(object, out); !refused.isOk()) return refused;
  Result<const OperationName*> op = readOperation(object, out);
  if (!op.isOk()) return op.status();
  Result<cmip::CmipArgument> argument = readArgument(object, *op.value());
  if (!argument.isOk()) return argument.status();
  cmip::CmipInvoke invoke;
  invoke.opcode = out.opcode;
  invoke.argument = std::move(argument.value());
  out.message.pdu = encodeQueuedInvoke(std::move(invoke));
  return out;
}

Result<std::vector<OutboundMessage>> parseMessages(const json& body) {
  std::vector<OutboundMessage> out;
  if (body.is_object() && body.contains("messages")) {
    const json& list = body["messages"];
    if (!list.is_array() || list.empty() || list.size() > kMaxBatchMessages) {
      return invalidMessage("messages must be an array of 1.." + std::to_string(kMaxBatchMessages) + " messages");
    }
    for (std::size_t i = 0; i < list.size(); ++i) {
      Result<OutboundMessage> one = parseMessage(list[i]);
      if (!one.isOk()) {
        return Status::error(one.status().code(), "messages[" + std::to_string(i) + "]: " + one.status().message());
      }
      // A key names one message of its provider: twice in one submission is a mistake
      // of the client, not a retry.
      for (std::size_t j = 0; j < out.size() && one->message.idempotency_key; ++j) {
        if (out[j].message.idempotency_key == one->message.idempotency_key &&
            out[j].message.spid == one->message.spid) {
          return Status::error(StatusCode::kRepeatedIdempotencyKey,
                               "messages[" + std::to_string(i) + "]: idempotency_key '" +
                                   *one->message.idempotency_key + "' is already given to messages[" +
                                   std::to_string(j) + "] for provider " + one->message.spid);
        }
      }
      out.push_back(std::move(one.value()));
    }
    return out;
  }
  Result<OutboundMessage> one = parseMessage(body);
  if (!one.isOk()) return one.status();
  out.push_back(std::move(one.value()));
  return out;
}

Result<InboundResponse> parseInboundResponse(const json& body) {
  if (!body.is_object()) return invalidResponse("the body must be a JSON object");
  InboundResponse response;
  std::string outcome = body.value("outcome", json("result")).is_string() ? body.value("outcome", std::string("result")) : "";
  if (outcome == "result") {
    response.kind = InboundResponse::Kind::kResult;
    if (body.contains("result")) {
      Result<cmip::OpaqueBer> result = parseBerHex(body["result"], "result");
      if (!result.isOk()) return invalidResponse(result.status().message());
      response.result = result.value();
    }
    return response;
  }
  if (outcome != "error") return invalidResponse("outcome must be \"result\" or \"error\"");
  response.kind = InboundResponse::Kind::kError;
  const json code = body.value("error_code", json());
  if (code.is_number_integer() && cmip::isKnownCmipError(code.get<std::int32_t>())) {
    response.error = static_cast<cmip::CmipError>(code.get<std::int32_t>());
  } else if (code.is_string()) {
    bool found = false;
    for (std::int32_t e = 0; e <= cmip::kMaxCmipError; ++e) {
      if (code.get<std::string>() == cmip::cmipErrorName(static_cast<cmip::CmipError>(e))) {
        response.error = static_cast<cmip::CmipError>(e);
        found = true;
      }
    }
    if (!found) return invalidResponse("error_code " + code.dump() + " is not an X.711 CMIP error name");
  } else {
    return invalidResponse("error_code must be an X.711 error name (\"processingFailure\") or number 0..23");
  }
  if (body.contains("parameter")) {
    Result<cmip::OpaqueBer> parameter = parseBerHex(body["parameter"], "parameter");
    if (!parameter.isOk()) return invalidResponse(parameter.status().message());
    response.error_parameter = parameter.value();
  }
  return response;
}

std::optional<std::size_t> invalidUtf8At(std::string_view text) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t n = text.size();
  std::size_t i = 0;
  while (i < n) {
    const unsigned char b = bytes[i];
    if (b < 0x80) {
      ++i;
      continue;
    }
    // RFC 3629 §4 (UTF8-2, UTF8-3, UTF8-4): the lead byte fixes the length and the
    // range of the first continuation byte, which excludes overlongs and surrogates.
    std::size_t length = 0;
    unsigned char low = 0x80, high = 0xBF;
    if (b >= 0xC2 && b <= 0xDF) {
      length = 2;
    } else if (b >= 0xE0 && b <= 0xEF) {
      length = 3;
      if (b == 0xE0) low = 0xA0;
      if (b == 0xED) high = 0x9F;
    } else if (b >= 0xF0 && b <= 0xF4) {
      length = 4;
      if (b == 0xF0) low = 0x90;
      if (b == 0xF4) high = 0x8F;
    } else {
      return i;  // a continuation byte without a lead, C0, C1 or F5..FF
    }
    if (i + length > n) return i;
    if (bytes[i + 1] < low || bytes[i + 1] > high) return i;
    for (std::size_t k = 2; k < length; ++k) {
      if (bytes[i + k] < 0x80 || bytes[i + k] > 0xBF) return i;
    }
    i += length;
  }
  return std::nullopt;
}

std::string describeInvalidUtf8(const std::string& what, std::string_view text, std::size_t offset) {
  char byte[8];
  std::snprintf(byte, sizeof byte, "0x%02x", offset < text.size() ? static_cast<unsigned char>(text[offset]) : 0u);
  return what + " is not valid UTF-8 (byte " + byte + " at offset " + std::to_string(offset) + ")";
}

std::optional<db::TimeMs> parseTime(const json& value) {
  if (value.is_number_integer()) return value.get<db::TimeMs>();
  if (!value.is_string()) return std::nullopt;
  const std::string text = value.get<std::string>();
  std::tm tm{};
  int millis = 0;
  char tail[8] = {};
  int n = std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%7s", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                      &tm.tm_hour, &tm.tm_min, &tm.tm_sec, tail);
  if (n != 7) return std::nullopt;
  std::string rest(tail);
  if (rest.size() == 5 && rest[0] == '.' && rest[4] == 'Z') {
    if (std::sscanf(rest.c_str() + 1, "%3d", &millis) != 1) return std::nullopt;
  } else if (rest != "Z") {
    return std::nullopt;
  }
  if (tm.tm_mon < 1 || tm.tm_mon > 12 || tm.tm_mday < 1 || tm.tm_mday > 31 || tm.tm_hour > 23 ||
      tm.tm_min > 59 || tm.tm_sec > 60) {
    return std::nullopt;
  }
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  return static_cast<db::TimeMs>(timegm(&tm)) * 1000 + millis;
}

std::string formatTime(db::TimeMs at) { return common::formatUtcMillis(at); }

json toJson(const db::ServiceProvider& provider) {
  return {{"spid", provider.spid},
          {"name", provider.name},
          {"system_type", db::toString(provider.system_type)},
          {"enabled", provider.enabled}};
}

json toJson(const db::ProvisionedNsap& nsap) {
  json out = {{"spid", nsap.spid}, {"nsap", db::toHex(nsap.nsap)}};
  if (nsap.nsap.size() == associations::kNsapOctets) {
    associations::Nsap::Octets octets{};
    std::copy(nsap.nsap.begin(), nsap.nsap.end(), octets.begin());
    auto decoded = associations::Nsap::fromOctets(octets);
    if (decoded.isOk()) out["address"] = decoded.value().toAddressString();
  }
  out["weight"] = nsap.weight ? json(*nsap.weight) : json(nullptr);
  out["relative_cost"] = nsap.relative_cost ? json(*nsap.relative_cost) : json(nullptr);
  return out;
}

json toJson(const db::ProviderKey& key) {
  return {{"spid", key.spid},
          {"key_list_id", key.list_id},
          {"key_id", key.key_id},
          {"algorithm", db::toString(key.algorithm)},
          {"state", db::toString(key.state)},
          {"not_before", formatTime(key.not_before_at)},
          {"not_after", formatTime(key.not_after_at)},
          {"last_sequence", key.last_sequence ? json(*key.last_sequence) : json(nullptr)},
          {"public_key_pem", key.public_key_pem}};
}

json toJson(const db::QueuedMessage& m) {
  json out = {{"id", m.id},
              {"spid", m.spid},
              {"function_mask", m.function_mask},
              {"functions", associations::FunctionMask(static_cast<std::uint8_t>(m.function_mask)).toString()},
              {"priority", m.priority},
              {"state", db::toString(m.state)},
              {"attempts", m.attempts},
              {"retransmission", m.retransmission},
              {"created_at", formatTime(m.created_at)},
              {"pdu", db::toHex(m.pdu)}};
  if (m.sent_at) out["sent_at"] = formatTime(*m.sent_at);
  if (m.acknowledged_at) out["acknowledged_at"] = formatTime(*m.acknowledged_at);
  if (m.association_id) out["association_id"] = *m.association_id;
  if (m.failure_reason) out["failure_reason"] = *m.failure_reason;
  if (m.failed_at) out["failed_at"] = formatTime(*m.failed_at);
  if (m.idempotency_key) out["idempotency_key"] = *m.idempotency_key;
  return out;
}

json toJson(const InboundRequest& r) {
  return {{"id", r.id},
          {"spid", r.spid},
          {"association_id", r.association_id},
          {"nsap", r.nsap_hex},
          {"invoke_id", r.invoke_id},
          {"operation", cmip::cmipOpcodeName(r.opcode)},
          {"pdu", db::toHex(r.pdu)},
          {"received_at", formatTime(r.received_at)}};
}

json toJson(const AssociationInfo& a) {
  return {{"id", a.id},
          {"spid", a.spid},
          {"nsap", a.nsap_hex},
          {"peer", a.peer_address},
          {"function_mask", a.function_mask},
          {"functions", a.functions},
          {"state", a.state},
          {"recovery_mode", a.recovery_mode},
          {"bound_at", formatTime(a.bound_at)},
          {"sent", a.sent},
          {"received", a.received},
          {"outstanding", a.outstanding},
          {"retransmissions", a.retransmissions},
          {"core_thread", a.core_thread},
          {"heartbeat_rtt_ms", a.heartbeat_rtt_seconds ? json(*a.heartbeat_rtt_seconds * 1000.0) : json(nullptr)},
          {"weight", a.egress ? json(a.egress->weight) : json(nullptr)},
          {"relative_cost", a.egress ? json(a.egress->relative_cost) : json(nullptr)},
          {"load_percent", a.egress && a.egress->load_percent ? json(*a.egress->load_percent) : json(nullptr)},
          {"lrtm", a.egress && a.egress->lrtm ? json{{"response_time_ms", a.egress->lrtm->response_time_seconds * 1000.0},
                                                      {"measured", a.egress->lrtm->measured},
                                                      {"n", a.egress->lrtm->n},
                                                      {"nw", a.egress->lrtm->nw}}
                                               : json(nullptr)}};
}

json toJson(const ProviderEgressView& view, bool bound) {
  json recent = json::array();
  for (const ProviderEgressView::Pick& pick : view.recent) {
    recent.push_back({{"association_id", pick.association},
                      {"function", pick.function},
                      {"at", formatTime(pick.at)},
                      {"retransmission", pick.retransmission}});
  }
  return {{"spid", view.spid}, {"policy", view.policy}, {"bound_this_run", bound}, {"recent", recent}};
}

}  // namespace npac::npacd
