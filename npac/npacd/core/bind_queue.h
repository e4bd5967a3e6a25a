// BindQueue: the binds a core thread has received but not yet decided, and the choice of
// which of them are decided together in one database transaction (issue "A message is
// written once": "Binds are group-committed like messages — the sequence numbers of all
// binds admitted in one turn in one transaction").
//
// Every AARQ that reaches admission waits here until the end of the core thread's turn;
// then BindAdmission::admitBinds (bind_admission.h) decides a batch of them in ONE transaction (one
// fsync at --durability full instead of one per bind) and answers each only after it
// committed. A batch holds at most one bind per provider: a provider's second bind is
// decided in the next batch, with its first association already live, so every check that
// looks at the provider's live associations (duplicate binds, max_associations_per_sp,
// SRR — NANC 353, NANC 386) sees exactly what it saw when each bind was decided alone.
// Within a provider, binds are decided in arrival order; across providers as they came.
//
// Threading: none of its own; the core thread that owns the AssociationManager.
#pragma once

#include <cstddef>
#include <deque>
#include <memory>
#include <vector>

#include "associations/bind_facts.h"
#include "cmip/upper_layers.h"

namespace npac::npacd {

class Session;

// One bind waiting for its decision.
struct PendingBind {
  std::shared_ptr<Session> session;  // told decideLater(); answered after the commit
  cmip::ConnectIndication indication;
  associations::BindRequest request;  // decoded from the indication's access control
};

// Binds decided in one transaction, at most.
inline constexpr std::size_t kMaxBindsPerCommit = 64;

class BindQueue {
 public:
  void add(PendingBind bind) { waiting_.push_back(std::move(bind)); }
  bool empty() const { return waiting_.empty(); }
  std::size_t size() const { return waiting_.size(); }

  // The next batch: in arrival order, the oldest waiting bind of each provider not already
  // in the batch, at most `max` of them. The others keep their places for the next batch.
  std::vector<PendingBind> takeBatch(std::size_t max = kMaxBindsPerCommit);

 private:
  std::deque<PendingBind> waiting_;
};

}  // namespace npac::npacd
