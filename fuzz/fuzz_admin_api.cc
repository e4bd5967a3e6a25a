// libFuzzer target: the admin API's request parsing (fuzz/admin_api_input.h) — Beast's
// HTTP parser, target and percent-decoding, the UTF-8 checks, the JSON body and every
// body validator of npac/npacd/api/json.h and broadcast.h, and the JSON answers built from
// their errors.
#include <cstddef>
#include <cstdint>

#include "fuzz/admin_api_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  npac::fuzz::runAdminApiInput(data, size);
  return 0;
}
