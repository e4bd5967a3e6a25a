// libFuzzer target: the BER reader walking arbitrary TLV trees, every typed decoder on
// every element, and the canonical re-encode of what decoded (a crash or a mismatch of
// a value with its own re-decode aborts); and the NPAC bind profile's decoders on the
// whole input (access control, recovery values, heartbeat, bind refusal); and the ROSE
// invoke-id splice, whose result must decode as the input's Invoke with the new id.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "cmip/ber.h"
#include "cmip/npac_bind.h"
#include "cmip/npac_bind_refusal.h"
#include "cmip/rose.h"

using namespace npac::cmip;

namespace {

void checkReencode(const Tlv& t) {
  Result<int64_t> i = decodeInteger(t);
  if (i.isOk()) {
    EncodeBuffer b;
    BerWriter(b).writeInteger(*i, t.tag);
    Result<Tlv> back = decodeSingleTlv(b.view());
    if (!back.isOk() || !decodeInteger(*back).isOk() || *decodeInteger(*back) != *i) std::abort();
  }
  Result<Oid> o = decodeOid(t);
  if (o.isOk()) {
    Result<Oid> again = Oid::parse(o->toString());
    if (!again.isOk() || !(*again == *o)) std::abort();
  }
  Result<GeneralizedTime> g = decodeGeneralizedTime(t);
  if (g.isOk()) {
    Result<GeneralizedTime> again = GeneralizedTime::parse(g->toString());
    if (!again.isOk() || !(*again == *g)) std::abort();
  }
}

void walk(BerReader r) {
  while (!r.atEnd()) {
    Result<Tlv> t = r.next();
    if (!t.isOk()) return;
    (void)decodeBoolean(*t);
    (void)decodeNull(*t);
    (void)decodeBitString(*t);
    (void)decodeIntegerBytes(*t);
    (void)decodeString(*t, StringKind::kPrintable, r.limits());
    (void)decodeString(*t, StringKind::kUtf8, r.limits());
    (void)decodeExternal(*t, r.limits());
    checkReencode(*t);
    if (t->tag.constructed) {
      Result<BerReader> in = r.enter(*t);
      if (in.isOk()) walk(*in);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  DecodeLimits limits;
  limits.max_pdu_size = 16 * 1024;
  walk(BerReader(Bytes(data, size), limits));
  const std::span<const uint8_t> input(data, size);
  (void)decodeAccessControl(input, limits);
  (void)decodeRecoveryRequest(input, limits);
  (void)decodeRecoveryReply(input, limits);
  (void)decodeHeartbeat(input, limits);
  Result<LnpBindRefusal> refusal = decodeBindRefusal(input, limits);
  if (refusal.isOk()) {
    Result<LnpBindRefusal> again = decodeBindRefusal(encodeBindRefusal(*refusal), limits);
    if (!again.isOk() || !(*again == *refusal)) std::abort();
  }
  Result<std::vector<uint8_t>> spliced = spliceInvokeId(input, 4242);
  Result<RoseApdu> original = decodeRoseApdu(input, limits);
  if (spliced.isOk() && spliced->size() <= limits.max_pdu_size && original.isOk() &&
      std::holds_alternative<RoseInvoke>(*original)) {
    Result<RoseApdu> after = decodeRoseApdu(*spliced, limits);
    RoseInvoke want = std::get<RoseInvoke>(*original);
    want.invokeId = 4242;
    if (!after.isOk() || !(std::get<RoseInvoke>(*after) == want)) std::abort();
  }
  return 0;
}
