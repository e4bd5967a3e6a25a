// OutboundQueue: the durable queue of messages npacd owes each service provider
// (table outbound_queue). A message is accepted only once its row is committed, and stays
// until the provider acknowledges it and the retention purge removes it.
//
// Bytes written once (schema 8): a row holds the message's state; its PDU is in
// message_bodies, written at submission and never updated. Consecutive messages of one
// append that carry the same PDU — a broadcast's copies for each addressee — share one
// body, which the purge deletes with the last row naming it.
//
// Life of a message:  queued ──markSent──▶ sent ──markAcknowledged──▶ acknowledged
//                        ▲                   │ └──────markFailed─────▶ failed
//                        └─requeueAssociation┘   (association lost: back to queued,
//                                                 flagged as a retransmission)
// Order: nextQueued() returns a provider's queued messages by priority (higher first)
// and, within a priority, strictly first-in first-out (by id, which is assigned in
// commit order and never reused — AUTOINCREMENT — even after a purge).
// Only messages whose required association functions are all in the asking
// association's function mask are returned (NANC 111).
//
// Idempotency: a message may carry the application's idempotency key, unique per
// provider while its row is kept (until the retention purge deletes it). Appending a
// message whose key is already on a row of the same provider with the same content
// (function mask, priority, PDU, kind, opcode, confirmed) adds nothing and answers the original id, marked
// duplicate; with different content the whole append is refused (kConstraint). So a
// client that lost the answer to a committed submission (npacd killed between COMMIT
// and the answer) can repeat it without the provider receiving anything twice.
//
// appendBatch() is the synchronous path: all rows in one transaction. Servers with many
// concurrent submitters use QueueWriter (db/queue_writer.h), which shares one
// transaction among many submitters (group commit) through this same appendBatch().
// Methods that write several rows run in one Transaction; inside a caller's transaction
// they become a savepoint.
//
// Threading: as the Database it wraps (one thread at a time). Cheap to construct.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "db/clock.h"
#include "db/message_facts.h"
#include "db/statement.h"
#include "db/status.h"

namespace npac::db {

class Database;
enum class ProgressEvent;  // db/delivery_progress.h

using MessageId = std::int64_t;
using AssociationId = std::int64_t;

enum class MessageState { kQueued, kSent, kAcknowledged, kFailed };
const char* toString(MessageState state);  // "queued", "sent", "acknowledged", "failed"
std::optional<MessageState> parseMessageState(std::string_view text);

struct NewMessage {
  std::string spid;                // the provider it is for (must be provisioned)
  std::uint32_t function_mask = 0; // association functions it needs (NANC 111)
  int priority = 0;                // higher is sent first; FIFO within one priority
  Bytes pdu;                       // the encoded PDU, stored as is
  // The application's key for a safe retry (isValidIdempotencyKey), or none. The
  // initializer keeps NewMessage{spid, mask, priority, pdu} free of missing-initializer
  // warnings.
  std::optional<std::string> idempotency_key = std::nullopt;
  MessageKind kind = MessageKind::kPush;
  int opcode = kUnknownOpcode;  // the CMIP operation code (X.711 §7.4 local value)
  bool confirmed = false;       // a response is expected from the provider
};

// Idempotency keys are 1..kMaxIdempotencyKeyLength visible ASCII characters (0x21..0x7e):
// no spaces or control characters that a client could send without meaning to.
inline constexpr std::size_t kMaxIdempotencyKeyLength = 128;
bool isValidIdempotencyKey(std::string_view key);

// What an append did with one message: the row's id, and whether the row was already
// there (same provider, idempotency key and content) so nothing was added.
struct AppendOutcome {
  MessageId id = 0;
  bool duplicate = false;
  friend bool operator==(const AppendOutcome&, const AppendOutcome&) = default;
};

struct QueuedMessage {
  MessageId id = 0;
  std::string spid;
  std::uint32_t function_mask = 0;
  int priority = 0;
  Bytes pdu;
  MessageState state = MessageState::kQueued;
  int attempts = 0;                             // times marked sent
  TimeMs created_at = 0;
  std::optional<TimeMs> sent_at;                // the latest send
  std::optional<TimeMs> acknowledged_at;
  std::optional<AssociationId> association_id;  // the association last used
  bool retransmission = false;                  // re-queued after a lost association
  std::optional<std::string> failure_reason;
  std::optional<TimeMs> failed_at;
  std::optional<std::string> idempotency_key;
  MessageKind kind = MessageKind::kPush;
  int opcode = kUnknownOpcode;
  bool confirmed = false;
};

// The row `message` became when committed with `id` at `created_at` (queued, never sent):
// what the queue writer hands on without reading it back (QueueWriter::submitCommitted).
QueuedMessage committedMessage(NewMessage message, MessageId id, TimeMs created_at);

class OutboundQueue {
 public:
  explicit OutboundQueue(Database& db) : db_(db) {}

