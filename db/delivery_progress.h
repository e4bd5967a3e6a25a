// Delivery progress as records (issue "A message is written once"): what happens to the
// messages of the outbound queue after they are committed, written as compact records
// appended in batches instead of rewriting each message's row, and the fold that turns
// those records back into each message's state.
//
// A record says that one thing happened, at one instant, to a list of one provider's
// messages:
//   kHanded        queued → sent over `association` (attempts + 1, sent_at = at)
//   kAcknowledged  any state but acknowledged → acknowledged (acknowledged_at = at)
//   kFailed        queued or sent → failed (failure_reason = reason, failed_at = at)
//   kRequeued      sent → queued, flagged as a retransmission (an association lost, or a
//                  message that could not be placed)
//   kMoved         sent stays sent, now in flight on `association`, flagged as a
//                  retransmission (SRR moved or retried it elsewhere)
// — the transitions of db::OutboundQueue (db/outbound_queue.h "Life of a message"),
// exactly: a record replayed over the same messages gives the same states as the row
// updates it replaces.
//
// The ids of a record are stored as one blob (encodeIdList): each id as the zigzag delta
// from the id before it, in unsigned LEB128, so a turn's consecutive ids cost one byte each
// — a record of a thousand messages is about a kilobyte, written once.
//
// ProviderProgress folds one provider's records over the messages committed for it
// (admit): the state of every message not yet settled. A message is settled once it and
// every message of the provider before it are acknowledged or failed; settled messages
// leave the fold (settledThrough() is their bound), so its size follows what is in flight
// and waiting, not what was ever sent. check() says whether a record may be appended (the
// rule each transition above states); apply() applies one, skipping any id the rule
// refuses, so that replaying the records at start (or after a takeover) rebuilds exactly
// the states that were in memory when they were written.
//
// Threading: plain values and pure functions; a ProviderProgress belongs to one thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "db/clock.h"
#include "db/outbound_queue.h"
#include "db/statement.h"
#include "db/status.h"

namespace npac::db {

enum class ProgressEvent { kHanded = 1, kAcknowledged = 2, kFailed = 3, kRequeued = 4, kMoved = 5 };
const char* toString(ProgressEvent event);  // "handed", "acknowledged", ...
// The stored integer back to its event; nullopt for a value no npacd writes.
std::optional<ProgressEvent> progressEventFromInt(std::int64_t value);

struct ProgressRecord {
  std::string spid;
  ProgressEvent event = ProgressEvent::kHanded;
  AssociationId association = 0;  // kHanded, kMoved: the association; otherwise 0
  TimeMs at = 0;
  std::vector<MessageId> ids;
  std::string reason;  // kFailed: why
};

// The ids blob (see above). Ids are positive; any order, repeats allowed.
Bytes encodeIdList(std::span<const MessageId> ids);
// Its inverse. kCorrupt, naming the byte offset, for a varint cut short or above 64 bits, an id outside 1..2^63-1, or more than `max_ids` ids.
Result<std::vector<MessageId>> decodeIdList(std::span<const std::uint8_t> blob, std::size_t max_ids);

// What the fold knows of one message.
struct MessageProgress {
  MessageState state = MessageState::kQueued;
  int attempts = 0;
  std::optional<TimeMs> sent_at;
  std::optional<TimeMs> acknowledged_at;
  std::optional<TimeMs> failed_at;
  std::optional<AssociationId> association;
  bool retransmission = false;
  std::optional<std::string> failure_reason;
  friend bool operator==(const MessageProgress&, const MessageProgress&) = default;
};

// Applies `record`'s event to one of the messages it names when the event's rule allows
// it (see above); true when the message changed.
bool applyEvent(const ProgressRecord& record, MessageProgress& message);

// A queue row's state columns as the fold's starting point (a row's base state: what it
// held before records were written for it), and the fold's result written back on a row.
MessageProgress progressOf(const QueuedMessage& row);
void setProgress(QueuedMessage& row, const MessageProgress& progress);

class ProviderProgress {
 public:
  // Messages up to `settled_through` are settled (none of them is tracked).
  explicit ProviderProgress(MessageId settled_through = 0)
      : settled_through_(settled_through), highest_(settled_through) {}

  // A message committed for this provider: queued. Ids must grow; an id at or below the
  // highest admitted (or settled) is kInvalidArgument.
  Status admit(MessageId id);
  // The same for a message committed with a state already (a row migrated from a schema
  // that stored states), ids growing as for admit().
  Status admit(MessageId id, MessageProgress progress);

  // Ok when `record` may be appended: every id is tracked and in a state its event
  // allows. Otherwise kNotFound (an id never admitted and not settled — an acknowledgement
  // of a settled message is fine, as acknowledging twice is) or kInvalidArgument naming
  // the first id and its state, as db::OutboundQueue answers.
  Status check(const ProgressRecord& record) const;
  // Applies `record`; ids its event does not allow are skipped. Returns how many changed.
  std::size_t apply(const ProgressRecord& record);

  // The message's state; nullopt when settled or never admitted.
  const MessageProgress* find(MessageId id) const;
  bool isSettled(MessageId id) const { return id <= settled_through_; }
  MessageId settledThrough() const { return settled_through_; }
  MessageId highestAdmitted() const { return highest_; }
  // Tracked messages (neither settled nor forgotten), and those in `state`.
  std::size_t tracked() const { return messages_.size(); }
  std::size_t count(MessageState state) const;
  // Ids in flight (sent) on `association`, ascending.
  std::vector<MessageId> inFlightOn(AssociationId association) const;

 private:
  void settle();  // drops the settled prefix

  MessageId settled_through_ = 0;
  MessageId highest_ = 0;
  std::map<MessageId, MessageProgress> messages_;
};

}  // namespace npac::db
