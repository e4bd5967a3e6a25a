// Status and Result<T>: errors as values for every layer of the cmip/ stack.
//
// Decoders never throw: each returns a Status (or a Result<T> holding either a value or
// a Status). A Status carries a specific ErrorCode, the byte offset in the input where
// the problem was found (relative to the start of the PDU handed to that layer), and a
// human-readable message a person can act on. The success path never allocates.
//
// Adding a code: append one line to NPAC_CMIP_ERROR_CODES in the section of your layer
// (the ACSE/ROSE/CMIP/bind section belongs to those layers' owner). The X-macro keeps the
// enum and errorCodeName() in step.
//
// Threading: plain values; safe to copy and move between threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>

namespace npac::cmip {

#define NPAC_CMIP_ERROR_CODES(X)                                                    \
  X(kOk)                                                                            \
  /* BER, X.690 */                                                                  \
  X(kBerTruncated)             /* header or content runs past the end */            \
  X(kBerLengthPastBuffer)      /* definite length larger than what remains */       \
  X(kBerOverlongTag)           /* high tag number not minimal or > 32 bits */       \
  X(kBerOverlongLength)        /* more than 8 length octets, or reserved 0xFF */    \
  X(kBerIndefinitePrimitive)   /* indefinite length on a primitive encoding */      \
  X(kBerMissingEndOfContents)  /* indefinite length without its 00 00 */            \
  X(kBerDepthExceeded)         /* nesting deeper than DecodeLimits::max_depth */    \
  X(kBerPduTooLarge)           /* PDU larger than DecodeLimits::max_pdu_size */     \
  X(kBerUnexpectedTag)         /* a different tag than the grammar requires */      \
  X(kBerBadBoolean)                                                                 \
  X(kBerBadInteger)            /* empty or non-minimal two's complement */          \
  X(kBerIntegerOverflow)       /* does not fit the requested C++ type */            \
  X(kBerBadBitString)                                                               \
  X(kBerBadNull)                                                                    \
  X(kBerBadOid)                                                                     \
  X(kBerBadTime)                                                                    \
  X(kBerBadString)             /* character outside the string type's repertoire */ \
  X(kBerBadConstructedString)                                                       \
  X(kBerBadExternal)                                                                \
  X(kBerTrailingData)          /* bytes left after the last expected element */     \
  X(kBerMissingElement)        /* a mandatory element is absent */                  \
  /* TPKT, RFC 1006 §6 */                                                           \
  X(kTpktBadVersion)                                                                \
  X(kTpktBadReserved)                                                               \
  X(kTpktLengthTooShort)                                                            \
  X(kTpktLengthTooLong)                                                             \
  X(kTpktTruncated)                                                                 \
  X(kTpktTrailingData)                                                              \
  /* COTP, X.224 class 0 */                                                         \
  X(kCotpTruncated)                                                                 \
  X(kCotpBadLengthIndicator)                                                        \
  X(kCotpUnknownTpdu)                                                               \
  X(kCotpClassNotSupported)                                                         \
  X(kCotpBadParameter)                                                              \
  X(kCotpBadTpduSize)                                                               \
  X(kCotpReassemblyTooLarge)                                                        \
  X(kCotpUnexpectedTpdu)                                                            \
  /* Session, X.225 */                                                              \
  X(kSessionTruncated)                                                              \
  X(kSessionUnknownSpdu)                                                            \
  X(kSessionBadParameter)                                                           \
  X(kSessionUnsupportedVersion)                                                     \
  X(kSessionMissingParameter)                                                       \
  X(kSessionUnexpectedSpdu)                                                         \
  /* Presentation, X.226 */                                                         \
  X(kPresentationBadPpdu)                                                           \
  X(kPresentationUnsupportedMode)                                                   \
  X(kPresentationContextNotNegotiated)                                              \
  X(kPresentationNoAcceptableContext)                                               \
  X(kPresentationUnexpectedPpdu)                                                    \
  /* ACSE, ROSE, CMIP, NPAC bind profile (owned by those layers) */                 \
  X(kAcseBadApdu)                                                                   \
  X(kAcseUnknownApplicationContext)                                                 \
  X(kAcseBadUserInformation)                                                        \
  X(kRoseBadApdu)                                                                   \
  X(kRoseUnknownApdu)                                                               \
  X(kCmipBadArgument)                                                               \
  X(kCmipUnknownOperation)                                                          \
  X(kBindBadAccessControl)                                                          \
  X(kBindBadSignature)                                                              \
  X(kBindBadRefusal)                                                                \
  /* UpperLayers façade */                                                          \
  X(kUpperLayersWrongState)                                                         \
  X(kUpperLayersUnexpectedPdu)

enum class ErrorCode : uint16_t {
#define NPAC_CMIP_ENUM_ENTRY(name) name,
  NPAC_CMIP_ERROR_CODES(NPAC_CMIP_ENUM_ENTRY)
#undef NPAC_CMIP_ENUM_ENTRY
};

// "kBerTruncated" etc.; "kUnknown" for values outside the enum.
const char* errorCodeName(ErrorCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;  // ok
  Status(const Status& other) : rep_(other.rep_ ? std::make_unique<Rep>(*other.rep_) : nullptr) {}
  Status& operator=(const Status& other) {
    if (this != &other) rep_ = other.rep_ ? std::make_unique<Rep>(*other.rep_) : nullptr;
    return *this;
  }
  Status(Status&&) noexcept = default;
  Status& operator=(Status&&) noexcept = default;

  static Status ok() { return Status(); }
  static Status error(ErrorCode code, size_t offset, std::string message) {
    Status s;
    s.rep_ = std::make_unique<Rep>(Rep{code, offset, std::move(message)});
    return s;
  }

  bool isOk() const { return rep_ == nullptr; }
  ErrorCode code() const { return rep_ ? rep_->code : ErrorCode::kOk; }
  size_t offset() const { return rep_ ? rep_->offset : 0; }
  const std::string& message() const;
  // "kBerTruncated at offset 12: INTEGER content needs 4 bytes, 2 remain".
  std::string toString() const;

  // The same error seen from an enclosing PDU: offsets become absolute.
  Status shifted(size_t base) const {
    return isOk() ? Status() : error(rep_->code, rep_->offset + base, rep_->message);
  }

  // Uniform access for NPAC_CMIP_RETURN_IF_ERROR over Status and Result<T>.
  const Status& status() const& { return *this; }
  Status status() && { return std::move(*this); }

 private:
  // Like LevelDB's Status: one pointer, null when ok, so the success path of every
  // Result<T> carries no string to construct or destroy.
  struct Rep {
    ErrorCode code;
    size_t offset;
    std::string message;
  };
  std::unique_ptr<Rep> rep_;
};

// Either a T or an error Status. Construct from a T (success) or a non-ok Status.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}  // NOLINT: implicit on purpose
  Result(Status status) : status_(std::move(status)) {}  // NOLINT

