// HeldPdus: see held_pdus.h.
#include "npac/npacd/core/held_pdus.h"

#include <algorithm>

namespace npac::npacd {

void HeldPdus::hold(db::AssociationId association, std::vector<std::uint8_t> bytes, std::int64_t tag) {
  held_.push_back(Pdu{association, std::move(bytes), tag});
}

std::vector<db::AssociationId> HeldPdus::release(const LinkOf& link_of) {
  std::vector<db::AssociationId> refused;
  // While the store cannot write, the rows of these PDUs may not read `sent` yet: they
  // wait with them, and leave once the backlog committed (deliver() after the retry).
  if (held_.empty() || !store_.healthy()) return refused;
  if (store_.fenced(spid_)) {
    // Another node holds the lease: these rows did not become `sent` here, and that node
    // delivers them. The PDUs never leave; providerLost aborts the associations.
    held_.clear();
    return refused;
  }
  std::vector<Pdu> frames;
  frames.swap(held_);
  for (Pdu& frame : frames) {
    if (std::find(refused.begin(), refused.end(), frame.association) != refused.end()) continue;
    AssociationLink* link = link_of(frame.association);
    if (link == nullptr) continue;  // lost meanwhile: its loss moved or re-queued the rows
    if (!link->send(frame.bytes, frame.tag)) refused.push_back(frame.association);
  }
  return refused;
}

}  // namespace npac::npacd
