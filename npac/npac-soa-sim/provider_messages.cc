#include "npac/npac-soa-sim/provider_messages.h"

#include "cmip/oids.h"

namespace npac::soasim {
namespace {

using namespace npac::cmip;

// An object class and an action type of our own (npacdProfile .90.3.2 / .90.6.3) for the
// requests the simulator sends: npacd forwards them to the application without reading.
const Oid kSimRequestClass{1, 3, 6, 1, 4, 1, 103, 7, 0, 0, 90, 3, 2};
const Oid kSimRequestAction{1, 3, 6, 1, 4, 1, 103, 7, 0, 0, 90, 6, 3};

OpaqueBer octetString(const std::string& text) {
  EncodeBuffer buf(0);
  BerWriter w(buf);
  w.writeOctetString(std::vector<uint8_t>(text.begin(), text.end()));
  return OpaqueBer{buf.toVector()};
}

std::string idText(const GlobalOrLocal& id) {
  return id.isGlobal() ? id.oid().toString() : "local:" + std::to_string(id.localValue());
}

ReplyHeader headerFor(const ObjectClass& cls, const ObjectInstance& inst, const GeneralizedTime& now) {
  return ReplyHeader{cls, inst, now};
}

Selection npacSelection() {
  Selection s;
  s.baseClass = ObjectClass::global(oids::kLnpNpacSmsClass);
  s.baseInstance = npacInstance();
  return s;
}

}  // namespace

ObjectInstance npacInstance() { return npacSmsInstance(); }

std::optional<RoseApdu> answerFor(const RoseInvoke& invoke, const GeneralizedTime& now) {
  auto rejectWith = [&](int32_t problem) {
    return RoseApdu{RoseReject{InvokeId{invoke.invokeId}, RejectProblemKind::kInvoke, problem}};
  };
  if (!invoke.opcode.isLocal() || !isKnownCmipOpcode(invoke.opcode.localValue())) {
    return rejectWith(kUnrecognizedOperation);
  }
  auto op = static_cast<CmipOpcode>(invoke.opcode.localValue());
  if (!isConfirmedCmipOpcode(op)) return std::nullopt;
  auto decoded = fromRose(invoke);
  if (!decoded.isOk()) return rejectWith(kMistypedArgument);
  const CmipArgument& arg = decoded->argument;

  CmipResult result{invoke.invokeId, op, std::monostate{}};
  switch (op) {
    case CmipOpcode::kEventReportConfirmed: {
      const auto& a = std::get<EventReportArgument>(arg);
      result.value = EventReportResult{headerFor(a.managedObjectClass, a.managedObjectInstance, now), std::nullopt};
      break;
    }
    case CmipOpcode::kGet:
      result.value = AttributeListResult{headerFor(std::get<GetArgument>(arg).selection.baseClass,
                                                   std::get<GetArgument>(arg).selection.baseInstance, now),
                                         std::nullopt};
      break;
    case CmipOpcode::kSetConfirmed:
      result.value = AttributeListResult{headerFor(std::get<SetArgument>(arg).selection.baseClass,
                                                   std::get<SetArgument>(arg).selection.baseInstance, now),
                                         std::nullopt};
      break;
    case CmipOpcode::kActionConfirmed:
      result.value = ActionResult{headerFor(std::get<ActionArgument>(arg).selection.baseClass,
                                            std::get<ActionArgument>(arg).selection.baseInstance, now),
                                  std::nullopt};
      break;
    case CmipOpcode::kCreate: {
      const auto& a = std::get<CreateArgument>(arg);
      ReplyHeader h;
      h.managedObjectClass = a.managedObjectClass;
      if (!a.instanceIsSuperior) h.managedObjectInstance = a.managedObjectInstance;
      h.currentTime = now;
      result.value = AttributeListResult{h, a.attributeList};
      break;
    }
    case CmipOpcode::kDelete:
      result.value = DeleteResult{headerFor(std::get<DeleteArgument>(arg).selection.baseClass,
                                            std::get<DeleteArgument>(arg).selection.baseInstance, now)};
      break;
    default:  // M-CANCEL-GET: a ReturnResult without a result (X.711 §7.4)
      result.opcode = std::nullopt;
      break;
  }
  return RoseApdu{toRose(result)};
}

InvokeDescription describeInvoke(const RoseInvoke& invoke) {
  InvokeDescription d;
  if (!invoke.opcode.isLocal() || !isKnownCmipOpcode(invoke.opcode.localValue())) {
    d.operation = invoke.opcode.isLocal() ? "opcode " + std::to_string(invoke.opcode.localValue()) : "global opcode";
    d.decode_error = "not a CMIP operation";
    return d;
  }
  auto op = static_cast<CmipOpcode>(invoke.opcode.localValue());
  d.operation = cmipOpcodeName(op);
  auto decoded = fromRose(invoke);
  if (!decoded.isOk()) {
    d.decode_error = decoded.status().toString();
    if (invoke.argument) d.info_hex = toHex(invoke.argument->bytes);
    return d;
  }
  std::visit(
      [&](const auto& a) {
        using T = std::decay_t<decltype(a)>;
        if constexpr (std::is_same_v<T, EventReportArgument>) {
          d.type = idText(a.eventType);
          if (a.eventInfo) d.info_hex = toHex(a.eventInfo->bytes);
          d.heartbeat = a.eventType.isGlobal() && a.eventType.oid() == oids::kNpacHeartbeatEvent;
          d.on_npac_sms = a.managedObjectClass == ObjectClass::global(oids::kLnpNpacSmsClass) &&
                          a.managedObjectInstance == npacSmsInstance();
        } else if constexpr (std::is_same_v<T, ActionArgument>) {
          d.type = idText(a.actionType);
          if (a.actionInfoArg) d.info_hex = toHex(a.actionInfoArg->bytes);
        } else if constexpr (std::is_same_v<T, CreateArgument>) {
          d.type = idText(a.managedObjectClass);
          if (invoke.argument) d.info_hex = toHex(invoke.argument->bytes);
        } else if constexpr (std::is_same_v<T, GetArgument> || std::is_same_v<T, SetArgument> ||
                             std::is_same_v<T, DeleteArgument>) {
          d.type = idText(a.selection.baseClass);
          if (invoke.argument) d.info_hex = toHex(invoke.argument->bytes);
        } else {
          if (invoke.argument) d.info_hex = toHex(invoke.argument->bytes);
        }
      },
      decoded->argument);
  return d;
}

RoseInvoke providerRequest(RequestKind kind, int32_t invoke_id, uint64_t n) {
  const std::string text = "npac-soa-sim request " + std::to_string(n);
  CmipInvoke inv;
  inv.invokeId = invoke_id;
  if (kind == RequestKind::kAction) {
    inv.opcode = CmipOpcode::kActionConfirmed;
    inv.argument = ActionArgument{npacSelection(), ActionTypeId::global(kSimRequestAction), octetString(text)};
  } else {
    CreateArgument a;
    a.managedObjectClass = ObjectClass::global(kSimRequestClass);
    a.managedObjectInstance = npacInstance();
    a.instanceIsSuperior = true;
    a.attributeList = std::vector<Attribute>{{AttributeId::global(kSimRequestClass), octetString(text)}};
    inv.opcode = CmipOpcode::kCreate;
    inv.argument = a;
  }
  return toRose(inv);
}

RoseInvoke recoveryRequest(int32_t invoke_id, const RecoveryPlan& plan) {
  RecoveryRequest r{plan.all_unacknowledged, plan.from, plan.to};
  CmipInvoke inv{invoke_id, std::nullopt, CmipOpcode::kActionConfirmed,
                 ActionArgument{npacSelection(), ActionTypeId::global(oids::kLnpRecoveryRequestAction),
                                encodeRecoveryRequest(r)}};
  return toRose(inv);
}

RoseInvoke recoveryComplete(int32_t invoke_id) {
  CmipInvoke inv{invoke_id, std::nullopt, CmipOpcode::kActionConfirmed,
                 ActionArgument{npacSelection(), ActionTypeId::global(oids::kLnpRecoveryCompleteAction), std::nullopt}};
  return toRose(inv);
}

RecoveryCount recoveryMessageCount(const RoseReturnResult& rr) {
  auto res = fromRose(rr);
  if (!res.isOk()) return {std::nullopt, "the recovery request's result does not decode: " + res.status().toString()};
  const auto* action = std::get_if<ActionResult>(&res->value);
  if (action == nullptr || !action->actionReply) {
    return {std::nullopt, "the recovery request's result carries no actionReply"};
  }
  auto count = decodeRecoveryReply(action->actionReply->actionReplyInfo.bytes);
  if (!count.isOk()) return {std::nullopt, "RecoveryReply does not decode: " + count.status().toString()};
  return {*count, {}};
}

}  // namespace npac::soasim
