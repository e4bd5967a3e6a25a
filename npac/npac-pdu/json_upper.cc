// JSON <-> ACSE / ROSE / CMIP / NPAC bind values for npac-pdu.
#include "npac/npac-pdu/json_upper.h"

#include "cmip/npac_bind.h"
#include "cmip/oids.h"
#include "common/hex.h"
#include "common/vocabulary.h"
#include "npac/npac-pdu/json_cmip.h"
#include "npac/npac-pdu/json_util.h"

namespace npac::pdu {
namespace {

using namespace npac::cmip;
using namespace json_util;

// --- the NPAC access control and CMIPUserInfo ----------------------------------------

Json accessControlToJson(const LnpAccessControl& ac) {
  Json fns = Json::array();
  for (AssociationFunction f : common::kAssociationFunctions) {
    if (ac.functions.has(f)) fns.push_back(common::toString(f));
  }
  return {{"system_id", ac.systemId},
          {"system_type", common::toString(ac.systemType)},
          {"user_id", ac.userId},
          {"list_id", ac.listId},
          {"key_id", ac.keyId},
          {"departure_time", ac.departureTime.toString()},
          {"sequence_number", ac.sequenceNumber},
          {"association_functions", fns},
          {"recovery_mode", ac.recoveryMode},
          {"signature", toHex(ac.signature)},
          {"signed_content", toHex(signedContent(ac))}};
}

LnpAccessControl accessControlFrom(const Json& j) {
  LnpAccessControl ac;
  ac.systemId = str(j, "system_id");
  std::string type = str(j, "system_type");
  std::optional<SystemType> parsed = common::parseSystemType(type);
  if (!parsed) fail("system_type must be one of " + common::systemTypeNames());
  ac.systemType = *parsed;
  ac.userId = str(j, "user_id");
  ac.listId = num(j, "list_id");
  ac.keyId = num(j, "key_id");
  ac.departureTime = timeFrom(str(j, "departure_time"));
  ac.sequenceNumber = num(j, "sequence_number");
  for (const auto& f : need(j, "association_functions")) {
    if (!f.is_string()) fail("association function must be a name, not " + f.dump());
    std::optional<AssociationFunction> function =
        common::parseAssociationFunction(f.get_ref<const std::string&>());
    if (!function) fail("unknown association function " + f.dump() + " (" + common::associationFunctionNames() + ")");
    ac.functions.add(*function);
  }
  const Json& rm = need(j, "recovery_mode");
  if (!rm.is_boolean()) fail("recovery_mode must be true or false");
  ac.recoveryMode = rm.get<bool>();
  ac.signature = hexField(j, "signature");
  Status s = validateAccessControl(ac);
  if (!s.isOk()) fail(s.message());
  return ac;
}

Json userInfoToJson(const CmipUserInfo& u) {
  Json j = Json::object();
  if (u.protocolVersion) j["protocol_version"] = bitsToString(*u.protocolVersion);
  if (u.functionalUnits) j["functional_units"] = bitsToString(*u.functionalUnits);
  if (u.accessControl) j["access_control"] = externalToJson(*u.accessControl);
  if (u.userInfo) j["user_info"] = externalToJson(*u.userInfo);
  return j;
}

CmipUserInfo userInfoFrom(const Json& j) {
  CmipUserInfo u;
  if (has(j, "protocol_version")) u.protocolVersion = bitsFromString(str(j, "protocol_version"));
  if (has(j, "functional_units")) u.functionalUnits = bitsFromString(str(j, "functional_units"));
  if (has(j, "access_control")) u.accessControl = externalFromJson(j.at("access_control"));
  if (has(j, "user_info")) u.userInfo = externalFromJson(j.at("user_info"));
  return u;
}

std::vector<External> externalsFrom(const Json& j) {
  std::vector<External> out;
  if (!j.is_array()) fail("user_information must be an array of EXTERNAL objects");
  for (const auto& e : j) out.push_back(externalFromJson(e));
  return out;
}

Json externalsToJson(const std::vector<External>& list) {
  Json out = Json::array();
  for (const auto& e : list) out.push_back(externalToJson(e));
  return out;
}

void aeTitleToJson(Json& j, const AeTitle& t, const char* prefix) {
  if (t.apTitle) j[std::string(prefix) + "_ap_title"] = t.apTitle->toString();
  if (t.aeQualifier) j[std::string(prefix) + "_ae_qualifier"] = *t.aeQualifier;
}

AeTitle aeTitleFrom(const Json& j, const char* prefix) {
  AeTitle t;
  std::string ap = std::string(prefix) + "_ap_title", ae = std::string(prefix) + "_ae_qualifier";
  if (has(j, ap.c_str())) t.apTitle = oidFrom(str(j, ap.c_str()));
  if (has(j, ae.c_str())) t.aeQualifier = num(j, ae.c_str());
  return t;
}

Json invokeIdToJson(const InvokeId& id) { return id.present ? Json(*id.present) : Json(nullptr); }

InvokeId invokeIdFrom(const Json& j) {
  const Json& v = need(j, "invoke_id");
  if (v.is_null()) return InvokeId{};
  if (!v.is_number_integer()) fail("invoke_id must be an integer or null");
  return InvokeId{v.get<int32_t>()};
}

void codeToJson(Json& j, const char* key, const Code& c) {
  if (c.isLocal()) {
    j[key] = c.localValue();
  } else {
    j[std::string(key) + "_oid"] = std::get<Oid>(c.value).toString();
  }
}

Code codeFrom(const Json& j, const char* key) {
  std::string oidKey = std::string(key) + "_oid";
  if (has(j, oidKey.c_str())) return Code{oidFrom(str(j, oidKey.c_str()))};
  return Code::local(static_cast<int32_t>(num(j, key)));
}

}  // namespace

std::string toHex(std::span<const uint8_t> bytes) { return common::toHex(bytes); }

// Blanks, newlines and ':' may separate octets: hex pasted from a dump or a trace.
Result<std::vector<uint8_t>> fromHex(const std::string& text) {
  Result<std::vector<uint8_t>> decoded = common::decodeHex(text, common::HexSeparators::kBetweenOctets);
  if (!decoded.isOk()) return Status::badDocument(decoded.status().message());
  return decoded;
}

Json externalToJson(const External& e) {
  Json j = Json::object();
  if (e.direct_reference) j["direct_reference"] = e.direct_reference->toString();
  if (e.indirect_reference) j["indirect_reference"] = *e.indirect_reference;
  if (e.data_value_descriptor) j["data_value_descriptor"] = *e.data_value_descriptor;
  static constexpr const char* kEncodings[] = {"single-ASN1-type", "octet-aligned", "arbitrary"};
  j["encoding"] = kEncodings[static_cast<int>(e.encoding)];
  if (e.encoding == External::Encoding::kArbitrary) j["unused_bits"] = e.arbitrary_unused_bits;
  j["data"] = toHex(e.data);
  if (e.encoding != External::Encoding::kSingleAsn1Type) return j;
  // Typed views, shown only when they re-encode to exactly the carried bytes.
  if (e.direct_reference == oids::kLnpAccessControlSyntax) {
    auto ac = decodeAccessControl(e.data);
    if (ac.isOk() && encodeAccessControl(*ac) == e.data) j["lnp_access_control"] = accessControlToJson(*ac);
    return j;
  }
  if (auto ui = decodeCmipUserInfo(e.data); ui.isOk() && encodeCmipUserInfo(*ui) == e.data) {
    j["cmip_user_info"] = userInfoToJson(*ui);
  } else if (auto ab = decodeCmipAbortInfo(e.data); ab.isOk() && encodeCmipAbortInfo(*ab) == e.data) {
    j["cmip_abort_info"] = {{"abort_source", static_cast<int>(ab->source)}};
    if (ab->userInfo) j["cmip_abort_info"]["user_info"] = externalToJson(*ab->userInfo);
  }
  return j;
}

External externalFromJson(const Json& j) {
  External e;
  if (has(j, "direct_reference")) e.direct_reference = oidFrom(str(j, "direct_reference"));
  if (has(j, "indirect_reference")) e.indirect_reference = num(j, "indirect_reference");
  if (has(j, "data_value_descriptor")) e.data_value_descriptor = str(j, "data_value_descriptor");
  std::string enc = has(j, "encoding") ? str(j, "encoding") : "single-ASN1-type";
  if (enc == "single-ASN1-type") {
    e.encoding = External::Encoding::kSingleAsn1Type;
  } else if (enc == "octet-aligned") {
    e.encoding = External::Encoding::kOctetAligned;
  } else if (enc == "arbitrary") {
    e.encoding = External::Encoding::kArbitrary;
    e.arbitrary_unused_bits = static_cast<uint8_t>(num(j, "unused_bits") & 7);
  } else {
    fail("unknown EXTERNAL encoding \"" + enc + "\"");
  }
  if (has(j, "lnp_access_control")) {
    e.data = encodeAccessControl(accessControlFrom(j.at("lnp_access_control")));
  } else if (has(j, "cmip_user_info")) {
    e.data = encodeCmipUserInfo(userInfoFrom(j.at("cmip_user_info")));
  } else if (has(j, "cmip_abort_info")) {
    const Json& a = j.at("cmip_abort_info");
    CmipAbortInfo info{static_cast<CmipAbortSource>(num(a, "abort_source") != 0), std::nullopt};
    if (has(a, "user_info")) info.userInfo = externalFromJson(a.at("user_info"));
    e.data = encodeCmipAbortInfo(info);
  } else {
    e.data = hexField(j, "data");
  }
  return e;
}

Json acseToJson(const AcseApdu& apdu) {
  Json j{{"apdu", acseApduName(apdu)}};
  if (const auto* a = std::get_if<Aarq>(&apdu)) {
    if (a->protocolVersion) j["protocol_version"] = bitsToString(*a->protocolVersion);
    j["application_context"] = a->applicationContext.toString();
    aeTitleToJson(j, a->called, "called");
    aeTitleToJson(j, a->calling, "calling");
    j["user_information"] = externalsToJson(a->userInformation);
  } else if (const auto* a = std::get_if<Aare>(&apdu)) {
    if (a->protocolVersion) j["protocol_version"] = bitsToString(*a->protocolVersion);
    j["application_context"] = a->applicationContext.toString();
    j["result"] = static_cast<int>(a->result);
    j["diagnostic_source"] = a->diagnostic.source == DiagnosticSource::kServiceUser
                                 ? "acse-service-user" : "acse-service-provider";
    j["diagnostic"] = a->diagnostic.value;
    aeTitleToJson(j, a->responding, "responding");
    j["user_information"] = externalsToJson(a->userInformation);
  } else if (const auto* a = std::get_if<Rlrq>(&apdu)) {
    if (a->reason) j["reason"] = static_cast<int>(*a->reason);
    j["user_information"] = externalsToJson(a->userInformation);
  } else if (const auto* a = std::get_if<Rlre>(&apdu)) {
    if (a->reason) j["reason"] = static_cast<int>(*a->reason);
    j["user_information"] = externalsToJson(a->userInformation);
  } else {
    const auto& b = std::get<Abrt>(apdu);
    j["source"] = static_cast<int>(b.source);
    if (b.diagnostic) j["diagnostic"] = static_cast<int>(*b.diagnostic);
    j["user_information"] = externalsToJson(b.userInformation);
  }
  return j;
}

AcseApdu acseFromJson(const Json& j) {
  std::string kind = str(j, "apdu");
  std::vector<External> ui = has(j, "user_information") ? externalsFrom(j.at("user_information"))
                                                        : std::vector<External>{};
  if (kind == "aarq") {
    Aarq a;
    if (has(j, "protocol_version")) a.protocolVersion = bitsFromString(str(j, "protocol_version"));
    a.applicationContext = oidFrom(str(j, "application_context"));
    a.called = aeTitleFrom(j, "called");
    a.calling = aeTitleFrom(j, "calling");
    a.userInformation = ui;
    return a;
  }
  if (kind == "aare") {
    Aare a;
    if (has(j, "protocol_version")) a.protocolVersion = bitsFromString(str(j, "protocol_version"));
    a.applicationContext = oidFrom(str(j, "application_context"));
    int64_t result = num(j, "result");
    if (result < 0 || result > 2) fail("aare result must be 0..2");
    a.result = static_cast<AssociateResult>(result);
    std::string src = str(j, "diagnostic_source");
    if (src != "acse-service-user" && src != "acse-service-provider") {
      fail("diagnostic_source must be acse-service-user or acse-service-provider");
    }
    a.diagnostic.source = src == "acse-service-user" ? DiagnosticSource::kServiceUser
                                                     : DiagnosticSource::kServiceProvider;
    a.diagnostic.value = static_cast<int32_t>(num(j, "diagnostic"));
    a.responding = aeTitleFrom(j, "responding");
    a.userInformation = ui;
    return a;
  }
  if (kind == "rlrq") {
    Rlrq a{std::nullopt, ui};
    if (has(j, "reason")) a.reason = static_cast<ReleaseRequestReason>(num(j, "reason"));
    return a;
  }
  if (kind == "rlre") {
    Rlre a{std::nullopt, ui};
    if (has(j, "reason")) a.reason = static_cast<ReleaseResponseReason>(num(j, "reason"));
    return a;
  }
  if (kind == "abrt") {
    Abrt a{static_cast<AbortSource>(num(j, "source") != 0), std::nullopt, ui};
    if (has(j, "diagnostic")) a.diagnostic = static_cast<AbortDiagnostic>(num(j, "diagnostic"));
    return a;
  }
  fail("unknown ACSE apdu \"" + kind + "\"");
}

Json roseToJson(const RoseApdu& apdu) {
  Json j{{"apdu", roseApduName(apdu)}};
  if (const auto* inv = std::get_if<RoseInvoke>(&apdu)) {
    j["invoke_id"] = inv->invokeId;
    if (inv->linkedId) j["linked_id"] = *inv->linkedId;
    codeToJson(j, "opcode", inv->opcode);
    if (inv->opcode.isLocal() && isKnownCmipOpcode(inv->opcode.localValue())) {
      j["operation"] = cmipOpcodeName(static_cast<CmipOpcode>(inv->opcode.localValue()));
    }
    if (inv->argument) j["argument"] = toHex(inv->argument->bytes);
    if (auto typed = fromRose(*inv); typed.isOk() && toRose(*typed).argument == inv->argument) {
      j["cmip"] = cmipArgumentToJson(typed->argument);
    }
  } else if (const auto* rr = std::get_if<RoseReturnResult>(&apdu)) {
    j["invoke_id"] = invokeIdToJson(rr->invokeId);
    if (rr->result) {
      codeToJson(j, "opcode", rr->result->opcode);
      j["result"] = toHex(rr->result->result.bytes);
      if (auto typed = fromRose(*rr); typed.isOk() && typed->opcode &&
                                      encodeResult(typed->value) == rr->result->result) {
        j["cmip"] = cmipResultToJson(typed->value);
      }
    }
  } else if (const auto* re = std::get_if<RoseReturnError>(&apdu)) {
    j["invoke_id"] = invokeIdToJson(re->invokeId);
    codeToJson(j, "error", re->errcode);
    if (re->errcode.isLocal() && isKnownCmipError(re->errcode.localValue())) {
      j["error_name"] = cmipErrorName(static_cast<CmipError>(re->errcode.localValue()));
    }
    if (re->parameter) j["parameter"] = toHex(re->parameter->bytes);
  } else {
    const auto& rj = std::get<RoseReject>(apdu);
    j["invoke_id"] = invokeIdToJson(rj.invokeId);
    j["problem_kind"] = static_cast<int>(rj.kind);
    j["problem"] = rj.problem;
  }
  return j;
}

RoseApdu roseFromJson(const Json& j) {
  std::string kind = str(j, "apdu");
  if (kind == "invoke") {
    RoseInvoke inv;
    inv.invokeId = static_cast<int32_t>(num(j, "invoke_id"));
    if (has(j, "linked_id")) inv.linkedId = static_cast<int32_t>(num(j, "linked_id"));
    inv.opcode = codeFrom(j, "opcode");
    if (has(j, "cmip")) {
      if (!inv.opcode.isLocal() || !isKnownCmipOpcode(inv.opcode.localValue())) {
        fail("\"cmip\" given for an opcode that is not an X.711 operation");
      }
      auto op = static_cast<CmipOpcode>(inv.opcode.localValue());
      inv.argument = encodeArgument(cmipArgumentFromJson(op, j.at("cmip")));
    } else if (has(j, "argument")) {
      inv.argument = opaqueField(j, "argument");
    }
    return inv;
  }
  if (kind == "returnResult") {
    RoseReturnResult rr{invokeIdFrom(j), std::nullopt};
    if (has(j, "opcode") || has(j, "opcode_oid")) {
      RoseReturnResult::Body body{codeFrom(j, "opcode"), {}};
      body.result = has(j, "cmip") ? encodeResult(cmipResultFromJson(j.at("cmip"))) : opaqueField(j, "result");
      rr.result = body;
    }
    return rr;
  }
  if (kind == "returnError") {
    RoseReturnError re{invokeIdFrom(j), codeFrom(j, "error"), std::nullopt};
    if (has(j, "parameter")) re.parameter = opaqueField(j, "parameter");
    return re;
  }
  if (kind == "reject") {
    int64_t pk = num(j, "problem_kind");
    if (pk < 0 || pk > 3) fail("problem_kind must be 0..3");
    return RoseReject{invokeIdFrom(j), static_cast<RejectProblemKind>(pk),
                      static_cast<int32_t>(num(j, "problem"))};
  }
  fail("unknown ROSE apdu \"" + kind + "\"");
}

}  // namespace npac::pdu
