// The UpperLayers façade: initiator and responder talking to each other in memory, the
// refusals each lower layer makes on its own, protocol errors, and a tshark check of the
// bytes of a whole association.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "cmip/cmip_operations.h"
#include "cmip/upper_layers.h"
#include "tests/support/test_paths.h"

using namespace npac::cmip;

namespace {

using Events = std::vector<UpperLayersEvent>;
using V = std::vector<uint8_t>;

// One TCP conversation 10.0.0.1:40000 → 10.0.0.2:102 written as a classic pcap
// (LINKTYPE_RAW, IPv4) so tshark dissects it as TPKT. Segments ≤ 1400 octets; sequence
// numbers advance so tshark's reassembly sees one clean stream; TCP checksums zero.
class CaptureFile {
 public:
  explicit CaptureFile(const std::string& path) : out_(path, std::ios::binary) {
    const uint32_t header[] = {0xA1B2C3D4, 0x00040002, 0, 0, 65535, 101};  // v2.4, LINKTYPE_RAW
    out_.write(reinterpret_cast<const char*>(header), sizeof header);
  }
  bool ok() const { return out_.good(); }
  void handshake() {
    packet(true, kSyn, {});
    ++client_seq_;
    packet(false, kSyn | kAck, {});
    ++server_seq_;
    packet(true, kAck, {});
  }
  void clientToServer(Bytes payload) { send(true, payload); }
  void serverToClient(Bytes payload) { send(false, payload); }
  void close() { out_.flush(); }

 private:
  static constexpr uint8_t kSyn = 0x02, kAck = 0x10, kPsh = 0x08;
  static constexpr size_t kMaxSegment = 1400;
  void send(bool from_client, Bytes payload) {
    for (size_t off = 0; off < payload.size(); off += kMaxSegment) {
      Bytes part = payload.subspan(off, std::min(kMaxSegment, payload.size() - off));
      packet(from_client, kAck | kPsh, part);
      (from_client ? client_seq_ : server_seq_) += static_cast<uint32_t>(part.size());
    }
  }
  void packet(bool from_client, uint8_t flags, Bytes payload) {
    V p;
    auto put = [&](uint32_t v, int n) {
      for (int i = n - 1; i >= 0; --i) p.push_back(static_cast<uint8_t>(v >> (8 * i)));
    };
    const uint32_t client_ip = 0x0A000001, server_ip = 0x0A000002;
    put(0x4500, 2);
    put(static_cast<uint32_t>(40 + payload.size()), 2);
    put(0x00014000, 4);  // id 1, DF
    put(0x4006, 2);      // TTL 64, TCP
    put(0, 2);           // header checksum, filled below
    put(from_client ? client_ip : server_ip, 4);
    put(from_client ? server_ip : client_ip, 4);
    uint32_t sum = 0;
    for (size_t i = 0; i < 20; i += 2) sum += static_cast<uint32_t>((p[i] << 8) | p[i + 1]);
    while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
    p[10] = static_cast<uint8_t>((~sum) >> 8);
    p[11] = static_cast<uint8_t>(~sum);
    put(from_client ? 40000 : 102, 2);
    put(from_client ? 102 : 40000, 2);
    put(from_client ? client_seq_ : server_seq_, 4);
    put((flags & kAck) ? (from_client ? server_seq_ : client_seq_) : 0, 4);
    put(0x50, 1);
    put(flags, 1);
    put(65535, 2);
    put(0, 4);  // checksum, urgent pointer
    p.insert(p.end(), payload.begin(), payload.end());
    const uint32_t rec[] = {1700000000, ++usec_, static_cast<uint32_t>(p.size()), static_cast<uint32_t>(p.size())};
    out_.write(reinterpret_cast<const char*>(rec), sizeof rec);
    out_.write(reinterpret_cast<const char*>(p.data()), static_cast<std::streamsize>(p.size()));
  }
  std::ofstream out_;
  uint32_t client_seq_ = 1000, server_seq_ = 5000, usec_ = 0;
};

LnpAccessControl sampleBind() {
  LnpAccessControl ac;
  ac.systemId = "0001";
  ac.systemType = SystemType::kSoa;
  ac.userId = "soa-operator";
  ac.listId = 3;
  ac.keyId = 17;
  ac.departureTime = GeneralizedTime::fromUnixMillis(1795964353000);
  ac.sequenceNumber = 42;
  ac.functions.add(AssociationFunction::kSoaManagement).add(AssociationFunction::kNotifications);
  ac.signature = V(64, 0x5A);
  return ac;
}

Aarq sampleAarq() {
  CmipUserInfo info;
  info.protocolVersion = BitString::withBits(2);
  info.protocolVersion->setBit(kCmipVersion2Bit);
  info.accessControl = toExternal(sampleBind());
  External ext;
  ext.indirect_reference = 3;
  ext.data = encodeCmipUserInfo(info);
  Aarq a;
  a.applicationContext = oids::kSystemsManagementContext;
  a.userInformation.push_back(ext);
  return a;
}

Aare acceptingAare() {
  Aare a;
  a.applicationContext = oids::kSystemsManagementContext;
  a.result = AssociateResult::kAccepted;
  return a;
}

RoseApdu eventReport(int32_t invoke_id, size_t info_size) {
  EventReportArgument arg;
  arg.managedObjectClass = GlobalOrLocal::global(oids::kLnpNpacSmsClass);
  arg.managedObjectInstance.form = ObjectInstance::Form::kDistinguishedName;
  arg.eventType = GlobalOrLocal::global(oids::kNpacHeartbeatEvent);
  EncodeBuffer b;
  BerWriter w(b);
  w.writeOctetString(V(info_size, 0x33));
  arg.eventInfo = OpaqueBer{b.toVector()};
  CmipInvoke inv;
  inv.invokeId = invoke_id;
  inv.opcode = CmipOpcode::kEventReportConfirmed;
  inv.argument = arg;
  return toRose(inv);
}

UpperLayersConfig initiatorConfig() {
  UpperLayersConfig c;
  c.role = UpperLayersRole::kInitiator;
  c.calling_tsap = {0, 1};
  c.called_tsap = {0, 1};
  c.calling_ssel = {0, 1};
  c.called_ssel = {0, 1};
  c.calling_psel = {0, 0, 0, 1};
  c.called_psel = {0, 0, 0, 1};
  c.local_reference = 0x1111;
  return c;
}

// Both ends of one connection, with every byte recorded per direction.
struct Link {
  explicit Link(UpperLayersConfig client_config = initiatorConfig()) : client(std::move(client_config)) {}
  UpperLayers client;
  UpperLayers server{UpperLayersConfig{}};
  std::vector<V> to_server, to_client;  // each write, in order
  CaptureFile* pcap = nullptr;

