// TunableSnapshot: one immutable, consistent view of every tunable's overrides.
//
// A read resolves per-provider override → global override → catalogue default, with no
// string lookup of the tunable (typed keys carry the index) and one hash lookup of the
// SPID. The registry publishes a new snapshot on every change (copy, modify, swap), so a
// holder of a snapshot sees a frozen, self-consistent set of values: a bind decision that
// reads srr, duplicate_bind and max_associations_per_sp from one snapshot cannot see half
// of an operator's change.
//
// Threading: a published snapshot is never modified; any number of threads may read it
// at once. The mutators are for the registry while it builds a snapshot not yet shared.
#pragma once

#include <array>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "tunables/catalogue.h"
#include "tunables/value.h"

namespace npac::tunables {

class TunableSnapshot {
 public:
  explicit TunableSnapshot(const Catalogue& catalogue = Catalogue::standard())
      : catalogue_(&catalogue) {}

  const Catalogue& catalogue() const { return *catalogue_; }

  // The effective value for `spid` ("" = the global value).
  const Value& resolve(TunableId id, std::string_view spid = {}) const {
    const std::size_t index = static_cast<std::size_t>(id);
    if (!spid.empty() && !providers_.empty()) {
      const auto found = providers_.find(spid);
      if (found != providers_.end() && found->second[index]) return *found->second[index];
    }
    if (global_[index]) return *global_[index];
    return catalogue_->spec(id).default_value;
  }

  // Typed read: get(kSrr, "0001") → bool, get(kEgressPolicy, spid) → EgressPolicy.
  template <typename T>
  T get(Key<T> key, std::string_view spid = {}) const {
    const Value& value = resolve(key.id, spid);
    if constexpr (std::is_enum_v<T>) {
      return static_cast<T>(std::get<EnumValue>(value).index);
    } else {
      return std::get<T>(value);
    }
  }

  // The override stored at exactly this scope, or nullptr.
  const Value* globalOverride(TunableId id) const;
  const Value* providerOverride(TunableId id, std::string_view spid) const;
  // SPIDs that have at least one override, sorted.
  std::vector<std::string> providersWithOverrides() const;

  // Mutators (registry only, before publishing).
  void setOverride(TunableId id, std::string_view spid, Value value);
  void clearOverride(TunableId id, std::string_view spid);

 private:
  using Slots = std::array<std::optional<Value>, kTunableCount>;
  struct SpidHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view spid) const {
      return std::hash<std::string_view>{}(spid);
    }
  };

  const Catalogue* catalogue_;
  Slots global_{};
  std::unordered_map<std::string, Slots, SpidHash, std::equal_to<>> providers_;
};

}  // namespace npac::tunables
