// JSON <-> ACSE / ROSE / CMIP / NPAC bind values for npac-pdu.
#include "npac/npac-pdu/json_upper.h"

#include "cmip/npac_bind.h"
#include "cmip/oids.h"

namespace npac::pdu {
namespace {

using namespace npac::cmip;

[[noreturn]] void fail(const std::string& what) { throw JsonError(what); }

const Json& need(const Json& j, const char* key) {
  if (!j.is_object() || !j.contains(key)) fail(std::string("missing field \"") + key + "\"");
  return j.at(key);
}

int64_t num(const Json& j, const char* key) {
  const Json& v = need(j, key);
  if (!v.is_number_integer()) fail(std::string("field \"") + key + "\" must be an integer");
  return v.get<int64_t>();
}

std::string str(const Json& j, const char* key) {
  const Json& v = need(j, key);
  if (!v.is_string()) fail(std::string("field \"") + key + "\" must be a string");
  return v.get<std::string>();
}

bool has(const Json& j, const char* key) { return j.is_object() && j.contains(key) && !j.at(key).is_null(); }

Oid oidFrom(const std::string& s) {
  auto r = Oid::parse(s);
  if (!r.isOk()) fail("bad OBJECT IDENTIFIER \"" + s + "\"");
  return *r;
}

std::vector<uint8_t> hexField(const Json& j, const char* key) { return fromHex(str(j, key)); }

OpaqueBer opaqueField(const Json& j, const char* key) {
  OpaqueBer v{hexField(j, key)};
  if (!decodeSingleTlv(v.bytes).isOk()) fail(std::string("\"") + key + "\" is not one BER TLV");
  return v;
}

// BIT STRING as a string of '0'/'1', bit 0 first.
std::string bitsToString(const BitString& b) {
  std::string s;
  for (size_t i = 0; i < b.bitCount(); ++i) s.push_back(b.bit(i) ? '1' : '0');
  return s;
}

BitString bitsFromString(const std::string& s) {
  BitString b = BitString::withBits(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '0' && s[i] != '1') fail("bit string must contain only 0 and 1: \"" + s + "\"");
    b.setBit(i, s[i] == '1');
  }
  return b;
}

GeneralizedTime timeFrom(const std::string& s) {
  auto r = GeneralizedTime::parse(s);
  if (!r.isOk()) fail("bad GeneralizedTime \"" + s + "\"");
  return *r;
}

// --- CMIP building blocks ---------------------------------------------------------------

Json golToJson(const GlobalOrLocal& id) {
  return id.isGlobal() ? Json{{"global", id.oid().toString()}} : Json{{"local", id.localValue()}};
}

GlobalOrLocal golFrom(const Json& j) {
  if (has(j, "global")) return GlobalOrLocal::global(oidFrom(str(j, "global")));
  return GlobalOrLocal::local(num(j, "local"));
}

Json rdnsToJson(const RdnSequence& rdns) {
  Json out = Json::array();
  for (const auto& rdn : rdns) {
    Json set = Json::array();
    for (const auto& ava : rdn) set.push_back({{"id", ava.id.toString()}, {"value", toHex(ava.value.bytes)}});
    out.push_back(set);
  }
  return out;
}

RdnSequence rdnsFrom(const Json& j) {
  if (!j.is_array()) fail("a distinguished name must be an array of RDN arrays");
  RdnSequence out;
  for (const auto& set : j) {
    if (!set.is_array()) fail("an RDN must be an array of {id, value}");
    RelativeDistinguishedName rdn;
    for (const auto& ava : set) rdn.push_back(Ava{oidFrom(str(ava, "id")), opaqueField(ava, "value")});
    out.push_back(rdn);
  }
  return out;
}

Json instanceToJson(const ObjectInstance& i) {
  switch (i.form) {
    case ObjectInstance::Form::kNonSpecific: return {{"non_specific", toHex(i.nonSpecific)}};
    case ObjectInstance::Form::kLocalDistinguishedName: return {{"local_distinguished_name", rdnsToJson(i.rdns)}};
    default: return {{"distinguished_name", rdnsToJson(i.rdns)}};
  }
}

ObjectInstance instanceFrom(const Json& j) {
  ObjectInstance i;
  if (has(j, "non_specific")) {
    i.form = ObjectInstance::Form::kNonSpecific;
    i.nonSpecific = hexField(j, "non_specific");
  } else if (has(j, "local_distinguished_name")) {
    i.form = ObjectInstance::Form::kLocalDistinguishedName;
    i.rdns = rdnsFrom(j.at("local_distinguished_name"));
  } else {
    i.rdns = rdnsFrom(need(j, "distinguished_name"));
  }
  return i;
}

Json attributesToJson(const std::vector<Attribute>& list) {
  Json out = Json::array();
  for (const auto& a : list) out.push_back({{"id", golToJson(a.id)}, {"value", toHex(a.value.bytes)}});
  return out;
}

std::vector<Attribute> attributesFrom(const Json& j) {
  if (!j.is_array()) fail("an attribute list must be an array");
  std::vector<Attribute> out;
  for (const auto& a : j) out.push_back({golFrom(need(a, "id")), opaqueField(a, "value")});
  return out;
}

Json selectionToJson(const Selection& s) {
  Json j{{"base_class", golToJson(s.baseClass)}, {"base_instance", instanceToJson(s.baseInstance)}};
  if (s.accessControl) j["access_control"] = externalToJson(*s.accessControl);
  if (s.synchronization) j["synchronization"] = static_cast<int>(*s.synchronization);
  if (s.scope) j["scope"] = {{"kind", static_cast<int>(s.scope->kind)}, {"value", s.scope->value}};
  if (s.filter) j["filter"] = toHex(s.filter->bytes);
  return j;
}

Selection selectionFrom(const Json& j) {
  Selection s;
  s.baseClass = golFrom(need(j, "base_class"));
  s.baseInstance = instanceFrom(need(j, "base_instance"));
  if (has(j, "access_control")) s.accessControl = externalFromJson(j.at("access_control"));
  if (has(j, "synchronization")) s.synchronization = static_cast<CmisSync>(num(j, "synchronization") != 0);
  if (has(j, "scope")) {
    int64_t kind = num(j.at("scope"), "kind");
    if (kind < 0 || kind > 2) fail("scope.kind must be 0, 1 or 2");
    s.scope = Scope{static_cast<Scope::Kind>(kind), num(j.at("scope"), "value")};
  }
  if (has(j, "filter")) s.filter = opaqueField(j, "filter");
  return s;
}

Json headerToJson(const ReplyHeader& h, Json j = Json::object()) {
  if (h.managedObjectClass) j["class"] = golToJson(*h.managedObjectClass);
  if (h.managedObjectInstance) j["instance"] = instanceToJson(*h.managedObjectInstance);
  if (h.currentTime) j["current_time"] = h.currentTime->toString();
  return j;
}

ReplyHeader headerFrom(const Json& j) {
  ReplyHeader h;
  if (has(j, "class")) h.managedObjectClass = golFrom(j.at("class"));
  if (has(j, "instance")) h.managedObjectInstance = instanceFrom(j.at("instance"));
  if (has(j, "current_time")) h.currentTime = timeFrom(str(j, "current_time"));
  return h;
}

Json resultToJson(const CmipResultValue& v) {
  return std::visit(
      [](const auto& r) -> Json {
        using R = std::decay_t<decltype(r)>;
        if constexpr (std::is_same_v<R, std::monostate>) {
          return Json::object();
        } else if constexpr (std::is_same_v<R, EventReportResult>) {
          Json j = headerToJson(r.header, {{"type", "event_report_result"}});
          if (r.eventReply) {
            j["event_type"] = golToJson(r.eventReply->eventType);
            if (r.eventReply->eventReplyInfo) j["event_reply_info"] = toHex(r.eventReply->eventReplyInfo->bytes);
          }
          return j;
        } else if constexpr (std::is_same_v<R, AttributeListResult>) {
          Json j = headerToJson(r.header, {{"type", "attribute_list_result"}});
          if (r.attributeList) j["attributes"] = attributesToJson(*r.attributeList);
          return j;
        } else if constexpr (std::is_same_v<R, ActionResult>) {
          Json j = headerToJson(r.header, {{"type", "action_result"}});
          if (r.actionReply) {
            j["action_type"] = golToJson(r.actionReply->actionType);
            j["action_reply_info"] = toHex(r.actionReply->actionReplyInfo.bytes);
          }
          return j;
        } else {
          return headerToJson(r.header, {{"type", "delete_result"}});
        }
      },
      v);
}

CmipResultValue resultFrom(const Json& j) {
  std::string type = str(j, "type");
  if (type == "event_report_result") {
    EventReportResult r{headerFrom(j), std::nullopt};
    if (has(j, "event_type")) {
      r.eventReply = EventReportResult::EventReply{golFrom(j.at("event_type")), std::nullopt};
      if (has(j, "event_reply_info")) r.eventReply->eventReplyInfo = opaqueField(j, "event_reply_info");
    }
    return r;
  }
  if (type == "attribute_list_result") {
    AttributeListResult r{headerFrom(j), std::nullopt};
    if (has(j, "attributes")) r.attributeList = attributesFrom(j.at("attributes"));
    return r;
  }
  if (type == "action_result") {
    ActionResult r{headerFrom(j), std::nullopt};
    if (has(j, "action_type")) {
      r.actionReply = ActionResult::ActionReply{golFrom(j.at("action_type")), opaqueField(j, "action_reply_info")};
    }
    return r;
  }
  if (type == "delete_result") return DeleteResult{headerFrom(j)};
  fail("unknown CMIP result type \"" + type + "\"");
}

Json argumentToJson(const CmipArgument& arg) {
  return std::visit(
      [](const auto& a) -> Json {
        using A = std::decay_t<decltype(a)>;
        if constexpr (std::is_same_v<A, EventReportArgument>) {
          Json j{{"class", golToJson(a.managedObjectClass)},
                 {"instance", instanceToJson(a.managedObjectInstance)}};
          if (a.eventTime) j["event_time"] = a.eventTime->toString();
          j["event_type"] = golToJson(a.eventType);
          if (a.eventInfo) j["event_info"] = toHex(a.eventInfo->bytes);
          return j;
        } else if constexpr (std::is_same_v<A, GetArgument>) {
          Json j = selectionToJson(a.selection);
          if (a.attributeIdList) {
            Json ids = Json::array();
            for (const auto& id : *a.attributeIdList) ids.push_back(golToJson(id));
            j["attribute_ids"] = ids;
          }
          return j;
        } else if constexpr (std::is_same_v<A, SetArgument>) {
          Json j = selectionToJson(a.selection);
          Json mods = Json::array();
          for (const auto& m : a.modificationList) {
            Json mj{{"attribute_id", golToJson(m.attributeId)}};
            if (m.modifyOperator) mj["operator"] = *m.modifyOperator;
            if (m.attributeValue) mj["value"] = toHex(m.attributeValue->bytes);
            mods.push_back(mj);
          }
          j["modifications"] = mods;
          return j;
        } else if constexpr (std::is_same_v<A, ActionArgument>) {
          Json j = selectionToJson(a.selection);
          j["action_type"] = golToJson(a.actionType);
          if (a.actionInfoArg) j["action_info"] = toHex(a.actionInfoArg->bytes);
          return j;
        } else if constexpr (std::is_same_v<A, CreateArgument>) {
          Json j{{"class", golToJson(a.managedObjectClass)}};
          if (a.managedObjectInstance) {
            j[a.instanceIsSuperior ? "superior_instance" : "instance"] = instanceToJson(*a.managedObjectInstance);
          }
          if (a.accessControl) j["access_control"] = externalToJson(*a.accessControl);
          if (a.referenceObjectInstance) j["reference_instance"] = instanceToJson(*a.referenceObjectInstance);
          if (a.attributeList) j["attributes"] = attributesToJson(*a.attributeList);
          return j;
        } else if constexpr (std::is_same_v<A, DeleteArgument>) {
          return selectionToJson(a.selection);
        } else if constexpr (std::is_same_v<A, LinkedReplyArgument>) {
          Json j{{"linked_reply_kind", static_cast<int>(a.kind)}};
          if (const auto* raw = std::get_if<std::vector<uint8_t>>(&a.body)) {
            j["content"] = toHex(*raw);
          } else {
            std::visit(
                [&](const auto& body) {
                  using B = std::decay_t<decltype(body)>;
                  if constexpr (!std::is_same_v<B, std::vector<uint8_t>>) j["result"] = resultToJson(body);
                },
                a.body);
          }
          return j;
        } else {
          return Json{{"get_invoke_id", a.getInvokeId}};
        }
      },
      arg);
}

CmipArgument argumentFrom(CmipOpcode op, const Json& j) {
  switch (op) {
    case CmipOpcode::kEventReport:
    case CmipOpcode::kEventReportConfirmed: {
      EventReportArgument a;
      a.managedObjectClass = golFrom(need(j, "class"));
      a.managedObjectInstance = instanceFrom(need(j, "instance"));
      if (has(j, "event_time")) a.eventTime = timeFrom(str(j, "event_time"));
      a.eventType = golFrom(need(j, "event_type"));
      if (has(j, "event_info")) a.eventInfo = opaqueField(j, "event_info");
      return a;
    }
    case CmipOpcode::kGet: {
      GetArgument a{selectionFrom(j), std::nullopt};
      if (has(j, "attribute_ids")) {
        a.attributeIdList.emplace();
        for (const auto& id : j.at("attribute_ids")) a.attributeIdList->push_back(golFrom(id));
      }
      return a;
    }
    case CmipOpcode::kSet:
    case CmipOpcode::kSetConfirmed: {
      SetArgument a{selectionFrom(j), {}};
      for (const auto& m : need(j, "modifications")) {
        Modification mod;
        if (has(m, "operator")) mod.modifyOperator = num(m, "operator");
        mod.attributeId = golFrom(need(m, "attribute_id"));
        if (has(m, "value")) mod.attributeValue = opaqueField(m, "value");
        a.modificationList.push_back(mod);
      }
      return a;
    }
    case CmipOpcode::kAction:
    case CmipOpcode::kActionConfirmed: {
      ActionArgument a{selectionFrom(j), golFrom(need(j, "action_type")), std::nullopt};
      if (has(j, "action_info")) a.actionInfoArg = opaqueField(j, "action_info");
      return a;
    }
    case CmipOpcode::kCreate: {
      CreateArgument a;
      a.managedObjectClass = golFrom(need(j, "class"));
      if (has(j, "instance")) a.managedObjectInstance = instanceFrom(j.at("instance"));
      if (has(j, "superior_instance")) {
        a.managedObjectInstance = instanceFrom(j.at("superior_instance"));
        a.instanceIsSuperior = true;
      }
      if (has(j, "access_control")) a.accessControl = externalFromJson(j.at("access_control"));
      if (has(j, "reference_instance")) a.referenceObjectInstance = instanceFrom(j.at("reference_instance"));
      if (has(j, "attributes")) a.attributeList = attributesFrom(j.at("attributes"));
      return a;
    }
    case CmipOpcode::kDelete: return DeleteArgument{selectionFrom(j)};
    case CmipOpcode::kLinkedReply: {
      LinkedReplyArgument a;
      int64_t kind = num(j, "linked_reply_kind");
      if (kind < 0 || kind > 8) fail("linked_reply_kind must be 0..8");
      a.kind = static_cast<LinkedReplyKind>(kind);
      if (has(j, "content")) {
        a.body = hexField(j, "content");
      } else {
        std::visit(
            [&](auto&& r) {
              using R = std::decay_t<decltype(r)>;
              if constexpr (std::is_same_v<R, std::monostate> || std::is_same_v<R, EventReportResult>) {
                fail("linked reply result must be an attribute list, action or delete result");
              } else {
                a.body = r;
              }
            },
            resultFrom(need(j, "result")));
      }
      return a;
    }
    case CmipOpcode::kCancelGet:
      return CancelGetArgument{static_cast<int32_t>(num(j, "get_invoke_id"))};
  }
  fail("unknown opcode");
}

// --- the NPAC access control and CMIPUserInfo ----------------------------------------

Json accessControlToJson(const LnpAccessControl& ac) {
  Json fns = Json::array();
  for (int i = 0; i < kAssociationFunctionCount; ++i) {
    auto f = static_cast<AssociationFunction>(i);
    if (ac.functions.has(f)) fns.push_back(associationFunctionName(f));
  }
  return {{"system_id", ac.systemId},
          {"system_type", systemTypeName(ac.systemType)},
          {"user_id", ac.userId},
          {"list_id", ac.listId},
          {"key_id", ac.keyId},
          {"departure_time", ac.departureTime.toString()},
          {"sequence_number", ac.sequenceNumber},
          {"association_functions", fns},
          {"recovery_mode", ac.recoveryMode},
          {"signature", toHex(ac.signature)},
          {"signed_content", toHex(signedContent(ac))}};
}

LnpAccessControl accessControlFrom(const Json& j) {
  LnpAccessControl ac;
  ac.systemId = str(j, "system_id");
  std::string type = str(j, "system_type");
  bool found = false;
  for (int t = 0; t <= 3; ++t) {
    if (type == systemTypeName(static_cast<SystemType>(t))) {
      ac.systemType = static_cast<SystemType>(t);
      found = true;
    }
  }
  if (!found) fail("system_type must be soa, lsms, soa-and-lsms or npac");
  ac.userId = str(j, "user_id");
  ac.listId = num(j, "list_id");
  ac.keyId = num(j, "key_id");
  ac.departureTime = timeFrom(str(j, "departure_time"));
  ac.sequenceNumber = num(j, "sequence_number");
  for (const auto& f : need(j, "association_functions")) {
    bool ok = false;
    for (int i = 0; i < kAssociationFunctionCount; ++i) {
      if (f == associationFunctionName(static_cast<AssociationFunction>(i))) {
        ac.functions.add(static_cast<AssociationFunction>(i));
        ok = true;
      }
    }
    if (!ok) fail("unknown association function " + f.dump());
  }
  const Json& rm = need(j, "recovery_mode");
  if (!rm.is_boolean()) fail("recovery_mode must be true or false");
  ac.recoveryMode = rm.get<bool>();
  ac.signature = hexField(j, "signature");
  Status s = validateAccessControl(ac);
  if (!s.isOk()) fail(s.message());
  return ac;
}

Json userInfoToJson(const CmipUserInfo& u) {
  Json j = Json::object();
  if (u.protocolVersion) j["protocol_version"] = bitsToString(*u.protocolVersion);
  if (u.functionalUnits) j["functional_units"] = bitsToString(*u.functionalUnits);
  if (u.accessControl) j["access_control"] = externalToJson(*u.accessControl);
  if (u.userInfo) j["user_info"] = externalToJson(*u.userInfo);
  return j;
}

CmipUserInfo userInfoFrom(const Json& j) {
  CmipUserInfo u;
  if (has(j, "protocol_version")) u.protocolVersion = bitsFromString(str(j, "protocol_version"));
  if (has(j, "functional_units")) u.functionalUnits = bitsFromString(str(j, "functional_units"));
  if (has(j, "access_control")) u.accessControl = externalFromJson(j.at("access_control"));
  if (has(j, "user_info")) u.userInfo = externalFromJson(j.at("user_info"));
  return u;
}

std::vector<External> externalsFrom(const Json& j) {
  std::vector<External> out;
  if (!j.is_array()) fail("user_information must be an array of EXTERNAL objects");
  for (const auto& e : j) out.push_back(externalFromJson(e));
  return out;
}

Json externalsToJson(const std::vector<External>& list) {
  Json out = Json::array();
  for (const auto& e : list) out.push_back(externalToJson(e));
  return out;
}

void aeTitleToJson(Json& j, const AeTitle& t, const char* prefix) {
  if (t.apTitle) j[std::string(prefix) + "_ap_title"] = t.apTitle->toString();
  if (t.aeQualifier) j[std::string(prefix) + "_ae_qualifier"] = *t.aeQualifier;
}

AeTitle aeTitleFrom(const Json& j, const char* prefix) {
  AeTitle t;
  std::string ap = std::string(prefix) + "_ap_title", ae = std::string(prefix) + "_ae_qualifier";
  if (has(j, ap.c_str())) t.apTitle = oidFrom(str(j, ap.c_str()));
  if (has(j, ae.c_str())) t.aeQualifier = num(j, ae.c_str());
  return t;
}

Json invokeIdToJson(const InvokeId& id) { return id.present ? Json(*id.present) : Json(nullptr); }

InvokeId invokeIdFrom(const Json& j) {
  const Json& v = need(j, "invoke_id");
  if (v.is_null()) return InvokeId{};
  if (!v.is_number_integer()) fail("invoke_id must be an integer or null");
  return InvokeId{v.get<int32_t>()};
}

void codeToJson(Json& j, const char* key, const Code& c) {
  if (c.isLocal()) {
    j[key] = c.localValue();
  } else {
    j[std::string(key) + "_oid"] = std::get<Oid>(c.value).toString();
  }
}

Code codeFrom(const Json& j, const char* key) {
  std::string oidKey = std::string(key) + "_oid";
  if (has(j, oidKey.c_str())) return Code{oidFrom(str(j, oidKey.c_str()))};
  return Code::local(static_cast<int32_t>(num(j, key)));
}

}  // namespace

