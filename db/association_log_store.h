// AssociationLogStore: the association log (table association_log) — one row for every
// bind accepted, bind rejected, association released and association aborted, with the
// provider, the peer NSAP, the association functions and recovery mode from the bind
// (the bind's NPAC access control), when it happened, when the association had been bound (for a
// release or abort), and the reason and protocol diagnostic. For operators answering "why
// did provider X lose its association at 03:12" and for the recovery time range.
//
// Append-only; purgeBefore() is the retention job.
//
// Threading: as the Database it wraps (one thread at a time). Cheap to construct.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "db/clock.h"
#include "db/statement.h"
#include "db/status.h"

namespace npac::db {

class Database;

enum class AssociationEventKind { kBind, kReject, kRelease, kAbort };
const char* toString(AssociationEventKind kind);  // "bind", "reject", "release", "abort"
std::optional<AssociationEventKind> parseAssociationEventKind(std::string_view text);

struct AssociationEvent {
  std::int64_t id = 0;  // assigned by append()
  TimeMs at = 0;
  AssociationEventKind kind = AssociationEventKind::kBind;
  std::string spid;     // as claimed in the bind; a reject may name an unknown provider
  Bytes nsap;           // the peer's NSAP octets (may be empty if unknown)
  std::optional<std::int64_t> association_id;  // absent for a reject
  std::uint32_t function_mask = 0;
  bool recovery_mode = false;
  std::optional<TimeMs> bound_at;  // for release/abort: when the bind was accepted
  std::string reason;              // e.g. "duplicate bind replaced (NANC 386)"
  std::string diagnostic;          // protocol detail: ACSE diagnostic, abort source...

  friend bool operator==(const AssociationEvent&, const AssociationEvent&) = default;
};

class AssociationLogStore {
 public:
  explicit AssociationLogStore(Database& db) : db_(db) {}

  Result<std::int64_t> append(const AssociationEvent& event);  // returns the id
  // One provider's events with from <= at < to, oldest first, at most `limit`.
  Result<std::vector<AssociationEvent>> forProvider(std::string_view spid, TimeMs from, TimeMs to,
                                                   std::size_t limit);
  Result<std::vector<AssociationEvent>> recent(std::size_t limit);  // newest first
  Result<std::vector<AssociationEvent>> recentForProvider(std::string_view spid,
                                                         std::size_t limit);  // newest first
  Result<std::size_t> purgeBefore(TimeMs cutoff);                   // deletes at < cutoff
  Result<std::size_t> purgeBefore(TimeMs cutoff, std::size_t max_rows);  // at most max_rows, oldest first

 private:
  Database& db_;
};

}  // namespace npac::db
