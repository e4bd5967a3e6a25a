// Status and Result<T>: the one error family of every layer, as values (LevelDB's Status).
//
// A Status is ok, or carries a Code, a message a person can act on, and — where the layer
// that raised it knows them — details: the byte offset of a decoding error in its PDU
// (cmip/), the database file, the SQLite result codes and errno or PostgreSQL's SQLSTATE,
// and an operator hint (db/). The codes are one enum, grouped by the layer that raises
// them (NPAC_STATUS_CODES below: the codec, associations/ — NSAPs, outstanding requests,
// recovery, keys and signatures —, storage, tunables, requests to the HTTP API, and
// documents a person wrote); a caller that needs to tell them apart compares code(), and
// a caller that only reports them calls toString(). The HTTP API maps them to answers in
// one place (npac/npacd/api/request.cc, statusResponse).
//
// Like LevelDB's, an ok Status is one null pointer: the success path of every decoder and
// every Result<T> constructs and destroys no string. Result<T> is a value or the Status
// saying why there is none (std::expected is not in our toolchain).
//
// Adding a code: one line in the group of your layer; the X-macro keeps the enum, its
// name and its description in step.
//
// Threading: plain values; copy and move them freely between threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>

namespace npac {

// X(code, layer, description). The description is the category toString() opens with.
#define NPAC_STATUS_CODES(X)                                                                   \
  X(kOk, kNone, "ok")                                                                          \
  /* ---- codec, cmip/: BER (X.690) */                                                         \
  X(kBerTruncated, kCodec, "header or content runs past the end")                              \
  X(kBerLengthPastBuffer, kCodec, "definite length larger than what remains")                  \
  X(kBerOverlongTag, kCodec, "high tag number not minimal or over 32 bits")                    \
  X(kBerOverlongLength, kCodec, "more than 8 length octets, or reserved 0xFF")                 \
  X(kBerIndefinitePrimitive, kCodec, "indefinite length on a primitive encoding")              \
  X(kBerMissingEndOfContents, kCodec, "indefinite length without its 00 00")                   \
  X(kBerDepthExceeded, kCodec, "nesting deeper than DecodeLimits::max_depth")                  \
  X(kBerPduTooLarge, kCodec, "PDU larger than DecodeLimits::max_pdu_size")                     \
  X(kBerUnexpectedTag, kCodec, "a different tag than the grammar requires")                    \
  X(kBerBadBoolean, kCodec, "bad BOOLEAN")                                                     \
  X(kBerBadInteger, kCodec, "empty or non-minimal two's complement")                           \
  X(kBerIntegerOverflow, kCodec, "does not fit the requested C++ type")                        \
  X(kBerBadBitString, kCodec, "bad BIT STRING")                                                \
  X(kBerBadNull, kCodec, "bad NULL")                                                           \
  X(kBerBadOid, kCodec, "bad OBJECT IDENTIFIER")                                               \
  X(kBerBadTime, kCodec, "bad time")                                                           \
  X(kBerBadString, kCodec, "character outside the string type's repertoire")                   \
  X(kBerBadConstructedString, kCodec, "bad constructed string")                                \
  X(kBerBadExternal, kCodec, "bad EXTERNAL")                                                   \
  X(kBerTrailingData, kCodec, "bytes left after the last expected element")                    \
  X(kBerMissingElement, kCodec, "a mandatory element is absent")                               \
  /* TPKT, RFC 1006 §6 */                                                                      \
  X(kTpktBadVersion, kCodec, "TPKT version not 3")                                             \
  X(kTpktBadReserved, kCodec, "TPKT reserved octet not 0")                                     \
  X(kTpktLengthTooShort, kCodec, "TPKT length too short")                                      \
  X(kTpktLengthTooLong, kCodec, "TPKT length too long")                                        \
  X(kTpktTruncated, kCodec, "TPKT truncated")                                                  \
  X(kTpktTrailingData, kCodec, "bytes after the TPKT")                                         \
  /* COTP, X.224 class 0 */                                                                    \
  X(kCotpTruncated, kCodec, "TPDU truncated")                                                  \
  X(kCotpBadLengthIndicator, kCodec, "bad TPDU length indicator")                              \
  X(kCotpUnknownTpdu, kCodec, "unknown TPDU")                                                  \
  X(kCotpClassNotSupported, kCodec, "transport class not supported")                           \
  X(kCotpBadParameter, kCodec, "bad TPDU parameter")                                           \
  X(kCotpBadTpduSize, kCodec, "bad TPDU size")                                                 \
  X(kCotpReassemblyTooLarge, kCodec, "reassembled TSDU too large")                             \
  X(kCotpUnexpectedTpdu, kCodec, "unexpected TPDU")                                            \
  /* Session, X.225 */                                                                         \
  X(kSessionTruncated, kCodec, "SPDU truncated")                                               \
  X(kSessionUnknownSpdu, kCodec, "unknown SPDU")                                               \
  X(kSessionBadParameter, kCodec, "bad SPDU parameter")                                        \
  X(kSessionUnsupportedVersion, kCodec, "session version not supported")                       \
  X(kSessionMissingParameter, kCodec, "SPDU parameter missing")                                \
  X(kSessionUnexpectedSpdu, kCodec, "unexpected SPDU")                                         \
  /* Presentation, X.226 */                                                                    \
  X(kPresentationBadPpdu, kCodec, "bad PPDU")                                                  \
  X(kPresentationUnsupportedMode, kCodec, "presentation mode not supported")                   \
  X(kPresentationContextNotNegotiated, kCodec, "presentation context not negotiated")          \
  X(kPresentationNoAcceptableContext, kCodec, "no acceptable presentation context")            \
  X(kPresentationUnexpectedPpdu, kCodec, "unexpected PPDU")                                    \
  /* ACSE, ROSE, CMIP, NPAC bind profile */                                                    \
  X(kAcseBadApdu, kCodec, "bad ACSE APDU")                                                     \
  X(kAcseUnknownApplicationContext, kCodec, "unknown application context")                     \
  X(kAcseBadUserInformation, kCodec, "bad ACSE user information")                              \
  X(kRoseBadApdu, kCodec, "bad ROSE APDU")                                                     \
  X(kRoseUnknownApdu, kCodec, "unknown ROSE APDU")                                             \
  X(kCmipBadArgument, kCodec, "bad CMIP argument")                                             \
  X(kCmipUnknownOperation, kCodec, "unknown CMIP operation")                                   \
  X(kBindBadAccessControl, kCodec, "bad bind access control")                                  \
  X(kBindBadSignature, kCodec, "bad bind signature")                                           \
  X(kBindBadRefusal, kCodec, "bad bind refusal")                                               \
  /* UpperLayers façade */                                                                     \
  X(kUpperLayersWrongState, kCodec, "wrong state for the upper layers")                        \
  X(kUpperLayersUnexpectedPdu, kCodec, "unexpected PDU for the upper layers")                  \
  /* ---- associations/: an NSAP (NANC 316, RFC 1277) */                                       \
  X(kNsapBadHex, kAssociation, "an NSAP is 24 hexadecimal digits (12 octets, NANC 316)")       \
  X(kNsapNotInternet, kAssociation, "not an RFC 1277 Internet NSAP (must start 54 00728722 03)") \
  X(kNsapBadDigits, kAssociation, "the address digits are not decimal (BCD)")                  \
  X(kNsapOctetOver255, kAssociation, "an address group is above 255")                          \
  X(kNsapBadAddress, kAssociation, "not a dotted-quad IPv4 address")                           \
  X(kNsapIpv6, kAssociation, "IPv6 peers have no 12-octet NSAP; use IPv4")                     \
  /* a provider's outstanding requests and recovery (NANC 351), its egress policy */           \
  X(kInvokeIdsExhausted, kAssociation, "every invoke id is outstanding")                       \
  X(kAssociationCongested, kAssociation, "the association is at congestion_window")            \
  X(kUnknownInvokeId, kAssociation, "no such outstanding invoke id")                           \
  X(kNotRecovering, kAssociation, "the provider is not in recovery mode")                      \
  X(kBadRecoveryRange, kAssociation, "the recovery time range ends before it starts")          \
  X(kBadEgressPolicy, kAssociation, "bad egress policy")                                       \
  /* the bind's keys and signatures (NANC 316 security) */                                     \
  X(kBadPem, kAssociation, "bad PEM")                                                          \
  X(kWrongAlgorithm, kAssociation, "wrong algorithm")                                          \
  X(kWeakKey, kAssociation, "weak key")                                                        \
  X(kBadSignature, kAssociation, "bad signature")                                              \
  X(kSignatureInternal, kAssociation, "internal error")                                        \
  X(kUnusableKeyFile, kAssociation, "unusable key file")                                       \
  X(kUnsignedBind, kAssociation, "the bind cannot be signed")                                  \
  X(kUnverifiedBind, kAssociation, "the bind's signature does not verify")                     \
  /* ---- storage, db/ (and the bounded queues in front of it) */                              \
  X(kNotFound, kDatabase, "not found")                      /* the row asked for is absent */  \
  X(kInvalidArgument, kDatabase, "invalid argument")        /* a value the schema rejects */   \
  X(kConstraint, kDatabase, "constraint violated")          /* UNIQUE / FOREIGN KEY / CHECK */ \
  X(kBusy, kDatabase, "database locked")                    /* past the busy timeout */        \
  X(kReadOnly, kDatabase, "database read-only")             /* file, dir or fs not writable */ \
  X(kFull, kDatabase, "database full")                      /* disk or max_page_count */       \
  X(kCorrupt, kDatabase, "database corrupt")                /* not a database, or damaged */   \
  X(kCantOpen, kDatabase, "cannot open database")           /* missing or inaccessible */      \
  X(kTooNew, kDatabase, "database too new")                 /* written by a newer npacd */     \
  X(kUninitialized, kDatabase, "database not initialised")  /* a file holding no database */   \
  X(kIoError, kDatabase, "database I/O error")              /* the OS reported one */          \
  X(kOverloaded, kDatabase, "overloaded")                   /* a bounded queue is full */      \
  X(kShutdown, kDatabase, "shutting down")                  /* the component is stopping */    \
  X(kUnavailable, kDatabase, "database unavailable")        /* PostgreSQL unreachable */       \
  X(kFenced, kDatabase, "provider lease lost")              /* a lease epoch no longer held */ \
  X(kInternal, kDatabase, "internal database error")        /* misuse, unexpected result */    \
  /* ---- tunables/: why a change was refused */                                               \
  X(kUnknownName, kTunables, "unknown tunable")                                                \
  X(kWrongType, kTunables, "wrong type")                                                       \
  X(kOutOfRange, kTunables, "out of range")                                                    \
  X(kWrongScope, kTunables, "wrong scope")                                                     \
  X(kUnknownEnumValue, kTunables, "unknown enumeration value")                                 \
  X(kInvalidProvider, kTunables, "invalid provider")                                           \
  X(kInconsistent, kTunables, "inconsistent")                                                  \
  X(kStorage, kTunables, "storage error")                                                      \
  X(kReentrant, kTunables, "called from a change callback")                                    \
  X(kNoActor, kTunables, "no actor")                                                           \
  /* ---- requests to the HTTP API, npac/npacd/api/: the description is the answer's "code" */ \
  /* (docs/API.md); statusResponse (api/request.cc) chooses the HTTP status */                 \
  X(kBadTarget, kRequest, "bad_target")                                                        \
  X(kBadUtf8, kRequest, "bad_utf8")                                                            \
  X(kBadJson, kRequest, "bad_json")                                                            \
  X(kInvalidMessage, kRequest, "invalid_message")                                              \
  X(kInvalidFunction, kRequest, "invalid_function")                                            \
  X(kInvalidSpid, kRequest, "invalid_spid")                                                    \
  X(kInvalidIdempotencyKey, kRequest, "invalid_idempotency_key")                               \
  X(kRepeatedIdempotencyKey, kRequest, "repeated_idempotency_key")                             \
  X(kInvalidResponse, kRequest, "invalid_response")                                            \
  X(kInvalidPdu, kRequest, "invalid_pdu")                                                      \
  X(kInvalidPduBatch, kRequest, "invalid_pdu_batch")                                           \
  X(kInvalidBroadcast, kRequest, "invalid_broadcast")                                          \
  X(kInvalidRecipients, kRequest, "invalid_recipients")                                        \
  X(kDuplicateRecipient, kRequest, "duplicate_recipient")                                      \
  X(kTooManyRecipients, kRequest, "too_many_recipients")                                       \
  X(kProviderNotFound, kRequest, "provider_not_found")                                         \
  X(kFunctionNotAllowed, kRequest, "function_not_allowed")                                     \
  X(kNoRecipients, kRequest, "no_recipients")                                                  \
  X(kInvalidThrottleGroup, kRequest, "invalid_throttle_group")                                 \
  /* ---- what a person wrote and a tool reads (npacctl plan's scenario files, options) */     \
  X(kBadDocument, kDocument, "bad document")     /* the message names the JSON path and why */ \
  X(kBadOption, kDocument, "bad option value")   /* a command-line value: the message says why */ \
  X(kBadHex, kDocument, "not hexadecimal text")  /* the offending character and its offset */   \
  /* ---- what the operating system refused a program at start-up */                          \
  X(kCannotListen, kSystem, "cannot listen")     /* bind/listen failed: the address and why */ \
  X(kCannotOpenFile, kSystem, "cannot open file") /* the file, and the system's reason */

enum class StatusCode : std::uint16_t {
#define NPAC_STATUS_ENUM_ENTRY(code, layer, text) code,
  NPAC_STATUS_CODES(NPAC_STATUS_ENUM_ENTRY)
#undef NPAC_STATUS_ENUM_ENTRY
};

// The layer a code belongs to; a codec error renders with its offset.
enum class StatusLayer : std::uint8_t { kNone, kCodec, kAssociation, kDatabase, kTunables, kRequest, kDocument, kSystem };

StatusLayer layerOf(StatusCode code);
// "kBerTruncated"; "kUnknown" outside the enum.
const char* codeName(StatusCode code);
// "database full", "out of range"; "unknown" outside the enum.
const char* describe(StatusCode code);

class [[nodiscard]] Status {
 public:
  using Code = npac::StatusCode;