std::string toHex(std::span<const uint8_t> bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string s;
  s.reserve(bytes.size() * 2);
  for (uint8_t b : bytes) {
    s.push_back(kDigits[b >> 4]);
    s.push_back(kDigits[b & 15]);
  }
  return s;
}

std::vector<uint8_t> fromHex(const std::string& text) {
  std::vector<uint8_t> out;
  int hi = -1;
  for (char c : text) {
    int v;
    if (c >= '0' && c <= '9') v = c - '0';
    else if (c >= 'a' && c <= 'f') v = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F') v = c - 'A' + 10;
    else if (c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == ':') continue;
    else fail(std::string("bad hex digit '") + c + "'");
    if (hi < 0) {
      hi = v;
    } else {
      out.push_back(static_cast<uint8_t>(hi << 4 | v));
      hi = -1;
    }
  }
  if (hi >= 0) fail("odd number of hex digits");
  return out;
}

Json externalToJson(const External& e) {
  Json j = Json::object();
  if (e.direct_reference) j["direct_reference"] = e.direct_reference->toString();
  if (e.indirect_reference) j["indirect_reference"] = *e.indirect_reference;
  if (e.data_value_descriptor) j["data_value_descriptor"] = *e.data_value_descriptor;
  static constexpr const char* kEncodings[] = {"single-ASN1-type", "octet-aligned", "arbitrary"};
  j["encoding"] = kEncodings[static_cast<int>(e.encoding)];
  if (e.encoding == External::Encoding::kArbitrary) j["unused_bits"] = e.arbitrary_unused_bits;
  j["data"] = toHex(e.data);
  if (e.encoding != External::Encoding::kSingleAsn1Type) return j;
  // Typed views, shown only when they re-encode to exactly the carried bytes.
  if (e.direct_reference == oids::kLnpAccessControlSyntax) {
    auto ac = decodeAccessControl(e.data);
    if (ac.isOk() && encodeAccessControl(*ac) == e.data) j["lnp_access_control"] = accessControlToJson(*ac);
    return j;
  }
  if (auto ui = decodeCmipUserInfo(e.data); ui.isOk() && encodeCmipUserInfo(*ui) == e.data) {
    j["cmip_user_info"] = userInfoToJson(*ui);
  } else if (auto ab = decodeCmipAbortInfo(e.data); ab.isOk() && encodeCmipAbortInfo(*ab) == e.data) {
    j["cmip_abort_info"] = {{"abort_source", static_cast<int>(ab->source)}};
    if (ab->userInfo) j["cmip_abort_info"]["user_info"] = externalToJson(*ab->userInfo);
  }
  return j;
}

