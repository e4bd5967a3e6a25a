// What cmip.cc (the CMIP PDUs) and cmip_operations.cc (the operations' arguments) both
// need to decode and encode: the error of a bad CMIP argument, and an EXTERNAL under an
// explicit context tag ([n] EXPLICIT EXTERNAL, X.690 8.14.3), the form in which the
// NPAC's access control and user information travel (X.227's AARQ/AARE/ABRT fields, and
// CMIP's association arguments).
//
// Threading: pure functions over the reader and writer passed in.
#pragma once

#include <string>
#include <utility>

#include "cmip/ber.h"

namespace npac::cmip {

// A CMIP argument that does not decode (kCmipBadArgument), at `offset` in its PDU.
inline Status badArgument(size_t offset, std::string what) {
  return Status::error(ErrorCode::kCmipBadArgument, offset, std::move(what));
}

inline Result<External> readExplicitExternal(BerReader& r, const Tlv& wrapper) {
  NPAC_ASSIGN_OR_RETURN(BerReader in, r.enter(wrapper));
  NPAC_ASSIGN_OR_RETURN(Tlv ext, in.expect(kTagExternal));
  NPAC_RETURN_IF_ERROR(in.expectEnd());
  return decodeExternal(ext, r.limits());
}

inline void writeExplicitExternal(BerWriter& w, Tag tag, const External& ext) {
  size_t m = w.beginConstructed(tag);
  w.writeExternal(ext);
  w.endConstructed(m);
}

}  // namespace npac::cmip
