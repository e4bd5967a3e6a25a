// CoreShards: npacd's association core on N threads (npacd --threads N) — N
// AssociationManagers, each on its own io_context and thread with its own database
// connections and DeliveryStore, and the one CoreService the admin API calls, routing each
// call to the thread that owns the provider.
//
// A provider's logical association (NANC 353 7.b.i: all its associations, one rotation,
// one invoke-id space) lives on exactly one thread: shardOf(spid), the FNV-1a hash of the
// SPID modulo N — the same in every run with the same N. Nothing of the PDU path crosses
// threads. What the threads share:
//   - the listener: thread 0 accepts every connection; a bind for a SPID of another
//     thread is handed over there before it is admitted (Session::Handoff), so the
//     admission checks see that thread's live associations of the provider;
//   - association ids: one atomic counter, unique across threads and runs;
//   - the providers' requests to the application (pollInbound/respond): kept on thread 0,
//     so one poll sees every provider's requests in arrival order;
//   - the database file: each thread writes its delivery progress through its own
//     connection, one transaction per event-loop turn; SQLite lets one writer in at a time
//     (busy_timeout waits), which bounds what another thread adds (docs/OPERATIONS.md
//     "Threads").
//
// Threading: the CoreService methods are called from the admin API's thread and post onto
// the owning thread(s); completions run on those threads (or the QueueWriter's, for
// submit), as with one AssociationManager. shardOf() and nextAssociationId() are safe
// from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "db/queue_writer.h"
#include "npac/npacd/core/core_service.h"

namespace npac::npacd {

class AssociationManager;

// The most core threads npacd takes (--threads).
inline constexpr std::size_t kMaxCoreThreads = 64;

// The core thread of `spid` among `threads` (FNV-1a 32-bit, modulo threads).
std::size_t coreThreadOf(const std::string& spid, std::size_t threads);

class CoreShards : public CoreService {
 public:
  // `shards` (at least one) outlive this object; joins each one (joinShards) as its index.
  // Association ids continue after `last_association_id` (AssociationManager::
  // lastAssociationId of thread 0, after recoverInterrupted).
  CoreShards(std::vector<AssociationManager*> shards, db::QueueWriter& writer,
             std::int64_t last_association_id);
  CoreShards(const CoreShards&) = delete;
  CoreShards& operator=(const CoreShards&) = delete;

  std::size_t size() const { return shards_.size(); }
  std::size_t shardOf(const std::string& spid) const { return coreThreadOf(spid, shards_.size()); }
  AssociationManager& shard(std::size_t index) { return *shards_[index]; }
  std::int64_t nextAssociationId() { return ++next_association_id_; }

  // Graceful shutdown of every thread (AssociationManager::shutdown); `done` once the last
  // has finished, on that one's thread.
  void shutdown(std::function<void()> done);

  // CoreService (API thread).
  void submit(std::vector<OutboundMessage> messages, SubmitDone done) override;
  void pollInbound(InboundPoll poll, PollDone done) override;
  void respond(InboundRequestId id, InboundResponse response, RespondDone done) override;
  void listAssociations(ListDone done) override;
  void queueView(std::string spid, QueueViewDone done) override;
  void egressView(std::string spid, EgressViewDone done) override;
  void abortAssociation(db::AssociationId id, std::string actor, StatusDone done) override;
  void releaseProvider(std::string spid, std::string reason, CountDone done) override;
  void metrics(bool providers, MetricsDone done) override;

 private:
  AssociationManager& owner(const std::string& spid) { return *shards_[shardOf(spid)]; }
  void abortFrom(std::size_t index, db::AssociationId id, std::string actor, StatusDone done);

  std::vector<AssociationManager*> shards_;
  db::QueueWriter& writer_;
  std::atomic<std::int64_t> next_association_id_;
};

}  // namespace npac::npacd