External externalFromJson(const Json& j) {
  External e;
  if (has(j, "direct_reference")) e.direct_reference = oidFrom(str(j, "direct_reference"));
  if (has(j, "indirect_reference")) e.indirect_reference = num(j, "indirect_reference");
  if (has(j, "data_value_descriptor")) e.data_value_descriptor = str(j, "data_value_descriptor");
  std::string enc = has(j, "encoding") ? str(j, "encoding") : "single-ASN1-type";
  if (enc == "single-ASN1-type") {
    e.encoding = External::Encoding::kSingleAsn1Type;
  } else if (enc == "octet-aligned") {
    e.encoding = External::Encoding::kOctetAligned;
  } else if (enc == "arbitrary") {
    e.encoding = External::Encoding::kArbitrary;
    e.arbitrary_unused_bits = static_cast<uint8_t>(num(j, "unused_bits") & 7);
  } else {
    fail("unknown EXTERNAL encoding \"" + enc + "\"");
  }
  if (has(j, "lnp_access_control")) {
    e.data = encodeAccessControl(accessControlFrom(j.at("lnp_access_control")));
  } else if (has(j, "cmip_user_info")) {
    e.data = encodeCmipUserInfo(userInfoFrom(j.at("cmip_user_info")));
  } else if (has(j, "cmip_abort_info")) {
    const Json& a = j.at("cmip_abort_info");
    CmipAbortInfo info{static_cast<CmipAbortSource>(num(a, "abort_source") != 0), std::nullopt};
    if (has(a, "user_info")) info.userInfo = externalFromJson(a.at("user_info"));
    e.data = encodeCmipAbortInfo(info);
  } else {
    e.data = hexField(j, "data");
  }
  return e;
}

