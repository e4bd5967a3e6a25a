// cmip codec speed: one TPKT frame carrying a confirmed M-EVENT-REPORT with 200 octets of
// event information (the shape of an NPAC notification), decoded and encoded.
//   BM_DecodeFrameLayers    TPKT → COTP DT → session GT+DT → presentation TD →
//                           ROSE Invoke → CMIP EventReportArgument (typed)
//   BM_DecodeFrameFacade    the same through UpperLayers::receive (deframer + events)
//   BM_EncodeFrameFacade    CmipInvoke → ROSE → TD → GT+DT → DT → TPKT via sendRose
//   BM_EncodeFramePreEncoded  the lower layers only (ROSE APDU already encoded)
// Bytes processed = frame bytes, so MB/s is wire throughput. Associations are set up with
// the known-good bind of fuzz/known_streams.h.
#include <benchmark/benchmark.h>

#include "cmip/cmip_operations.h"
#include "cmip/upper_layers.h"
#include "fuzz/known_streams.h"

using namespace npac::cmip;

namespace {

constexpr size_t kEventInfoSize = 200;

// An associated responder, ready for data.
struct Associated {
  UpperLayers server{UpperLayersConfig{}};
  UpperLayers client{[] {
    UpperLayersConfig c;
    c.role = UpperLayersRole::kInitiator;
    return c;
  }()};
  Associated() {
    std::vector<UpperLayersEvent> ev;
    std::vector<uint8_t> a, b;
    (void)client.connect(npac::fuzz::bindAarq(), a);
    server.receive(a, ev, b);   // CR → CC
    a.clear();
    client.receive(b, ev, a);   // CC → CN
    b.clear();
    server.receive(a, ev, b);   // CN → ConnectIndication
    Aare aare;
    aare.applicationContext = oids::kSystemsManagementContext;
    (void)server.acceptAssociation(aare, b);
    client.receive(b, ev, a);
  }
};

CmipInvoke sampleInvoke() {
  RoseApdu r = npac::fuzz::eventReport(7, kEventInfoSize);
  return fromRose(std::get<RoseInvoke>(r)).value();
}

std::vector<uint8_t> sampleFrame() {
  Associated a;
  std::vector<uint8_t> out;
  (void)a.client.sendRose(toRose(sampleInvoke()), out);
  return out;
}

void BM_DecodeFrameLayers(benchmark::State& state) {
  const std::vector<uint8_t> frame = sampleFrame();
  for (auto _ : state) {
    Bytes tpdu = tpkt::parseFrame(frame).value();
    cotp::Tpdu dt = cotp::decode(tpdu).value();
    session::Spdu spdu = session::decode(dt.data.user_data).value();
    presentation::UserData ud = presentation::decodeUserData(spdu.user_data).value();
    RoseApdu rose = decodeRoseApdu(ud[0].value).value();
    CmipInvoke inv = fromRose(std::get<RoseInvoke>(rose)).value();
    benchmark::DoNotOptimize(inv);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * frame.size()));
  state.counters["frame_bytes"] = static_cast<double>(frame.size());
}
BENCHMARK(BM_DecodeFrameLayers);

void BM_DecodeFrameFacade(benchmark::State& state) {
  const std::vector<uint8_t> frame = sampleFrame();
  Associated a;
  std::vector<UpperLayersEvent> events;
  std::vector<uint8_t> out;
  events.reserve(4);
  for (auto _ : state) {
    events.clear();
    a.server.receive(frame, events, out);
    benchmark::DoNotOptimize(events.data());
  }
  if (events.size() != 1 || !std::holds_alternative<DataIndication>(events[0])) state.SkipWithError("no DataIndication");
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * frame.size()));
}
BENCHMARK(BM_DecodeFrameFacade);

void BM_EncodeFrameFacade(benchmark::State& state) {
  Associated a;
  const CmipInvoke inv = sampleInvoke();
  std::vector<uint8_t> out;
  out.reserve(1024);
  for (auto _ : state) {
    out.clear();
    (void)a.client.sendRose(toRose(inv), out);
    benchmark::DoNotOptimize(out.data());
  }
  if (out != sampleFrame()) state.SkipWithError("encoded frame differs from the reference");
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * out.size()));
}
BENCHMARK(BM_EncodeFrameFacade);

void BM_EncodeFramePreEncoded(benchmark::State& state) {
  Associated a;
  const std::vector<uint8_t> rose = encodeRoseApdu(toRose(sampleInvoke()));
  std::vector<uint8_t> out;
  out.reserve(1024);
  for (auto _ : state) {
    out.clear();
    (void)a.client.sendRoseEncoded(rose, out);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * out.size()));
}
BENCHMARK(BM_EncodeFramePreEncoded);

}  // namespace

BENCHMARK_MAIN();