  Status() = default;  // ok
  Status(const Status& other) : rep_(other.rep_ ? std::make_unique<Rep>(*other.rep_) : nullptr) {}
  Status& operator=(const Status& other) {
    if (this != &other) rep_ = other.rep_ ? std::make_unique<Rep>(*other.rep_) : nullptr;
    return *this;
  }
  Status(Status&&) noexcept = default;
  Status& operator=(Status&&) noexcept = default;

  static Status ok() { return Status(); }
  static Status error(Code code, std::string message);
  // A decoding error `offset` bytes into the PDU handed to the layer that found it.
  static Status error(Code code, std::size_t offset, std::string message);
  // A storage error with what an operator needs to act: the file, the engine's codes and
  // what to do ("free disk space").
  static Status make(Code code, std::string message, std::string file = {}, std::string hint = {},
                     int sqlite_code = 0, int extended_code = 0, int system_errno = 0);

  // Named factories for the codes raised from more than one place.
  static Status notFound(std::string m) { return error(Code::kNotFound, std::move(m)); }
  static Status invalidArgument(std::string m) { return error(Code::kInvalidArgument, std::move(m)); }
  static Status overloaded(std::string m) { return error(Code::kOverloaded, std::move(m)); }
  static Status shutdown(std::string m) { return error(Code::kShutdown, std::move(m)); }
  static Status internal(std::string m) { return error(Code::kInternal, std::move(m)); }
  static Status unknownName(std::string m) { return error(Code::kUnknownName, std::move(m)); }
  static Status wrongType(std::string m) { return error(Code::kWrongType, std::move(m)); }
  static Status outOfRange(std::string m) { return error(Code::kOutOfRange, std::move(m)); }
  static Status wrongScope(std::string m) { return error(Code::kWrongScope, std::move(m)); }
  static Status unknownEnumValue(std::string m) { return error(Code::kUnknownEnumValue, std::move(m)); }
  static Status invalidProvider(std::string m) { return error(Code::kInvalidProvider, std::move(m)); }
  static Status inconsistent(std::string m) { return error(Code::kInconsistent, std::move(m)); }
  static Status storage(std::string m) { return error(Code::kStorage, std::move(m)); }
  static Status reentrant(std::string m) { return error(Code::kReentrant, std::move(m)); }
  static Status noActor(std::string m) { return error(Code::kNoActor, std::move(m)); }
  static Status badDocument(std::string m) { return error(Code::kBadDocument, std::move(m)); }
  static Status badOption(std::string m) { return error(Code::kBadOption, std::move(m)); }