Json acseToJson(const AcseApdu& apdu) {
  Json j{{"apdu", acseApduName(apdu)}};
  if (const auto* a = std::get_if<Aarq>(&apdu)) {
    if (a->protocolVersion) j["protocol_version"] = bitsToString(*a->protocolVersion);
    j["application_context"] = a->applicationContext.toString();
    aeTitleToJson(j, a->called, "called");
    aeTitleToJson(j, a->calling, "calling");
    j["user_information"] = externalsToJson(a->userInformation);
  } else if (const auto* a = std::get_if<Aare>(&apdu)) {
    if (a->protocolVersion) j["protocol_version"] = bitsToString(*a->protocolVersion);
    j["application_context"] = a->applicationContext.toString();
    j["result"] = static_cast<int>(a->result);
    j["diagnostic_source"] = a->diagnostic.source == DiagnosticSource::kServiceUser
                                 ? "acse-service-user" : "acse-service-provider";
    j["diagnostic"] = a->diagnostic.value;
    aeTitleToJson(j, a->responding, "responding");
    j["user_information"] = externalsToJson(a->userInformation);
  } else if (const auto* a = std::get_if<Rlrq>(&apdu)) {
    if (a->reason) j["reason"] = static_cast<int>(*a->reason);
    j["user_information"] = externalsToJson(a->userInformation);
  } else if (const auto* a = std::get_if<Rlre>(&apdu)) {
    if (a->reason) j["reason"] = static_cast<int>(*a->reason);
    j["user_information"] = externalsToJson(a->userInformation);
  } else {
    const auto& b = std::get<Abrt>(apdu);
    j["source"] = static_cast<int>(b.source);
    if (b.diagnostic) j["diagnostic"] = static_cast<int>(*b.diagnostic);
    j["user_information"] = externalsToJson(b.userInformation);
  }
  return j;
}

