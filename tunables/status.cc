#include "tunables/status.h"

namespace npac::tunables {

std::string_view toString(ErrorCode code) {
  switch (code) {
    case ErrorCode::kOk: return "ok";
    case ErrorCode::kUnknownName: return "unknown tunable";
    case ErrorCode::kWrongType: return "wrong type";
    case ErrorCode::kOutOfRange: return "out of range";
    case ErrorCode::kWrongScope: return "wrong scope";
    case ErrorCode::kUnknownEnumValue: return "unknown enumeration value";
    case ErrorCode::kInvalidProvider: return "invalid provider";
    case ErrorCode::kInconsistent: return "inconsistent";
    case ErrorCode::kStorage: return "storage error";
    case ErrorCode::kReentrant: return "called from a change callback";
    case ErrorCode::kNoActor: return "no actor";
  }
  return "unknown error";
}

std::string Status::toString() const {
  if (isOk()) return "ok";
  std::string text(npac::tunables::toString(code_));
  if (!message_.empty()) {
    text += ": ";
    text += message_;
  }
  return text;
}

}  // namespace npac::tunables
