// ProviderLinks: one provider's bound associations (their links and association functions,
// NANC 111) and the PDUs written on them. write() gives an Invoke its invoke id — the
// transmission's for a confirmed request, one reserved from the provider's one allocator
// for an unconfirmed operation (so no two PDUs in use share an id) — splices it into the
// stored bytes, and holds the PDU (HeldPdus, held_pdus.h) until release(): decide, commit,
// then write. Unconfirmed PDUs and answers to the provider's requests are acknowledged once
// written (written(), docs/OPERATIONS.md); an unconfirmed one's invoke id is released then,
// or when its association is lost.
//
// The ProviderCore decides what leaves and where (associations::ProviderEgress); this
// part only writes it. An association that refuses a PDU is aborted (its link reports the
// loss back to the ProviderCore, which moves its messages like any loss).
//
// Threading: the owning ProviderCore's core thread only; no locks. Time: the TimeSource's
// wall clock for the rows' times and the picks (ProviderCounting::picked).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "associations/provider_egress.h"
#include "common/time_source.h"
#include "npac/npacd/core/association_link.h"
#include "npac/npacd/core/delivery_store.h"
#include "npac/npacd/core/held_pdus.h"
#include "npac/npacd/core/provider_counting.h"
#include "npac/npacd/core/row_facts.h"

namespace npac::npacd {

class ProviderLinks {
 public:
  struct Link {
    std::shared_ptr<AssociationLink> link;
    std::uint32_t function_mask = 0;
  };
  using Map = std::map<db::AssociationId, Link>;

  // `clock`, `store` (where `spid`'s rows are written), `egress` (its invoke ids and
  // associations) and `counting` outlive it.
  ProviderLinks(std::string spid, const common::TimeSource& clock, DeliveryStore& store,
                associations::ProviderEgress& egress, ProviderCounting& counting);
  ProviderLinks(const ProviderLinks&) = delete;
  ProviderLinks& operator=(const ProviderLinks&) = delete;

  // ---- the associations ----
  void add(db::AssociationId id, std::shared_ptr<AssociationLink> link, std::uint32_t function_mask);
  // It ended: forgotten, with its unconfirmed PDUs (their invoke ids released).
  void remove(db::AssociationId id);
  const Map& all() const { return links_; }
  // The link of `id`, or none.
  std::shared_ptr<AssociationLink> link(db::AssociationId id) const;
  // Aborts `id` (its link reports the loss synchronously); false if it is not bound.
  bool abort(db::AssociationId id, const std::string& reason);
  // The functions of the associations that can take a PDU now: bound, available (not
  // congested, not silent) and not releasing.
  std::uint32_t usableFunctions() const;
  // The free congestion-window slots of the associations serving `functions`.
  std::size_t freeWindowSlots(std::uint32_t functions) const;

  // ---- the PDUs ----
  // Writes a placed message on its association (held until release()); an answer leaves
  // as stored. kBadPdu: the stored bytes are no Invoke (the row is failed). Each PDU
  // written is picked (ProviderCounting::picked).
  enum class Written { kWritten, kRefused, kBadPdu };
  Written write(const associations::Transmission& t, const db::QueuedMessage& row, const RowFacts& facts);
  // A row written, counted (ProviderCounting::written); an unconfirmed one's series is kept
  // with it for its acknowledged count.
  void count(const db::QueuedMessage& row, const RowFacts& facts, bool retransmission);
  // A request that moved (SRR off, a retry elsewhere, a loss): written again, counted as a
  // retransmission, its row pointed at the association it now waits on, committed, and
  // released.
  void move(const associations::Transmission& t);
  // The held PDUs handed to their associations (HeldPdus::release); each association that
  // refused one is aborted.
  void release();
  // The PDU sent with tag `message` (an unconfirmed message or an answer) was written: it
  // is acknowledged, and an unconfirmed one's invoke id released.
  void written(db::MessageId message);

 private:
  std::string spid_;
  const common::TimeSource& clock_;
  DeliveryStore& store_;
  associations::ProviderEgress& egress_;
  ProviderCounting& counting_;
  Map links_;
  // Unconfirmed PDUs and answers on the wire, by message id: the invoke id reserved for
  // an unconfirmed one (released once written), none for an answer.
  struct Unconfirmed {
    db::AssociationId association = 0;
    std::optional<associations::InvokeId> invoke_id;
    PduSeries series;  // for its acknowledged count, while counting
  };
  std::map<db::MessageId, Unconfirmed> unconfirmed_;
  HeldPdus held_;  // decided, waiting for their rows to commit
};

}  // namespace npac::npacd