AcseApdu acseFromJson(const Json& j) {
  std::string kind = str(j, "apdu");
  std::vector<External> ui = has(j, "user_information") ? externalsFrom(j.at("user_information"))
                                                        : std::vector<External>{};
  if (kind == "aarq") {
    Aarq a;
    if (has(j, "protocol_version")) a.protocolVersion = bitsFromString(str(j, "protocol_version"));
    a.applicationContext = oidFrom(str(j, "application_context"));
    a.called = aeTitleFrom(j, "called");
    a.calling = aeTitleFrom(j, "calling");
    a.userInformation = ui;
    return a;
  }
  if (kind == "aare") {
    Aare a;
    if (has(j, "protocol_version")) a.protocolVersion = bitsFromString(str(j, "protocol_version"));
    a.applicationContext = oidFrom(str(j, "application_context"));
    int64_t result = num(j, "result");
    if (result < 0 || result > 2) fail("aare result must be 0..2");
    a.result = static_cast<AssociateResult>(result);
    std::string src = str(j, "diagnostic_source");
    if (src != "acse-service-user" && src != "acse-service-provider") {
      fail("diagnostic_source must be acse-service-user or acse-service-provider");
    }
    a.diagnostic.source = src == "acse-service-user" ? DiagnosticSource::kServiceUser
                                                     : DiagnosticSource::kServiceProvider;
    a.diagnostic.value = static_cast<int32_t>(num(j, "diagnostic"));
    a.responding = aeTitleFrom(j, "responding");
    a.userInformation = ui;
    return a;
  }
  if (kind == "rlrq") {
    Rlrq a{std::nullopt, ui};
    if (has(j, "reason")) a.reason = static_cast<ReleaseRequestReason>(num(j, "reason"));
    return a;
  }
  if (kind == "rlre") {
    Rlre a{std::nullopt, ui};
    if (has(j, "reason")) a.reason = static_cast<ReleaseResponseReason>(num(j, "reason"));
    return a;
  }
  if (kind == "abrt") {
    Abrt a{static_cast<AbortSource>(num(j, "source") != 0), std::nullopt, ui};
    if (has(j, "diagnostic")) a.diagnostic = static_cast<AbortDiagnostic>(num(j, "diagnostic"));
    return a;
  }
  fail("unknown ACSE apdu \"" + kind + "\"");
}

