// Status: the outcome of a tunable operation, as a value (LevelDB style).
//
// Every way a `set` can be refused has its own code so that the admin API can map it to
// a precise answer ("srr is per provider: give a SPID") without parsing text. The
// message is written for the operator: it names the tunable and what would be accepted.
//
// Threading: a Status is an immutable value; copy it freely between threads.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

namespace npac::tunables {

enum class ErrorCode : std::uint8_t {
  kOk,
  kUnknownName,       // no tunable of that name in the catalogue
  kWrongType,         // the text does not parse as the tunable's type ("fast" for a bool)
  kOutOfRange,        // parses, but lies outside the declared range / length
  kWrongScope,        // a per-provider value for a global-only tunable, or the reverse
  kUnknownEnumValue,  // not one of the enumeration's allowed values
  kInvalidProvider,   // the SPID is not a valid service provider id
  kInconsistent,      // valid alone, but contradicts a related tunable (throttle levels)
  kStorage,           // the database refused the change; nothing was applied
  kReentrant,         // set/clear called from inside a change callback (would deadlock)
  kNoActor,           // a change without an actor: the audit log must say who
};

std::string_view toString(ErrorCode code);

class Status {
 public:
  Status() = default;  // ok

  static Status ok() { return Status(); }
  static Status unknownName(std::string message) {
    return Status(ErrorCode::kUnknownName, std::move(message));
  }
  static Status wrongType(std::string message) {
    return Status(ErrorCode::kWrongType, std::move(message));
  }
  static Status outOfRange(std::string message) {
    return Status(ErrorCode::kOutOfRange, std::move(message));
  }
  static Status wrongScope(std::string message) {
    return Status(ErrorCode::kWrongScope, std::move(message));
  }
  static Status unknownEnumValue(std::string message) {
    return Status(ErrorCode::kUnknownEnumValue, std::move(message));
  }
  static Status invalidProvider(std::string message) {
    return Status(ErrorCode::kInvalidProvider, std::move(message));
  }
  static Status inconsistent(std::string message) {
    return Status(ErrorCode::kInconsistent, std::move(message));
  }
  static Status storage(std::string message) {
    return Status(ErrorCode::kStorage, std::move(message));
  }
  static Status reentrant(std::string message) {
    return Status(ErrorCode::kReentrant, std::move(message));
  }
  static Status noActor(std::string message) {
    return Status(ErrorCode::kNoActor, std::move(message));
  }

  bool isOk() const { return code_ == ErrorCode::kOk; }
  explicit operator bool() const { return isOk(); }
  ErrorCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "out of range: congestion_window must be 1..10000 requests, got 0"
  std::string toString() const;

 private:
  Status(ErrorCode code, std::string message) : code_(code), message_(std::move(message)) {}

  ErrorCode code_ = ErrorCode::kOk;
  std::string message_;
};

}  // namespace npac::tunables
