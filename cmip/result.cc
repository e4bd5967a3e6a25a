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

const std::string& Status::message() const {
  static const std::string kEmpty;
  return rep_ ? rep_->message : kEmpty;
}

std::string Status::toString() const {
  if (isOk()) return "OK";
  return std::string(errorCodeName(rep_->code)) + " at offset " + std::to_string(rep_->offset) + ": " + rep_->message;
}

}  // namespace npac::cmip