Json roseToJson(const RoseApdu& apdu) {
  Json j{{"apdu", roseApduName(apdu)}};
  if (const auto* inv = std::get_if<RoseInvoke>(&apdu)) {
    j["invoke_id"] = inv->invokeId;
    if (inv->linkedId) j["linked_id"] = *inv->linkedId;
    codeToJson(j, "opcode", inv->opcode);
    if (inv->opcode.isLocal() && isKnownCmipOpcode(inv->opcode.localValue())) {
      j["operation"] = cmipOpcodeName(static_cast<CmipOpcode>(inv->opcode.localValue()));
    }
    if (inv->argument) j["argument"] = toHex(inv->argument->bytes);
    if (auto typed = fromRose(*inv); typed.isOk() && toRose(*typed).argument == inv->argument) {
      j["cmip"] = argumentToJson(typed->argument);
    }
  } else if (const auto* rr = std::get_if<RoseReturnResult>(&apdu)) {
    j["invoke_id"] = invokeIdToJson(rr->invokeId);
    if (rr->result) {
      codeToJson(j, "opcode", rr->result->opcode);
      j["result"] = toHex(rr->result->result.bytes);
      if (auto typed = fromRose(*rr); typed.isOk() && typed->opcode &&
                                      encodeResult(typed->value) == rr->result->result) {
        j["cmip"] = resultToJson(typed->value);
      }
    }
  } else if (const auto* re = std::get_if<RoseReturnError>(&apdu)) {
    j["invoke_id"] = invokeIdToJson(re->invokeId);
    codeToJson(j, "error", re->errcode);
    if (re->errcode.isLocal() && isKnownCmipError(re->errcode.localValue())) {
      j["error_name"] = cmipErrorName(static_cast<CmipError>(re->errcode.localValue()));
    }
    if (re->parameter) j["parameter"] = toHex(re->parameter->bytes);
  } else {
    const auto& rj = std::get<RoseReject>(apdu);
    j["invoke_id"] = invokeIdToJson(rj.invokeId);
    j["problem_kind"] = static_cast<int>(rj.kind);
    j["problem"] = rj.problem;
  }
  return j;
}

