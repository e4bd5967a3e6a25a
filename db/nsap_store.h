// NsapStore: the NSAPs provisioned for each service provider (table provider_nsaps).
//
// A provider may bind only from a provisioned NSAP (NANC 316 fixed the NPAC's NSAP at 12
// octets; we accept 1–20, the ISO 8348 maximum, and store the octets as a BLOB). For the
// weighted egress policy each NSAP optionally carries a weight 1–99 and a relative cost
// (EAGLE "Weighted GTT Load Sharing": weights 1–99, members grouped by relative cost,
// lower cost preferred); absent means the policy's default. Removing the provider removes
// its NSAPs.
//
// Threading: as the Database it wraps (one thread at a time). Cheap to construct.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/hex.h"
#include "db/statement.h"
#include "db/status.h"

namespace npac::db {

class Database;

inline constexpr std::size_t kMaxNsapOctets = 20;     // ISO 8348 NSAP maximum
inline constexpr std::uint32_t kMinNsapWeight = 1;    // EAGLE: weights 1–99
inline constexpr std::uint32_t kMaxNsapWeight = 99;

struct ProvisionedNsap {
  std::string spid;
  Bytes nsap;                                  // the address octets
  std::optional<std::uint32_t> weight;         // 1–99, weighted policy only
  std::optional<std::uint32_t> relative_cost;  // RC group; lower preferred

  friend bool operator==(const ProvisionedNsap&, const ProvisionedNsap&) = default;
};

// Lower-case hex without separators ("490001aa..."), and its inverse (nullopt if not
// an even number of hex digits): the one hex helper, common/hex.h.
using common::fromHex;
using common::toHex;

class NsapStore {
 public:
  explicit NsapStore(Database& db) : db_(db) {}

  // kConstraint if the provider is unknown or the NSAP already provisioned for it.
  Status add(const ProvisionedNsap& nsap);
  // Replaces weight and relative cost; kNotFound if absent.
  Status update(const ProvisionedNsap& nsap);
  Status remove(std::string_view spid, std::span<const std::uint8_t> nsap);  // kNotFound if absent
  Result<bool> isProvisioned(std::string_view spid, std::span<const std::uint8_t> nsap);
  Result<std::vector<ProvisionedNsap>> listForProvider(std::string_view spid);  // by NSAP octets

 private:
  Database& db_;
};

}  // namespace npac::db
