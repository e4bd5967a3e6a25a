// ReadyMessages: the DeliveryStore's ready messages in memory — one ReadyQueue per
// provider (core/ready_queue.h), their bounds, and the count of what they hold.
//
// The queue writer's committed messages reach the store (committed()) on the core thread,
// so a delivery round takes them from a per-provider ReadyQueue instead of reading back
// what was just written. The store keeps each ReadyQueue exact with its own progress
// writes (sent, failed and acknowledged messages leave it: remove()) and drops it (the
// next round reads the database, then loads it again when it fits) whenever it cannot
// follow: messages put back to `queued`, a refused or fenced write, a storage failure, a
// lease taken, or more than kReadyPerProvider / kReadyTotal messages; it is loaded again
// once no more than kReadyLoadAtMost are queued. On PostgreSQL other nodes may write the
// same queue: their NOTIFY makes the owner call DeliveryStore::forgetReady() for the
// provider (and forgetAllReady() when the listener lost its connection), so their rows are
// read with the next load; a load takes this node's writer's committed mark
// (setCommittedThrough), not the table's highest id, for the reason ready_queue.h gives.
//
// Threading: the core thread only (the DeliveryStore's; loads read its progress connection).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "db/outbound_queue.h"
#include "npac/npacd/core/ready_queue.h"

namespace npac::npacd {

// Ready messages kept in memory per provider and in all, and the PDU bytes they may hold
// in all. A burst that outruns delivery stays in memory while it fits (a message costs
// its PDU plus about 0.3 KiB), so its rounds read nothing back; beyond that the provider's
// ReadyQueue is dropped and its backlog read from the database round by round. A
// provider's ReadyQueue is loaded only while at most kReadyLoadAtMost are queued (no more
// than one delivery round reads anyway): an existing backlog is read from the database
// until it has drained to that, instead of being read whole into memory at once.
inline constexpr std::size_t kReadyPerProvider = 262'144;
inline constexpr std::size_t kReadyLoadAtMost = 256;
inline constexpr std::size_t kReadyTotal = 262'144;
inline constexpr std::size_t kReadyTotalBytes = std::size_t{128} << 20;
struct ReadyLimits {
  std::size_t per_provider = kReadyPerProvider;
  std::size_t total = kReadyTotal;
  std::size_t total_bytes = kReadyTotalBytes;
};

class ReadyMessages {
 public:
  // Loads read `queue` (the DeliveryStore's, on its progress connection).
  explicit ReadyMessages(db::OutboundQueue& queue) : queue_(queue) {}

  // Before the first round (see DeliveryStore::setCommittedThrough, setReadyLimits).
  void setCommittedThrough(std::function<db::MessageId()> mark) { committed_through_ = std::move(mark); }
  void setLimits(ReadyLimits limits) { limits_ = limits; }

  // A delivery round of `spid` answered from memory: the next messages of its complete
  // ReadyQueue, or — after `before_load` (the store's flush: a load reads the database) —
  // of the one just loaded. nullopt: this round reads the database (counted as such).
  std::optional<std::vector<db::QueuedMessage>> next(const std::string& spid, std::uint32_t functions,
                                                     std::size_t limit, const std::function<void()>& before_load);
  // Messages of `spid` the queue writer committed (ids ascending), handed over once.
  void committed(const std::string& spid, std::vector<db::QueuedMessage> rows);
  // These ids were committed for `spid`: any its ReadyQueue does not account for drops it.
  void noteSubmitted(const std::string& spid, const std::vector<db::MessageId>& ids);
  // The message left `queued` (sent, failed, acknowledged); no-op if it is not held.
  void remove(const std::string& spid, db::MessageId id);
  // What is kept of `spid` (of every provider) is no longer exact: the next round reads the database.
  void drop(const std::string& spid);
  void dropAll();

  // Delivery rounds answered from memory, and from the database.
  std::uint64_t rounds() const { return rounds_; }
  std::uint64_t databaseRounds() const { return database_rounds_; }
  // Messages and PDU bytes held in all ReadyQueues.
  std::size_t messages() const { return total_; }
  std::size_t bytes() const { return bytes_; }

 private:
  struct Entry {
    explicit Entry(std::size_t capacity) : queue(capacity) {}
    ReadyQueue queue;
    std::uint32_t skip_loads = 0;  // rounds to wait before trying to load again
  };
  // The provider's ReadyQueue when it is complete now (no load, no database read).
  ReadyQueue* complete(const std::string& spid);
  // The provider's ReadyQueue, loaded if it can be; nullptr when delivery must read the
  // database this round.
  ReadyQueue* load(const std::string& spid);
  // Counts the change of `queue` since it held `size` messages of `bytes` PDU bytes.
  void account(const ReadyQueue& queue, std::size_t size, std::size_t bytes);

  db::OutboundQueue& queue_;
  std::function<db::MessageId()> committed_through_;
  std::map<std::string, Entry> ready_;
  ReadyLimits limits_;
  std::size_t total_ = 0;  // messages held in all ReadyQueues
  std::size_t bytes_ = 0;  // their PDU bytes
  std::uint64_t rounds_ = 0;
  std::uint64_t database_rounds_ = 0;
};

}  // namespace npac::npacd
