// HeldPdus: one provider's PDUs decided but not yet on the wire — decide, commit, then
// write. A PDU placed on an association (ProviderLinks::write) is held here until the
// DeliveryStore has committed its row's progress (`sent`), so no PDU leaves before its row
// says so: a kill -9 in between re-sends it flagged, never as a fresh message. While the
// store cannot write, the PDUs wait with their rows; once another node holds the
// provider's lease (the store reports it fenced) they are dropped, never sent — that node
// delivers the rows. Released in the order held; an association that refuses one gets
// none of the rest, and is returned so that its owner aborts it.
//
// Threading: the core thread of the ProviderLinks that owns it (provider_links.h); no locks.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "npac/npacd/core/association_link.h"
#include "npac/npacd/core/delivery_store.h"

namespace npac::npacd {

class HeldPdus {
 public:
  // An association's link, or none (it was lost meanwhile: its loss moved or re-queued
  // the rows, and its PDUs are dropped).
  using LinkOf = std::function<AssociationLink*(db::AssociationId association)>;

  // `store` (where `spid`'s rows are written) outlives it.
  HeldPdus(std::string spid, DeliveryStore& store) : spid_(std::move(spid)), store_(store) {}
  HeldPdus(const HeldPdus&) = delete;
  HeldPdus& operator=(const HeldPdus&) = delete;

  // `bytes`, for AssociationLink::send on `association` with `tag`, once released.
  void hold(db::AssociationId association, std::vector<std::uint8_t> bytes, std::int64_t tag);
  // Hands every held PDU to its association's link, unless the store cannot write now
  // (they wait) or the provider is fenced (they are dropped). The associations that
  // refused a PDU, in the order they did: their rows read `sent` there, so aborting them
  // moves the rows to the survivors (or back to the queue) like any loss.
  std::vector<db::AssociationId> release(const LinkOf& link_of);
  std::size_t size() const { return held_.size(); }

 private:
  struct Pdu {
    db::AssociationId association = 0;
    std::vector<std::uint8_t> bytes;
    std::int64_t tag = 0;  // AssociationLink::send's
  };

  std::string spid_;
  DeliveryStore& store_;
  std::vector<Pdu> held_;
};

}  // namespace npac::npacd