  // Appends every message in one transaction, stamped created_at = appendStamp(now); returns their
  // ids in input order. All or none: on error nothing was written. A message whose
  // idempotency key is already stored (see above) answers the stored id and adds no row.
  // Errors: kInvalidArgument (bad SPID, malformed key, one key twice for one provider in
  // `messages`), kConstraint (unknown provider, or a key already stored with different
  // content), storage errors.
  Result<std::vector<MessageId>> appendBatch(std::span<const NewMessage> messages, TimeMs now);
  // The same, saying for each message whether it was a duplicate.
  Result<std::vector<AppendOutcome>> appendBatchOutcomes(std::span<const NewMessage> messages,
                                                         TimeMs now);
  // The same inside a transaction of the caller's that already took `stamp` from
  // appendStamp (QueueWriter: one stamp, and on PostgreSQL one lock, for a whole group
  // commit): the rows are stamped `stamp` as is.
  Result<std::vector<AppendOutcome>> appendStampedOutcomes(std::span<const NewMessage> messages,
                                                           TimeMs stamp);

  // The created_at an append at `now` stamps its rows with: `now`, or the newest row's when
  // the clock is behind it (stepped back, or another node's clock ahead), so that
  // created_at never decreases in id order (schema 10: a time range is an id range,
  // createdBetween). On PostgreSQL it first takes kAppendLock, held to commit, so the
  // newest row it reads is the newest committed. Call inside the append's transaction
  // (QueueWriter does, to hand on the stamp); appendBatch calls it itself.
  Result<TimeMs> appendStamp(TimeMs now);

  // Up to `limit` queued messages for `spid` that an association with functions
  // `association_functions` may carry, in send order.
  Result<std::vector<QueuedMessage>> nextQueued(std::string_view spid,
                                                std::uint32_t association_functions,
                                                std::size_t limit);

  // queued → sent over `association`; attempts + 1. kInvalidArgument if not queued.
  Status markSent(MessageId id, AssociationId association, TimeMs at);
  Status markSent(std::span<const MessageId> ids, AssociationId association, TimeMs at);
  // any → acknowledged. Acknowledging twice is not an error (the provider may repeat
  // itself); an unknown id is kNotFound.
  Status markAcknowledged(MessageId id, TimeMs at);
  Status markAcknowledged(std::span<const MessageId> ids, TimeMs at);
  // queued or sent → failed, with the reason (retries exhausted, rejected by provider...).
  Status markFailed(MessageId id, std::string_view reason, TimeMs at);

  // What a caller knows exactly of some of one provider's messages — the core's own reads
  // and writes (npac/npacd/core/delivery_store.h "Known states") — so that its progress
  // writes check those messages without reading them back. `state` answers nullopt for a
  // message it does not know; those are read as without it.
  struct Known {
    std::string_view spid;
    std::function<std::optional<MessageState>(MessageId)> state;
  };
  // markSent and markAcknowledged of `known.spid`'s messages with what `known` knows: the
  // same refusals, the same records.
  Status markSent(std::span<const MessageId> ids, AssociationId association, TimeMs at, const Known& known);
  Status markAcknowledged(std::span<const MessageId> ids, TimeMs at, const Known& known);

  // Every message in flight (sent) on `association` goes back to queued, flagged as a
  // retransmission; returns how many. Finds the association's providers by scanning the
  // records (no index on association_id): tools and tests; npacd calls the one below.
  Result<std::size_t> requeueAssociation(AssociationId association);
  // The same for an association of `spid` (the core knows whose it is): reads only what
  // that provider's settled view holds.
  Result<std::size_t> requeueAssociation(std::string_view spid, AssociationId association);
  // Every message of `spid` in flight goes back to queued, flagged as a retransmission (a
  // lease taken over, db/lease_store.h); how many.
  Result<std::size_t> requeueProvider(std::string_view spid);
  // The same for every provider (npacd's start on SQLite: no association of the last run
  // is still bound).
  Result<std::size_t> requeueAllInFlight();
  // A sent message now in flight on another `association` (a request moved by SRR off or
  // retried elsewhere): the row follows it, flagged as a retransmission, so that losing
  // the first association does not re-queue it. kInvalidArgument if not sent.
  Status moveSent(MessageId id, AssociationId association);
  // These sent messages back to queued, flagged as a retransmission (could not be placed
  // on any association); queued/acknowledged/failed ones are left alone. How many moved.
  Result<std::size_t> requeue(std::span<const MessageId> ids);

