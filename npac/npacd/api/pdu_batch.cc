#include "npac/npacd/api/pdu_batch.h"

#include <cstring>
#include <string>

#include "cmip/cmip.h"
#include "cmip/cmip_operations.h"
#include "cmip/rose.h"
#include "common/vocabulary.h"
#include "db/provider_store.h"

namespace npac::npacd {
namespace {

constexpr std::uint32_t kAllFunctions = (1u << common::kAssociationFunctionCount) - 1;

// 400 invalid_pdu_batch (the framing) / invalid_pdu (a record's ROSE Invoke).
Status invalidPduBatch(std::string why) { return Status::error(StatusCode::kInvalidPduBatch, std::move(why)); }
Status invalidPdu(std::string why) { return Status::error(StatusCode::kInvalidPdu, std::move(why)); }

std::string at(std::size_t record, std::size_t offset) {
  return "record " + std::to_string(record) + " (octet " + std::to_string(offset) + ")";
}

// The operations an NPAC pushes to a provider, as POST /v1/messages offers them: every
// X.711 §7.4 operation but m-Linked-Reply and m-Cancel-Get, which only answer a request.
bool isPushOperation(std::int32_t code) {
  return cmip::isKnownCmipOpcode(code) &&
         code != static_cast<std::int32_t>(cmip::CmipOpcode::kLinkedReply) &&
         code != static_cast<std::int32_t>(cmip::CmipOpcode::kCancelGet);
}

// Whether `n` more octets follow `pos`.
bool has(std::span<const std::uint8_t> body, std::size_t pos, std::size_t n) { return body.size() - pos >= n; }

// A record's 7-octet header: its SPID, functions and priority, and its idempotency key's
// length (`key_length`). An ok Status, or the failure.
Status readRecordHeader(std::span<const std::uint8_t> body, std::size_t& pos, std::size_t record,
                        OutboundMessage& message, std::size_t& key_length) {
  if (!has(body, pos, 7)) return invalidPduBatch(at(record, pos) + " is cut short in its header");
  message.message.spid.assign(reinterpret_cast<const char*>(body.data() + pos), 4);
  if (!db::isValidSpid(message.message.spid)) {
    return Status::error(StatusCode::kInvalidSpid,
                         at(record, pos) + ": the SPID must be 4 ASCII letters or digits");
  }
  const std::uint8_t functions = body[pos + 4];
  if (functions == 0 || (functions & ~kAllFunctions) != 0) {
    return invalidPduBatch(at(record, pos + 4) + ": functions must name 1.." +
                               std::to_string(common::kAssociationFunctionCount) +
                               " association functions (bits 0.." +
                               std::to_string(common::kAssociationFunctionCount - 1) + ")");
  }
  const std::uint8_t priority = body[pos + 5];
  if (priority > kMaxBatchPriority) {
    return invalidPduBatch(at(record, pos + 5) + ": priority must be 0..9");
  }
  message.message.function_mask = functions;
  message.message.priority = priority;
  key_length = body[pos + 6];
  pos += 7;
  return Status::ok();
}

// A record's idempotency key of `key_length` octets (1..255), unique per provider among
// the records `before` it. An ok Status, or the failure.
Status readIdempotencyKey(std::span<const std::uint8_t> body, std::size_t& pos, std::size_t record,
                          std::size_t key_length, const std::vector<OutboundMessage>& before,
                          OutboundMessage& message) {
  if (!has(body, pos, key_length)) {
    return invalidPduBatch(at(record, pos) + ": the idempotency key is cut short");
  }
  std::string key(reinterpret_cast<const char*>(body.data() + pos), key_length);
  if (!db::isValidIdempotencyKey(key)) {
    return Status::error(StatusCode::kInvalidIdempotencyKey,
                         at(record, pos) + ": an idempotency key is 1.." +
                             std::to_string(db::kMaxIdempotencyKeyLength) + " visible ASCII characters (0x21..0x7e)");
  }
  for (std::size_t j = 0; j < before.size(); ++j) {
    if (before[j].message.idempotency_key == key && before[j].message.spid == message.message.spid) {
      return Status::error(StatusCode::kRepeatedIdempotencyKey,
                           "record " + std::to_string(record) + ": idempotency key '" + key +
                               "' is already given to record " + std::to_string(j) + " for provider " +
                               message.message.spid);
    }
  }
  message.message.idempotency_key = std::move(key);
  pos += key_length;
  return Status::ok();
}

// A record's PDU: its 2-octet length, then a ROSE Invoke of an operation the NPAC
// pushes. An ok Status, or the failure.
Status readRecordPdu(std::span<const std::uint8_t> body, std::size_t& pos, std::size_t record,
                     OutboundMessage& message) {
  if (!has(body, pos, 2)) return invalidPduBatch(at(record, pos) + ": the PDU length is cut short");
  const std::size_t pdu_length = std::size_t{body[pos]} << 8 | body[pos + 1];
  pos += 2;
  if (pdu_length == 0 || pdu_length > kMaxBatchPduLength) {
    return invalidPduBatch(at(record, pos - 2) + ": the PDU length must be 1.." +
                               std::to_string(kMaxBatchPduLength));
  }
  if (!has(body, pos, pdu_length)) {
    return invalidPduBatch(at(record, pos) + ": the PDU is cut short (" + std::to_string(pdu_length) +
                               " octets announced, " + std::to_string(body.size() - pos) + " left)");
  }
  const std::span<const std::uint8_t> pdu = body.subspan(pos, pdu_length);
  cmip::Result<cmip::RoseApdu> apdu = cmip::decodeRoseApdu(pdu);
  if (!apdu.isOk()) return invalidPdu(at(record, pos) + ": " + apdu.status().toString());
  const auto* invoke = std::get_if<cmip::RoseInvoke>(&apdu.value());
  if (invoke == nullptr) {
    return invalidPdu(at(record, pos) + ": the PDU is a ROSE " + cmip::roseApduName(apdu.value()) +
                          ", not an Invoke");
  }
  if (invoke->linkedId) return invalidPdu(at(record, pos) + ": a queued Invoke carries no linked id");
  if (!invoke->opcode.isLocal() || !isPushOperation(invoke->opcode.localValue())) {
    return invalidPdu(at(record, pos) +
                          ": the operation must be a CMIP operation the NPAC sends (X.711 local "
                          "codes 0, 1, 3..9)");
  }
  cmip::Result<cmip::CmipInvoke> operation = cmip::fromRose(*invoke);
  if (!operation.isOk()) return invalidPdu(at(record, pos) + ": " + operation.status().toString());
  message.opcode = operation.value().opcode;
  message.confirmed = cmip::isConfirmedCmipOpcode(message.opcode);
  message.message.kind = db::MessageKind::kPush;
  message.message.opcode = static_cast<int>(message.opcode);
  message.message.confirmed = message.confirmed;
  message.message.pdu.assign(pdu.begin(), pdu.end());
  pos += pdu_length;
  return Status::ok();
}

}  // namespace

bool isPduBatchMediaType(std::string_view content_type) {
  const std::size_t end = content_type.find(';');
  std::string_view type = content_type.substr(0, end);
  while (!type.empty() && (type.back() == ' ' || type.back() == '\t')) type.remove_suffix(1);
  while (!type.empty() && (type.front() == ' ' || type.front() == '\t')) type.remove_prefix(1);
  if (type.size() != kPduBatchMediaType.size()) return false;
  for (std::size_t i = 0; i < type.size(); ++i) {
    const char c = type[i] >= 'A' && type[i] <= 'Z' ? static_cast<char>(type[i] - 'A' + 'a') : type[i];
    if (c != kPduBatchMediaType[i]) return false;
  }
  return true;
}

Result<std::vector<OutboundMessage>> parsePduBatch(std::span<const std::uint8_t> body) {
  if (body.size() < kPduBatchMagic.size() ||
      std::string_view(reinterpret_cast<const char*>(body.data()), kPduBatchMagic.size()) != kPduBatchMagic) {
    return invalidPduBatch("a PDU batch starts with the 4 octets \"NPB1\"");
  }
  std::vector<OutboundMessage> out;
  std::size_t pos = kPduBatchMagic.size();
  while (pos < body.size()) {
    const std::size_t record = out.size();
    if (record == kMaxBatchMessages) {
      return invalidPduBatch("a PDU batch holds at most " + std::to_string(kMaxBatchMessages) +
                                 " records; " + at(record, pos) + " is one too many");
    }
    OutboundMessage message;
    std::size_t key_length = 0;
    NPAC_RETURN_IF_ERROR(readRecordHeader(body, pos, record, message, key_length));
    if (key_length > 0) {
      NPAC_RETURN_IF_ERROR(readIdempotencyKey(body, pos, record, key_length, out, message));
    }
    NPAC_RETURN_IF_ERROR(readRecordPdu(body, pos, record, message));
    out.push_back(std::move(message));
  }
  if (out.empty()) return invalidPduBatch("a PDU batch holds at least one record");
  return out;
}

void appendPduBatchRecord(std::vector<std::uint8_t>& out, std::string_view spid, std::uint8_t functions,
                          std::uint8_t priority, std::string_view idempotency_key,
                          std::span<const std::uint8_t> pdu) {
  const std::size_t magic = out.empty() ? kPduBatchMagic.size() : 0;
  const std::size_t at = out.size();
  out.resize(at + magic + spid.size() + 3 + idempotency_key.size() + 2 + pdu.size());
  std::uint8_t* p = out.data() + at;
  const auto put = [&p](const void* from, std::size_t n) {
    if (n != 0) std::memcpy(p, from, n);
    p += n;
  };
  put(kPduBatchMagic.data(), magic);
  put(spid.data(), spid.size());
  *p++ = functions;
  *p++ = priority;
  *p++ = static_cast<std::uint8_t>(idempotency_key.size());
  put(idempotency_key.data(), idempotency_key.size());
  *p++ = static_cast<std::uint8_t>(pdu.size() >> 8);
  *p++ = static_cast<std::uint8_t>(pdu.size() & 0xff);
  put(pdu.data(), pdu.size());
}

}  // namespace npac::npacd
