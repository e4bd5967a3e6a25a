// TPKT stream <-> JSON frames, layer by layer (RFC 1006, X.224, X.225, X.226, then
// ACSE or ROSE by the APDU's tag class).
#include "npac/npac-pdu/frames.h"

#include "cmip/cotp.h"
#include "cmip/presentation.h"
#include "cmip/session.h"
#include "cmip/tpkt.h"
#include "npac/npac-pdu/json_util.h"

namespace npac::pdu {
namespace {

using namespace npac::cmip;
namespace pres = npac::cmip::presentation;
namespace ses = npac::cmip::session;

using json_util::fail;

Status frameError(size_t frame, const Status& s) {
  return Status::error(s.code(), s.offset(), "frame " + std::to_string(frame) + ": " + s.message());
}

int64_t getInt(const Json& j, const char* key, int64_t dflt) {
  if (!j.contains(key)) return dflt;
  if (!j.at(key).is_number_integer()) fail(std::string("\"") + key + "\" must be an integer");
  return j.at(key).get<int64_t>();
}

std::vector<uint8_t> getHex(const Json& j, const char* key) {
  if (!j.contains(key)) return {};
  if (!j.at(key).is_string()) fail(std::string("\"") + key + "\" must be a hex string");
  return json_util::hexOrFail(j.at(key).get<std::string>());
}

std::string getStr(const Json& j, const char* key) {
  if (!j.contains(key) || !j.at(key).is_string()) fail(std::string("missing string \"") + key + "\"");
  return j.at(key).get<std::string>();
}

// --- decode ------------------------------------------------------------------------------

Json apduToJson(Bytes value, Json& frame, size_t index) {
  (void)index;
  if (value.empty()) return nullptr;
  if ((value[0] & 0xC0) == 0x40) {  // [APPLICATION n]: ACSE
    auto a = decodeAcseApdu(value);
    if (!a.isOk()) return Json{{"error", a.status().toString()}};
    frame["acse"] = acseToJson(*a);
  } else {
    auto r = decodeRoseApdu(value);
    if (!r.isOk()) return Json{{"error", r.status().toString()}};
    frame["rose"] = roseToJson(*r);
  }
  return nullptr;
}

Json contextsToJson(const std::vector<pres::ContextProposal>& list) {
  Json out = Json::array();
  for (const auto& c : list) {
    Json ts = Json::array();
    for (const auto& t : c.transfer_syntaxes) ts.push_back(t.toString());
    out.push_back({{"id", c.id}, {"abstract_syntax", c.abstract_syntax.toString()}, {"transfer_syntaxes", ts}});
  }
  return out;
}

Json resultsToJson(const std::vector<pres::ContextResult>& list) {
  Json out = Json::array();
  for (const auto& r : list) {
    Json j{{"result", r.result}};
    if (r.transfer_syntax) j["transfer_syntax"] = r.transfer_syntax->toString();
    if (r.provider_reason) j["provider_reason"] = *r.provider_reason;
    out.push_back(j);
  }
  return out;
}

// Sets presentation.context_id and decodes the single PDV's APDU into `frame`.
Status userDataToJson(const pres::UserData& ud, Json& p, Json& frame, size_t index) {
  if (ud.empty()) return Status::ok();
  if (ud.size() > 1) {
    return Status::error(ErrorCode::kPresentationBadPpdu, 0,
                         "npac-pdu shows one PDV per PPDU; this one has " + std::to_string(ud.size()));
  }
  p["context_id"] = ud[0].context_id;
  if (ud[0].transfer_syntax) p["transfer_syntax"] = ud[0].transfer_syntax->toString();
  Json err = apduToJson(ud[0].value, frame, index);
  if (!err.is_null()) {
    return Status::error(ErrorCode::kPresentationBadPpdu, 0, err["error"].get<std::string>());
  }
  return Status::ok();
}

Status presentationToJson(const ses::Spdu& s, Json& frame, size_t index) {
  Json p = Json::object();
  Bytes ppdu = s.user_data;
  if (ppdu.empty()) return Status::ok();
  switch (s.type) {
    case ses::SpduType::kConnect: {
      NPAC_ASSIGN_OR_RETURN(auto cp, pres::decodeConnectRequest(ppdu));
      p = {{"ppdu", "CP"}, {"version1", cp.version1}, {"mode", cp.mode},
           {"calling_selector", toHex(cp.calling_selector)}, {"called_selector", toHex(cp.called_selector)},
           {"contexts", contextsToJson(cp.contexts)}};
      NPAC_RETURN_IF_ERROR(userDataToJson(cp.user_data, p, frame, index));
      break;
    }
    case ses::SpduType::kAccept: {
      NPAC_ASSIGN_OR_RETURN(auto cpa, pres::decodeConnectAccept(ppdu));
      p = {{"ppdu", "CPA"}, {"responding_selector", toHex(cpa.responding_selector)},
           {"results", resultsToJson(cpa.results)}};
      NPAC_RETURN_IF_ERROR(userDataToJson(cpa.user_data, p, frame, index));
      break;
    }
    case ses::SpduType::kRefuse: {
      NPAC_ASSIGN_OR_RETURN(auto cpr, pres::decodeConnectReject(ppdu));
      p = {{"ppdu", "CPR"}, {"responding_selector", toHex(cpr.responding_selector)},
           {"results", resultsToJson(cpr.results)}};
      if (cpr.provider_reason) p["provider_reason"] = *cpr.provider_reason;
      NPAC_RETURN_IF_ERROR(userDataToJson(cpr.user_data, p, frame, index));
      break;
    }
    case ses::SpduType::kAbort: {
      NPAC_ASSIGN_OR_RETURN(auto ab, pres::decodeAbort(ppdu));
      if (ab.user_abort) {
        p = {{"ppdu", "ARU"}};
        NPAC_RETURN_IF_ERROR(userDataToJson(ab.user_data, p, frame, index));
      } else {
        p = {{"ppdu", "ARP"}};
        if (ab.provider_reason) p["provider_reason"] = *ab.provider_reason;
      }
      break;
    }
    default: {  // DT: TD; FN/DN: release user data
      NPAC_ASSIGN_OR_RETURN(auto ud, pres::decodeUserData(ppdu));
      p = {{"ppdu", s.type == ses::SpduType::kDataTransfer ? "TD" : "user-data"}};
      NPAC_RETURN_IF_ERROR(userDataToJson(ud, p, frame, index));
    }
  }
  // Keep the layers in wire order: presentation before the APDU keys added above.
  Json ordered = Json::object();
  for (auto it = frame.begin(); it != frame.end(); ++it) {
    if (it.key() == "acse" || it.key() == "rose") continue;
    ordered[it.key()] = it.value();
  }
  ordered["presentation"] = p;
  if (frame.contains("acse")) ordered["acse"] = frame["acse"];
  if (frame.contains("rose")) ordered["rose"] = frame["rose"];
  frame = std::move(ordered);
  return Status::ok();
}

Status sessionToJson(Bytes tsdu, Json& frame, size_t index) {
  NPAC_ASSIGN_OR_RETURN(ses::Spdu s, ses::decode(tsdu));
  Json j{{"type", ses::spduName(s.type)}};
  switch (s.type) {
    case ses::SpduType::kConnect:
    case ses::SpduType::kAccept:
      j["protocol_options"] = s.connect.protocol_options;
      j["version"] = s.connect.version;
      j["user_requirements"] = s.connect.user_requirements;
      j["calling_selector"] = toHex(s.connect.calling_selector);
      j["called_selector"] = toHex(s.connect.called_selector);
      break;
    case ses::SpduType::kRefuse:
      j["reason"] = s.refuse.reason;
      j["transport_disconnect"] = s.refuse.transport_disconnect;
      j["user_requirements"] = s.refuse.user_requirements;
      j["version"] = s.refuse.version;
      break;
    case ses::SpduType::kFinish:
    case ses::SpduType::kAbort:
      j["transport_disconnect"] = s.transport_disconnect;
      break;
    default:
      break;
  }
  frame["session"] = j;
  return presentationToJson(s, frame, index);
}

Json connectToJson(const char* type, const cotp::Connect& c) {
  Json j{{"type", type}, {"dst_ref", c.dst_ref}, {"src_ref", c.src_ref},
         {"class", c.protocol_class}, {"options", c.options}};
  if (c.tpdu_size_code) j["tpdu_size_code"] = *c.tpdu_size_code;
  j["calling_tsap"] = toHex(c.calling_tsap);
  j["called_tsap"] = toHex(c.called_tsap);
  if (!c.alternative_classes.empty()) j["alternative_classes"] = toHex(c.alternative_classes);
  return j;
}

}  // namespace

cmip::Result<Json> decodeFrames(std::span<const uint8_t> stream) {
  Json frames = Json::array();
  tpkt::Deframer deframer;
  deframer.feed(stream);
  std::vector<uint8_t> pending;  // DT segments awaiting EOT
  for (size_t index = 0;; ++index) {
    auto next = deframer.next();
    if (!next.isOk()) return frameError(index, next.status());
    if (!next->has_value()) break;
    Bytes packet = **next;
    NPAC_ASSIGN_OR_RETURN(Bytes tpdu_bytes, tpkt::parseFrame(packet));
    auto tpdu = cotp::decode(tpdu_bytes);
    if (!tpdu.isOk()) return frameError(index, tpdu.status());
    Json frame{{"tpkt", {{"version", tpkt::kVersion}, {"length", packet.size()}}}};
    switch (tpdu->code) {
      case cotp::TpduCode::kConnectionRequest: frame["cotp"] = connectToJson("CR", tpdu->connect); break;
      case cotp::TpduCode::kConnectionConfirm: frame["cotp"] = connectToJson("CC", tpdu->connect); break;
      case cotp::TpduCode::kDisconnectRequest:
        frame["cotp"] = {{"type", "DR"}, {"dst_ref", tpdu->disconnect.dst_ref},
                         {"src_ref", tpdu->disconnect.src_ref}, {"reason", tpdu->disconnect.reason}};
        break;
      case cotp::TpduCode::kError:
        frame["cotp"] = {{"type", "ER"}, {"dst_ref", tpdu->error.dst_ref}, {"cause", tpdu->error.cause},
                         {"invalid_tpdu", toHex(tpdu->error.invalid_tpdu)}};
        break;
      case cotp::TpduCode::kData: {
        frame["cotp"] = {{"type", "DT"}, {"eot", tpdu->data.eot}};
        const Bytes& ud = tpdu->data.user_data;
        pending.insert(pending.end(), ud.begin(), ud.end());
        if (!tpdu->data.eot) {
          frame["cotp"]["user_data"] = toHex(ud);
          break;
        }
        std::vector<uint8_t> sdu;
        sdu.swap(pending);
        Status s = sessionToJson(sdu, frame, index);
        if (!s.isOk()) return frameError(index, s);
        break;
      }
    }
    frames.push_back(std::move(frame));
  }
  if (deframer.bufferedBytes() != 0) {
    return Status::error(ErrorCode::kTpktTruncated, stream.size() - deframer.bufferedBytes(),
                         std::to_string(deframer.bufferedBytes()) +
                             " bytes after the last complete TPKT packet");
  }
  if (!pending.empty()) {
    return Status::error(ErrorCode::kCotpTruncated, stream.size(),
                         "the stream ends inside a segmented DT (no EOT)");
  }
  if (frames.empty()) {
    return Status::error(ErrorCode::kTpktTruncated, 0, "no TPKT packet in the input");
  }
  return Json{{"frames", frames}};
}

namespace {

cotp::Connect connectFrom(const Json& j) {
  cotp::Connect c;
  c.dst_ref = static_cast<uint16_t>(getInt(j, "dst_ref", 0));
  c.src_ref = static_cast<uint16_t>(getInt(j, "src_ref", 0));
  c.protocol_class = static_cast<uint8_t>(getInt(j, "class", 0));
  c.options = static_cast<uint8_t>(getInt(j, "options", 0));
  if (j.contains("tpdu_size_code")) c.tpdu_size_code = static_cast<uint8_t>(getInt(j, "tpdu_size_code", 0));
  c.calling_tsap = getHex(j, "calling_tsap");
  c.called_tsap = getHex(j, "called_tsap");
  c.alternative_classes = getHex(j, "alternative_classes");
  return c;
}

std::vector<pres::ContextProposal> contextsFrom(const Json& j) {
  std::vector<pres::ContextProposal> out;
  if (!j.is_array()) fail("presentation.contexts must be an array");
  for (const auto& c : j) {
    pres::ContextProposal p;
    p.id = getInt(c, "id", 0);
    auto as = Oid::parse(getStr(c, "abstract_syntax"));
    if (!as.isOk()) fail("bad abstract_syntax");
    p.abstract_syntax = *as;
    for (const auto& t : c.at("transfer_syntaxes")) {
      auto ts = Oid::parse(t.get<std::string>());
      if (!ts.isOk()) fail("bad transfer syntax");
      p.transfer_syntaxes.push_back(*ts);
    }
    out.push_back(p);
  }
  return out;
}

std::vector<pres::ContextResult> resultsFrom(const Json& j) {
  std::vector<pres::ContextResult> out;
  if (!j.is_array()) fail("presentation.results must be an array");
  for (const auto& r : j) {
    pres::ContextResult cr;
    cr.result = getInt(r, "result", 0);
    if (r.contains("transfer_syntax")) {
      auto ts = Oid::parse(getStr(r, "transfer_syntax"));
      if (!ts.isOk()) fail("bad transfer_syntax");
      cr.transfer_syntax = *ts;
    }
    if (r.contains("provider_reason")) cr.provider_reason = getInt(r, "provider_reason", 0);
    out.push_back(cr);
  }
  return out;
}

// Encodes the SDU (session SPDU down to the APDU) of one frame.
EncodeBuffer encodeSdu(const Json& frame) {
  EncodeBuffer buf;
  BerWriter w(buf);
  if (frame.contains("acse")) {
    encodeAcseApdu(acseFromJson(frame.at("acse")), w);
  } else if (frame.contains("rose")) {
    encodeRoseApdu(roseFromJson(frame.at("rose")), w);
  }
  if (!frame.contains("session")) fail("a DT frame with EOT needs a \"session\" object");
  const Json& s = frame.at("session");
  std::string stype = getStr(s, "type");
  if (frame.contains("presentation")) {
    const Json& p = frame.at("presentation");
    std::string ppdu = getStr(p, "ppdu");
    int64_t ctx = getInt(p, "context_id", 0);
    if (!buf.empty() && !p.contains("context_id")) fail("presentation.context_id is required with an APDU");
    if (ppdu == "CP") {
      pres::ConnectRequest cp;
      cp.version1 = !p.contains("version1") || p.at("version1").get<bool>();
      cp.mode = getInt(p, "mode", pres::kNormalMode);
      cp.calling_selector = getHex(p, "calling_selector");
      cp.called_selector = getHex(p, "called_selector");
      cp.contexts = contextsFrom(p.at("contexts"));
      pres::prependConnectRequest(buf, cp, ctx);
    } else if (ppdu == "CPA") {
      pres::ConnectAccept cpa;
      cpa.responding_selector = getHex(p, "responding_selector");
      cpa.results = resultsFrom(p.at("results"));
      pres::prependConnectAccept(buf, cpa, ctx);
    } else if (ppdu == "CPR") {
      pres::ConnectReject cpr;
      cpr.responding_selector = getHex(p, "responding_selector");
      cpr.results = resultsFrom(p.at("results"));
      if (p.contains("provider_reason")) cpr.provider_reason = getInt(p, "provider_reason", 0);
      pres::prependConnectReject(buf, cpr, ctx);
    } else if (ppdu == "TD" || ppdu == "user-data") {
      pres::prependUserData(buf, ctx);
    } else if (ppdu == "ARU") {
      pres::prependUserAbort(buf, ctx);
    } else if (ppdu == "ARP") {
      if (!buf.empty()) fail("an ARP carries no APDU");
      pres::encodeProviderAbort(buf, getInt(p, "provider_reason", pres::kAbortReasonNotSpecified));
    } else {
      fail("unknown presentation ppdu \"" + ppdu + "\"");
    }
  } else if (!buf.empty()) {
    fail("an APDU needs a \"presentation\" object");
  }
  Status st;
  if (stype == "CN" || stype == "AC") {
    ses::Connect c;
    c.protocol_options = static_cast<uint8_t>(getInt(s, "protocol_options", 0));
    c.version = static_cast<uint8_t>(getInt(s, "version", ses::kVersion2));
    c.user_requirements = static_cast<uint16_t>(getInt(s, "user_requirements", ses::kDuplex));
    c.calling_selector = getHex(s, "calling_selector");
    c.called_selector = getHex(s, "called_selector");
    st = stype == "CN" ? ses::prependConnect(buf, c) : ses::prependAccept(buf, c);
  } else if (stype == "RF") {
    ses::Refuse r;
    r.reason = static_cast<uint8_t>(getInt(s, "reason", ses::kRefuseByUserWithData));
    r.transport_disconnect = static_cast<uint8_t>(getInt(s, "transport_disconnect", ses::kReleaseTransport));
    r.user_requirements = static_cast<uint16_t>(getInt(s, "user_requirements", ses::kDuplex));
    r.version = static_cast<uint8_t>(getInt(s, "version", ses::kVersion2));
    st = ses::prependRefuse(buf, r);
  } else if (stype == "FN") {
    ses::prependFinish(buf, static_cast<uint8_t>(getInt(s, "transport_disconnect", ses::kReleaseTransport)));
  } else if (stype == "DN") {
    ses::prependDisconnect(buf);
  } else if (stype == "AB") {
    ses::prependAbort(buf, static_cast<uint8_t>(getInt(s, "transport_disconnect",
                                                       ses::kReleaseTransport | ses::kUserAbort)));
  } else if (stype == "AA") {
    ses::prependAbortAccept(buf);
  } else if (stype == "DT") {
    ses::prependData(buf);
  } else {
    fail("unknown session type \"" + stype + "\"");
  }
  if (!st.isOk()) fail("session: " + st.message());
  return buf;
}

}  // namespace

namespace {

std::vector<uint8_t> encodeFramesOrThrow(const Json& doc) {
  if (!doc.is_object() || !doc.contains("frames") || !doc.at("frames").is_array()) {
    fail("the document must be {\"frames\": [...]}");
  }
  std::vector<uint8_t> out;
  std::vector<uint8_t> sent_segments;  // DT user data of non-EOT frames since the last EOT
  size_t index = 0;
  for (const auto& frame : doc.at("frames")) {
    try {
      if (!frame.contains("cotp")) fail("missing \"cotp\"");
      const Json& c = frame.at("cotp");
      std::string type = getStr(c, "type");
      EncodeBuffer buf;
      if (type == "CR" || type == "CC") {
        cotp::encodeConnect(type == "CR" ? cotp::TpduCode::kConnectionRequest : cotp::TpduCode::kConnectionConfirm,
                            connectFrom(c), buf);
      } else if (type == "DR") {
        cotp::encodeDisconnect({static_cast<uint16_t>(getInt(c, "dst_ref", 0)),
                                static_cast<uint16_t>(getInt(c, "src_ref", 0)),
                                static_cast<uint8_t>(getInt(c, "reason", 0))}, buf);
      } else if (type == "ER") {
        cotp::encodeError({static_cast<uint16_t>(getInt(c, "dst_ref", 0)),
                           static_cast<uint8_t>(getInt(c, "cause", 0)), getHex(c, "invalid_tpdu")}, buf);
      } else if (type == "DT") {
        bool eot = !c.contains("eot") || c.at("eot").get<bool>();
        if (!eot) {
          auto ud = getHex(c, "user_data");
          buf.append(ud);
          sent_segments.insert(sent_segments.end(), ud.begin(), ud.end());
        } else {
          EncodeBuffer sdu = encodeSdu(frame);
          Bytes all = sdu.view();
          if (all.size() < sent_segments.size() ||
              !std::equal(sent_segments.begin(), sent_segments.end(), all.begin())) {
            fail("the earlier DT segments are not a prefix of this frame's SDU");
          }
          buf.append(all.subspan(sent_segments.size()));
          sent_segments.clear();
        }
        cotp::prependDataHeader(buf, eot);
      } else {
        fail("unknown cotp type \"" + type + "\"");
      }
      Status s = tpkt::prependHeader(buf);
      if (!s.isOk()) fail(s.message());
      Bytes v = buf.view();
      out.insert(out.end(), v.begin(), v.end());
    } catch (const Status& refused) {
      fail("frame " + std::to_string(index) + ": " + refused.message());
    } catch (const nlohmann::json::exception& e) {
      fail("frame " + std::to_string(index) + ": " + e.what());
    }
    ++index;
  }
  if (!sent_segments.empty()) fail("the last DT segment has no EOT frame after it");
  return out;
}

}  // namespace

Result<std::vector<uint8_t>> encodeFrames(const Json& doc) {
  try {
    return encodeFramesOrThrow(doc);
  } catch (const Status& refused) {
    return refused;
  } catch (const nlohmann::json::exception& e) {
    return Status::badDocument(e.what());
  }
}

}  // namespace npac::pdu
