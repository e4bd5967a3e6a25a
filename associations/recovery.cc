#include "associations/recovery.h"

#include <algorithm>
#include <unordered_set>

namespace npac::associations {

std::string_view toString(ProviderMode mode) {
  switch (mode) {
    case ProviderMode::kNormal: return "normal";
    case ProviderMode::kRecovering: return "recovering";
  }
  return "unknown";
}

void RecoveryState::onBind(bool recovery_mode) {
  if (recovery_mode) mode_ = ProviderMode::kRecovering;
}

Disposition RecoveryState::onNewMessage(MessageId id) {
  if (mode_ == ProviderMode::kNormal) return Disposition::kPush;
  held_.push_back(id);
  return Disposition::kHold;
}

Result<std::vector<MessageId>> RecoveryState::answer(
    const RecoveryRequest& request, std::span<const RecoveryMessage> queue) const {
  if (mode_ != ProviderMode::kRecovering) return Status::error(StatusCode::kNotRecovering, {});
  if (request.kind == RecoveryRequest::Kind::kTimeRange && request.from > request.to) {
    return Status::error(StatusCode::kBadRecoveryRange, {});
  }
  const std::unordered_set<MessageId> held(held_.begin(), held_.end());
  std::vector<const RecoveryMessage*> chosen;
  for (const RecoveryMessage& message : queue) {
    if (held.count(message.id) != 0) continue;
    const bool wanted = request.kind == RecoveryRequest::Kind::kTimeRange
                            ? message.created_at >= request.from && message.created_at <= request.to
                            : !message.acknowledged;
    if (wanted) chosen.push_back(&message);
  }
  std::sort(chosen.begin(), chosen.end(), [](const auto* a, const auto* b) {
    return a->created_at != b->created_at ? a->created_at < b->created_at : a->id < b->id;
  });
  std::vector<MessageId> ids;
  ids.reserve(chosen.size());
  for (const auto* message : chosen) ids.push_back(message->id);
  return ids;
}

Result<std::vector<MessageId>> RecoveryState::complete() {
  if (mode_ != ProviderMode::kRecovering) return Status::error(StatusCode::kNotRecovering, {});
  mode_ = ProviderMode::kNormal;
  std::vector<MessageId> released;
  released.swap(held_);
  return released;
}

std::vector<MessageId> RecoveryState::onAllAssociationsLost() {
  mode_ = ProviderMode::kNormal;
  std::vector<MessageId> released;
  released.swap(held_);
  return released;
}

}  // namespace npac::associations