  Events deliverToServer(const V& bytes) {
    to_server.push_back(bytes);
    if (pcap) pcap->clientToServer(bytes);
    Events ev;
    V out;
    server.receive(bytes, ev, out);
    if (!out.empty()) deliverToClient(out);
    return ev;
  }
  Events deliverToClient(const V& bytes) {
    to_client.push_back(bytes);
    if (pcap) pcap->serverToClient(bytes);
    Events ev;
    V out;
    client.receive(bytes, ev, out);
    if (!out.empty()) {
      Events more = deliverToServer(out);
      pending_server_events.insert(pending_server_events.end(), more.begin(), more.end());
    }
    return ev;
  }
  Events pending_server_events;

  // Runs CR/CC/CN+CP+AARQ; returns the responder's ConnectIndication.
  ConnectIndication bind() {
    V out;
    REQUIRE(client.connect(sampleAarq(), out).isOk());
    Events ev = deliverToServer(out);  // CR → CC → (client sends CN) → server
    REQUIRE(ev.empty());
    REQUIRE(pending_server_events.size() == 1);
    auto* ind = std::get_if<ConnectIndication>(&pending_server_events[0]);
    REQUIRE(ind != nullptr);
    ConnectIndication copy = *ind;
    pending_server_events.clear();
    return copy;
  }
  void associate() {
    bind();
    V out;
    REQUIRE(server.acceptAssociation(acceptingAare(), out).isOk());
    Events ev = deliverToClient(out);
    REQUIRE(ev.size() == 1);
    REQUIRE(std::get<ConnectConfirm>(ev[0]).accepted);
  }
};

template <typename T>
const T& only(const Events& ev) {
  REQUIRE(ev.size() == 1);
  const T* p = std::get_if<T>(&ev[0]);
  REQUIRE(p != nullptr);
  return *p;
}

V frame(V tpdu) {
  EncodeBuffer b;
  b.append(tpdu);
  REQUIRE(tpkt::prependHeader(b).isOk());
  return b.toVector();
}

}  // namespace

