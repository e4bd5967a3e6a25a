// Known-good client byte streams for the fuzz targets: a whole association (CR, CN+CP+
// AARQ with an NPAC bind, M-EVENT-REPORT, RLRQ) produced by a real UpperLayers initiator
// talking to a real responder. They seed the corpus and let a fuzz run start from an
// associated responder. Threading: pure function.
#pragma once

#include <cstdint>
#include <vector>

#include "cmip/cmip_operations.h"
#include "cmip/upper_layers.h"

namespace npac::fuzz {

struct KnownStreams {
  std::vector<std::vector<uint8_t>> client_writes;  // CR, CN, DT(s), FN — in order
  std::vector<std::vector<uint8_t>> server_writes;  // CC, AC, DT, DN
};

inline cmip::Aarq bindAarq() {
  using namespace cmip;
  LnpAccessControl ac;
  ac.systemId = "0001";
  ac.systemType = SystemType::kSoa;
  ac.userId = "fuzz";
  ac.listId = 1;
  ac.keyId = 1;
  ac.departureTime = GeneralizedTime::fromUnixMillis(1795964353000);
  ac.sequenceNumber = 1;
  ac.functions.add(AssociationFunction::kSoaManagement);
  ac.signature = std::vector<uint8_t>(32, 0xA5);
  CmipUserInfo info;
  info.protocolVersion = BitString::withBits(2);
  info.protocolVersion->setBit(kCmipVersion2Bit);
  info.accessControl = toExternal(ac);
  External ext;
  ext.indirect_reference = 3;
  ext.data = encodeCmipUserInfo(info);
  Aarq a;
  a.applicationContext = oids::kSystemsManagementContext;
  a.userInformation.push_back(ext);
  return a;
}

inline cmip::RoseApdu eventReport(int32_t invoke_id, size_t info_size) {
  using namespace cmip;
  EventReportArgument arg;
  arg.managedObjectClass = GlobalOrLocal::global(oids::kLnpNpacSmsClass);
  arg.eventType = GlobalOrLocal::global(oids::kNpacHeartbeatEvent);
  arg.eventTime = GeneralizedTime::fromUnixMillis(1795964353250);
  EncodeBuffer b;
  BerWriter w(b);
  w.writeOctetString(std::vector<uint8_t>(info_size, 0x42));
  arg.eventInfo = OpaqueBer{b.toVector()};
  CmipInvoke inv;
  inv.invokeId = invoke_id;
  inv.opcode = CmipOpcode::kEventReportConfirmed;
  inv.argument = arg;
  return toRose(inv);
}

inline KnownStreams knownStreams() {
  using namespace cmip;
  KnownStreams k;
  UpperLayersConfig ic;
  ic.role = UpperLayersRole::kInitiator;
  ic.max_tpdu_size = 512;  // so the bind and big events are segmented
  UpperLayers client(ic);
  UpperLayers server{UpperLayersConfig{}};
  std::vector<UpperLayersEvent> ev;
  std::vector<uint8_t> out;
  auto toServer = [&](std::vector<uint8_t>& bytes) {
    k.client_writes.push_back(bytes);
    std::vector<uint8_t> reply;
    server.receive(bytes, ev, reply);
    bytes.clear();
    if (!reply.empty()) {
      k.server_writes.push_back(reply);
      client.receive(reply, ev, bytes);
    }
  };
  (void)client.connect(bindAarq(), out);
  toServer(out);  // CR → CC → CN
  toServer(out);  // CN → (ConnectIndication)
  std::vector<uint8_t> ac;
  Aare aare;
  aare.applicationContext = oids::kSystemsManagementContext;
  (void)server.acceptAssociation(aare, ac);
  k.server_writes.push_back(ac);
  client.receive(ac, ev, out);
  (void)client.sendRose(eventReport(1, 200), out);
  (void)client.sendRose(eventReport(2, 3000), out);
  toServer(out);
  std::vector<uint8_t> reply;
  RoseReturnResult rr;
  rr.invokeId.present = 1;
  (void)server.sendRose(rr, reply);
  k.server_writes.push_back(reply);
  (void)client.requestRelease(Rlrq{ReleaseRequestReason::kNormal, {}}, out);
  toServer(out);
  reply.clear();
  (void)server.respondRelease(Rlre{ReleaseResponseReason::kNormal, {}}, reply);
  k.server_writes.push_back(reply);
  return k;
}

}  // namespace npac::fuzz
