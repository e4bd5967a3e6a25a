#include "db/delivery_progress.h"

#include <limits>

namespace npac::db {
namespace {

std::uint64_t zigzag(std::int64_t value) {
  return (static_cast<std::uint64_t>(value) << 1) ^ static_cast<std::uint64_t>(value >> 63);
}

std::int64_t unzigzag(std::uint64_t value) {
  return static_cast<std::int64_t>(value >> 1) ^ -static_cast<std::int64_t>(value & 1);
}

Status corrupt(std::string what, std::size_t offset) {
  return Status::make(Status::Code::kCorrupt,
                      "delivery progress ids: " + what + " at byte " + std::to_string(offset));
}

bool allows(ProgressEvent event, MessageState state) {
  switch (event) {
    case ProgressEvent::kHanded:
      return state == MessageState::kQueued;
    case ProgressEvent::kAcknowledged:
      return state != MessageState::kAcknowledged;
    case ProgressEvent::kFailed:
      return state == MessageState::kQueued || state == MessageState::kSent;
    case ProgressEvent::kRequeued:
    case ProgressEvent::kMoved:
      return state == MessageState::kSent;
  }
  return false;
}

const char* wanted(ProgressEvent event) {
  switch (event) {
    case ProgressEvent::kHanded:
      return "cannot mark it sent";
    case ProgressEvent::kAcknowledged:
      return "cannot mark it acknowledged";
    case ProgressEvent::kFailed:
      return "cannot mark it failed";
    case ProgressEvent::kRequeued:
      return "only a sent message goes back to the queue";
    case ProgressEvent::kMoved:
      return "only a sent message moves to another association";
  }
  return "";
}

bool terminal(MessageState state) {
  return state == MessageState::kAcknowledged || state == MessageState::kFailed;
}

}  // namespace

const char* toString(ProgressEvent event) {
  switch (event) {
    case ProgressEvent::kHanded:
      return "handed";
    case ProgressEvent::kAcknowledged:
      return "acknowledged";
    case ProgressEvent::kFailed:
      return "failed";
    case ProgressEvent::kRequeued:
      return "requeued";
    case ProgressEvent::kMoved:
      return "moved";
  }
  return "?";
}

std::optional<ProgressEvent> progressEventFromInt(std::int64_t value) {
  if (value < static_cast<std::int64_t>(ProgressEvent::kHanded) ||
      value > static_cast<std::int64_t>(ProgressEvent::kMoved)) {
    return std::nullopt;
  }
  return static_cast<ProgressEvent>(value);
}

Bytes encodeIdList(std::span<const MessageId> ids) {
  Bytes blob;
  blob.reserve(ids.size() + 8);
  MessageId previous = 0;
  for (MessageId id : ids) {
    // Ids are positive, so the difference of two of them cannot overflow.
    std::uint64_t value = zigzag(id - previous);
    previous = id;
    while (value >= 0x80) {
      blob.push_back(static_cast<std::uint8_t>(value | 0x80));
      value >>= 7;
    }
    blob.push_back(static_cast<std::uint8_t>(value));
  }
  return blob;
}

Result<std::vector<MessageId>> decodeIdList(std::span<const std::uint8_t> blob, std::size_t max_ids) {
  std::vector<MessageId> ids;
  MessageId previous = 0;
  std::size_t at = 0;
  while (at < blob.size()) {
    const std::size_t start = at;
    if (ids.size() == max_ids) return corrupt("more than " + std::to_string(max_ids) + " ids", start);
    std::uint64_t value = 0;
    for (unsigned shift = 0;; shift += 7) {
      if (at == blob.size()) return corrupt("varint cut short", start);
      const std::uint8_t byte = blob[at++];
      // The tenth byte holds bit 63 only, and ends the varint: a longer one is above 64 bits.
      if (shift == 63 && byte > 1) return corrupt("varint above 64 bits", start);
      value |= static_cast<std::uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) break;
    }
    const std::int64_t delta = unzigzag(value);
    // previous + delta must stay within 1..INT64_MAX.
    if ((delta > 0 && previous > std::numeric_limits<MessageId>::max() - delta) || previous + delta < 1) {
      return corrupt("id outside 1.." + std::to_string(std::numeric_limits<MessageId>::max()), start);
    }
    previous += delta;
    ids.push_back(previous);
  }
  return ids;
}