TEST_CASE("A bind travels CR, CN, CP and AARQ and arrives with the decoded NPAC access control", "[upper]") {
  Link link;
  ConnectIndication ind = link.bind();
  CHECK(ind.aarq == sampleAarq());
  CHECK_FALSE(ind.acse_refusal.has_value());
  REQUIRE(ind.access_control.has_value());
  CHECK(*ind.access_control == sampleBind());
  CHECK(ind.calling_tsap == V{0, 1});
  CHECK(ind.called_psel == V{0, 0, 0, 1});
  CHECK(link.server.state() == UpperLayers::State::kAwaitingAssociateResponse);
  CHECK(link.server.tpduSize() == 2048);
  CHECK(link.client.cmipContextId() == std::nullopt);
}

TEST_CASE("Accepting the bind yields an associated pair that exchanges ROSE APDUs and releases", "[upper]") {
  Link link;
  link.associate();
  CHECK(link.client.state() == UpperLayers::State::kAssociated);
  CHECK(link.client.cmipContextId() == 3);

  V out;
  REQUIRE(link.client.sendRose(eventReport(7, 200), out).isOk());
  Events ev1 = link.deliverToServer(out);
  const DataIndication& d = only<DataIndication>(ev1);
  CHECK(d.apdu == eventReport(7, 200));

  out.clear();
  RoseReturnResult rr;
  rr.invokeId.present = 7;
  REQUIRE(link.server.sendRose(rr, out).isOk());
  CHECK(only<DataIndication>(link.deliverToClient(out)).apdu == RoseApdu{rr});

  out.clear();
  REQUIRE(link.client.requestRelease(Rlrq{ReleaseRequestReason::kNormal, {}}, out).isOk());
  CHECK(only<ReleaseIndication>(link.deliverToServer(out)).rlrq.reason == ReleaseRequestReason::kNormal);
  out.clear();
  REQUIRE(link.server.respondRelease(Rlre{ReleaseResponseReason::kNormal, {}}, out).isOk());
  CHECK(only<ReleaseConfirm>(link.deliverToClient(out)).rlre.reason == ReleaseResponseReason::kNormal);
  CHECK(link.client.state() == UpperLayers::State::kClosed);
  CHECK(link.server.state() == UpperLayers::State::kClosed);
}

TEST_CASE("Rejecting the bind sends RF with CPR and the rejecting AARE", "[upper]") {
  Link link;
  ConnectIndication ind = link.bind();
  const Aare refusal = refusalFor(ind.aarq, {DiagnosticSource::kServiceUser, user_diagnostic::kAuthenticationFailure});
  V out;
  REQUIRE(link.server.rejectAssociation(refusal, out).isOk());
  CHECK(out[7] == static_cast<uint8_t>(session::SpduType::kRefuse));
  Events ev2 = link.deliverToClient(out);
  const ConnectConfirm& c = only<ConnectConfirm>(ev2);
  CHECK_FALSE(c.accepted);
  CHECK(c.aare == refusal);
  CHECK(link.server.state() == UpperLayers::State::kClosed);
}

TEST_CASE("An ACSE abort reaches the peer with its source and diagnostic", "[upper]") {
  Link link;
  link.associate();
  V out;
  REQUIRE(link.server.abort(Abrt{AbortSource::kServiceProvider, AbortDiagnostic::kProtocolError, {}}, out).isOk());
  Events ev3 = link.deliverToClient(out);
  const AbortIndication& a = only<AbortIndication>(ev3);
  CHECK(a.source == AbortSource::kServiceProvider);
  CHECK(a.diagnostic == AbortDiagnostic::kProtocolError);
  CHECK(link.client.state() == UpperLayers::State::kClosed);
}

