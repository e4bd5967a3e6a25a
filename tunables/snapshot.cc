#include "tunables/snapshot.h"

#include <algorithm>
#include <utility>

namespace npac::tunables {

const Value* TunableSnapshot::globalOverride(TunableId id) const {
  const auto& slot = global_[static_cast<std::size_t>(id)];
  return slot ? &*slot : nullptr;
}

const Value* TunableSnapshot::providerOverride(TunableId id, std::string_view spid) const {
  const auto found = providers_.find(spid);
  if (found == providers_.end()) return nullptr;
  const auto& slot = found->second[static_cast<std::size_t>(id)];
  return slot ? &*slot : nullptr;
}

std::vector<std::string> TunableSnapshot::providersWithOverrides() const {
  std::vector<std::string> spids;
  spids.reserve(providers_.size());
  for (const auto& [spid, slots] : providers_) spids.push_back(spid);
  std::sort(spids.begin(), spids.end());
  return spids;
}

void TunableSnapshot::setOverride(TunableId id, std::string_view spid, Value value) {
  const std::size_t index = static_cast<std::size_t>(id);
  if (spid.empty()) {
    global_[index] = std::move(value);
    return;
  }
  auto found = providers_.find(spid);
  if (found == providers_.end()) found = providers_.emplace(std::string(spid), Slots{}).first;
  found->second[index] = std::move(value);
}

void TunableSnapshot::clearOverride(TunableId id, std::string_view spid) {
  const std::size_t index = static_cast<std::size_t>(id);
  if (spid.empty()) {
    global_[index].reset();
    return;
  }
  const auto found = providers_.find(spid);
  if (found == providers_.end()) return;
  found->second[index].reset();
  const bool empty = std::none_of(found->second.begin(), found->second.end(),
                                  [](const std::optional<Value>& slot) { return slot.has_value(); });
  if (empty) providers_.erase(found);
}

}  // namespace npac::tunables
