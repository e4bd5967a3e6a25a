#include "npac/npacd/core/turn_writes.h"

#include <cstddef>
#include <map>

namespace npac::npacd {

void TurnWrites::collected() {
  if (empty() && schedule_flush_) schedule_flush_();
}

void TurnWrites::sent(ProgressWrite write) {
  collected();
  sent_.push_back(std::move(write));
}

void TurnWrites::acknowledged(const std::string& spid, db::MessageId id, db::TimeMs at) {
  collected();
  acks_.emplace_back(spid, id);
  acks_at_ = at;
}

std::vector<ProgressWrite> TurnWrites::take() {
  std::vector<ProgressWrite> writes;
  writes.swap(sent_);
  if (!acks_.empty()) {
    // One acknowledging write per provider (the fence's unit), providers in first-seen order.
    std::vector<std::pair<std::string, db::MessageId>> acks;
    acks.swap(acks_);
    std::map<std::string, std::size_t> slot;
    for (auto& [spid, id] : acks) {
      auto [it, added] = slot.emplace(spid, writes.size());
      if (added) writes.push_back(ProgressWrite{ProgressWrite::Kind::kAcknowledged, spid, {}, 0, acks_at_, {}});
      writes[it->second].ids.push_back(id);
    }
  }
  return writes;
}

}  // namespace npac::npacd
