// JSON views of the upper layers for npac-pdu: ACSE APDUs, ROSE APDUs with their typed
// CMIP operation, CMIPUserInfo and the NPAC LnpAccessControl. Every *ToJson has a
// *FromJson inverse so that `decode | encode` reproduces the bytes; docs/PROTOCOL.md
// "npac-pdu JSON" documents the shapes.
//
// The FromJson direction throws a Status (common/status.h) of kBadDocument naming the
// field on malformed JSON: the converters recurse deeply, so a refusal unwinds them at
// once, and encodeFrames() (frames.h) catches it and answers it as a value. The ToJson
// direction never throws.
//
// Threading: pure functions.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "cmip/acse.h"
#include "cmip/ber.h"
#include "cmip/cmip.h"
#include "cmip/cmip_operations.h"
#include "cmip/rose.h"
#include "common/status.h"

namespace npac::pdu {

using Json = nlohmann::ordered_json;

std::string toHex(std::span<const uint8_t> bytes);
// Hex octets (optionally separated) to bytes; kBadDocument naming the bad character.
Result<std::vector<uint8_t>> fromHex(const std::string& text);

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