TEST_CASE("A ROSE APDU larger than the TPDU size is segmented and reassembled", "[upper]") {
  UpperLayersConfig small = initiatorConfig();
  small.max_tpdu_size = 256;
  Link link(small);
  link.associate();
  CHECK(link.client.tpduSize() == 256);
  V out;
  REQUIRE(link.client.sendRose(eventReport(9, 5000), out).isOk());
  CHECK(out.size() > 5000 + 20 * 7);
  CHECK(only<DataIndication>(link.deliverToServer(out)).apdu == eventReport(9, 5000));
}

TEST_CASE("Input split at every byte boundary yields the same events", "[upper]") {
  Link link;
  link.associate();
  V out;
  REQUIRE(link.client.sendRose(eventReport(11, 300), out).isOk());
  Events ev;
  V reply;
  for (uint8_t b : out) link.server.receive(V{b}, ev, reply);
  CHECK(only<DataIndication>(ev).apdu == eventReport(11, 300));
  CHECK(reply.empty());
}

TEST_CASE("A CR proposing class 2 only is refused with a DR and kCotpClassNotSupported", "[upper]") {
  UpperLayers server{UpperLayersConfig{}};
  cotp::Connect cr;
  cr.src_ref = 5;
  cr.protocol_class = 2;
  EncodeBuffer b;
  cotp::encodeConnect(cotp::TpduCode::kConnectionRequest, cr, b);
  REQUIRE(tpkt::prependHeader(b).isOk());
  Events ev;
  V out;
  server.receive(b.view(), ev, out);
  const ProtocolError& e = only<ProtocolError>(ev);
  CHECK(e.status.code() == ErrorCode::kCotpClassNotSupported);
  CHECK(e.response == ErrorResponse::kAlreadyRefused);
  CHECK(out == V{0x03, 0x00, 0x00, 0x0B, 0x06, 0x80, 0x00, 0x05, 0x00, 0x01, 0x82});
  CHECK(server.state() == UpperLayers::State::kClosed);
}

TEST_CASE("A CP proposing no ACSE context over BER is refused with RF and CPR", "[upper]") {
  Link link;
  V cr_out;
  REQUIRE(link.client.connect(sampleAarq(), cr_out).isOk());
  Events ev;
  V cc;
  link.server.receive(cr_out, ev, cc);
  REQUIRE(ev.empty());
  // A hand-made CN whose CP proposes ACSE over PER only.
  presentation::ConnectRequest cp;
  cp.contexts = {{1, oids::kAcseAbstractSyntax, {Oid{2, 1, 2, 1}}}};
  EncodeBuffer b;
  b.append(encodeAcseApdu(AcseApdu{sampleAarq()}));
  presentation::prependConnectRequest(b, cp, 1);
  REQUIRE(session::prependConnect(b, session::Connect{}).isOk());
  REQUIRE(cotp::frameUserData(b, 2048).isOk());
  V out;
  link.server.receive(b.view(), ev, out);
  CHECK(only<ProtocolError>(ev).status.code() == ErrorCode::kPresentationNoAcceptableContext);
  auto tsdu = cotp::decode(tpkt::parseFrame(out).value());
  REQUIRE(tsdu.isOk());
  auto rf = session::decode(tsdu->data.user_data);
  REQUIRE(rf.isOk());
  CHECK(rf->type == session::SpduType::kRefuse);
  auto cpr = presentation::decodeConnectReject(rf->user_data);
  REQUIRE(cpr.isOk());
  REQUIRE(cpr->results.size() == 1);
  CHECK(cpr->results[0].provider_reason == presentation::kTransferSyntaxesNotSupported);
}

TEST_CASE("Data on a presentation context that was not negotiated calls for a provider abort", "[upper]") {
  Link link;
  link.associate();
  EncodeBuffer b;
  b.append(encodeRoseApdu(eventReport(1, 10)));
  presentation::prependUserData(b, 5);
  session::prependData(b);
  REQUIRE(cotp::frameUserData(b, 2048).isOk());
  Events ev;
  V out;
  link.server.receive(b.view(), ev, out);
  const ProtocolError& e = only<ProtocolError>(ev);
  CHECK(e.status.code() == ErrorCode::kPresentationContextNotNegotiated);
  CHECK(e.response == ErrorResponse::kProviderAbort);
  REQUIRE(link.server.respondToError(e, out).isOk());
  Events ev4 = link.deliverToClient(out);
  const AbortIndication& a = only<AbortIndication>(ev4);
  CHECK(a.presentation_reason == presentation::kAbortInvalidParameterValue);
  CHECK(link.server.state() == UpperLayers::State::kClosed);
}

