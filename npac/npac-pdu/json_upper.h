// JSON views of the upper layers for npac-pdu: ACSE APDUs, ROSE APDUs with their typed
// CMIP operation, CMIPUserInfo and the NPAC LnpAccessControl. Every *ToJson has a
// *FromJson inverse so that `decode | encode` reproduces the bytes; docs/PROTOCOL.md
// "npac-pdu JSON" documents the shapes.
//
// The FromJson direction throws JsonError (a std::runtime_error naming the field) on
// malformed JSON: npac-pdu is a command-line tool and reports it once at top level. The
// ToJson direction never throws.
//
// Threading: pure functions.
#pragma once

#include <nlohmann/json.hpp>

#include <stdexcept>
#include <string>
#include <vector>

#include "cmip/acse.h"
#include "cmip/ber.h"
#include "cmip/cmip.h"
#include "cmip/cmip_operations.h"
#include "cmip/rose.h"

namespace npac::pdu {

using Json = nlohmann::ordered_json;

class JsonError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

std::string toHex(std::span<const uint8_t> bytes);
std::vector<uint8_t> fromHex(const std::string& text);  // throws JsonError

// ACSE APDU, with the CMIPUserInfo (and its LnpAccessControl) of user-information typed
// when `cmipContextId` names the EXTERNAL holding it.
Json acseToJson(const cmip::AcseApdu& apdu);
cmip::AcseApdu acseFromJson(const Json& j);

// ROSE APDU; invokes, results and errors carry a "cmip" object when they decode as X.711.
Json roseToJson(const cmip::RoseApdu& apdu);
cmip::RoseApdu roseFromJson(const Json& j);

// CMIPAbortInfo (the user data of an ABRT).
Json externalToJson(const cmip::External& e);
cmip::External externalFromJson(const Json& j);

}  // namespace npac::pdu
