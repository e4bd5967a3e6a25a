#include "npac/npacd/core/known_states.h"

#include <optional>

namespace npac::npacd {

void KnownStates::remember(const std::string& spid, db::MessageId id, db::MessageState state) {
  auto& states = known_[spid];
  auto it = states.find(id);
  if (it != states.end()) {
    it->second = state;
  } else if (total_ < kKnownTotal) {
    states.emplace(id, state);
    ++total_;
  }
}

void KnownStates::rememberQueued(const std::string& spid, const std::vector<db::QueuedMessage>& rows) {
  for (const db::QueuedMessage& row : rows) remember(spid, row.id, row.state);
}

void KnownStates::learn(const ProgressWrite& w) {
  auto forgetOne = [&](db::MessageId id) {
    auto it = known_.find(w.spid);
    if (it != known_.end()) total_ -= it->second.erase(id);
  };
  switch (w.kind) {
    case ProgressWrite::Kind::kSent:
    case ProgressWrite::Kind::kMoveSent:
      for (db::MessageId id : w.ids) remember(w.spid, id, db::MessageState::kSent);
      return;
    case ProgressWrite::Kind::kAcknowledged:
    case ProgressWrite::Kind::kFailed:
      for (db::MessageId id : w.ids) forgetOne(id);
      return;
    case ProgressWrite::Kind::kRequeueAssociation:
    case ProgressWrite::Kind::kRequeue:
      return forget(w.spid);
  }
}

void KnownStates::forget(const std::string& spid) {
  auto it = known_.find(spid);
  if (it == known_.end()) return;
  total_ -= it->second.size();
  known_.erase(it);
}

void KnownStates::forgetAll() {
  known_.clear();
  total_ = 0;
}

db::OutboundQueue::Known KnownStates::of(const std::string& spid) const {
  auto it = known_.find(spid);
  if (it == known_.end()) return {spid, nullptr};
  const auto* states = &it->second;
  return {spid, [states](db::MessageId id) -> std::optional<db::MessageState> {
            auto found = states->find(id);
            if (found == states->end()) return std::nullopt;
            return found->second;
          }};
}

}  // namespace npac::npacd