  bool isOk() const { return rep_ == nullptr; }
  explicit operator bool() const { return isOk(); }
  Code code() const { return rep_ ? rep_->code : Code::kOk; }
  StatusLayer layer() const { return layerOf(code()); }
  bool isNotFound() const { return code() == Code::kNotFound; }

  const std::string& message() const;     // the engine's or ours; empty when ok
  std::size_t offset() const { return rep_ ? rep_->offset : 0; }  // codec errors
  const std::string& file() const;        // database path, may be empty
  const std::string& hint() const;        // what an operator should do, may be empty
  const std::string& sqlstate() const;    // PostgreSQL's, e.g. "23505"; empty if none
  int sqliteCode() const { return rep_ ? rep_->sqlite_code : 0; }      // e.g. SQLITE_FULL
  int extendedCode() const { return rep_ ? rep_->extended_code : 0; }  // e.g. SQLITE_IOERR_FSYNC
  int systemErrno() const { return rep_ ? rep_->system_errno : 0; }    // sqlite3_system_errno()

  // "ok"; a codec error: "kBerTruncated at offset 12: INTEGER content needs 4 bytes, 2
  // remain"; any other: "<description>: <message> [file <path>] (sqlite <code>/<extended>
  // [, errno <n> <NAME>]) (postgresql SQLSTATE <code>) — <hint>", each part when known.
  std::string toString() const;

