// JSON views of the typed CMIP arguments and results (cmip/cmip_operations.h) for
// npac-pdu's "cmip" objects. The FromJson direction throws a kBadDocument Status
// (json_upper.h says why).
//
// Threading: pure functions.
#pragma once

#include "cmip/cmip_operations.h"
#include "npac/npac-pdu/json_upper.h"

namespace npac::pdu {

Json cmipArgumentToJson(const cmip::CmipArgument& arg);
cmip::CmipArgument cmipArgumentFromJson(cmip::CmipOpcode op, const Json& j);
Json cmipResultToJson(const cmip::CmipResultValue& value);
cmip::CmipResultValue cmipResultFromJson(const Json& j);

}  // namespace npac::pdu
