// CMIP operation arguments and results (X.711 §7.4 CMIP-1), and their mapping onto ROSE.
// Each type has a fields writer (its SEQUENCE content) and a fields reader over a reader
// positioned on that content, so the same code serves SEQUENCE and [n] IMPLICIT uses.
#include "cmip/cmip_operations.h"
#include "cmip/cmip_coding.h"

#include <string>

namespace npac::cmip {
namespace {

// Room for a typical NPAC argument (an event report with a few hundred octets of
// information) without growing the buffer mid-encode.
constexpr size_t kArgumentTailroom = 1024;

// X.711 CMIP-1 component tags.
constexpr Tag kAccessControl = Tag::context(5, true);    // [5] AccessControl (EXTERNAL)
constexpr Tag kSynchronization = Tag::context(6);        // [6] IMPLICIT CMISSync
constexpr Tag kScope = Tag::context(7, true);            // [7] Scope
constexpr Tag kCurrentTime = Tag::context(5);            // [5] IMPLICIT GeneralizedTime
constexpr Tag kEventInfo = Tag::context(8, true);        // [8] event info / reply info
constexpr Tag kList12 = Tag::context(12, true);          // [12] IMPLICIT SET OF / SEQUENCE
constexpr Tag kActionInfoArg = Tag::context(4, true);    // [4] action info / reply
constexpr Tag kResultAttributes = Tag::context(6, true); // [6] IMPLICIT SET OF Attribute
constexpr Tag kActionReply = Tag::context(6, true);      // [6] IMPLICIT ActionReply
constexpr Tag kModifyOperator = Tag::context(2);         // [2] IMPLICIT ModifyOperator
constexpr Tag kSuperiorInstance = Tag::context(8, true); // [8] superiorObjectInstance
constexpr Tag kReferenceInstance = Tag::context(6, true);// [6] referenceObjectInstance
constexpr Tag kCreateAttributes = Tag::context(7, true); // [7] IMPLICIT SET OF Attribute

bool isFilterTag(const BerReader& r) {
  for (uint32_t n = 8; n <= 11; ++n) {
    if (r.nextIs(Tag::context(n, true))) return true;
  }
  return false;
}

// --- explicit wrappers -----------------------------------------------------------------

void writeExplicit(BerWriter& w, Tag tag, const OpaqueBer& v) {
  size_t m = w.beginConstructed(tag);
  w.writeOpaque(v);
  w.endConstructed(m);
}

Result<OpaqueBer> readExplicit(BerReader& r, const Tlv& wrapper) {
  NPAC_ASSIGN_OR_RETURN(BerReader in, r.enter(wrapper));
  NPAC_ASSIGN_OR_RETURN(Tlv inner, in.next());
  NPAC_RETURN_IF_ERROR(in.expectEnd());
  return decodeOpaque(inner);
}

Result<ObjectInstance> readExplicitInstance(BerReader& r, const Tlv& wrapper) {
  NPAC_ASSIGN_OR_RETURN(BerReader in, r.enter(wrapper));
  NPAC_ASSIGN_OR_RETURN(ObjectInstance inst, readObjectInstance(in));
  NPAC_RETURN_IF_ERROR(in.expectEnd());
  return inst;
}

void writeExplicitInstance(BerWriter& w, Tag tag, const ObjectInstance& inst) {
  size_t m = w.beginConstructed(tag);
  writeObjectInstance(w, inst);
  w.endConstructed(m);
}

// --- Selection and ReplyHeader ---------------------------------------------------------

void writeSelection(BerWriter& w, const Selection& s) {
  writeId(w, s.baseClass, kObjectClassTags);
  writeObjectInstance(w, s.baseInstance);
  if (s.accessControl) writeExplicitExternal(w, kAccessControl, *s.accessControl);
  if (s.synchronization) w.writeEnumerated(static_cast<int64_t>(*s.synchronization), kSynchronization);
  if (s.scope) {
    size_t m = w.beginConstructed(kScope);
    if (s.scope->kind == Scope::Kind::kNamedNumbers) {
      w.writeInteger(s.scope->value);
    } else {
      w.writeInteger(s.scope->value, Tag::context(static_cast<uint32_t>(s.scope->kind)));
    }
    w.endConstructed(m);
  }
  if (s.filter) w.writeOpaque(*s.filter);
}

Status readSelection(BerReader& r, Selection& s) {
  NPAC_ASSIGN_OR_RETURN(s.baseClass, readId(r, kObjectClassTags, "baseManagedObjectClass"));
  NPAC_ASSIGN_OR_RETURN(s.baseInstance, readObjectInstance(r));
  NPAC_ASSIGN_OR_RETURN(auto ac, r.optional(kAccessControl));
  if (ac) {
    NPAC_ASSIGN_OR_RETURN(s.accessControl, readExplicitExternal(r, *ac));
  }
  if (r.nextIs(kSynchronization)) {
    size_t at = r.offset();
    NPAC_ASSIGN_OR_RETURN(int64_t v, r.readEnumerated(kSynchronization));
    if (v != 0 && v != 1) return badArgument(at, "CMISSync must be bestEffort(0) or atomic(1)");
    s.synchronization = static_cast<CmisSync>(v);
  }
  NPAC_ASSIGN_OR_RETURN(auto sc, r.optional(kScope));
  if (sc) {
    NPAC_ASSIGN_OR_RETURN(BerReader in, r.enter(*sc));
    Scope scope;
    NPAC_ASSIGN_OR_RETURN(Tlv t, in.next());
    if (t.tag == kTagInteger) {
      scope.kind = Scope::Kind::kNamedNumbers;
    } else if (t.tag == Tag::context(1) || t.tag == Tag::context(2)) {
      scope.kind = static_cast<Scope::Kind>(t.tag.number);
    } else {
      return badArgument(t.offset, "Scope must be INTEGER, [1] or [2], got " + t.tag.toString());
    }
    NPAC_ASSIGN_OR_RETURN(scope.value, decodeInteger(t));
    NPAC_RETURN_IF_ERROR(in.expectEnd());
    s.scope = scope;
  }
  if (isFilterTag(r)) {
    NPAC_ASSIGN_OR_RETURN(Tlv f, r.next());
    NPAC_ASSIGN_OR_RETURN(s.filter, decodeOpaque(f));
  }
  return Status::ok();
}

void writeReplyHeader(BerWriter& w, const ReplyHeader& h) {
  if (h.managedObjectClass) writeId(w, *h.managedObjectClass, kObjectClassTags);
  if (h.managedObjectInstance) writeObjectInstance(w, *h.managedObjectInstance);
  if (h.currentTime) w.writeGeneralizedTime(*h.currentTime, kCurrentTime);
}

Status readReplyHeader(BerReader& r, ReplyHeader& h) {
  if (nextIsId(r, kObjectClassTags)) {
    NPAC_ASSIGN_OR_RETURN(h.managedObjectClass, readId(r, kObjectClassTags, "class"));
  }
  if (nextIsObjectInstance(r)) {
    NPAC_ASSIGN_OR_RETURN(h.managedObjectInstance, readObjectInstance(r));
  }
  NPAC_ASSIGN_OR_RETURN(auto t, r.optional(kCurrentTime));
  if (t) {
    NPAC_ASSIGN_OR_RETURN(h.currentTime, decodeGeneralizedTime(*t));
  }
  return Status::ok();
}

// --- per-type fields -------------------------------------------------------------------

void writeFields(BerWriter& w, const EventReportArgument& a) {
  writeId(w, a.managedObjectClass, kObjectClassTags);
  writeObjectInstance(w, a.managedObjectInstance);
  if (a.eventTime) w.writeGeneralizedTime(*a.eventTime, kCurrentTime);
  writeId(w, a.eventType, kEventTypeTags);
  if (a.eventInfo) writeExplicit(w, kEventInfo, *a.eventInfo);
}

Status readFields(BerReader& r, EventReportArgument& a) {
  NPAC_ASSIGN_OR_RETURN(a.managedObjectClass, readId(r, kObjectClassTags, "managedObjectClass"));
  NPAC_ASSIGN_OR_RETURN(a.managedObjectInstance, readObjectInstance(r));
  NPAC_ASSIGN_OR_RETURN(auto t, r.optional(kCurrentTime));
  if (t) {
    NPAC_ASSIGN_OR_RETURN(a.eventTime, decodeGeneralizedTime(*t));
  }
  NPAC_ASSIGN_OR_RETURN(a.eventType, readId(r, kEventTypeTags, "eventType"));
  NPAC_ASSIGN_OR_RETURN(auto info, r.optional(kEventInfo));
  if (info) {
    NPAC_ASSIGN_OR_RETURN(a.eventInfo, readExplicit(r, *info));
  }
  return Status::ok();
}

void writeFields(BerWriter& w, const EventReportResult& a) {
  writeReplyHeader(w, a.header);
  if (a.eventReply) {
    size_t m = w.beginConstructed(kTagSequence);
    writeId(w, a.eventReply->eventType, kEventTypeTags);
    if (a.eventReply->eventReplyInfo) writeExplicit(w, kEventInfo, *a.eventReply->eventReplyInfo);
    w.endConstructed(m);
  }
}

Status readFields(BerReader& r, EventReportResult& a) {
  NPAC_RETURN_IF_ERROR(readReplyHeader(r, a.header));
  NPAC_ASSIGN_OR_RETURN(auto seq, r.optional(kTagSequence));
  if (seq) {
    NPAC_ASSIGN_OR_RETURN(BerReader in, r.enter(*seq));
    EventReportResult::EventReply reply;
    NPAC_ASSIGN_OR_RETURN(reply.eventType, readId(in, kEventTypeTags, "eventType"));
    NPAC_ASSIGN_OR_RETURN(auto info, in.optional(kEventInfo));
    if (info) {
      NPAC_ASSIGN_OR_RETURN(reply.eventReplyInfo, readExplicit(in, *info));
    }
    NPAC_RETURN_IF_ERROR(in.expectEnd());
    a.eventReply = std::move(reply);
  }
  return Status::ok();
}

void writeFields(BerWriter& w, const GetArgument& a) {
  writeSelection(w, a.selection);
  if (a.attributeIdList) {
    size_t m = w.beginConstructed(kList12);
    for (const auto& id : *a.attributeIdList) writeId(w, id, kAttributeIdTags);
    w.endConstructed(m);
  }
}

Status readFields(BerReader& r, GetArgument& a) {
  NPAC_RETURN_IF_ERROR(readSelection(r, a.selection));
  NPAC_ASSIGN_OR_RETURN(auto list, r.optional(kList12));
  if (list) {
    NPAC_ASSIGN_OR_RETURN(BerReader in, r.enter(*list));
    a.attributeIdList.emplace();
    while (!in.atEnd()) {
      NPAC_ASSIGN_OR_RETURN(AttributeId id, readId(in, kAttributeIdTags, "attributeId"));
      a.attributeIdList->push_back(std::move(id));
    }
  }
  return Status::ok();
}

void writeFields(BerWriter& w, const AttributeListResult& a) {
  writeReplyHeader(w, a.header);
  if (a.attributeList) writeAttributeList(w, *a.attributeList, kResultAttributes);
}

Status readFields(BerReader& r, AttributeListResult& a) {
  NPAC_RETURN_IF_ERROR(readReplyHeader(r, a.header));
  if (r.nextIs(kResultAttributes)) {
    NPAC_ASSIGN_OR_RETURN(a.attributeList, readAttributeList(r, kResultAttributes));
  }
  return Status::ok();
}

void writeFields(BerWriter& w, const SetArgument& a) {
  writeSelection(w, a.selection);
  size_t m = w.beginConstructed(kList12);
  for (const auto& mod : a.modificationList) {
    size_t s = w.beginConstructed(kTagSequence);
    if (mod.modifyOperator) w.writeInteger(*mod.modifyOperator, kModifyOperator);
    writeId(w, mod.attributeId, kAttributeIdTags);
    if (mod.attributeValue) w.writeOpaque(*mod.attributeValue);
    w.endConstructed(s);
  }
  w.endConstructed(m);
}

Status readFields(BerReader& r, SetArgument& a) {
  NPAC_RETURN_IF_ERROR(readSelection(r, a.selection));
  if (!r.nextIs(kList12)) return badArgument(r.offset(), "SetArgument lacks modificationList [12]");
  NPAC_ASSIGN_OR_RETURN(Tlv list, r.next());
  NPAC_ASSIGN_OR_RETURN(BerReader in, r.enter(list));
  while (!in.atEnd()) {
    NPAC_ASSIGN_OR_RETURN(Tlv item, in.expect(kTagSequence));
    NPAC_ASSIGN_OR_RETURN(BerReader m, in.enter(item));
    Modification mod;
    if (m.nextIs(kModifyOperator)) {
      NPAC_ASSIGN_OR_RETURN(mod.modifyOperator, m.readInteger(kModifyOperator));
    }
    NPAC_ASSIGN_OR_RETURN(mod.attributeId, readId(m, kAttributeIdTags, "attributeId"));
    if (!m.atEnd()) {
      NPAC_ASSIGN_OR_RETURN(Tlv v, m.next());
      NPAC_ASSIGN_OR_RETURN(mod.attributeValue, decodeOpaque(v));
    }
    NPAC_RETURN_IF_ERROR(m.expectEnd());
    a.modificationList.push_back(std::move(mod));
  }
  return Status::ok();
}

void writeFields(BerWriter& w, const ActionArgument& a) {
  writeSelection(w, a.selection);
  size_t m = w.beginConstructed(kList12);
  writeId(w, a.actionType, kActionTypeTags);
  if (a.actionInfoArg) writeExplicit(w, kActionInfoArg, *a.actionInfoArg);
  w.endConstructed(m);
}

Status readFields(BerReader& r, ActionArgument& a) {
  NPAC_RETURN_IF_ERROR(readSelection(r, a.selection));
  if (!r.nextIs(kList12)) return badArgument(r.offset(), "ActionArgument lacks actionInfo [12]");
  NPAC_ASSIGN_OR_RETURN(Tlv info, r.next());
  NPAC_ASSIGN_OR_RETURN(BerReader in, r.enter(info));
  NPAC_ASSIGN_OR_RETURN(a.actionType, readId(in, kActionTypeTags, "actionType"));
  NPAC_ASSIGN_OR_RETURN(auto arg, in.optional(kActionInfoArg));
  if (arg) {
    NPAC_ASSIGN_OR_RETURN(a.actionInfoArg, readExplicit(in, *arg));
  }
  return in.expectEnd();
}

void writeFields(BerWriter& w, const ActionResult& a) {
  writeReplyHeader(w, a.header);
  if (a.actionReply) {
    size_t m = w.beginConstructed(kActionReply);
    writeId(w, a.actionReply->actionType, kActionTypeTags);
    writeExplicit(w, kActionInfoArg, a.actionReply->actionReplyInfo);
    w.endConstructed(m);
  }
}

Status readFields(BerReader& r, ActionResult& a) {
  NPAC_RETURN_IF_ERROR(readReplyHeader(r, a.header));
  NPAC_ASSIGN_OR_RETURN(auto reply, r.optional(kActionReply));
  if (reply) {
    NPAC_ASSIGN_OR_RETURN(BerReader in, r.enter(*reply));
    ActionResult::ActionReply ar;
    NPAC_ASSIGN_OR_RETURN(ar.actionType, readId(in, kActionTypeTags, "actionType"));
    NPAC_ASSIGN_OR_RETURN(Tlv info, in.expect(kActionInfoArg));
    NPAC_ASSIGN_OR_RETURN(ar.actionReplyInfo, readExplicit(in, info));
    NPAC_RETURN_IF_ERROR(in.expectEnd());
    a.actionReply = std::move(ar);
  }
  return Status::ok();
}

void writeFields(BerWriter& w, const CreateArgument& a) {
  writeId(w, a.managedObjectClass, kObjectClassTags);
  if (a.managedObjectInstance) {
    if (a.instanceIsSuperior) {
      writeExplicitInstance(w, kSuperiorInstance, *a.managedObjectInstance);
    } else {
      writeObjectInstance(w, *a.managedObjectInstance);
    }
  }
  if (a.accessControl) writeExplicitExternal(w, kAccessControl, *a.accessControl);
  if (a.referenceObjectInstance) {
    writeExplicitInstance(w, kReferenceInstance, *a.referenceObjectInstance);
  }
  if (a.attributeList) writeAttributeList(w, *a.attributeList, kCreateAttributes);
}

Status readFields(BerReader& r, CreateArgument& a) {
  NPAC_ASSIGN_OR_RETURN(a.managedObjectClass, readId(r, kObjectClassTags, "managedObjectClass"));
  if (nextIsObjectInstance(r)) {
    NPAC_ASSIGN_OR_RETURN(a.managedObjectInstance, readObjectInstance(r));
  } else if (r.nextIs(kSuperiorInstance)) {
    NPAC_ASSIGN_OR_RETURN(Tlv t, r.next());
    NPAC_ASSIGN_OR_RETURN(a.managedObjectInstance, readExplicitInstance(r, t));
    a.instanceIsSuperior = true;
  }
  NPAC_ASSIGN_OR_RETURN(auto ac, r.optional(kAccessControl));
  if (ac) {
    NPAC_ASSIGN_OR_RETURN(a.accessControl, readExplicitExternal(r, *ac));
  }
  NPAC_ASSIGN_OR_RETURN(auto ref, r.optional(kReferenceInstance));
  if (ref) {
    NPAC_ASSIGN_OR_RETURN(a.referenceObjectInstance, readExplicitInstance(r, *ref));
  }
  if (r.nextIs(kCreateAttributes)) {
    NPAC_ASSIGN_OR_RETURN(a.attributeList, readAttributeList(r, kCreateAttributes));
  }
  return Status::ok();
}

void writeFields(BerWriter& w, const DeleteArgument& a) { writeSelection(w, a.selection); }
Status readFields(BerReader& r, DeleteArgument& a) { return readSelection(r, a.selection); }
void writeFields(BerWriter& w, const DeleteResult& a) { writeReplyHeader(w, a.header); }
Status readFields(BerReader& r, DeleteResult& a) { return readReplyHeader(r, a.header); }

// A SEQUENCE (or [n] IMPLICIT SEQUENCE) of one of the types above.
template <typename T>
void writeSequence(BerWriter& w, const T& value, Tag tag = kTagSequence) {
  size_t m = w.beginConstructed(tag);
  writeFields(w, value);
  w.endConstructed(m);
}

template <typename T>
Result<T> readSequence(BerReader& parent, const Tlv& tlv) {
  NPAC_ASSIGN_OR_RETURN(BerReader in, parent.enter(tlv));
  T value;
  NPAC_RETURN_IF_ERROR(readFields(in, value));
  if (!in.atEnd()) {
    return badArgument(in.offset(), "unexpected element after the last component");
  }
  return value;
}

// Decodes `tlv` as one T; the SEQUENCE tag is required.
template <typename T>
Result<T> decodeTop(std::span<const uint8_t> tlv, const DecodeLimits& limits) {
  NPAC_ASSIGN_OR_RETURN(Tlv top, decodeSingleTlv(tlv, limits));
  if (top.tag != kTagSequence) {
    return badArgument(top.offset, "expected SEQUENCE, got " + top.tag.toString());
  }
  BerReader outer(tlv, limits);
  return readSequence<T>(outer, top);
}

void writeLinkedReply(BerWriter& w, const LinkedReplyArgument& lr) {
  Tag tag = Tag::context(static_cast<uint32_t>(lr.kind), true);
  std::visit(
      [&](const auto& body) {
        using B = std::decay_t<decltype(body)>;
        if constexpr (std::is_same_v<B, std::vector<uint8_t>>) {
          size_t m = w.beginConstructed(tag);
          w.writeRaw(body);
          w.endConstructed(m);
        } else {
          writeSequence(w, body, tag);
        }
      },
      lr.body);
}

Result<LinkedReplyArgument> decodeLinkedReply(std::span<const uint8_t> tlv,
                                              const DecodeLimits& limits) {
  NPAC_ASSIGN_OR_RETURN(Tlv top, decodeSingleTlv(tlv, limits));
  if (top.tag.cls != TagClass::kContextSpecific || !top.tag.constructed || top.tag.number > 8) {
    return badArgument(top.offset, "LinkedReplyArgument must be [0]..[8], got " + top.tag.toString());
  }
  BerReader outer(tlv, limits);
  LinkedReplyArgument lr;
  lr.kind = static_cast<LinkedReplyKind>(top.tag.number);
  switch (lr.kind) {
    case LinkedReplyKind::kGetResult:
    case LinkedReplyKind::kSetResult: {
      NPAC_ASSIGN_OR_RETURN(lr.body, readSequence<AttributeListResult>(outer, top));
      break;
    }
    case LinkedReplyKind::kActionResult: {
      NPAC_ASSIGN_OR_RETURN(lr.body, readSequence<ActionResult>(outer, top));
      break;
    }
    case LinkedReplyKind::kDeleteResult: {
      NPAC_ASSIGN_OR_RETURN(lr.body, readSequence<DeleteResult>(outer, top));
      break;
    }
    default: {
      // Validate that the content is a sequence of well-formed TLVs, keep it opaque.
      NPAC_ASSIGN_OR_RETURN(BerReader in, outer.enter(top));
      while (!in.atEnd()) NPAC_RETURN_IF_ERROR(in.next());
      lr.body = std::vector<uint8_t>(top.content.begin(), top.content.end());
    }
  }
  return lr;
}

}  // namespace

Status checkArgumentMatchesOpcode(CmipOpcode op, const CmipArgument& arg) {
  size_t want = 0;
  switch (op) {
    case CmipOpcode::kEventReport:
    case CmipOpcode::kEventReportConfirmed: want = 0; break;
    case CmipOpcode::kGet: want = 1; break;
    case CmipOpcode::kSet:
    case CmipOpcode::kSetConfirmed: want = 2; break;
    case CmipOpcode::kAction:
    case CmipOpcode::kActionConfirmed: want = 3; break;
    case CmipOpcode::kCreate: want = 4; break;
    case CmipOpcode::kDelete: want = 5; break;
    case CmipOpcode::kLinkedReply: want = 6; break;
    case CmipOpcode::kCancelGet: want = 7; break;
  }
  if (arg.index() != want) {
    return badArgument(0, std::string("argument type does not match ") + cmipOpcodeName(op));
  }
  return Status::ok();
}

OpaqueBer encodeArgument(const CmipArgument& arg) {
  EncodeBuffer buf(0, kArgumentTailroom);
  BerWriter w(buf);
  std::visit(
      [&](const auto& a) {
        using A = std::decay_t<decltype(a)>;
        if constexpr (std::is_same_v<A, LinkedReplyArgument>) {
          writeLinkedReply(w, a);
        } else if constexpr (std::is_same_v<A, CancelGetArgument>) {
          w.writeInteger(a.getInvokeId);
        } else {
          writeSequence(w, a);
        }
      },
      arg);
  return OpaqueBer{buf.toVector()};
}

Result<CmipArgument> decodeArgument(CmipOpcode op, std::span<const uint8_t> tlv,
                                    const DecodeLimits& limits) {
  switch (op) {
    case CmipOpcode::kEventReport:
    case CmipOpcode::kEventReportConfirmed: {
      NPAC_ASSIGN_OR_RETURN(auto a, decodeTop<EventReportArgument>(tlv, limits));
      return CmipArgument{std::move(a)};
    }
    case CmipOpcode::kGet: {
      NPAC_ASSIGN_OR_RETURN(auto a, decodeTop<GetArgument>(tlv, limits));
      return CmipArgument{std::move(a)};
    }
    case CmipOpcode::kSet:
    case CmipOpcode::kSetConfirmed: {
      NPAC_ASSIGN_OR_RETURN(auto a, decodeTop<SetArgument>(tlv, limits));
      return CmipArgument{std::move(a)};
    }
    case CmipOpcode::kAction:
    case CmipOpcode::kActionConfirmed: {
      NPAC_ASSIGN_OR_RETURN(auto a, decodeTop<ActionArgument>(tlv, limits));
      return CmipArgument{std::move(a)};
    }
    case CmipOpcode::kCreate: {
      NPAC_ASSIGN_OR_RETURN(auto a, decodeTop<CreateArgument>(tlv, limits));
      return CmipArgument{std::move(a)};
    }
    case CmipOpcode::kDelete: {
      NPAC_ASSIGN_OR_RETURN(auto a, decodeTop<DeleteArgument>(tlv, limits));
      return CmipArgument{std::move(a)};
    }
    case CmipOpcode::kLinkedReply: {
      NPAC_ASSIGN_OR_RETURN(auto a, decodeLinkedReply(tlv, limits));
      return CmipArgument{std::move(a)};
    }
    case CmipOpcode::kCancelGet: {
      NPAC_ASSIGN_OR_RETURN(Tlv t, decodeSingleTlv(tlv, limits));
      if (t.tag != kTagInteger) return badArgument(t.offset, "M-CANCEL-GET argument must be INTEGER");
      NPAC_ASSIGN_OR_RETURN(int64_t v, decodeInteger(t));
      if (v < INT32_MIN || v > INT32_MAX) return badArgument(t.offset, "invoke id out of range");
      return CmipArgument{CancelGetArgument{static_cast<int32_t>(v)}};
    }
  }
  return Status::error(ErrorCode::kCmipUnknownOperation, 0, "unknown CMIP operation");
}

OpaqueBer encodeResult(const CmipResultValue& value) {
  EncodeBuffer buf(0, kArgumentTailroom);
  BerWriter w(buf);
  std::visit(
      [&](const auto& v) {
        using V = std::decay_t<decltype(v)>;
        if constexpr (!std::is_same_v<V, std::monostate>) writeSequence(w, v);
      },
      value);
  return OpaqueBer{buf.toVector()};
}

Result<CmipResultValue> decodeResult(CmipOpcode op, std::span<const uint8_t> tlv,
                                     const DecodeLimits& limits) {
  switch (op) {
    case CmipOpcode::kEventReportConfirmed: {
      NPAC_ASSIGN_OR_RETURN(auto v, decodeTop<EventReportResult>(tlv, limits));
      return CmipResultValue{std::move(v)};
    }
    case CmipOpcode::kGet:
    case CmipOpcode::kSetConfirmed:
    case CmipOpcode::kCreate: {
      NPAC_ASSIGN_OR_RETURN(auto v, decodeTop<AttributeListResult>(tlv, limits));
      return CmipResultValue{std::move(v)};
    }
    case CmipOpcode::kActionConfirmed: {
      NPAC_ASSIGN_OR_RETURN(auto v, decodeTop<ActionResult>(tlv, limits));
      return CmipResultValue{std::move(v)};
    }
    case CmipOpcode::kDelete: {
      NPAC_ASSIGN_OR_RETURN(auto v, decodeTop<DeleteResult>(tlv, limits));
      return CmipResultValue{std::move(v)};
    }
    default:
      return badArgument(0, std::string(cmipOpcodeName(op)) + " has no result type");
  }
}

RoseInvoke toRose(const CmipInvoke& inv) {
  RoseInvoke r;
  r.invokeId = inv.invokeId;
  r.linkedId = inv.linkedId;
  r.opcode = Code::local(static_cast<int32_t>(inv.opcode));
  r.argument = encodeArgument(inv.argument);
  return r;
}

Result<CmipInvoke> fromRose(const RoseInvoke& inv, const DecodeLimits& limits) {
  if (!inv.opcode.isLocal() || !isKnownCmipOpcode(inv.opcode.localValue())) {
    return Status::error(ErrorCode::kCmipUnknownOperation, 0,
                         "opcode " + (inv.opcode.isLocal()
                                          ? std::to_string(inv.opcode.localValue())
                                          : std::get<Oid>(inv.opcode.value).toString()) +
                             " is not an X.711 CMIP operation (0..10)");
  }
  CmipInvoke out;
  out.invokeId = inv.invokeId;
  out.linkedId = inv.linkedId;
  out.opcode = static_cast<CmipOpcode>(inv.opcode.localValue());
  if (!inv.argument) {
    return badArgument(0, std::string(cmipOpcodeName(out.opcode)) + " requires an argument");
  }
  auto argument = decodeArgument(out.opcode, inv.argument->bytes, limits);
  if (!argument.isOk()) {
    const Status& why = argument.status();
    if (why.code() == ErrorCode::kCmipBadArgument) return why;
    // A BER fault inside the argument is still a mistyped argument of this operation.
    return badArgument(why.offset(), std::string(cmipOpcodeName(out.opcode)) + " argument: " + why.toString());
  }
  out.argument = std::move(*argument);
  return out;
}

RoseReject rejectInvoke(const RoseInvoke& inv, const Status& why) {
  const int32_t problem =
      why.code() == ErrorCode::kCmipUnknownOperation ? kUnrecognizedOperation : kMistypedArgument;
  return RoseReject{InvokeId{inv.invokeId}, RejectProblemKind::kInvoke, problem};
}

RoseReturnResult toRose(const CmipResult& res) {
  RoseReturnResult r;
  r.invokeId = InvokeId{res.invokeId};
  if (res.opcode && !std::holds_alternative<std::monostate>(res.value)) {
    r.result = RoseReturnResult::Body{Code::local(static_cast<int32_t>(*res.opcode)),
                                      encodeResult(res.value)};
  }
  return r;
}

Result<CmipResult> fromRose(const RoseReturnResult& res, const DecodeLimits& limits) {
  if (!res.invokeId.present) return badArgument(0, "ReturnResult without an invoke id");
  CmipResult out;
  out.invokeId = *res.invokeId.present;
  if (!res.result) return out;
  const Code& code = res.result->opcode;
  if (!code.isLocal() || !isKnownCmipOpcode(code.localValue())) {
    return Status::error(ErrorCode::kCmipUnknownOperation, 0,
                         "ReturnResult for an opcode that is not an X.711 operation");
  }
  out.opcode = static_cast<CmipOpcode>(code.localValue());
  NPAC_ASSIGN_OR_RETURN(out.value, decodeResult(*out.opcode, res.result->result.bytes, limits));
  return out;
}

RoseReturnError toRose(const CmipErrorReply& err) {
  RoseReturnError r;
  r.invokeId = err.invokeId;
  r.errcode = Code::local(static_cast<int32_t>(err.error));
  r.parameter = err.parameter;
  return r;
}

Result<CmipErrorReply> fromRose(const RoseReturnError& err) {
  if (!err.errcode.isLocal() || !isKnownCmipError(err.errcode.localValue())) {
    return badArgument(0, "errcode is not an X.711 CMIP error (local 0..23)");
  }
  CmipErrorReply out;
  out.invokeId = err.invokeId;
  out.error = static_cast<CmipError>(err.errcode.localValue());
  out.parameter = err.parameter;
  return out;
}

}  // namespace npac::cmip