  bool isOk() const { return value_.has_value(); }
  const Status& status() const& { return status_; }
  Status status() && { return std::move(status_); }  // no dangling ref into a temporary

  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }
  T& operator*() & { return *value_; }
  const T& operator*() const& { return *value_; }

 private:
  std::optional<T> value_;
  Status status_;
};

}  // namespace npac::cmip

#define NPAC_CMIP_CONCAT_INNER(a, b) a##b
#define NPAC_CMIP_CONCAT(a, b) NPAC_CMIP_CONCAT_INNER(a, b)

// Returns the Status of `expr` (a Status or Result<T>) from the enclosing function if it
// is an error.
#define NPAC_CMIP_RETURN_IF_ERROR(expr)                    \
  do {                                                     \
    auto&& npac_cmip_r_ = (expr);                          \
    if (!npac_cmip_r_.isOk()) return npac_cmip_r_.status(); \
  } while (0)

// `NPAC_CMIP_ASSIGN_OR_RETURN(auto x, decodeFoo(...));` binds the value or returns the
// error.
#define NPAC_CMIP_ASSIGN_OR_RETURN(lhs, expr)                                     \
  NPAC_CMIP_ASSIGN_OR_RETURN_IMPL(NPAC_CMIP_CONCAT(npac_cmip_res_, __LINE__), lhs, \
                                  expr)
#define NPAC_CMIP_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                    \
  if (!tmp.isOk()) return tmp.status();                 \
  lhs = std::move(tmp).value()