  Result<QueuedMessage> get(MessageId id);  // kNotFound if absent
  // Recovery by time range: every message for `spid` created in [from, to), in id order,
  // whatever its state ("what did this provider miss between T1 and T2"), up to `limit`.
  // created_at never decreases in id order (appendStamp), so the range is found as an id
  // range (a binary search over ids) and read per priority in
  // the ready index: no index by creation time, which every append would pay for.
  Result<std::vector<QueuedMessage>> createdBetween(std::string_view spid, TimeMs from, TimeMs to,
                                                    std::size_t limit);
  // "Send what I missed": every message for `spid` not acknowledged (queued, sent,
  // failed), in id order.
  Result<std::vector<QueuedMessage>> unacknowledged(std::string_view spid, std::size_t limit);
  // Retention: deletes acknowledged messages acknowledged before `cutoff`, with every body
  // no row names any more; returns how many rows. A message acknowledged by a record is
  // deleted once its provider's settled mark passed it (schema 11: the settled counts hold
  // it), by id ranges (schema 12, db/progress_log.h "Retention ranges": a minute or so
  // after it is due, never before); each step first settles the providers lagging behind
  // the cutoff (settleLagging). Runs in steps of kPurgeStepRows, each its own transaction
  // (a caller's transaction makes them savepoints).
  Result<std::size_t> purgeAcknowledgedBefore(TimeMs cutoff);
  // The same, at most `max_rows` of them (each provider's lowest ids first, providers in
  // SPID order): one bounded step of the purge job.
  Result<std::size_t> purgeAcknowledgedBefore(TimeMs cutoff, std::size_t max_rows);
  static constexpr std::size_t kPurgeStepRows = 10000;
  // How many messages are in `state` (all providers; reads every row — tests and tools).
  Result<std::size_t> count(MessageState state);
  // A cheap read that succeeds when the database answers (one index seek).
  Status probe();
  // How many messages of `spid` are queued, by the function mask they need.
  Result<std::map<std::uint32_t, std::size_t>> queuedByMask(std::string_view spid);

  // Every queued message of `spid` in send order, and an id at or above which every
  // message committed later will be numbered — for a copy kept in memory
  // (npac/npacd/core/ready_queue.h). Read in this order so that nothing committed
  // meanwhile falls between the two: first the highest id ever assigned, then the
  // messages (a message committed in between is among them). None when more than `max`
  // are queued (counted first, without reading their PDUs).
  struct QueuedSnapshot {
    std::vector<QueuedMessage> messages;
    MessageId committed_through = 0;
  };
  Result<std::optional<QueuedSnapshot>> queuedSnapshot(std::string_view spid, std::size_t max);
  // The same with the mark given (QueueWriter::committedThrough, read by the caller before
  // this call): the messages only, no MAX(id) read.
  Result<std::optional<QueuedSnapshot>> queuedSnapshot(std::string_view spid, std::size_t max,
                                                       MessageId committed_through);

  // What the delivery progress records (db/progress_log.h) say of one provider's messages: every message they name that has a
  // row, with its row's state and its row as the records leave it.
  struct ProgressView {
    struct Named {
      MessageState base = MessageState::kQueued;  // by its row's columns
      QueuedMessage row;                          // as the records leave it
    };
    std::unordered_map<MessageId, Named> named;
    // settledView(): the provider's settled mark. Every message at or below it is
    // acknowledged, or open and in `named`.
    MessageId mark = 0;
    const Named* find(MessageId id) const;
    // Messages in `state` after the records minus those in it by their rows.
    std::int64_t delta(MessageState state) const;
  };
  // Only the messages above `above` (a settled mark; 0: all of them).
  Result<ProgressView> progressView(std::string_view spid, MessageId above = 0);
  // What a reader of the whole queue needs beyond the rows' columns, bounded by the
  // provider's settled mark: the messages above it the records since it name, and the open
  // messages at or below it (db/progress_log.h) — not every record ever written.
  Result<ProgressView> settledView(std::string_view spid);

  // Moves `spid`'s settled mark (db/progress_log.h) as far as the messages above it allow
  // (db/outbound_queue_settle.cc): past every acknowledged one, listing failed ones open,
  // and ones waiting or in flight since at least `stuck_after` before `now` (at most
  // kMaxWaitingOpen of them), up to the first other message not acknowledged. Each call
  // reads at most kSettleWalkRows rows per priority above the mark. Returns the mark.
  // On PostgreSQL it relies on appends committing their ids in order (kAppendLock).
  Result<MessageId> settle(std::string_view spid, TimeMs now, TimeMs stuck_after = kStuckAfterMs);
  // Settles (as of `cutoff`) each provider that has an acknowledgement record older than
  // `cutoff` above its mark: the retention purge's first step, since it deletes
  // acknowledged rows only at or below the mark, and a provider's latest acknowledgements
  // are settled by its next turn only (DeliveryStore "Settled marks") — one that went quiet,
  // or whose npacd stopped before that turn, would keep them for ever. Safe on any node
  // (ProgressLog::settledThroughForUpdate). Returns how many marks moved.
  Result<std::size_t> settleLagging(TimeMs cutoff);
  static constexpr TimeMs kStuckAfterMs = 10'000;
  static constexpr std::size_t kSettleWalkRows = 4096;
  static constexpr std::size_t kMaxWaitingOpen = 1024;
  // PostgreSQL: the advisory lock every append holds from drawing its ids to its commit
  // (db/outbound_queue_postgres.cc), so ids are committed in order as on SQLite.
  static constexpr std::int64_t kAppendLock = 0x6e70'6163'7175'6575;  // "npacqueu"

