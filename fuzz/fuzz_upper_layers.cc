// libFuzzer target: the whole inbound path through cmip::UpperLayers.
// The first input byte picks a starting point: 0 a fresh responder (input is the client's
// TCP stream from CR on), 1 a responder already associated through a known-good bind,
// 2 an initiator that has sent CR (input is the server's stream). The second byte sets
// the TCP chunk size, so partial frames and reassembly are exercised too. Every event
// is answered the way the association code would (accept/reject, release, respondToError)
// so the encoders run on decoded data as well.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "fuzz/known_streams.h"

using namespace npac::cmip;

namespace {

const npac::fuzz::KnownStreams& streams() {
  static const npac::fuzz::KnownStreams k = npac::fuzz::knownStreams();
  return k;
}

void answer(UpperLayers& ul, std::vector<UpperLayersEvent>& events, std::vector<uint8_t>& out, uint8_t choice) {
  for (const UpperLayersEvent& e : events) {
    if (const auto* ind = std::get_if<ConnectIndication>(&e)) {
      if (choice & 1) {
        Aare a;
        a.applicationContext = ind->aarq.applicationContext;
        (void)ul.acceptAssociation(a, out);
      } else {
        (void)ul.rejectAssociation(refusalFor(ind->aarq, {DiagnosticSource::kServiceUser, user_diagnostic::kNoReasonGiven}), out);
      }
    } else if (std::get_if<ReleaseIndication>(&e)) {
      (void)ul.respondRelease(Rlre{ReleaseResponseReason::kNormal, {}}, out);
    } else if (const auto* d = std::get_if<DataIndication>(&e)) {
      if (choice & 2) (void)ul.sendRose(d->apdu, out);  // echo: re-encode what was decoded
    } else if (const auto* pe = std::get_if<ProtocolError>(&e)) {
      (void)ul.respondToError(*pe, out);
    }
  }
  events.clear();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const uint8_t mode = data[0] % 3;
  const size_t chunk = 1 + data[1] % 64 * 37;
  const uint8_t choice = data[1];
  data += 2;
  size -= 2;

  UpperLayersConfig config;
  config.limits.max_pdu_size = 16 * 1024;
  config.max_sdu_size = 16 * 1024;
  std::vector<UpperLayersEvent> events;
  std::vector<uint8_t> out;
  if (mode == 2) config.role = UpperLayersRole::kInitiator;
  UpperLayers ul(config);
  if (mode == 1) {
    const auto& k = streams();
    for (size_t i = 0; i < 2 && i < k.client_writes.size(); ++i) ul.receive(k.client_writes[i], events, out);
    answer(ul, events, out, 1);
  } else if (mode == 2) {
    (void)ul.connect(npac::fuzz::bindAarq(), out);
  }
  for (size_t off = 0; off < size; off += chunk) {
    ul.receive(Bytes(data + off, std::min(chunk, size - off)), events, out);
    answer(ul, events, out, choice);
    if (out.size() > (1u << 20)) out.clear();
  }
  return 0;
}