  // The same codec error seen from an enclosing PDU: offsets become absolute.
  Status shifted(std::size_t base) const;
  // A copy carrying PostgreSQL's SQLSTATE.
  Status withSqlstate(std::string sqlstate) const;
  // A copy naming `file` (if none yet): lower layers stay path-agnostic.
  Status withFile(const std::string& file) const;

  // Uniform access for NPAC_RETURN_IF_ERROR over Status and Result<T>.
  const Status& status() const& { return *this; }
  Status status() && { return std::move(*this); }

 private:
  struct Rep {
    Code code = Code::kOk;
    std::size_t offset = 0;
    std::string message;
    std::string file;
    std::string hint;
    std::string sqlstate;
    int sqlite_code = 0;
    int extended_code = 0;
    int system_errno = 0;
  };
  explicit Status(std::unique_ptr<Rep> rep) : rep_(std::move(rep)) {}
  std::unique_ptr<Rep> rep_;
};

// Either a T or the error Status saying why there is none.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}  // NOLINT: implicit on purpose
  Result(Status status) : status_(std::move(status)) {  // NOLINT
    if (status_.isOk()) status_ = Status::internal("Result built from an ok Status without a value");
  }

  bool isOk() const { return value_.has_value(); }
  explicit operator bool() const { return isOk(); }
  const Status& status() const& { return status_; }
  Status status() && { return std::move(status_); }  // no reference into a temporary

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

}  // namespace npac

#define NPAC_STATUS_CONCAT_INNER(a, b) a##b
#define NPAC_STATUS_CONCAT(a, b) NPAC_STATUS_CONCAT_INNER(a, b)

// Returns the Status of `expr` (a Status or Result<T>) from the enclosing function if it
// is an error.
#define NPAC_RETURN_IF_ERROR(expr)                     \
  do {                                                 \
    auto&& npac_status_r_ = (expr);                    \
    if (!npac_status_r_.isOk()) return npac_status_r_.status(); \
  } while (0)

// `NPAC_ASSIGN_OR_RETURN(auto x, decodeFoo(...));` binds the value or returns the error.
#define NPAC_ASSIGN_OR_RETURN(lhs, expr) \
  NPAC_ASSIGN_OR_RETURN_IMPL(NPAC_STATUS_CONCAT(npac_status_res_, __LINE__), lhs, expr)
#define NPAC_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                               \
  if (!tmp.isOk()) return tmp.status();            \
  lhs = std::move(tmp).value()
