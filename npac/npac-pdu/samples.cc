// The canonical sample frames of npac-pdu: one conversation between an SOA (client,
// SPID 0001) and the NPAC SMS, frame by frame. Presentation context 1 is ACSE
// (2.2.1.0.1) and 3 is CMIP (2.9.1.1.4), both BER; every later frame relies on them.
#include "cmip/npac_bind.h"
#include "cmip/npac_bind_refusal.h"
#include "cmip/oids.h"
#include "npac/npac-pdu/frames.h"
#include "npac/npac-pdu/json_util.h"

namespace npac::pdu {
namespace {

using namespace npac::cmip;

constexpr int64_t kAcseContext = 1;
constexpr int64_t kCmipContext = 3;
constexpr const char* kTsap = "00000001";  // 4-octet TSAP/SSAP/PSAP (NPAC data model, NANC 316)

Json tpktDt() { return {{"cotp", {{"type", "DT"}, {"eot", true}}}}; }

Json frameWith(Json session, Json presentation, const char* layer, Json apdu) {
  Json f = tpktDt();
  f["session"] = std::move(session);
  f["presentation"] = std::move(presentation);
  f[layer] = std::move(apdu);
  return f;
}

GeneralizedTime at(const char* text) { return GeneralizedTime::parse(text).value(); }

ObjectInstance npacInstance() {
  EncodeBuffer buf(0);
  BerWriter w(buf);
  w.writeString("NPAC", kTagPrintableString);
  ObjectInstance i;
  // id-at-commonName (X.520) keeps the sample decodable by any X.500-aware tool.
  i.rdns = {{Ava{Oid{2, 5, 4, 3}, OpaqueBer{buf.toVector()}}}};
  return i;
}

Selection npacSelection() {
  Selection s;
  s.baseClass = ObjectClass::global(oids::kLnpNpacSmsClass);
  s.baseInstance = npacInstance();
  return s;
}

BitString bits(std::initializer_list<size_t> set, size_t count) {
  BitString b = BitString::withBits(count);
  for (size_t i : set) b.setBit(i);
  return b;
}

External cmipUserInfo(bool withAccessControl) {
  CmipUserInfo info;
  info.protocolVersion = bits({kCmipVersion2Bit}, 2);
  if (withAccessControl) {
    LnpAccessControl ac;
    ac.systemId = "0001";
    ac.systemType = SystemType::kSoa;
    ac.userId = "soa-operator";
    ac.listId = 1;
    ac.keyId = 7;
    ac.departureTime = at("20261129150000Z");
    ac.sequenceNumber = 1;
    ac.functions.add(AssociationFunction::kSoaManagement).add(AssociationFunction::kNotifications);
    ac.signature.assign(64, 0x5A);  // placeholder octets: samples are not signed
    info.accessControl = toExternal(ac);
  }
  External e;
  e.indirect_reference = kCmipContext;
  e.data = encodeCmipUserInfo(info);
  return e;
}

Json presentationTd() { return {{"ppdu", "TD"}, {"context_id", kCmipContext}}; }
Json sessionDt() { return {{"type", "DT"}}; }

Json invoke(const CmipInvoke& inv) {
  return frameWith(sessionDt(), presentationTd(), "rose", roseToJson(toRose(inv)));
}

Json contexts() {
  return Json::array({{{"id", kAcseContext}, {"abstract_syntax", "2.2.1.0.1"}, {"transfer_syntaxes", {"2.1.1"}}},
                      {{"id", kCmipContext}, {"abstract_syntax", "2.9.1.1.4"}, {"transfer_syntaxes", {"2.1.1"}}}});
}

Json acceptedResults() {
  return Json::array({{{"result", 0}, {"transfer_syntax", "2.1.1"}},
                      {{"result", 0}, {"transfer_syntax", "2.1.1"}}});
}

Json sessionConnect(const char* type) {
  return {{"type", type}, {"protocol_options", 0}, {"version", 2}, {"user_requirements", 2},
          {"calling_selector", kTsap}, {"called_selector", kTsap}};
}

Json cotpConnect(const char* type, int dst, int src) {
  return {{"cotp", {{"type", type}, {"dst_ref", dst}, {"src_ref", src}, {"class", 0}, {"options", 0},
                    {"tpdu_size_code", 11}, {"calling_tsap", kTsap}, {"called_tsap", kTsap}}}};
}

Json build(const std::string& kind) {
  if (kind == "cr") return cotpConnect("CR", 0, 1);
  if (kind == "cc") return cotpConnect("CC", 1, 2);
  if (kind == "aarq") {
    Aarq a;
    a.protocolVersion = bits({0}, 1);
    a.applicationContext = oids::kSystemsManagementContext;
    a.calling.apTitle = Oid{1, 3, 6, 1, 4, 1, 103, 7, 0, 0, 90, 10, 1};  // sample SOA AP title
    a.calling.aeQualifier = 1;
    a.userInformation.push_back(cmipUserInfo(true));
    Json p{{"ppdu", "CP"}, {"version1", true}, {"mode", 1}, {"calling_selector", kTsap},
           {"called_selector", kTsap}, {"contexts", contexts()}, {"context_id", kAcseContext}};
    return frameWith(sessionConnect("CN"), p, "acse", acseToJson(a));
  }
  if (kind == "aare-accept" || kind == "aare-reject") {
    bool accept = kind == "aare-accept";
    Aare a;
    a.protocolVersion = bits({0}, 1);
    a.applicationContext = oids::kSystemsManagementContext;
    if (accept) {
      a.diagnostic = {DiagnosticSource::kServiceUser, user_diagnostic::kNull};
      // The NPAC's own access control (NPACD-BIND-PROFILE "The NPAC's answer").
      LnpAccessControl npac;
      npac.systemId = "NPAC";
      npac.systemType = SystemType::kNpac;
      npac.userId = "npacd";
      npac.listId = 1;
      npac.keyId = 1;
      npac.departureTime = at("20261129150001Z");
      npac.sequenceNumber = 1;
      npac.functions.add(AssociationFunction::kSoaManagement).add(AssociationFunction::kNotifications);
      npac.signature.assign(64, 0x5A);  // placeholder octets: samples are not signed
      const External aarq_cmip = cmipUserInfo(true);
      attachNpacAccessControl(a, npac, &aarq_cmip);
    } else {
      a.result = AssociateResult::kRejectedPermanent;
      a.diagnostic = {DiagnosticSource::kServiceUser, user_diagnostic::kAuthenticationFailure};
      const External aarq_cmip = cmipUserInfo(true);
      attachBindRefusal(a, {"key-revoked", "key list 1 key 7 of 0001 is revoked"}, &aarq_cmip);
    }
    Json p{{"ppdu", accept ? "CPA" : "CPR"}, {"responding_selector", kTsap}, {"results", acceptedResults()},
           {"context_id", kAcseContext}};
    Json s = accept ? sessionConnect("AC")
                    : Json{{"type", "RF"}, {"reason", 2}, {"transport_disconnect", 1},
                           {"user_requirements", 2}, {"version", 2}};
    return frameWith(s, p, "acse", acseToJson(a));
  }
  if (kind == "rlrq") {
    return frameWith({{"type", "FN"}, {"transport_disconnect", 1}},
                     {{"ppdu", "user-data"}, {"context_id", kAcseContext}}, "acse",
                     acseToJson(Rlrq{ReleaseRequestReason::kNormal, {}}));
  }
  if (kind == "rlre") {
    return frameWith({{"type", "DN"}}, {{"ppdu", "user-data"}, {"context_id", kAcseContext}}, "acse",
                     acseToJson(Rlre{ReleaseResponseReason::kNormal, {}}));
  }
  if (kind == "abrt") {
    return frameWith({{"type", "AB"}, {"transport_disconnect", 3}},
                     {{"ppdu", "ARU"}, {"context_id", kAcseContext}}, "acse",
                     acseToJson(Abrt{AbortSource::kServiceUser, std::nullopt, {}}));
  }
  if (kind == "event-report") {  // the NPAC's heartbeat (confirmed), NANC 404
    EventReportArgument a{ObjectClass::global(oids::kLnpNpacSmsClass), npacInstance(),
                          at("20261129150500Z"), EventTypeId::global(oids::kNpacHeartbeatEvent),
                          encodeHeartbeat(at("20261129150500Z"))};
    return invoke({1, std::nullopt, CmipOpcode::kEventReportConfirmed, a});
  }
  if (kind == "action") {  // recovery request, "send what I missed"
    ActionArgument a{npacSelection(), ActionTypeId::global(oids::kLnpRecoveryRequestAction),
                     encodeRecoveryRequest(RecoveryRequest{true, {}, {}})};
    return invoke({2, std::nullopt, CmipOpcode::kActionConfirmed, a});
  }
  if (kind == "get") {
    GetArgument a{npacSelection(), std::vector<AttributeId>{
                                       AttributeId::global(Oid{1, 3, 6, 1, 4, 1, 103, 7, 0, 0, 2, 1})}};
    return invoke({3, std::nullopt, CmipOpcode::kGet, a});
  }
  if (kind == "set") {
    EncodeBuffer v(0);
    BerWriter w(v);
    w.writeString("NPAC SMS", kTagGraphicString);
    SetArgument a{npacSelection(),
                  {Modification{std::nullopt, AttributeId::global(Oid{1, 3, 6, 1, 4, 1, 103, 7, 0, 0, 2, 2}),
                                OpaqueBer{v.toVector()}}}};
    return invoke({4, std::nullopt, CmipOpcode::kSetConfirmed, a});
  }
  if (kind == "create") {
    CreateArgument a;
    a.managedObjectClass = ObjectClass::global(Oid{1, 3, 6, 1, 4, 1, 103, 7, 0, 0, 3, 2});
    a.managedObjectInstance = npacInstance();
    a.instanceIsSuperior = true;
    a.attributeList = std::vector<Attribute>{
        {AttributeId::global(Oid{1, 3, 6, 1, 4, 1, 103, 7, 0, 0, 2, 3}), OpaqueBer{{0x02, 0x01, 0x01}}}};
    return invoke({5, std::nullopt, CmipOpcode::kCreate, a});
  }
  if (kind == "delete") {
    Selection s = npacSelection();
    s.baseClass = ObjectClass::global(Oid{1, 3, 6, 1, 4, 1, 103, 7, 0, 0, 3, 2});
    return invoke({6, std::nullopt, CmipOpcode::kDelete, DeleteArgument{s}});
  }
  if (kind == "result") {  // reply to the recovery action: 12 messages follow
    ActionResult r{ReplyHeader{ObjectClass::global(oids::kLnpNpacSmsClass), npacInstance(), std::nullopt},
                   ActionResult::ActionReply{ActionTypeId::global(oids::kLnpRecoveryRequestAction),
                                             encodeRecoveryReply(12)}};
    return frameWith(sessionDt(), presentationTd(), "rose",
                     roseToJson(toRose(CmipResult{2, CmipOpcode::kActionConfirmed, r})));
  }
  if (kind == "error") {
    // The M-GET asked for something outside the association's functions. accessDenied
    // has no PARAMETER (X.711); tshark 4.0 mis-steps over ReturnError parameters, so the
    // canonical sample is one it can check fully.
    return frameWith(sessionDt(), presentationTd(), "rose",
                     roseToJson(toRose(CmipErrorReply{InvokeId{3}, CmipError::kAccessDenied, std::nullopt})));
  }
  if (kind == "reject") {
    return frameWith(sessionDt(), presentationTd(), "rose",
                     roseToJson(RoseReject{InvokeId{4}, RejectProblemKind::kInvoke, kMistypedArgument}));
  }
  json_util::fail("unknown sample kind \"" + kind + "\"");
}

}  // namespace

const std::vector<std::string>& sampleKinds() {
  static const std::vector<std::string> kKinds = {
      "cr", "cc", "aarq", "aare-accept", "aare-reject", "rlrq", "rlre", "abrt", "event-report",
      "action", "get", "set", "create", "delete", "result", "error", "reject"};
  return kKinds;
}

Result<Json> sampleJson(const std::string& kind) {
  try {
    return Json{{"frames", Json::array({build(kind)})}};
  } catch (const Status& refused) {
    return refused;
  }
}

}  // namespace npac::pdu
