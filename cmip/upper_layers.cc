#include "cmip/upper_layers.h"

#include <string>
#include <utility>

namespace npac::cmip {
namespace {

// Presentation context identifiers the initiator proposes (odd, X.226 §6.2.2.7).
constexpr int64_t kInitiatorAcseContext = 1;
constexpr int64_t kInitiatorCmipContext = 3;

Status wrongState(const char* call, UpperLayers::State s) {
  return Status::error(ErrorCode::kUpperLayersWrongState, 0,
                       std::string(call) + " is not allowed in state " + upperLayersStateName(s));
}

void appendTo(std::vector<uint8_t>& out, Bytes b) { out.insert(out.end(), b.begin(), b.end()); }

}  // namespace

const char* upperLayersStateName(UpperLayers::State s) {
  switch (s) {
    case UpperLayers::State::kIdle: return "idle";
    case UpperLayers::State::kAwaitingCc: return "awaiting-cc";
    case UpperLayers::State::kTransportConnected: return "transport-connected";
    case UpperLayers::State::kAwaitingAssociateResponse: return "awaiting-associate-response";
    case UpperLayers::State::kAwaitingAssociateConfirm: return "awaiting-associate-confirm";
    case UpperLayers::State::kAssociated: return "associated";
    case UpperLayers::State::kReleaseRequested: return "release-requested";
    case UpperLayers::State::kReleasing: return "releasing";
    case UpperLayers::State::kClosed: return "closed";
  }
  return "?";
}

UpperLayers::UpperLayers(UpperLayersConfig config)
    : config_(std::move(config)), reassembler_(config_.max_sdu_size) {}

EncodeBuffer& UpperLayers::scratch() {
  scratch_.clear();
  return scratch_;
}

int64_t UpperLayers::acseContextId() const {
  return contexts_.idFor(oids::kAcseAbstractSyntax).value_or(kInitiatorAcseContext);
}

Status UpperLayers::flush(EncodeBuffer& spdu, std::vector<uint8_t>& out) {
  NPAC_RETURN_IF_ERROR(cotp::frameUserData(spdu, tpdu_size_));
  appendTo(out, spdu.view());
  return Status::ok();
}

void UpperLayers::fail(std::vector<UpperLayersEvent>& events, Status status, ErrorResponse response,
                       int64_t presentation_reason) {
  ProtocolError e;
  e.status = std::move(status);
  e.response = response;
  e.presentation_reason = presentation_reason;
  if (response == ErrorResponse::kRoseReject)
    e.rose_problem = e.status.code() == ErrorCode::kRoseUnknownApdu ? kUnrecognizedPdu : kBadlyStructuredPdu;
  else
    halted_ = true;
  if (response == ErrorResponse::kCloseTransport || response == ErrorResponse::kAlreadyRefused) state_ = State::kClosed;
  events.emplace_back(std::move(e));
}

Result<Bytes> UpperLayers::apduOn(const presentation::UserData& ud, const Oid& abstract_syntax) const {
  if (ud.size() != 1)
    return Status::error(ErrorCode::kPresentationBadPpdu, 0, "expected one PDV, found " + std::to_string(ud.size()));
  const Oid* as = contexts_.abstractSyntaxOf(ud[0].context_id);
  if (!as)
    return Status::error(ErrorCode::kPresentationContextNotNegotiated, 0,
                         "PDV on presentation context " + std::to_string(ud[0].context_id) + ", which was not negotiated");
  if (!(*as == abstract_syntax))
    return Status::error(ErrorCode::kUpperLayersUnexpectedPdu, 0,
                         "PDV on the " + as->toString() + " context where " + abstract_syntax.toString() + " was expected");
  return ud[0].value;
}

// ---- bytes in ---------------------------------------------------------------------

void UpperLayers::receive(Bytes chunk, std::vector<UpperLayersEvent>& events, std::vector<uint8_t>& out) {
  if (state_ == State::kClosed || halted_) return;
  deframer_.feed(chunk);
  while (state_ != State::kClosed && !halted_) {
    Result<std::optional<Bytes>> frame = deframer_.next();
    if (!frame.isOk()) return fail(events, frame.status(), ErrorResponse::kCloseTransport);
    if (!frame->has_value()) return;
    handleTpdu((*frame)->subspan(tpkt::kHeaderLength), events, out);
  }
}

void UpperLayers::handleTpdu(Bytes tpdu, std::vector<UpperLayersEvent>& events, std::vector<uint8_t>& out) {
  Result<cotp::Tpdu> t = cotp::decode(tpdu);
  if (!t.isOk()) return fail(events, t.status(), ErrorResponse::kTransportError);
  const bool responder = config_.role == UpperLayersRole::kResponder;
  switch (t->code) {
    case cotp::TpduCode::kConnectionRequest: {
      if (!responder || state_ != State::kIdle)
        return fail(events, Status::error(ErrorCode::kCotpUnexpectedTpdu, 0, "CR in state " + std::string(upperLayersStateName(state_))), ErrorResponse::kTransportError);
      cr_ = t->connect;
      cotp::ConnectResponse r = cotp::respondToConnect(cr_, config_.local_reference, config_.max_tpdu_size);
      EncodeBuffer& buf = scratch();
      if (!r.accepted) {
        cotp::encodeDisconnect(r.refusal, buf);
        (void)tpkt::prependHeader(buf);
        appendTo(out, buf.view());
        return fail(events, r.reason, ErrorResponse::kAlreadyRefused);
      }
      if (!config_.called_tsap.empty()) r.confirm.called_tsap = config_.called_tsap;
      cotp::encodeConnect(cotp::TpduCode::kConnectionConfirm, r.confirm, buf);
      (void)tpkt::prependHeader(buf);
      appendTo(out, buf.view());
      tpdu_size_ = r.tpdu_size;
      state_ = State::kTransportConnected;
      return;
    }
    case cotp::TpduCode::kConnectionConfirm: {
      if (responder || state_ != State::kAwaitingCc)
        return fail(events, Status::error(ErrorCode::kCotpUnexpectedTpdu, 0, "unexpected CC"), ErrorResponse::kTransportError);
      Result<size_t> size = cotp::confirmedTpduSize(cr_, t->connect);
      if (!size.isOk()) return fail(events, size.status(), ErrorResponse::kTransportError);
      tpdu_size_ = *size;
      // T-CONNECT confirmed: send CN carrying CP carrying the AARQ.
      cp_ = presentation::ConnectRequest{};
      cp_.calling_selector = config_.calling_psel;
      cp_.called_selector = config_.called_psel;
      cp_.contexts = {{kInitiatorAcseContext, oids::kAcseAbstractSyntax, {oids::kBerTransferSyntax}},
                      {kInitiatorCmipContext, oids::kCmipAbstractSyntax, {oids::kBerTransferSyntax}}};
      EncodeBuffer& buf = scratch();
      buf.append(pending_aarq_);
      presentation::prependConnectRequest(buf, cp_, kInitiatorAcseContext);
      session::Connect cn;
      cn.calling_selector = config_.calling_ssel;
      cn.called_selector = config_.called_ssel;
      Status s = session::prependConnect(buf, cn);
      if (s.isOk()) s = flush(buf, out);
      if (!s.isOk()) return fail(events, s, ErrorResponse::kProviderAbort);
      state_ = State::kAwaitingAssociateConfirm;
      return;
    }
    case cotp::TpduCode::kDisconnectRequest:
    case cotp::TpduCode::kError: {
      AbortIndication a;
      a.detail = t->code == cotp::TpduCode::kError
                     ? Status::error(ErrorCode::kCotpUnexpectedTpdu, 0, "peer sent COTP ER, cause " + std::to_string(t->error.cause))
                     : Status::error(ErrorCode::kCotpUnexpectedTpdu, 0, "peer sent COTP DR, reason " + std::to_string(t->disconnect.reason));
      state_ = State::kClosed;
      events.emplace_back(std::move(a));
      return;
    }
    case cotp::TpduCode::kData: {
      if (state_ == State::kIdle || state_ == State::kAwaitingCc)
        return fail(events, Status::error(ErrorCode::kCotpUnexpectedTpdu, 0, "DT before the transport connection is established"), ErrorResponse::kTransportError);
      Result<std::optional<Bytes>> sdu = reassembler_.add(t->data);
      if (!sdu.isOk()) return fail(events, sdu.status(), ErrorResponse::kProviderAbort);
      if (sdu->has_value()) handleSpdu(**sdu, events, out);
      return;
    }
  }
}

void UpperLayers::handleSpdu(Bytes tsdu, std::vector<UpperLayersEvent>& events, std::vector<uint8_t>& out) {
  Result<session::Spdu> s = session::decode(tsdu);
  if (!s.isOk()) return fail(events, s.status(), ErrorResponse::kProviderAbort, presentation::kAbortUnrecognizedPpdu);
  const bool responder = config_.role == UpperLayersRole::kResponder;
  auto unexpected = [&] {
    fail(events, Status::error(ErrorCode::kSessionUnexpectedSpdu, 0,
                               std::string(session::spduName(s->type)) + " SPDU in state " + upperLayersStateName(state_)),
         ErrorResponse::kProviderAbort, presentation::kAbortUnexpectedPpdu);
  };
  switch (s->type) {
    case session::SpduType::kConnect:
      if (!responder || state_ != State::kTransportConnected) return unexpected();
      return onConnect(*s, events, out);
    case session::SpduType::kAccept:
      if (responder || state_ != State::kAwaitingAssociateConfirm) return unexpected();
      return onAccept(*s, events);
    case session::SpduType::kRefuse:
      if (responder || state_ != State::kAwaitingAssociateConfirm) return unexpected();
      return onRefuse(*s, events);
    case session::SpduType::kDataTransfer:
      if (state_ != State::kAssociated && state_ != State::kReleasing && state_ != State::kReleaseRequested) return unexpected();
      return onData(s->user_data, events);
    case session::SpduType::kFinish:
      if (state_ != State::kAssociated) return unexpected();
      return onRelease(*s, events);
    case session::SpduType::kDisconnect:
      if (state_ != State::kReleasing) return unexpected();
      return onRelease(*s, events);
    case session::SpduType::kAbort:
      return onAbort(*s, events);
    case session::SpduType::kAbortAccept:
      state_ = State::kClosed;
      return;
  }
}

void UpperLayers::onConnect(const session::Spdu& cn, std::vector<UpperLayersEvent>& events, std::vector<uint8_t>& out) {
  // Refuses at session level (RF), optionally carrying a CPR, and reports why.
  auto refuse = [&](uint8_t reason, const presentation::ConnectReject* cpr, Status why) {
    EncodeBuffer& buf = scratch();
    if (cpr) presentation::prependConnectReject(buf, *cpr, acseContextId());
    session::Refuse rf;
    rf.reason = reason;
    Status s = session::prependRefuse(buf, rf);
    if (s.isOk()) s = flush(buf, out);
    fail(events, std::move(why), ErrorResponse::kAlreadyRefused);
  };
  session::ConnectDecision sd = session::respondToConnect(cn.connect);
  if (!sd.accepted) return refuse(sd.refuse_reason, nullptr, sd.reason);
  session_accept_ = sd.accept;
  if (!config_.called_ssel.empty()) session_accept_.called_selector = config_.called_ssel;

  Result<presentation::ConnectRequest> cp = presentation::decodeConnectRequest(cn.user_data, config_.limits);
  if (!cp.isOk()) {
    presentation::ConnectReject cpr;
    cpr.provider_reason = presentation::kCprReasonNotSpecified;
    return refuse(session::kRefuseByUserWithData, &cpr, cp.status());
  }
  cp_ = std::move(*cp);
  presentation_decision_ = presentation::respondToConnect(cp_);
  if (!presentation_decision_.accepted)
    return refuse(session::kRefuseByUserWithData, &presentation_decision_.reject, presentation_decision_.reason);
  contexts_ = presentation_decision_.contexts;
  if (!config_.called_psel.empty()) presentation_decision_.accept.responding_selector = config_.called_psel;

  auto refuseAcse = [&](Status why) {
    presentation::ConnectReject cpr = presentation_decision_.reject;
    cpr.provider_reason = presentation::kCprReasonNotSpecified;
    refuse(session::kRefuseByUserWithData, &cpr, std::move(why));
  };
  Result<Bytes> aarq_bytes = apduOn(cp_.user_data, oids::kAcseAbstractSyntax);
  if (!aarq_bytes.isOk()) return refuseAcse(aarq_bytes.status());
  Result<AcseApdu> apdu = decodeAcseApdu(*aarq_bytes, config_.limits);
  if (!apdu.isOk()) return refuseAcse(apdu.status());
  if (!std::holds_alternative<Aarq>(*apdu))
    return refuseAcse(Status::error(ErrorCode::kAcseBadApdu, 0, std::string("CP carries an ") + acseApduName(*apdu) + ", not an AARQ"));

  ConnectIndication ind;
  ind.aarq = std::get<Aarq>(std::move(*apdu));
  ind.acse_refusal = checkAarq(ind.aarq);
  ind.calling_tsap = cr_.calling_tsap;
  ind.called_tsap = cr_.called_tsap;
  ind.calling_ssel = cn.connect.calling_selector;
  ind.called_ssel = cn.connect.called_selector;
  ind.calling_psel = cp_.calling_selector;
  ind.called_psel = cp_.called_selector;
  const External* ext = findCmipUserInfo(ind.aarq.userInformation, contexts_.idFor(oids::kCmipAbstractSyntax));
  if (!ext) {
    ind.bind_status = Status::error(ErrorCode::kBindBadAccessControl, 0, "AARQ user-information has no CMIPUserInfo");
  } else {
    Result<CmipUserInfo> info = decodeCmipUserInfo(ext->data, config_.limits);
    if (!info.isOk()) {
      ind.bind_status = info.status();
    } else {
      Result<LnpAccessControl> ac = accessControlFromUserInfo(*info, config_.limits);
      if (ac.isOk()) ind.access_control = std::move(*ac);
      else ind.bind_status = ac.status();
      ind.cmip_user_info = std::move(*info);
    }
  }
  state_ = State::kAwaitingAssociateResponse;
  events.emplace_back(std::move(ind));
}

void UpperLayers::onAccept(const session::Spdu& ac, std::vector<UpperLayersEvent>& events) {
  Result<presentation::ConnectAccept> cpa = presentation::decodeConnectAccept(ac.user_data, config_.limits);
  if (!cpa.isOk()) return fail(events, cpa.status(), ErrorResponse::kProviderAbort, presentation::kAbortUnrecognizedPpdu);
  Result<presentation::DefinedContexts> ctx = presentation::contextsFromAccept(cp_, *cpa);
  if (!ctx.isOk()) return fail(events, ctx.status(), ErrorResponse::kProviderAbort, presentation::kAbortInvalidParameterValue);
  contexts_ = std::move(*ctx);
  Result<Bytes> bytes = apduOn(cpa->user_data, oids::kAcseAbstractSyntax);
  if (!bytes.isOk()) return fail(events, bytes.status(), ErrorResponse::kProviderAbort, presentation::kAbortInvalidParameterValue);
  Result<AcseApdu> apdu = decodeAcseApdu(*bytes, config_.limits);
  if (!apdu.isOk() || !std::holds_alternative<Aare>(*apdu))
    return fail(events, apdu.isOk() ? Status::error(ErrorCode::kAcseBadApdu, 0, "AC carries no AARE") : apdu.status(), ErrorResponse::kProviderAbort);
  ConnectConfirm c;
  c.aare = std::get<Aare>(std::move(*apdu));
  c.accepted = c.aare.result == AssociateResult::kAccepted;
  state_ = c.accepted ? State::kAssociated : State::kClosed;
  events.emplace_back(std::move(c));
}

void UpperLayers::onRefuse(const session::Spdu& rf, std::vector<UpperLayersEvent>& events) {
  state_ = State::kClosed;
  Status detail = Status::error(ErrorCode::kUpperLayersUnexpectedPdu, 0, "session RF, reason " + std::to_string(rf.refuse.reason));
  if (!rf.user_data.empty()) {
    Result<presentation::ConnectReject> cpr = presentation::decodeConnectReject(rf.user_data, config_.limits);
    if (cpr.isOk() && cpr->user_data.size() == 1) {
      Result<AcseApdu> apdu = decodeAcseApdu(cpr->user_data[0].value, config_.limits);
      if (apdu.isOk() && std::holds_alternative<Aare>(*apdu)) {
        events.emplace_back(ConnectConfirm{std::get<Aare>(std::move(*apdu)), false});
        return;
      }
    }
    if (cpr.isOk() && cpr->provider_reason)
      detail = Status::error(ErrorCode::kUpperLayersUnexpectedPdu, 0, "presentation CPR, provider reason " + std::to_string(*cpr->provider_reason));
  }
  AbortIndication a;
  a.detail = std::move(detail);
  events.emplace_back(std::move(a));
}

void UpperLayers::onData(Bytes user_data, std::vector<UpperLayersEvent>& events) {
  Result<presentation::UserData> ud = presentation::decodeUserData(user_data, config_.limits);
  if (!ud.isOk()) return fail(events, ud.status(), ErrorResponse::kProviderAbort, presentation::kAbortUnrecognizedPpdu);
  if (Status s = contexts_.check(*ud); !s.isOk())
    return fail(events, s, ErrorResponse::kProviderAbort, presentation::kAbortInvalidParameterValue);
  for (const presentation::Pdv& pdv : *ud) {
    if (!(*contexts_.abstractSyntaxOf(pdv.context_id) == oids::kCmipAbstractSyntax))
      return fail(events, Status::error(ErrorCode::kUpperLayersUnexpectedPdu, 0, "P-DATA on the ACSE context"),
                  ErrorResponse::kProviderAbort, presentation::kAbortUnexpectedPpdu);
    Result<RoseApdu> rose = decodeRoseApdu(pdv.value, config_.limits);
    if (!rose.isOk()) return fail(events, rose.status(), ErrorResponse::kRoseReject);
    events.emplace_back(DataIndication{std::move(*rose)});
  }
}

void UpperLayers::onRelease(const session::Spdu& s, std::vector<UpperLayersEvent>& events) {
  const bool request = s.type == session::SpduType::kFinish;
  Result<presentation::UserData> ud = presentation::decodeUserData(s.user_data, config_.limits);
  if (!ud.isOk()) return fail(events, ud.status(), ErrorResponse::kProviderAbort, presentation::kAbortUnrecognizedPpdu);
  Result<Bytes> bytes = apduOn(*ud, oids::kAcseAbstractSyntax);
  if (!bytes.isOk()) return fail(events, bytes.status(), ErrorResponse::kProviderAbort, presentation::kAbortInvalidParameterValue);
  Result<AcseApdu> apdu = decodeAcseApdu(*bytes, config_.limits);
  if (!apdu.isOk()) return fail(events, apdu.status(), ErrorResponse::kProviderAbort, presentation::kAbortInvalidParameterValue);
  if (request && std::holds_alternative<Rlrq>(*apdu)) {
    state_ = State::kReleaseRequested;
    events.emplace_back(ReleaseIndication{std::get<Rlrq>(std::move(*apdu))});
  } else if (!request && std::holds_alternative<Rlre>(*apdu)) {
    state_ = State::kClosed;
    events.emplace_back(ReleaseConfirm{std::get<Rlre>(std::move(*apdu))});
  } else {
    fail(events, Status::error(ErrorCode::kUpperLayersUnexpectedPdu, 0, std::string(acseApduName(*apdu)) + " in a session " + session::spduName(s.type)),
         ErrorResponse::kProviderAbort, presentation::kAbortUnexpectedPpdu);
  }
}

void UpperLayers::onAbort(const session::Spdu& ab, std::vector<UpperLayersEvent>& events) {
  state_ = State::kClosed;
  AbortIndication a;
  a.detail = Status::error(ErrorCode::kUpperLayersUnexpectedPdu, 0, "session AB without user data");
  if (!ab.user_data.empty()) {
    Result<presentation::Abort> p = presentation::decodeAbort(ab.user_data, config_.limits);
    if (!p.isOk()) {
      a.detail = p.status();
    } else if (!p->user_abort) {
      a.presentation_reason = p->provider_reason;
      a.detail = Status::error(ErrorCode::kUpperLayersUnexpectedPdu, 0, "presentation ARP, reason " + std::to_string(p->provider_reason.value_or(0)));
    } else {
      Result<Bytes> bytes = apduOn(p->user_data, oids::kAcseAbstractSyntax);
      Result<AcseApdu> apdu = bytes.isOk() ? decodeAcseApdu(*bytes, config_.limits) : Result<AcseApdu>(bytes.status());
      if (apdu.isOk() && std::holds_alternative<Abrt>(*apdu)) {
        const Abrt& abrt = std::get<Abrt>(*apdu);
        a.source = abrt.source;
        a.diagnostic = abrt.diagnostic;
        a.detail = Status::ok();
      } else {
        a.detail = apdu.isOk() ? Status::error(ErrorCode::kAcseBadApdu, 0, "ARU without an ABRT") : apdu.status();
      }
    }
  }
  events.emplace_back(std::move(a));
}

// ---- events in ------------------------------------------------------------------

Status UpperLayers::connect(const Aarq& aarq, std::vector<uint8_t>& out) {
  if (config_.role != UpperLayersRole::kInitiator || state_ != State::kIdle) return wrongState("connect", state_);
  pending_aarq_ = encodeAcseApdu(AcseApdu{aarq});
  cr_ = cotp::Connect{};
  cr_.src_ref = config_.local_reference;
  cr_.calling_tsap = config_.calling_tsap;
  cr_.called_tsap = config_.called_tsap;
  uint8_t code = cotp::kMinTpduSizeCode;
  while (code < cotp::kMaxTpduSizeCodeClass0 && cotp::tpduSizeFromCode(code + 1) <= config_.max_tpdu_size) ++code;
  cr_.tpdu_size_code = code;
  EncodeBuffer& buf = scratch();
  cotp::encodeConnect(cotp::TpduCode::kConnectionRequest, cr_, buf);
  NPAC_RETURN_IF_ERROR(tpkt::prependHeader(buf));
  appendTo(out, buf.view());
  state_ = State::kAwaitingCc;
  return Status::ok();
}

Status UpperLayers::acceptAssociation(const Aare& aare, std::vector<uint8_t>& out) {
  if (state_ != State::kAwaitingAssociateResponse) return wrongState("acceptAssociation", state_);
  EncodeBuffer& buf = scratch();
  BerWriter w(buf);
  encodeAcseApdu(AcseApdu{aare}, w);
  presentation::prependConnectAccept(buf, presentation_decision_.accept, acseContextId());
  NPAC_RETURN_IF_ERROR(session::prependAccept(buf, session_accept_));
  NPAC_RETURN_IF_ERROR(flush(buf, out));
  state_ = State::kAssociated;
  return Status::ok();
}

Status UpperLayers::rejectAssociation(const Aare& aare, std::vector<uint8_t>& out) {
  if (state_ != State::kAwaitingAssociateResponse) return wrongState("rejectAssociation", state_);
  EncodeBuffer& buf = scratch();
  BerWriter w(buf);
  encodeAcseApdu(AcseApdu{aare}, w);
  presentation::ConnectReject cpr;  // user rejection: the result list, no provider reason
  cpr.results = presentation_decision_.accept.results;
  cpr.responding_selector = presentation_decision_.accept.responding_selector;
  presentation::prependConnectReject(buf, cpr, acseContextId());
  NPAC_RETURN_IF_ERROR(session::prependRefuse(buf, session::Refuse{}));
  NPAC_RETURN_IF_ERROR(flush(buf, out));
  state_ = State::kClosed;
  return Status::ok();
}

Status UpperLayers::sendRoseEncoded(Bytes rose, std::vector<uint8_t>& out) {
  if (state_ != State::kAssociated && state_ != State::kReleaseRequested) return wrongState("sendRose", state_);
  EncodeBuffer& buf = scratch();
  buf.append(rose);
  presentation::prependUserData(buf, cmipContextId().value_or(kInitiatorCmipContext));
  session::prependData(buf);
  return flush(buf, out);
}

Status UpperLayers::sendRose(const RoseApdu& apdu, std::vector<uint8_t>& out) {
  if (state_ != State::kAssociated && state_ != State::kReleaseRequested) return wrongState("sendRose", state_);
  EncodeBuffer& buf = scratch();
  BerWriter w(buf);
  encodeRoseApdu(apdu, w);
  presentation::prependUserData(buf, cmipContextId().value_or(kInitiatorCmipContext));
  session::prependData(buf);
  return flush(buf, out);
}

Status UpperLayers::requestRelease(const Rlrq& rlrq, std::vector<uint8_t>& out) {
  if (state_ != State::kAssociated) return wrongState("requestRelease", state_);
  EncodeBuffer& buf = scratch();
  BerWriter w(buf);
  encodeAcseApdu(AcseApdu{rlrq}, w);
  presentation::prependUserData(buf, acseContextId());
  session::prependFinish(buf);
  NPAC_RETURN_IF_ERROR(flush(buf, out));
  state_ = State::kReleasing;
  return Status::ok();
}

Status UpperLayers::respondRelease(const Rlre& rlre, std::vector<uint8_t>& out) {
  if (state_ != State::kReleaseRequested) return wrongState("respondRelease", state_);
  EncodeBuffer& buf = scratch();
  BerWriter w(buf);
  encodeAcseApdu(AcseApdu{rlre}, w);
  presentation::prependUserData(buf, acseContextId());
  session::prependDisconnect(buf);
  NPAC_RETURN_IF_ERROR(flush(buf, out));
  state_ = State::kClosed;
  return Status::ok();
}

Status UpperLayers::abort(const Abrt& abrt, std::vector<uint8_t>& out) {
  if (state_ == State::kIdle || state_ == State::kAwaitingCc || state_ == State::kClosed) return wrongState("abort", state_);
  EncodeBuffer& buf = scratch();
  if (contexts_.size() > 0) {
    BerWriter w(buf);
    encodeAcseApdu(AcseApdu{abrt}, w);
    presentation::prependUserAbort(buf, acseContextId());
  }
  session::prependAbort(buf);
  state_ = State::kClosed;
  return flush(buf, out);
}

Status UpperLayers::respondToError(const ProtocolError& e, std::vector<uint8_t>& out) {
  const bool transport_up = state_ != State::kIdle && state_ != State::kAwaitingCc && state_ != State::kClosed;
  switch (e.response) {
    case ErrorResponse::kCloseTransport:
    case ErrorResponse::kAlreadyRefused:
      state_ = State::kClosed;
      return Status::ok();
    case ErrorResponse::kRoseReject:
      return sendRose(RoseReject{InvokeId{}, RejectProblemKind::kGeneral, e.rose_problem}, out);
    case ErrorResponse::kProviderAbort:
      if (transport_up) {
        EncodeBuffer& buf = scratch();
        presentation::encodeProviderAbort(buf, e.presentation_reason);
        session::prependAbort(buf, session::kReleaseTransport | session::kProtocolError);
        state_ = State::kClosed;
        return flush(buf, out);
      }
      [[fallthrough]];
    case ErrorResponse::kTransportError: {
      EncodeBuffer& buf = scratch();
      cotp::Error er;
      er.dst_ref = cr_.src_ref;
      er.cause = e.status.code() == ErrorCode::kCotpUnknownTpdu ? cotp::kCauseInvalidTpduType : cotp::kCauseNotSpecified;
      cotp::encodeError(er, buf);
      state_ = State::kClosed;
      NPAC_RETURN_IF_ERROR(tpkt::prependHeader(buf));
      appendTo(out, buf.view());
      return Status::ok();
    }
  }
  return Status::ok();
}

}  // namespace npac::cmip
