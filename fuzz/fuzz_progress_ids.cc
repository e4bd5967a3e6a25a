// libFuzzer target: a delivery-progress record's ids blob as npacd reads it back from its
// database (db/delivery_progress.h decodeIdList) — a file damaged or written by something
// else must be refused with kCorrupt, never crash or hang. Invariants: what decodes
// encodes back to a blob that decodes to the same ids; at most max_ids come back; a refusal
// is always kCorrupt.
#include <cstddef>
#include <cstdint>
#include <span>

#include "db/delivery_progress.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace npac::db;
  constexpr std::size_t kMaxIds = 4096;
  auto ids = decodeIdList(std::span<const std::uint8_t>(data, size), kMaxIds);
  if (!ids.isOk()) {
    if (ids.status().code() != Status::Code::kCorrupt) __builtin_trap();
    return 0;
  }
  if (ids->size() > kMaxIds) __builtin_trap();
  for (MessageId id : *ids) {
    if (id < 1) __builtin_trap();
  }
  auto again = decodeIdList(encodeIdList(*ids), kMaxIds);
  if (!again.isOk() || *again != *ids) __builtin_trap();
  return 0;
}