RoseApdu roseFromJson(const Json& j) {
  std::string kind = str(j, "apdu");
  if (kind == "invoke") {
    RoseInvoke inv;
    inv.invokeId = static_cast<int32_t>(num(j, "invoke_id"));
    if (has(j, "linked_id")) inv.linkedId = static_cast<int32_t>(num(j, "linked_id"));
    inv.opcode = codeFrom(j, "opcode");
    if (has(j, "cmip")) {
      if (!inv.opcode.isLocal() || !isKnownCmipOpcode(inv.opcode.localValue())) {
        fail("\"cmip\" given for an opcode that is not an X.711 operation");
      }
      auto op = static_cast<CmipOpcode>(inv.opcode.localValue());
      inv.argument = encodeArgument(argumentFrom(op, j.at("cmip")));
    } else if (has(j, "argument")) {
      inv.argument = opaqueField(j, "argument");
    }
    return inv;
  }
  if (kind == "returnResult") {
    RoseReturnResult rr{invokeIdFrom(j), std::nullopt};
    if (has(j, "opcode") || has(j, "opcode_oid")) {
      RoseReturnResult::Body body{codeFrom(j, "opcode"), {}};
      body.result = has(j, "cmip") ? encodeResult(resultFrom(j.at("cmip"))) : opaqueField(j, "result");
      rr.result = body;
    }
    return rr;
  }
  if (kind == "returnError") {
    RoseReturnError re{invokeIdFrom(j), codeFrom(j, "error"), std::nullopt};
    if (has(j, "parameter")) re.parameter = opaqueField(j, "parameter");
    return re;
  }
  if (kind == "reject") {
    int64_t pk = num(j, "problem_kind");
    if (pk < 0 || pk > 3) fail("problem_kind must be 0..3");
    return RoseReject{invokeIdFrom(j), static_cast<RejectProblemKind>(pk),
                      static_cast<int32_t>(num(j, "problem"))};
  }
  fail("unknown ROSE apdu \"" + kind + "\"");
}

}  // namespace npac::pdu
