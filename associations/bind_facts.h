// The facts a bind is judged on: the decoded bind, the provider's provisioning, the key,
// the tunables and the association functions — as small plain structs.
//
// The association layer stays decoupled from cmip/ and db/: the caller (npacd's session)
// copies the decoded NPAC access-control fields (the NPAC IIS LnpAccessControl field
// list; cmip/'s bind profile) into a BindRequest, looks the provider and the key up in the stores into a
// ProviderRecord and a KeyRecord, reads the tunables into BindTunables, and hands them
// to the BindGate. Nothing here does I/O.
//
// Threading: plain value types.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "associations/nsap.h"
#include "associations/signature.h"
#include "common/vocabulary.h"

namespace npac::associations {

using WallClock = std::chrono::system_clock;  // departure times and key validity are civil
using WallTime = WallClock::time_point;

// The system type a bind claims and a provider is provisioned as (NPAC IIS: SOA, LSMS,
// both, NPAC), the association functions, one bit each in the bind's function mask BIT
// STRING (docs/PROTOCOL.md: bit 0 SOA management, 1 LSMS data download, 2 network data
// management, 3 notifications, 4 queries), and a key's state: the one NPAC vocabulary of
// common/vocabulary.h, whose toString/parse are the only name tables.
using common::AssociationFunction;
using common::KeyState;
using common::SystemType;
using common::toString;
inline constexpr std::size_t kFunctionCount = common::kAssociationFunctionCount;

class FunctionMask {
 public:
  constexpr FunctionMask() = default;
  constexpr explicit FunctionMask(std::uint8_t bits) : bits_(bits) {}
  static constexpr FunctionMask of(std::initializer_list<AssociationFunction> functions) {
    std::uint8_t bits = 0;
    for (auto f : functions) bits = static_cast<std::uint8_t>(bits | 1u << static_cast<unsigned>(f));
    return FunctionMask(bits);
  }
  constexpr bool has(AssociationFunction f) const { return bits_ >> static_cast<unsigned>(f) & 1u; }
  constexpr bool empty() const { return bits_ == 0; }
  constexpr bool subsetOf(FunctionMask other) const { return (bits_ & ~other.bits_) == 0; }
  constexpr std::uint8_t bits() const { return bits_; }
  constexpr bool operator==(const FunctionMask&) const = default;
  std::string toString() const;  // "soa-management|notifications", "none"

 private:
  std::uint8_t bits_ = 0;
};

// Which functions each system type may bind for (the BindGate's third check):
//   SOA           soa-management, network-data-management, notifications, queries
//   LSMS          lsms-data-download, network-data-management, notifications, queries
//   SOA-and-LSMS  all five
//   NPAC          none — a provider never binds as the NPAC
// An SOA does not download LSMS data and an LSMS does not manage subscriptions.
FunctionMask allowedFunctions(SystemType type);

// The decoded bind (the NPAC access-control structure carried in CMIPUserInfo).
struct BindRequest {
  std::string spid;  // system id: the service provider id, 4 characters
  SystemType system_type = SystemType::kSoa;
  std::string user_id;
  std::uint32_t key_list_id = 0;
  std::uint32_t key_id = 0;
  WallTime departure_time{};
  std::uint64_t sequence_number = 0;
  FunctionMask functions;
  bool recovery_mode = false;
  Bytes signature;
  Bytes signed_bytes;  // exactly the bytes the signature covers (cmip/'s bind profile)
};

// The provider as provisioned (db/ providers and NSAPs).
struct ProviderRecord {
  std::string spid;
  SystemType system_type = SystemType::kSoa;
  bool enabled = true;
  // Empty: any NSAP may bind. Otherwise only these (the NSAP check).
  std::vector<Nsap> provisioned_nsaps;
};

// One key of a provider's key list (db/ key lists), with the replay state for it.
struct KeyRecord {
  std::uint32_t key_list_id = 0;
  std::uint32_t key_id = 0;
  SignatureAlgorithm algorithm = SignatureAlgorithm::kRsaSha256;
  std::string public_pem;
  WallTime not_before{};
  WallTime not_after{};
  KeyState state = KeyState::kActive;
  // Highest bind sequence number accepted so far with this key; none yet when empty.
  std::optional<std::uint64_t> last_sequence_number;
};

enum class DuplicateBind : std::uint8_t { kReplace, kReject };  // tunable duplicate_bind

// The tunable values the gate needs, resolved for this provider by the caller.
struct BindTunables {
  bool srr = false;
  DuplicateBind duplicate_bind = DuplicateBind::kReplace;
  std::uint32_t max_associations_per_sp = 8;
  std::chrono::seconds departure_time_window{300};
};

}  // namespace npac::associations
