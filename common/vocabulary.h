// The NPAC vocabulary shared by the wire, the database, the admin API, npacctl and the
// simulator: the system type a provider is (SOA, LSMS, both, or the NPAC itself), the
// association functions a bind asks for, and the state of a provider's key. Each has ONE
// name table here, so text written by one program (an API answer, a database row, a
// simulator flag) is read back by every other.
//
// The names are the NPAC bind profile's ASN.1 identifiers (docs/npac-bind.asn1, NANC 111)
// in lower-case kebab form: networkDataManagement is "network-data-management". Where
// users have typed another spelling, it is accepted on input as an alias and never
// written ("network-data", the admin API's earlier name for bit 2).
//
// The numeric values are the wire values: SystemType is the ENUMERATED of the
// LnpAccessControl systemType [1], AssociationFunction the bit number in the
// associationFunctions [7] BIT STRING (X.690 §8.6.2: bit 0 is the first bit on the wire).
//
// Threading: constants and pure functions; safe from any thread.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace npac::common {

// SystemType ::= ENUMERATED { soa(0), lsms(1), soa-and-lsms(2), npac(3) }
enum class SystemType : std::int32_t { kSoa = 0, kLsms = 1, kSoaAndLsms = 2, kNpac = 3 };
inline constexpr std::array<SystemType, 4> kSystemTypes{SystemType::kSoa, SystemType::kLsms,
                                                        SystemType::kSoaAndLsms, SystemType::kNpac};

// AssociationFunctions ::= BIT STRING { soaManagement(0), lsmsDataDownload(1),
//   networkDataManagement(2), notifications(3), queries(4) }
enum class AssociationFunction : std::uint8_t {
  kSoaManagement = 0,
  kLsmsDataDownload = 1,
  kNetworkDataManagement = 2,
  kNotifications = 3,
  kQueries = 4,
};
inline constexpr std::size_t kAssociationFunctionCount = 5;
inline constexpr std::array<AssociationFunction, kAssociationFunctionCount> kAssociationFunctions{
    AssociationFunction::kSoaManagement, AssociationFunction::kLsmsDataDownload,
    AssociationFunction::kNetworkDataManagement, AssociationFunction::kNotifications,
    AssociationFunction::kQueries};

// A provider key's life: usable, past its validity window, or withdrawn by an operator.
enum class KeyState : std::uint8_t { kActive, kExpired, kRevoked };
inline constexpr std::array<KeyState, 3> kKeyStates{KeyState::kActive, KeyState::kExpired,
                                                    KeyState::kRevoked};

// The one spelling each value is written with; "unknown" for a value outside the enum.
const char* toString(SystemType type);            // "soa", "lsms", "soa-and-lsms", "npac"
const char* toString(AssociationFunction function);  // "soa-management", ...
const char* toString(KeyState state);             // "active", "expired", "revoked"

// Text → value: the canonical spelling or an accepted alias, exact and case-sensitive
// (names are written by programs; a near miss is a mistake worth reporting). nullopt for
// anything else.
std::optional<SystemType> parseSystemType(std::string_view text);
std::optional<AssociationFunction> parseAssociationFunction(std::string_view text);
std::optional<KeyState> parseKeyState(std::string_view text);

// Every canonical name, comma separated, for error messages: "soa, lsms, soa-and-lsms, npac".
std::string systemTypeNames();
std::string associationFunctionNames();
std::string keyStateNames();

}  // namespace npac::common
