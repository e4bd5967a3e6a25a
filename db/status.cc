#include "db/status.h"

#include <cstring>

namespace npac::db {

Status Status::make(Code code, std::string message, std::string file, std::string hint,
                    int sqlite_code, int extended_code, int system_errno) {
  Status status(code, std::move(message));
  status.file_ = std::move(file);
  status.hint_ = std::move(hint);
  status.sqlite_code_ = sqlite_code;
  status.extended_code_ = extended_code;
  status.system_errno_ = system_errno;
  return status;
}

std::string Status::toString() const {
  if (isOk()) return "ok";
  std::string out = db::toString(code_);
  out += ": ";
  out += message_;
  if (!file_.empty()) out += " [file " + file_ + "]";
  if (sqlite_code_ != 0) {
    out += " (sqlite " + std::to_string(sqlite_code_) + "/" + std::to_string(extended_code_);
    if (system_errno_ != 0) {
      const char* name = strerrorname_np(system_errno_);
      out += ", errno " + std::to_string(system_errno_);
      if (name != nullptr) out += std::string(" ") + name;
    }
    out += ")";
  }
  if (!sqlstate_.empty()) out += " (postgresql SQLSTATE " + sqlstate_ + ")";
  if (!hint_.empty()) out += " — " + hint_;
  return out;
}

Status Status::withSqlstate(std::string sqlstate) const {
  Status copy = *this;
  copy.sqlstate_ = std::move(sqlstate);
  return copy;
}

Status Status::withFile(const std::string& file) const {
  Status copy = *this;
  if (copy.file_.empty()) copy.file_ = file;
  return copy;
}

const char* toString(Status::Code code) {
  using Code = Status::Code;
  switch (code) {
    case Code::kOk: return "ok";
    case Code::kNotFound: return "not found";
    case Code::kInvalidArgument: return "invalid argument";
    case Code::kConstraint: return "constraint violated";
    case Code::kBusy: return "database locked";
    case Code::kReadOnly: return "database read-only";
    case Code::kFull: return "database full";
    case Code::kCorrupt: return "database corrupt";
    case Code::kCantOpen: return "cannot open database";
    case Code::kTooNew: return "database too new";
    case Code::kUninitialized: return "database not initialised";
    case Code::kIoError: return "database I/O error";
    case Code::kOverloaded: return "overloaded";
    case Code::kShutdown: return "shutting down";
    case Code::kUnavailable: return "database unavailable";
    case Code::kFenced: return "provider lease lost";
    case Code::kInternal: return "internal database error";
  }
  return "unknown";
}

}  // namespace npac::db
