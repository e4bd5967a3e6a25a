// Status and Result<T> in cmip/: the project's one error family (common/status.h).
//
// Decoders never throw: each returns a Status, or a Result<T> holding a value or a
// Status. A codec Status carries a specific code from the codec group of
// NPAC_STATUS_CODES (kBer…, kTpkt…, kCotp…, kSession…, kPresentation…, kAcse…, kRose…,
// kCmip…, kBind…, kUpperLayers…), the byte offset in the input where the problem was
// found (relative to the start of the PDU handed to that layer; shifted() makes it
// absolute) and a message a person can act on. The success path never allocates.
//
// Adding a code: one line in your layer's section of NPAC_STATUS_CODES.
//
// Threading: plain values; safe to copy and move between threads.
#pragma once

#include "common/status.h"

namespace npac::cmip {

using ErrorCode = npac::StatusCode;
using npac::Result;
using npac::Status;

// "kBerTruncated" etc.; "kUnknown" for values outside the enum.
inline const char* errorCodeName(ErrorCode code) { return npac::codeName(code); }

}  // namespace npac::cmip
