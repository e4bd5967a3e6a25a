// ShardRoute: one AssociationManager's place among the core threads (npacd --threads N,
// core_shards.h) — which manager a provider's events belong to, where the providers'
// requests for the NPAC application gather (thread 0, the one the application polls),
// and the association ids every thread draws from. Without shards (one core thread) it
// routes every provider to its own manager and counts association ids itself.
//
// Threading: joined before io runs (CoreShards' constructor) and never changed after, so
// reading it is safe from any thread (the manager's core thread; the QueueWriter's, for
// CoreFacade::respond's completion). The managers it names are reached only through their
// thread-safe posts (their CoreInbox, core_inbox.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace npac::npacd {

class AssociationManager;
class CoreShards;

class ShardRoute {
 public:
  // `self` is the manager this route belongs to; it outlives the route.
  explicit ShardRoute(AssociationManager& self) : self_(self) {}
  ShardRoute(const ShardRoute&) = delete;
  ShardRoute& operator=(const ShardRoute&) = delete;

  // This manager is core thread `index` of `shards`, which outlive it.
  void join(CoreShards& shards, std::size_t index);
  std::size_t index() const { return index_; }
  // The manager on whose core thread `spid` lives (`self` without shards).
  AssociationManager& ownerOf(const std::string& spid) const;
  // The manager whose InboundBroker the application polls: thread 0's (`self` without
  // shards).
  AssociationManager& inboundHome() const;
  // Whether this manager is the inbound home itself (thread 0, or no shards).
  bool inboundHere() const { return shards_ == nullptr || index_ == 0; }
  // The next association id: CoreShards' counter, shared by every thread; without shards
  // `*local` (this run's, from recoverInterrupted) incremented.
  std::int64_t nextAssociationId(std::int64_t* local) const;

 private:
  AssociationManager& self_;
  CoreShards* shards_ = nullptr;  // none: npacd runs on one core thread
  std::size_t index_ = 0;
};

}  // namespace npac::npacd
