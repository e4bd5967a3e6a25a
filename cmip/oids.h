// Object identifiers of the OSI upper-layer profile npacd speaks, in one place.
// Sources: X.226 (transfer syntax), X.227 (ACSE abstract syntax), X.711 / X.701
// (CMIP abstract syntax, systems-management application context), and the NPAC arc
// 1.3.6.1.4.1.103.7.0.0 of the NPAC SMS Interoperable Interface Specification (IIS).
// cmip/ layers add their constants here.
//
// Threading: immutable after static initialisation; do not use these from other static
// initialisers (initialisation order across translation units is unspecified).
#pragma once

#include "cmip/ber.h"

namespace npac::cmip::oids {

// X.690 §1 / X.226: basic encoding rules {joint-iso-itu-t asn1(1) basic-encoding(1)}.
inline const Oid kBerTransferSyntax{2, 1, 1};
// X.227: ACSE abstract syntax {joint-iso-itu-t association-control(2) abstract-syntax(1)
// apdus(0) version1(1)}.
inline const Oid kAcseAbstractSyntax{2, 2, 1, 0, 1};
// X.711: CMIP abstract syntax {joint-iso-itu-t ms(9) cmip(1) cmip-pci(1)
// abstractSyntax(4)}.
inline const Oid kCmipAbstractSyntax{2, 9, 1, 1, 4};
// X.701: systems-management application context {joint-iso-itu-t ms(9) smo(0)
// applicationContext(0) systems-management(2)}.
inline const Oid kSystemsManagementContext{2, 9, 0, 0, 2};
// X.227 ACSE-1 module: aCSE-as-id used as EXTERNAL direct reference is not needed; the
// CMIP user-information EXTERNAL carries X.711's {2 9 1 1 4} as well.

// The NPAC IIS arc: lockheedMartin(103) cis(7) npac(0) iis(0).
inline const Oid kNpacIisArc{1, 3, 6, 1, 4, 1, 103, 7, 0, 0};

}  // namespace npac::cmip::oids