Status ProviderProgress::admit(MessageId id) { return admit(id, MessageProgress{}); }

Status ProviderProgress::admit(MessageId id, MessageProgress progress) {
  if (id <= highest_ || id <= settled_through_) {
    return Status::invalidArgument("message " + std::to_string(id) + " admitted after message " +
                                   std::to_string(std::max(highest_, settled_through_)));
  }
  highest_ = id;
  messages_.emplace(id, std::move(progress));
  settle();
  return Status::ok();
}

Status ProviderProgress::check(const ProgressRecord& record) const {
  for (MessageId id : record.ids) {
    auto it = messages_.find(id);
    if (it == messages_.end()) {
      if (record.event == ProgressEvent::kAcknowledged && isSettled(id)) continue;
      if (isSettled(id)) {
        return Status::invalidArgument("message " + std::to_string(id) + " is settled; " +
                                       wanted(record.event));
      }
      return Status::notFound("message " + std::to_string(id) + " is not queued for " + record.spid);
    }
    // Acknowledging twice is not an error (the provider may repeat itself); the second
    // changes nothing (apply).
    if (record.event != ProgressEvent::kAcknowledged && !allows(record.event, it->second.state)) {
      return Status::invalidArgument("message " + std::to_string(id) + " is " + toString(it->second.state) +
                                     ", " + wanted(record.event));
    }
  }
  return Status::ok();
}

std::size_t ProviderProgress::apply(const ProgressRecord& record) {
  std::size_t changed = 0;
  for (MessageId id : record.ids) {
    auto it = messages_.find(id);
    if (it != messages_.end() && applyEvent(record, it->second)) ++changed;
  }
  if (changed > 0) settle();
  return changed;
}

bool applyEvent(const ProgressRecord& record, MessageProgress& message) {
  if (!allows(record.event, message.state)) return false;
  switch (record.event) {
    case ProgressEvent::kHanded:
      message.state = MessageState::kSent;
      ++message.attempts;
      message.sent_at = record.at;
      message.association = record.association;
      break;
    case ProgressEvent::kAcknowledged:
      message.state = MessageState::kAcknowledged;
      message.acknowledged_at = record.at;
      break;
    case ProgressEvent::kFailed:
      message.state = MessageState::kFailed;
      message.failure_reason = record.reason;
      message.failed_at = record.at;
      break;
    case ProgressEvent::kRequeued:
      message.state = MessageState::kQueued;
      message.retransmission = true;
      break;
    case ProgressEvent::kMoved:
      message.association = record.association;
      message.retransmission = true;
      break;
  }
  return true;
}

MessageProgress progressOf(const QueuedMessage& row) {
  return MessageProgress{row.state,           row.attempts,       row.sent_at,        row.acknowledged_at,
                         row.failed_at,       row.association_id, row.retransmission, row.failure_reason};
}

void setProgress(QueuedMessage& row, const MessageProgress& progress) {
  row.state = progress.state;
  row.attempts = progress.attempts;
  row.sent_at = progress.sent_at;
  row.acknowledged_at = progress.acknowledged_at;
  row.failed_at = progress.failed_at;
  row.association_id = progress.association;
  row.retransmission = progress.retransmission;
  row.failure_reason = progress.failure_reason;
}

const MessageProgress* ProviderProgress::find(MessageId id) const {
  auto it = messages_.find(id);
  return it == messages_.end() ? nullptr : &it->second;
}

std::size_t ProviderProgress::count(MessageState state) const {
  std::size_t n = 0;
  for (const auto& [id, message] : messages_) n += message.state == state ? 1 : 0;
  return n;
}

std::vector<MessageId> ProviderProgress::inFlightOn(AssociationId association) const {
  std::vector<MessageId> ids;
  for (const auto& [id, message] : messages_) {
    if (message.state == MessageState::kSent && message.association == association) ids.push_back(id);
  }
  return ids;
}

void ProviderProgress::settle() {
  while (!messages_.empty() && terminal(messages_.begin()->second.state)) {
    settled_through_ = messages_.begin()->first;
    messages_.erase(messages_.begin());
  }
  if (messages_.empty()) settled_through_ = highest_;
}

}  // namespace npac::db