 private:
  Result<std::optional<QueuedSnapshot>> snapshotQueued(std::string_view spid, std::size_t max,
                                                       std::optional<MessageId> committed_through);
  Result<std::vector<QueuedMessage>> select(Statement& query);
  // The delivery progress records over `rows` (db/outbound_queue_progress.cc): each row's
  // columns are its base state, the records naming it take it from there.
  Status foldProgress(std::vector<QueuedMessage>& rows);
  // The bodies an append writes: the first message carrying each, and how many rows name it.
  struct BodyPlan {
    std::size_t first = 0;
    std::int64_t addressees = 0;
  };
  // The new rows of an append (those not `stored` under their idempotency key) and their
  // bodies, filling outcomes[i] with each row's id. SQLite: one INSERT per body and per row.
  Status writeRows(std::span<const NewMessage> messages, const std::vector<bool>& stored,
                   const std::vector<BodyPlan>& bodies, const std::vector<std::size_t>& body_of, TimeMs now,
                   std::vector<AppendOutcome>& outcomes);
  // PostgreSQL (db/outbound_queue_postgres.cc): the same in four round trips whatever the
  // batch's size — the ids drawn from the two sequences, then one INSERT of every body and
  // one of every row, each reading its rows from one JSON array.
  Status writeRowsAtOnce(std::span<const NewMessage> messages, const std::vector<bool>& stored,
                         const std::vector<BodyPlan>& bodies, const std::vector<std::size_t>& body_of, TimeMs now,
                         std::vector<AppendOutcome>& outcomes);
  // The lowest id whose created_at is at or after `at`, or none (created_at never
  // decreases in id order: a binary search over ids, each probe one seek).
  Result<std::optional<MessageId>> firstCreatedAtOrAfter(TimeMs at);
  // appendBatchOutcomes' body; `stamped`: `now` is already appendStamp's answer in this
  // transaction (and on PostgreSQL kAppendLock is held).
  Result<std::vector<AppendOutcome>> append(std::span<const NewMessage> messages, TimeMs now, bool stamped);
  // The stored row under `message`'s idempotency key: none, the same message (a
  // duplicate), or kConstraint when its content differs.
  Result<std::optional<AppendOutcome>> findStored(const NewMessage& message);
  // The messages `ids` name (once each), as their records leave them; an absent id is left
  // out (db/outbound_queue_marks.cc).
  Result<std::unordered_map<MessageId, QueuedMessage>> statesOf(std::span<const MessageId> ids);
  // Appends `event` for `ids` after checking each against its state. all_or_none: an id
  // absent or in a state the event does not allow refuses the whole write (as the row
  // updates did; an acknowledgement repeated is still fine); otherwise such ids are left out
  // and `changed` counts the others.
  // States in `known` are taken from it instead of read.
  Status writeProgress(ProgressEvent event, std::span<const MessageId> ids, AssociationId association, TimeMs at,
                       std::string_view reason, bool all_or_none, std::size_t* changed,
                       const Known* known = nullptr);
  // The messages of `spid` in flight (on `association`, or on any), ascending.
  Result<std::vector<MessageId>> inFlight(std::string_view spid, std::optional<AssociationId> association);
  // Up to `max` messages acknowledged before `cutoff` by a delivery progress record (not
  // by their rows' columns), by retention ranges (db/progress_log.h): `ids`, ascending;
  // `late` the late listings they settle (their message is due, or its row gone).
  struct DueRows {
    std::vector<MessageId> ids;
    std::vector<MessageId> late;
  };
  Result<DueRows> acknowledgedByRangesBefore(TimeMs cutoff, std::size_t max);
  // Deletes the records of `spid` that name only ids below its lowest remaining row.
  Status purgeRecordsBelowRows(std::string_view spid);
  // The providers that may have a message in flight (on `association`, or on any).
  Result<std::vector<std::string>> providersWithProgress(std::optional<AssociationId> association);

  Database& db_;
};

}  // namespace npac::db
