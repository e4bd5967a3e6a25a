// JSON <-> typed CMIP arguments and results for npac-pdu.
#include "npac/npac-pdu/json_cmip.h"

#include "npac/npac-pdu/json_util.h"

namespace npac::pdu {
namespace {

using namespace npac::cmip;
using namespace json_util;

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


}  // namespace

Json cmipArgumentToJson(const CmipArgument& arg) { return argumentToJson(arg); }
CmipArgument cmipArgumentFromJson(CmipOpcode op, const Json& j) { return argumentFrom(op, j); }
Json cmipResultToJson(const CmipResultValue& value) { return resultToJson(value); }
CmipResultValue cmipResultFromJson(const Json& j) { return resultFrom(j); }

}  // namespace npac::pdu
