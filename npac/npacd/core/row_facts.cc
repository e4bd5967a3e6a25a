// RowFacts: see row_facts.h.
#include "npac/npacd/core/row_facts.h"

namespace npac::npacd {
namespace as = npac::associations;

as::AssociationFunction routingFunction(std::uint32_t mask) {
  for (unsigned bit = 0; bit < as::kFunctionCount; ++bit) {
    if (mask >> bit & 1u) return static_cast<as::AssociationFunction>(bit);
  }
  return as::AssociationFunction::kNotifications;
}

RowFacts factsOf(const db::QueuedMessage& row) {
  // Written at submission (schema 4, db/outbound_queue.h): the stored PDU is never decoded
  // again to learn what it is.
  RowFacts facts;
  facts.response = row.kind == db::MessageKind::kResponse;
  facts.confirmed = !facts.response && row.confirmed;
  return facts;
}

}  // namespace npac::npacd
