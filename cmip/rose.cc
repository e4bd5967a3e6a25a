// ROSE APDU codec (X.880 generic ROS PDUs as constrained by X.711 §7.4).
#include "cmip/rose.h"

#include <iterator>
#include <string>

namespace npac::cmip {
namespace {

// ROS CHOICE alternatives, X.880 Remote-Operations-Generic-ROS-PDUs ROS{}: [1]..[4]
// IMPLICIT SEQUENCE.
constexpr uint32_t kInvokeTag = 1;
constexpr uint32_t kReturnResultTag = 2;
constexpr uint32_t kReturnErrorTag = 3;
constexpr uint32_t kRejectTag = 4;
// Invoke.linkedId CHOICE: present [0] IMPLICIT INTEGER, absent [1] IMPLICIT NULL.
constexpr Tag kLinkedIdPresent = Tag::context(0);
constexpr Tag kLinkedIdAbsent = Tag::context(1);

Status badRose(size_t offset, std::string what) {
  return Status::error(ErrorCode::kRoseBadApdu, offset, std::move(what));
}

void writeInvokeId(BerWriter& w, const InvokeId& id) {
  if (id.present) {
    w.writeInteger(*id.present);
  } else {
    w.writeNull();
  }
}

void writeCode(BerWriter& w, const Code& code) {
  if (code.isLocal()) {
    w.writeInteger(code.localValue());
  } else {
    w.writeOid(std::get<Oid>(code.value));
  }
}

Result<int32_t> toInt32(int64_t v, size_t offset, const char* what) {
  if (v < INT32_MIN || v > INT32_MAX) {
    return Status::error(ErrorCode::kBerIntegerOverflow, offset,
                         std::string(what) + " does not fit 32 bits");
  }
  return static_cast<int32_t>(v);
}

Result<InvokeId> readInvokeId(BerReader& r) {
  if (r.nextIs(kTagNull)) {
    NPAC_RETURN_IF_ERROR(r.readNull());
    return InvokeId{};
  }
  size_t at = r.offset();
  if (!r.nextIs(kTagInteger)) return badRose(at, "invokeId must be INTEGER or NULL");
  NPAC_ASSIGN_OR_RETURN(int64_t v, r.readInteger());
  NPAC_ASSIGN_OR_RETURN(int32_t id, toInt32(v, at, "invokeId"));
  return InvokeId{id};
}

Result<Code> readCode(BerReader& r, const char* what) {
  size_t at = r.offset();
  if (r.nextIs(kTagInteger)) {
    NPAC_ASSIGN_OR_RETURN(int64_t v, r.readInteger());
    NPAC_ASSIGN_OR_RETURN(int32_t c, toInt32(v, at, what));
    return Code::local(c);
  }
  if (r.nextIs(kTagOid)) {
    NPAC_ASSIGN_OR_RETURN(Oid oid, r.readOid());
    return Code{std::move(oid)};
  }
  return badRose(at, std::string(what) + " must be INTEGER (local) or OBJECT IDENTIFIER");
}

Result<OpaqueBer> readOpaque(BerReader& r) {
  NPAC_ASSIGN_OR_RETURN(Tlv tlv, r.next());
  return decodeOpaque(tlv);
}

Result<RoseApdu> decodeInvoke(BerReader& r) {
  RoseInvoke inv;
  size_t at = r.offset();
  NPAC_ASSIGN_OR_RETURN(InvokeId id, readInvokeId(r));
  if (!id.present) return badRose(at, "Invoke needs a present invokeId (X.711 InvokeIDType)");
  inv.invokeId = *id.present;
  if (r.nextIs(kLinkedIdPresent)) {
    size_t lat = r.offset();
    NPAC_ASSIGN_OR_RETURN(int64_t v, r.readInteger(kLinkedIdPresent));
    NPAC_ASSIGN_OR_RETURN(inv.linkedId, toInt32(v, lat, "linkedId"));
  } else if (r.nextIs(kLinkedIdAbsent)) {
    NPAC_RETURN_IF_ERROR(r.readNull(kLinkedIdAbsent));  // same as omitted
  }
  NPAC_ASSIGN_OR_RETURN(inv.opcode, readCode(r, "opcode"));
  if (!r.atEnd()) {
    NPAC_ASSIGN_OR_RETURN(inv.argument, readOpaque(r));
  }
  NPAC_RETURN_IF_ERROR(r.expectEnd());
  return RoseApdu{std::move(inv)};
}

Result<RoseApdu> decodeReturnResult(BerReader& r) {
  RoseReturnResult rr;
  NPAC_ASSIGN_OR_RETURN(rr.invokeId, readInvokeId(r));
  if (!r.atEnd()) {
    NPAC_ASSIGN_OR_RETURN(Tlv seq, r.expect(kTagSequence));
    NPAC_ASSIGN_OR_RETURN(BerReader in, r.enter(seq));
    RoseReturnResult::Body body;
    NPAC_ASSIGN_OR_RETURN(body.opcode, readCode(in, "result.opcode"));
    if (in.atEnd()) return badRose(in.offset(), "ReturnResult.result lacks its result value");
    NPAC_ASSIGN_OR_RETURN(body.result, readOpaque(in));
    NPAC_RETURN_IF_ERROR(in.expectEnd());
    rr.result = std::move(body);
  }
  NPAC_RETURN_IF_ERROR(r.expectEnd());
  return RoseApdu{std::move(rr)};
}

Result<RoseApdu> decodeReturnError(BerReader& r) {
  RoseReturnError re;
  NPAC_ASSIGN_OR_RETURN(re.invokeId, readInvokeId(r));
  NPAC_ASSIGN_OR_RETURN(re.errcode, readCode(r, "errcode"));
  if (!r.atEnd()) {
    NPAC_ASSIGN_OR_RETURN(re.parameter, readOpaque(r));
  }
  NPAC_RETURN_IF_ERROR(r.expectEnd());
  return RoseApdu{std::move(re)};
}

Result<RoseApdu> decodeReject(BerReader& r) {
  RoseReject rj;
  NPAC_ASSIGN_OR_RETURN(rj.invokeId, readInvokeId(r));
  size_t at = r.offset();
  NPAC_ASSIGN_OR_RETURN(Tlv p, r.next());
  if (p.tag.cls != TagClass::kContextSpecific || p.tag.constructed || p.tag.number > 3) {
    return badRose(at, "Reject.problem must be [0]..[3] IMPLICIT INTEGER, got " + p.tag.toString());
  }
  rj.kind = static_cast<RejectProblemKind>(p.tag.number);
  NPAC_ASSIGN_OR_RETURN(int64_t v, decodeInteger(p));
  NPAC_ASSIGN_OR_RETURN(rj.problem, toInt32(v, at, "problem"));
  NPAC_RETURN_IF_ERROR(r.expectEnd());
  return RoseApdu{std::move(rj)};
}

// One definite length at `at` in `in` (X.690 §8.1.3): its value and how many octets it
// took. Indefinite (0x80) is refused: the splice re-encodes lengths, it cannot re-frame
// end-of-contents.
Status readDefiniteLength(std::span<const uint8_t> in, size_t at, size_t* length, size_t* octets) {
  if (at >= in.size()) return Status::error(ErrorCode::kBerTruncated, at, "length octets missing");
  const uint8_t first = in[at];
  if (first < 0x80) {
    *length = first;
    *octets = 1;
    return Status::ok();
  }
  if (first == 0x80) {
    return badRose(at, "indefinite length: only a definite-length Invoke can have its invokeId replaced");
  }
  const size_t count = first & 0x7f;
  if (count > sizeof(size_t) || first == 0xff) {
    return Status::error(ErrorCode::kBerOverlongLength, at, "length of " + std::to_string(count) + " octets");
  }
  if (at + 1 + count > in.size()) return Status::error(ErrorCode::kBerTruncated, at, "length octets truncated");
  size_t value = 0;
  for (size_t i = 0; i < count; ++i) value = (value << 8) | in[at + 1 + i];
  *length = value;
  *octets = 1 + count;
  return Status::ok();
}

// X.690 §8.3.2: the fewest octets of two's complement that hold `v`.
void appendMinimalInteger(int32_t v, std::vector<uint8_t>& out) {
  uint8_t octets[4];
  for (int i = 0; i < 4; ++i) octets[i] = static_cast<uint8_t>(static_cast<uint32_t>(v) >> (24 - 8 * i));
  size_t skip = 0;
  // Drop a leading 0x00 before a clear sign bit, or 0xff before a set one.
  while (skip < 3 && ((octets[skip] == 0x00 && (octets[skip + 1] & 0x80) == 0) ||
                      (octets[skip] == 0xff && (octets[skip + 1] & 0x80) != 0))) {
    ++skip;
  }
  out.push_back(0x02);  // UNIVERSAL 2 INTEGER, primitive
  out.push_back(static_cast<uint8_t>(4 - skip));
  out.insert(out.end(), octets + skip, octets + 4);
}

}  // namespace

Result<std::vector<uint8_t>> spliceInvokeId(std::span<const uint8_t> invoke_apdu, int32_t invoke_id) {
  // Identifier octets of the ROS CHOICE alternatives [1]..[4]: context-specific,
  // constructed, low tag number (X.690 §8.1.2.2).
  constexpr uint8_t kContextConstructed = 0xa0;
  constexpr uint8_t kIntegerIdentifier = 0x02;
  if (invoke_apdu.empty()) return Status::error(ErrorCode::kBerTruncated, 0, "empty APDU");
  const uint8_t identifier = invoke_apdu[0];
  if ((identifier & 0xe0) != kContextConstructed || (identifier & 0x1f) < kInvokeTag ||
      (identifier & 0x1f) > kRejectTag) {
    return Status::error(ErrorCode::kRoseUnknownApdu, 0, "not a ROSE APDU ([1]..[4] constructed)");
  }
  if ((identifier & 0x1f) != kInvokeTag) {
    return badRose(0, "only an Invoke ([1]) carries an invokeId to replace");
  }
  size_t outer_length = 0, outer_octets = 0;
  NPAC_RETURN_IF_ERROR(readDefiniteLength(invoke_apdu, 1, &outer_length, &outer_octets));
  const size_t content_at = 1 + outer_octets;
  if (outer_length > invoke_apdu.size() - content_at) {
    return Status::error(ErrorCode::kBerLengthPastBuffer, 1, "Invoke length past the end of the APDU");
  }
  if (outer_length < invoke_apdu.size() - content_at) {
    return Status::error(ErrorCode::kBerTrailingData, content_at + outer_length, "bytes after the Invoke");
  }
  const std::span<const uint8_t> content = invoke_apdu.subspan(content_at);
  if (content.empty() || content[0] != kIntegerIdentifier) {
    return badRose(content_at, "Invoke does not start with its invokeId INTEGER");
  }
  size_t id_length = 0, id_octets = 0;
  NPAC_RETURN_IF_ERROR(readDefiniteLength(content, 1, &id_length, &id_octets).shifted(content_at));
  const size_t id_content = 1 + id_octets;
  if (id_length > content.size() - id_content) {
    return Status::error(ErrorCode::kBerLengthPastBuffer, content_at + 1, "invokeId past the end of the Invoke");
  }
  if (id_length == 0) return Status::error(ErrorCode::kBerBadInteger, content_at, "empty invokeId INTEGER");
  if (id_length > 4) {
    return Status::error(ErrorCode::kBerIntegerOverflow, content_at, "invokeId does not fit 32 bits");
  }
  const std::span<const uint8_t> rest = content.subspan(id_content + id_length);

  std::vector<uint8_t> id;
  id.reserve(6);
  appendMinimalInteger(invoke_id, id);
  uint8_t length_octets[kMaxLengthOctets];
  const size_t new_length = id.size() + rest.size();
  const size_t length_size = encodeLength(new_length, length_octets);
  std::vector<uint8_t> out;
  out.reserve(1 + length_size + new_length);
  out.push_back(identifier);
  out.insert(out.end(), length_octets, length_octets + length_size);
  out.insert(out.end(), id.begin(), id.end());
  out.insert(out.end(), rest.begin(), rest.end());
  return out;
}

std::string rejectProblemName(RejectProblemKind kind, int32_t problem) {
  static constexpr const char* kGeneral[] = {"unrecognizedPDU", "mistypedPDU", "badlyStructuredPDU"};
  static constexpr const char* kInvoke[] = {
      "duplicateInvocation", "unrecognizedOperation", "mistypedArgument",   "resourceLimitation",
      "releaseInProgress",   "unrecognizedLinkedId",  "linkedResponseUnexpected",
      "unexpectedLinkedOperation"};
  static constexpr const char* kResult[] = {"unrecognizedInvocation", "resultResponseUnexpected",
                                            "mistypedResult"};
  static constexpr const char* kError[] = {"unrecognizedInvocation", "errorResponseUnexpected",
                                           "unrecognizedError", "unexpectedError", "mistypedParameter"};
  auto pick = [problem](const auto& names) -> std::string {
    if (problem >= 0 && static_cast<size_t>(problem) < std::size(names)) return names[problem];
    return "unknown(" + std::to_string(problem) + ")";
  };
  switch (kind) {
    case RejectProblemKind::kGeneral: return pick(kGeneral);
    case RejectProblemKind::kInvoke: return pick(kInvoke);
    case RejectProblemKind::kReturnResult: return pick(kResult);
    case RejectProblemKind::kReturnError: return pick(kError);
  }
  return "unknown(" + std::to_string(problem) + ")";
}

const char* roseApduName(const RoseApdu& apdu) {
  static constexpr const char* kNames[] = {"invoke", "returnResult", "returnError", "reject"};
  return kNames[apdu.index()];
}

void encodeRoseApdu(const RoseApdu& apdu, BerWriter& w) {
  if (const auto* inv = std::get_if<RoseInvoke>(&apdu)) {
    size_t m = w.beginConstructed(Tag::context(kInvokeTag, true));
    w.writeInteger(inv->invokeId);
    if (inv->linkedId) w.writeInteger(*inv->linkedId, kLinkedIdPresent);
    writeCode(w, inv->opcode);
    if (inv->argument) w.writeOpaque(*inv->argument);
    w.endConstructed(m);
  } else if (const auto* rr = std::get_if<RoseReturnResult>(&apdu)) {
    size_t m = w.beginConstructed(Tag::context(kReturnResultTag, true));
    writeInvokeId(w, rr->invokeId);
    if (rr->result) {
      size_t s = w.beginConstructed(kTagSequence);
      writeCode(w, rr->result->opcode);
      w.writeOpaque(rr->result->result);
      w.endConstructed(s);
    }
    w.endConstructed(m);
  } else if (const auto* re = std::get_if<RoseReturnError>(&apdu)) {
    size_t m = w.beginConstructed(Tag::context(kReturnErrorTag, true));
    writeInvokeId(w, re->invokeId);
    writeCode(w, re->errcode);
    if (re->parameter) w.writeOpaque(*re->parameter);
    w.endConstructed(m);
  } else {
    const auto& rj = std::get<RoseReject>(apdu);
    size_t m = w.beginConstructed(Tag::context(kRejectTag, true));
    writeInvokeId(w, rj.invokeId);
    w.writeInteger(rj.problem, Tag::context(static_cast<uint32_t>(rj.kind)));
    w.endConstructed(m);
  }
}

std::vector<uint8_t> encodeRoseApdu(const RoseApdu& apdu) {
  EncodeBuffer buf(0);
  BerWriter w(buf);
  encodeRoseApdu(apdu, w);
  return buf.toVector();
}

Result<RoseApdu> decodeRoseApdu(std::span<const uint8_t> in, const DecodeLimits& limits) {
  NPAC_ASSIGN_OR_RETURN(Tlv top, decodeSingleTlv(in, limits));
  if (top.tag.cls != TagClass::kContextSpecific || !top.tag.constructed ||
      top.tag.number < kInvokeTag || top.tag.number > kRejectTag) {
    return Status::error(ErrorCode::kRoseUnknownApdu, top.offset,
                         "not a ROSE APDU ([1]..[4] constructed): " + top.tag.toString());
  }
  BerReader outer(in, limits);
  NPAC_ASSIGN_OR_RETURN(BerReader r, outer.enter(top));
  switch (top.tag.number) {
    case kInvokeTag: return decodeInvoke(r);
    case kReturnResultTag: return decodeReturnResult(r);
    case kReturnErrorTag: return decodeReturnError(r);
    default: return decodeReject(r);
  }
}

}  // namespace npac::cmip
