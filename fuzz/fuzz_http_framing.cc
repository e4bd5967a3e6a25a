// libFuzzer target: raw bytes on one admin API connection, read request after request
// through Beast's parser and the framing checks of npac/npacd/api/http_framing.h, as
// HttpSession reads them (fuzz/http_framing_input.h has the loop and the oracles).
#include <cstddef>
#include <cstdint>

#include "fuzz/http_framing_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)npac::fuzz::runHttpFramingInput(data, size);
  return 0;
}
