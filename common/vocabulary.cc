#include "common/vocabulary.h"

namespace npac::common {
namespace {

// One row a value: its canonical name, then an alias accepted on input (or nullptr).
struct Name {
  const char* canonical;
  const char* alias;
};

constexpr std::array<Name, kSystemTypes.size()> kSystemTypeNames{{
    {"soa", nullptr}, {"lsms", nullptr}, {"soa-and-lsms", nullptr}, {"npac", nullptr}}};

// Indexed by bit number. "network-data" is how the admin API and docs/OPERATIONS.md spelt
// bit 2 before the names followed the ASN.1; operators' scripts still send it.
constexpr std::array<Name, kAssociationFunctionCount> kFunctionNames{{
    {"soa-management", nullptr},
    {"lsms-data-download", nullptr},
    {"network-data-management", "network-data"},
    {"notifications", nullptr},
    {"queries", nullptr}}};

constexpr std::array<Name, kKeyStates.size()> kKeyStateNames{{
    {"active", nullptr}, {"expired", nullptr}, {"revoked", nullptr}}};

template <typename Enum, std::size_t N>
const char* nameOf(const std::array<Name, N>& table, Enum value) {
  const auto index = static_cast<std::size_t>(value);
  return index < N ? table[index].canonical : "unknown";
}

template <typename Enum, std::size_t N>
std::optional<Enum> valueOf(const std::array<Name, N>& table, const std::array<Enum, N>& values,
                            std::string_view text) {
  for (std::size_t i = 0; i < N; ++i) {
    const Name& name = table[i];
    if (text == name.canonical || (name.alias != nullptr && text == name.alias)) return values[i];
  }
  return std::nullopt;
}

template <std::size_t N>
std::string joined(const std::array<Name, N>& table) {
  std::string out;
  for (const Name& name : table) {
    if (!out.empty()) out += ", ";
    out += name.canonical;
  }
  return out;
}

}  // namespace

const char* toString(SystemType type) { return nameOf(kSystemTypeNames, type); }
const char* toString(AssociationFunction function) { return nameOf(kFunctionNames, function); }
const char* toString(KeyState state) { return nameOf(kKeyStateNames, state); }

std::optional<SystemType> parseSystemType(std::string_view text) {
  return valueOf(kSystemTypeNames, kSystemTypes, text);
}
std::optional<AssociationFunction> parseAssociationFunction(std::string_view text) {
  return valueOf(kFunctionNames, kAssociationFunctions, text);
}
std::optional<KeyState> parseKeyState(std::string_view text) {
  return valueOf(kKeyStateNames, kKeyStates, text);
}

std::string systemTypeNames() { return joined(kSystemTypeNames); }
std::string associationFunctionNames() { return joined(kFunctionNames); }
std::string keyStateNames() { return joined(kKeyStateNames); }

}  // namespace npac::common
