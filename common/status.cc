#include "common/status.h"

#include <cstring>

namespace npac {

StatusLayer layerOf(StatusCode code) {
  switch (code) {
#define NPAC_STATUS_LAYER_ENTRY(c, layer, text) \
  case StatusCode::c:                                  \
    return StatusLayer::layer;
    NPAC_STATUS_CODES(NPAC_STATUS_LAYER_ENTRY)
#undef NPAC_STATUS_LAYER_ENTRY
  }
  return StatusLayer::kNone;
}

const char* codeName(StatusCode code) {
  switch (code) {
#define NPAC_STATUS_NAME_ENTRY(c, layer, text) \
  case StatusCode::c:                                 \
    return #c;
    NPAC_STATUS_CODES(NPAC_STATUS_NAME_ENTRY)
#undef NPAC_STATUS_NAME_ENTRY
  }
  return "kUnknown";
}

const char* describe(StatusCode code) {
  switch (code) {
#define NPAC_STATUS_TEXT_ENTRY(c, layer, text) \
  case StatusCode::c:                                 \
    return text;
    NPAC_STATUS_CODES(NPAC_STATUS_TEXT_ENTRY)
#undef NPAC_STATUS_TEXT_ENTRY
  }
  return "unknown";
}

namespace {
const std::string kEmpty;
}  // namespace

Status Status::error(Code code, std::string message) {
  if (code == Code::kOk) return Status();
  auto rep = std::make_unique<Rep>();
  rep->code = code;
  rep->message = std::move(message);
  return Status(std::move(rep));
}

Status Status::error(Code code, std::size_t offset, std::string message) {
  if (code == Code::kOk) return Status();
  auto rep = std::make_unique<Rep>();
  rep->code = code;
  rep->offset = offset;
  rep->message = std::move(message);
  return Status(std::move(rep));
}

Status Status::make(Code code, std::string message, std::string file, std::string hint, int sqlite_code,
                    int extended_code, int system_errno) {
  if (code == Code::kOk) return Status();
  auto rep = std::make_unique<Rep>();
  rep->code = code;
  rep->message = std::move(message);
  rep->file = std::move(file);
  rep->hint = std::move(hint);
  rep->sqlite_code = sqlite_code;
  rep->extended_code = extended_code;
  rep->system_errno = system_errno;
  return Status(std::move(rep));
}

const std::string& Status::message() const { return rep_ ? rep_->message : kEmpty; }
const std::string& Status::file() const { return rep_ ? rep_->file : kEmpty; }
const std::string& Status::hint() const { return rep_ ? rep_->hint : kEmpty; }
const std::string& Status::sqlstate() const { return rep_ ? rep_->sqlstate : kEmpty; }

std::string Status::toString() const {
  if (isOk()) return "ok";
  const Rep& r = *rep_;
  if (layerOf(r.code) == StatusLayer::kCodec) {
    return std::string(codeName(r.code)) + " at offset " + std::to_string(r.offset) + ": " + r.message;
  }
  std::string out = describe(r.code);
  if (!r.message.empty()) out += ": " + r.message;
  if (!r.file.empty()) out += " [file " + r.file + "]";
  if (r.sqlite_code != 0) {
    out += " (sqlite " + std::to_string(r.sqlite_code) + "/" + std::to_string(r.extended_code);
    if (r.system_errno != 0) {
      const char* name = strerrorname_np(r.system_errno);
      out += ", errno " + std::to_string(r.system_errno);
      if (name != nullptr) out += std::string(" ") + name;
    }
    out += ")";
  }
  if (!r.sqlstate.empty()) out += " (postgresql SQLSTATE " + r.sqlstate + ")";
  if (!r.hint.empty()) out += " — " + r.hint;
  return out;
}

Status Status::shifted(std::size_t base) const {
  if (isOk()) return Status();
  Status copy = *this;
  copy.rep_->offset += base;
  return copy;
}

Status Status::withSqlstate(std::string sqlstate) const {
  if (isOk()) return Status();
  Status copy = *this;
  copy.rep_->sqlstate = std::move(sqlstate);
  return copy;
}

Status Status::withFile(const std::string& file) const {
  if (isOk()) return Status();
  Status copy = *this;
  if (copy.rep_->file.empty()) copy.rep_->file = file;
  return copy;
}

}  // namespace npac
