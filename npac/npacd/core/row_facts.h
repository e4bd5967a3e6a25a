// What a queued row is for its delivery, as written at submission (schema 4,
// db/outbound_queue.h): the association function it is routed by and whether it is an
// answer or a confirmed request. The stored PDU is never decoded again to learn it.
//
// Threading: plain functions of a row; any thread.
#pragma once

#include <cstdint>

#include "associations/bind_facts.h"
#include "db/outbound_queue.h"

namespace npac::npacd {

// The association function a queued message is routed by: the lowest one it needs (the
// queue only hands out messages whose every function the association has, NANC 111).
associations::AssociationFunction routingFunction(std::uint32_t mask);

struct RowFacts {
  bool response = false;   // an answer to the provider's own request
  bool confirmed = false;  // a response is expected
};
RowFacts factsOf(const db::QueuedMessage& row);

}  // namespace npac::npacd
