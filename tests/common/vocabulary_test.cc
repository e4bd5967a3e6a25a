// The one name table of each NPAC vocabulary type: every value round-trips through it,
// the alias users typed is accepted but never written, and near misses are refused.
#include <catch2/catch.hpp>

#include "common/vocabulary.h"

using namespace npac::common;

TEST_CASE("Every system type round-trips through its one name") {
  for (SystemType type : kSystemTypes) {
    INFO(static_cast<int>(type));
    REQUIRE(parseSystemType(toString(type)) == type);
  }
  CHECK(std::string(toString(SystemType::kSoaAndLsms)) == "soa-and-lsms");
}

TEST_CASE("Every association function round-trips through its one name") {
  for (AssociationFunction function : kAssociationFunctions) {
    INFO(static_cast<int>(function));
    REQUIRE(parseAssociationFunction(toString(function)) == function);
  }
}

TEST_CASE("Every key state round-trips through its one name") {
  for (KeyState state : kKeyStates) {
    INFO(static_cast<int>(state));
    REQUIRE(parseKeyState(toString(state)) == state);
  }
}

TEST_CASE("Association function names follow the ASN.1 named bits of the bind profile") {
  // docs/npac-bind.asn1 AssociationFunctions: soaManagement(0) .. queries(4).
  CHECK(std::string(toString(AssociationFunction::kSoaManagement)) == "soa-management");
  CHECK(std::string(toString(AssociationFunction::kLsmsDataDownload)) == "lsms-data-download");
  CHECK(std::string(toString(AssociationFunction::kNetworkDataManagement)) == "network-data-management");
  CHECK(std::string(toString(AssociationFunction::kNotifications)) == "notifications");
  CHECK(std::string(toString(AssociationFunction::kQueries)) == "queries");
}

TEST_CASE("The admin API's earlier spelling network-data is read as network data management") {
  CHECK(parseAssociationFunction("network-data") == AssociationFunction::kNetworkDataManagement);
  CHECK(associationFunctionNames().find("network-data,") == std::string::npos);
}

TEST_CASE("Names are matched exactly so a near miss is refused") {
  CHECK_FALSE(parseSystemType("SOA").has_value());
  CHECK_FALSE(parseSystemType("soa ").has_value());
  CHECK_FALSE(parseSystemType("").has_value());
  CHECK_FALSE(parseAssociationFunction("network").has_value());
  CHECK_FALSE(parseAssociationFunction("soa_management").has_value());
  CHECK_FALSE(parseKeyState("Revoked").has_value());
}

TEST_CASE("A value outside an enum is written as unknown") {
  CHECK(std::string(toString(static_cast<SystemType>(7))) == "unknown");
  CHECK(std::string(toString(static_cast<SystemType>(-1))) == "unknown");
  CHECK(std::string(toString(static_cast<AssociationFunction>(5))) == "unknown");
  CHECK(std::string(toString(static_cast<KeyState>(3))) == "unknown");
}

TEST_CASE("The name lists for messages hold every canonical name in table order") {
  CHECK(systemTypeNames() == "soa, lsms, soa-and-lsms, npac");
  CHECK(associationFunctionNames() ==
        "soa-management, lsms-data-download, network-data-management, notifications, queries");
  CHECK(keyStateNames() == "active, expired, revoked");
}