TEST_CASE("A malformed ROSE APDU calls for a ROSE reject and the association continues", "[upper]") {
  Link link;
  link.associate();
  EncodeBuffer b;
  b.append(V{0xA9, 0x03, 0x02, 0x01, 0x01});  // [9] is no ROSE APDU
  presentation::prependUserData(b, 3);
  session::prependData(b);
  REQUIRE(cotp::frameUserData(b, 2048).isOk());
  Events ev;
  V out;
  link.server.receive(b.view(), ev, out);
  const ProtocolError& e = only<ProtocolError>(ev);
  CHECK(e.response == ErrorResponse::kRoseReject);
  REQUIRE(link.server.respondToError(e, out).isOk());
  Events ev5 = link.deliverToClient(out);
  const DataIndication& d = only<DataIndication>(ev5);
  CHECK(std::holds_alternative<RoseReject>(d.apdu));
  CHECK(link.server.state() == UpperLayers::State::kAssociated);
}

TEST_CASE("Wrong TPKT version, unknown SPDU and out-of-state calls yield specific errors", "[upper]") {
  UpperLayers server{UpperLayersConfig{}};
  Events ev;
  V out;
  server.receive(V{0x04, 0x00, 0x00, 0x07, 0x02, 0xF0, 0x80}, ev, out);
  CHECK(only<ProtocolError>(ev).status.code() == ErrorCode::kTpktBadVersion);
  CHECK(only<ProtocolError>(ev).response == ErrorResponse::kCloseTransport);

  Link link;
  link.associate();
  ev.clear();
  link.server.receive(frame({0x02, 0xF0, 0x80, 0x07, 0x00}), ev, out);  // minor sync SPDU
  CHECK(only<ProtocolError>(ev).status.code() == ErrorCode::kSessionUnknownSpdu);
  V ignored;
  CHECK(link.server.acceptAssociation(acceptingAare(), ignored).code() == ErrorCode::kUpperLayersWrongState);
  UpperLayers idle{UpperLayersConfig{}};
  CHECK(idle.sendRose(eventReport(1, 1), ignored).code() == ErrorCode::kUpperLayersWrongState);
}

TEST_CASE("Random garbage after the bind never crashes the responder", "[upper][property]") {
  std::mt19937 rng(2026);
  for (int i = 0; i < 300; ++i) {
    Link link;
    link.associate();
    V noise(rng() % 200);
    for (auto& b : noise) b = static_cast<uint8_t>(rng());
    V wire = frame([&] {
      V t{0x02, 0xF0, 0x80, 0x01, 0x00, 0x01, 0x00};
      t.insert(t.end(), noise.begin(), noise.end());
      return t;
    }());
    Events ev;
    V out;
    link.server.receive(wire, ev, out);
    for (const auto& e : ev)
      if (auto* p = std::get_if<ProtocolError>(&e)) {
        CHECK_FALSE(p->status.isOk());
        CHECK(link.server.respondToError(*p, out).isOk());
      }
  }
}

std::string run(const std::string& cmd) {
  std::string text;
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  char buf[512];
  while (fgets(buf, sizeof buf, p)) text += buf;
  pclose(p);
  return text;
}

