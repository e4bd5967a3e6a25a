#include "cmip/result.h"

namespace npac::cmip {

const char* errorCodeName(ErrorCode code) {
  switch (code) {
#define NPAC_CMIP_NAME_ENTRY(name) \
  case ErrorCode::name:            \
    return #name;
    NPAC_CMIP_ERROR_CODES(NPAC_CMIP_NAME_ENTRY)
#undef NPAC_CMIP_NAME_ENTRY
  }
  return "kUnknown";
}

std::string Status::toString() const {
  if (isOk()) return "OK";
  return std::string(errorCodeName(code_)) + " at offset " + std::to_string(offset_) + ": " + message_;
}

}  // namespace npac::cmip
