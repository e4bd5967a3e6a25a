// ProviderLinks: see provider_links.h.
#include "npac/npacd/core/provider_links.h"

#include <spdlog/spdlog.h>

#include "cmip/rose.h"

namespace npac::npacd {
namespace as = npac::associations;

ProviderLinks::ProviderLinks(std::string spid, const common::TimeSource& clock, DeliveryStore& store,
                             as::ProviderEgress& egress, ProviderCounting& counting)
    : spid_(std::move(spid)),
      clock_(clock),
      store_(store),
      egress_(egress),
      counting_(counting),
      held_(spid_, store_) {}

void ProviderLinks::add(db::AssociationId id, std::shared_ptr<AssociationLink> link, std::uint32_t function_mask) {
  Link& entry = links_[id];
  entry.link = std::move(link);
  entry.function_mask = function_mask;
}

void ProviderLinks::remove(db::AssociationId id) {
  links_.erase(id);
  for (auto u = unconfirmed_.begin(); u != unconfirmed_.end();) {
    if (u->second.association != id) {
      ++u;
      continue;
    }
    if (u->second.invoke_id) egress_.outstanding().releaseInvokeId(*u->second.invoke_id);
    u = unconfirmed_.erase(u);
  }
}

std::shared_ptr<AssociationLink> ProviderLinks::link(db::AssociationId id) const {
  auto it = links_.find(id);
  return it == links_.end() ? nullptr : it->second.link;
}

bool ProviderLinks::abort(db::AssociationId id, const std::string& reason) {
  auto it = links_.find(id);
  if (it == links_.end()) return false;
  auto link = it->second.link;  // abort reports the loss synchronously: keep it alive
  link->abort(reason);
  return true;
}

std::uint32_t ProviderLinks::usableFunctions() const {
  std::uint32_t functions = 0;
  for (const as::AssociationView& view : egress_.logical().snapshot()) {
    if (view.state != as::AssociationState::kBound) continue;
    if (view.member_state != dispatch::MemberState::kAvailable) continue;  // congested or silent
    auto it = links_.find(static_cast<db::AssociationId>(view.spec.id));
    if (it == links_.end() || it->second.link->releasing()) continue;
    functions |= view.spec.functions.bits();
  }
  return functions;
}

std::size_t ProviderLinks::freeWindowSlots(std::uint32_t functions) const {
  std::size_t capacity = 0;
  const std::uint32_t window = egress_.outstanding().limits().congestion_window;
  for (const auto& [id, entry] : links_) {
    if ((entry.function_mask & functions) == 0) continue;
    const std::uint32_t busy = egress_.outstanding().outstanding(static_cast<as::AssociationId>(id));
    capacity += window > busy ? window - busy : 0;
  }
  return capacity;
}

ProviderLinks::Written ProviderLinks::write(const as::Transmission& t, const db::QueuedMessage& row,
                                            const RowFacts& facts) {
  auto it = links_.find(static_cast<db::AssociationId>(t.association));
  if (it == links_.end()) return Written::kRefused;
  AssociationLink& link = *it->second.link;
  const auto message = static_cast<db::MessageId>(t.message);
  const std::vector<std::uint8_t>& pdu = row.pdu;
  const auto written = [&](bool sent) {
    if (!sent) return Written::kRefused;
    counting_.picked(it->first, routingFunction(row.function_mask), t.retransmission || row.retransmission,
                     clock_.wallMs());
    return Written::kWritten;
  };
  if (facts.response) {
    // It carries the provider's invoke id already; acknowledged when written.
    unconfirmed_[message] = {it->first, std::nullopt, {}};
    held_.hold(it->first, pdu, static_cast<std::int64_t>(t.message));
    return written(true);
  }
  std::optional<as::InvokeId> invoke_id = t.invoke_id;
  std::int64_t tag = 0;
  if (!invoke_id) {
    // An unconfirmed operation: an id from the provider's one allocator, held until the
    // PDU is written (written()), when it counts as acknowledged (docs/OPERATIONS.md).
    invoke_id = egress_.outstanding().reserveInvokeId(t.message);
    if (!invoke_id) return Written::kRefused;
    unconfirmed_[message] = {it->first, invoke_id, {}};
    tag = static_cast<std::int64_t>(t.message);
  }
  // The placeholder invoke id is replaced in the encoded bytes (a splice, no re-encode).
  auto encoded = cmip::spliceInvokeId(pdu, *invoke_id);
  if (!encoded.isOk()) {
    // Not an Invoke the splice can read: it can never leave. Failed, not retried, and the
    // association is not blamed.
    if (tag != 0) {
      egress_.outstanding().releaseInvokeId(*invoke_id);
      unconfirmed_.erase(message);
    } else {
      egress_.outstanding().drop(*invoke_id);
    }
    store_.markFailed(spid_, message, "stored PDU is not a ROSE Invoke: " + encoded.status().toString(),
                      clock_.wallMs());
    return Written::kBadPdu;
  }
  if (t.retransmission) link.countRetransmission();
  held_.hold(it->first, std::move(encoded).value(), tag);
  return written(true);
}

void ProviderLinks::count(const db::QueuedMessage& row, const RowFacts& facts, bool retransmission) {
  const std::optional<PduSeries> series = counting_.written(row, facts.confirmed, retransmission);
  if (!series || facts.confirmed) return;
  if (auto it = unconfirmed_.find(row.id); it != unconfirmed_.end()) it->second.series = *series;
}

void ProviderLinks::move(const as::Transmission& t) {
  auto stored = store_.get(static_cast<db::MessageId>(t.message));
  if (!stored.isOk()) {
    spdlog::error("SPID {}: message {} not readable for its retransmission: {}", spid_, t.message,
                  stored.status().toString());
    return;
  }
  if (write(t, *stored, factsOf(*stored)) != Written::kBadPdu) {
    count(*stored, factsOf(*stored), /*retransmission=*/true);
  }
  const auto association = static_cast<db::AssociationId>(t.association);
  if (stored->state == db::MessageState::kSent && stored->association_id != association) {
    store_.moveSent(spid_, stored->id, association);
  }
  store_.flush();  // the row names its association before the PDU leaves
  release();
}

void ProviderLinks::release() {
  const HeldPdus::LinkOf link_of = [this](db::AssociationId id) -> AssociationLink* {
    auto it = links_.find(id);
    return it == links_.end() ? nullptr : it->second.link.get();
  };
  // The connection cannot take it: its rows read `sent` there, so the abort moves them to
  // the survivors (or back to the queue) like any loss.
  for (db::AssociationId id : held_.release(link_of)) abort(id, "a PDU could not be written");
}

void ProviderLinks::written(db::MessageId message) {
  auto it = unconfirmed_.find(message);
  if (it != unconfirmed_.end()) {
    counting_.acknowledged(it->second.series);
    if (it->second.invoke_id) egress_.outstanding().releaseInvokeId(*it->second.invoke_id);
    unconfirmed_.erase(it);
  }
  store_.acknowledge(spid_, message, clock_.wallMs());
}

}  // namespace npac::npacd