TEST_CASE("tshark decodes a whole association without malformed packets", "[upper][tshark]") {
  if (std::system("command -v tshark >/dev/null 2>&1") != 0) {
    FAIL("tshark is not installed (make deps installs it)");
  }
  const std::string path = npac::testing::binaryDir() + "/upper_layers_test.pcap";
  {
    CaptureFile pcap(path);
    REQUIRE(pcap.ok());
    pcap.handshake();
    Link link;
    link.pcap = &pcap;
    link.associate();
    V out;
    REQUIRE(link.client.sendRose(eventReport(7, 200), out).isOk());
    (void)link.deliverToServer(out);
    out.clear();
    REQUIRE(link.client.requestRelease(Rlrq{ReleaseRequestReason::kNormal, {}}, out).isOk());
    (void)link.deliverToServer(out);
    out.clear();
    REQUIRE(link.server.respondRelease(Rlre{ReleaseResponseReason::kNormal, {}}, out).isOk());
    (void)link.deliverToClient(out);
    pcap.close();
  }
  // Port 102 is dissected as TPKT by default.
  const std::string base = "tshark -n -r " + path + " ";
  CHECK(run(base + "-T fields -e frame.number 2>/dev/null").size() >= 10 * 2);  // the file reads
  CHECK(run(base + "-Y _ws.malformed -T fields -e frame.number 2>/dev/null").empty());
  CHECK(run(base + "-Y '_ws.expert.severity==error' -T fields -e frame.number 2>/dev/null").empty());
  const std::string types = run(base + "-T fields -e ses.type -Y ses 2>/dev/null");
  CHECK(types.find("13") != std::string::npos);  // CN
  CHECK(types.find("14") != std::string::npos);  // AC
  CHECK(types.find("9") != std::string::npos);   // FN
  CHECK(types.find("10") != std::string::npos);  // DN
  const std::string as = run(base + "-T fields -e pres.abstract_syntax_name -Y pres 2>/dev/null");
  CHECK(as.find("2.2.1.0.1") != std::string::npos);
  CHECK(as.find("2.9.1.1.4") != std::string::npos);
  const std::string ctx = run(base + "-T fields -e acse.aSO_context_name -Y acse 2>/dev/null");
  CHECK(ctx.find("2.9.0.0.2") != std::string::npos);
  const std::string cmip = run(base + "-T fields -e cmip.present -e cmip.local -Y cmip 2>/dev/null");
  CHECK(cmip.find('7') != std::string::npos);
}

TEST_CASE("tshark decodes a rejected bind, an abort and a segmented event without malformed packets", "[upper][tshark]") {
  if (std::system("command -v tshark >/dev/null 2>&1") != 0) FAIL("tshark is not installed (make deps installs it)");
  const std::string reject_path = npac::testing::binaryDir() + "/upper_layers_reject.pcap";
  const std::string abort_path = npac::testing::binaryDir() + "/upper_layers_abort.pcap";
  {
    CaptureFile pcap(reject_path);
    pcap.handshake();
    Link link;
    link.pcap = &pcap;
    ConnectIndication ind = link.bind();
    V out;
    REQUIRE(link.server.rejectAssociation(refusalFor(ind.aarq, {DiagnosticSource::kServiceUser, user_diagnostic::kAuthenticationFailure}), out).isOk());
    (void)link.deliverToClient(out);
  }
  {
    CaptureFile pcap(abort_path);
    pcap.handshake();
    UpperLayersConfig small = initiatorConfig();
    small.max_tpdu_size = 128;
    Link link(small);
    link.pcap = &pcap;
    link.associate();
    V out;
    REQUIRE(link.client.sendRose(eventReport(21, 700), out).isOk());  // 128-octet TPDUs
    (void)link.deliverToServer(out);
    out.clear();
    REQUIRE(link.client.abort(Abrt{AbortSource::kServiceUser, std::nullopt, {}}, out).isOk());
    (void)link.deliverToServer(out);
  }
  for (const std::string& path : {reject_path, abort_path}) {
    const std::string base = "tshark -n -r " + path + " ";
    INFO(path);
    CHECK(run(base + "-Y _ws.malformed -T fields -e frame.number 2>/dev/null").empty());
    CHECK(run(base + "-Y '_ws.expert.severity==error' -T fields -e frame.number 2>/dev/null").empty());
  }
  const std::string rf = run("tshark -n -r " + reject_path + " -T fields -e ses.type -e acse.result -e pres.provider_reason -Y ses.type==12 2>/dev/null");
  CHECK(rf.find("12") == 0);
  CHECK(rf.find("\t1") != std::string::npos);  // AARE result rejected-permanent
  const std::string ab = run("tshark -n -r " + abort_path + " -T fields -e ses.type -e acse.abort_source -e cmip.present -Y 'ses.type==25 || cmip' 2>/dev/null");
  CHECK(ab.find("21") != std::string::npos);  // the reassembled event report's invoke id
  CHECK(ab.find("25") != std::string::npos);  // session AB
}
