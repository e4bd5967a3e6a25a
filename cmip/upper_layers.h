// UpperLayers: the OSI upper-layer stack of one TCP connection, as one object.
//
// The association code talks ACSE and ROSE to this façade and never sees a layer below:
// bytes received from TCP go in through receive(), which yields events; the send*/accept/
// reject/release/abort calls turn association decisions into the bytes to write. Both
// roles are supported: the NPAC is the responder (server); the SOA/LSMS simulator uses
// the initiator half (connect() → CR, then CN+CP+AARQ once the CC arrives).
//
// Per layer (docs/PROTOCOL.md): TPKT deframing (RFC 1006), class 0 COTP with TPDU-size
// negotiation, DT segmentation/reassembly (X.224), session kernel+duplex v2 with GT+DT
// (X.225), presentation normal mode with ACSE 2.2.1.0.1 and CMIP 2.9.1.1.4 over BER 2.1.1
// (X.226), then ACSE (X.227) and ROSE (X.711 / X.880) decoded by cmip/acse.h and
// cmip/rose.h. Transport connection set-up (CR → CC) and refusals that belong to a lower
// layer (class other than 0, no session version 2, no acceptable ACSE context) are
// handled here; the caller sees them as ProtocolError events with the bytes already sent.
//
// Events out of receive():
//   ConnectIndication  responder: the AARQ with the decoded CMIPUserInfo and NPAC bind
//   ConnectConfirm     initiator: the AARE (accepted or rejected)
//   DataIndication     a ROSE APDU on the CMIP presentation context
//   ReleaseIndication  peer's RLRQ (answer with respondRelease)
//   ReleaseConfirm     peer's RLRE (close the transport)
//   AbortIndication    ABRT / presentation or session abort / transport disconnect
//   ProtocolError      a decode or sequence error and the abort it calls for; pass it to
//                      respondToError() to get the right abort on the wire
//
// Threading: one instance per connection, used by one thread (the connection's strand).
// Not copyable.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <variant>
#include <vector>

#include "cmip/acse.h"
#include "cmip/ber.h"
#include "cmip/cmip.h"
#include "cmip/cotp.h"
#include "cmip/npac_bind.h"
#include "cmip/oids.h"
#include "cmip/presentation.h"
#include "cmip/result.h"
#include "cmip/rose.h"
#include "cmip/session.h"
#include "cmip/tpkt.h"

namespace npac::cmip {

enum class UpperLayersRole { kResponder, kInitiator };

struct UpperLayersConfig {
  UpperLayersRole role = UpperLayersRole::kResponder;
  size_t max_tpdu_size = cotp::kMaxTpduSizeClass0;  // responder: our maximum; initiator: proposal
  size_t max_sdu_size = 64 * 1024;                  // reassembled transport SDU cap
  DecodeLimits limits;
  uint16_t local_reference = 1;  // COTP source reference
  // Addresses. Initiator: sent in CR/CN/CP. Responder: echoed as responding selectors.
  std::vector<uint8_t> calling_tsap, called_tsap;
  std::vector<uint8_t> calling_ssel, called_ssel;
  std::vector<uint8_t> calling_psel, called_psel;
};

struct ConnectIndication {
  Aarq aarq;
  std::optional<SourceDiagnostic> acse_refusal;  // checkAarq(): why ACSE cannot accept
  std::optional<CmipUserInfo> cmip_user_info;
  std::optional<LnpAccessControl> access_control;  // the NPAC bind, when it decoded
  Status bind_status;  // why access_control is absent (kBindBadAccessControl, ...)
  std::vector<uint8_t> calling_tsap, called_tsap, calling_ssel, called_ssel, calling_psel, called_psel;
};
struct ConnectConfirm {
  Aare aare;
  bool accepted = false;
};
struct DataIndication {
  RoseApdu apdu;
};
struct ReleaseIndication {
  Rlrq rlrq;
};
struct ReleaseConfirm {
  Rlre rlre;
};
struct AbortIndication {
  // ABRT from the peer's ACSE (source, diagnostic), or a provider abort below ACSE
  // (presentation ARP reason, session AB without user data, COTP DR / ER).
  AbortSource source = AbortSource::kServiceProvider;
  std::optional<AbortDiagnostic> diagnostic;
  std::optional<int64_t> presentation_reason;  // ARP Abort-reason
  Status detail;                               // the layer and reason, for the log
};

// What a ProtocolError calls for (respondToError emits it).
enum class ErrorResponse {
  kCloseTransport,      // RFC 1006 framing broken: nothing more can be said; close TCP
  kTransportError,      // COTP ER, then close
  kProviderAbort,       // session AB + presentation ARP (+ close)
  kAlreadyRefused,      // the refusal (DR / RF) is already in the output; close after it
  kRoseReject,          // ROSE Reject (general problem) — association continues
};
struct ProtocolError {
  Status status;
  ErrorResponse response = ErrorResponse::kProviderAbort;
  int64_t presentation_reason = presentation::kAbortReasonNotSpecified;
  int32_t rose_problem = kUnrecognizedPdu;
};

using UpperLayersEvent = std::variant<ConnectIndication, ConnectConfirm, DataIndication, ReleaseIndication,
                                      ReleaseConfirm, AbortIndication, ProtocolError>;

class UpperLayers {
 public:
  enum class State {
    kIdle,                    // responder: waiting for CR; initiator: before connect()
    kAwaitingCc,              // initiator: CR sent
    kTransportConnected,      // responder: CC sent, waiting for CN
    kAwaitingAssociateResponse,  // responder: ConnectIndication delivered
    kAwaitingAssociateConfirm,   // initiator: CN+CP+AARQ sent
    kAssociated,
    kReleaseRequested,        // peer's RLRQ delivered, respondRelease() pending
    kReleasing,               // our RLRQ sent, waiting for RLRE
    kClosed,                  // released, refused or aborted: close the transport
  };

  explicit UpperLayers(UpperLayersConfig config);
  UpperLayers(const UpperLayers&) = delete;
  UpperLayers& operator=(const UpperLayers&) = delete;

  // Bytes in → events out. Bytes the stack answers on its own (CC, refusals) are
  // appended to `out`. After a kCloseTransport/kAlreadyRefused error or any event that
  // leaves state() == kClosed, further input is ignored.
  void receive(Bytes chunk, std::vector<UpperLayersEvent>& events, std::vector<uint8_t>& out);

  // Events in → bytes out (appended to `out`). kUpperLayersWrongState if the call does
  // not fit the current state.
  Status connect(const Aarq& aarq, std::vector<uint8_t>& out);                 // initiator
  Status acceptAssociation(const Aare& aare, std::vector<uint8_t>& out);       // responder
  Status rejectAssociation(const Aare& aare, std::vector<uint8_t>& out);       // responder
  Status sendRose(const RoseApdu& apdu, std::vector<uint8_t>& out);
  Status sendRoseEncoded(Bytes rose_apdu_tlv, std::vector<uint8_t>& out);      // pre-encoded
  Status requestRelease(const Rlrq& rlrq, std::vector<uint8_t>& out);
  Status respondRelease(const Rlre& rlre, std::vector<uint8_t>& out);
  Status abort(const Abrt& abrt, std::vector<uint8_t>& out);
  Status respondToError(const ProtocolError& error, std::vector<uint8_t>& out);

  State state() const { return state_; }
  UpperLayersRole role() const { return config_.role; }
  size_t tpduSize() const { return tpdu_size_; }
  std::optional<int64_t> cmipContextId() const { return contexts_.idFor(oids::kCmipAbstractSyntax); }

 private:
  void handleTpdu(Bytes tpdu, std::vector<UpperLayersEvent>& events, std::vector<uint8_t>& out);
  void handleSpdu(Bytes tsdu, std::vector<UpperLayersEvent>& events, std::vector<uint8_t>& out);
  void onConnect(const session::Spdu& cn, std::vector<UpperLayersEvent>& events, std::vector<uint8_t>& out);
  void onAccept(const session::Spdu& ac, std::vector<UpperLayersEvent>& events);
  void onRefuse(const session::Spdu& rf, std::vector<UpperLayersEvent>& events);
  void onData(Bytes user_data, std::vector<UpperLayersEvent>& events);
  void onRelease(const session::Spdu& s, std::vector<UpperLayersEvent>& events);
  void onAbort(const session::Spdu& ab, std::vector<UpperLayersEvent>& events);
  void fail(std::vector<UpperLayersEvent>& events, Status status, ErrorResponse response,
            int64_t presentation_reason = presentation::kAbortReasonNotSpecified);
  // Single-PDV user data on a given abstract syntax → the APDU bytes.
  Result<Bytes> apduOn(const presentation::UserData& ud, const Oid& abstract_syntax) const;
  EncodeBuffer& scratch();  // reused per send; holds headroom for every header
  Status flush(EncodeBuffer& spdu, std::vector<uint8_t>& out);  // COTP DT + TPKT → out
  int64_t acseContextId() const;

  UpperLayersConfig config_;
  State state_ = State::kIdle;
  bool halted_ = false;  // a ProtocolError stopped input processing
  tpkt::Deframer deframer_;
  cotp::DtReassembler reassembler_;
  size_t tpdu_size_ = cotp::kDefaultTpduSize;
  cotp::Connect cr_;                   // initiator: what we proposed
  session::Connect session_accept_;    // responder: AC to send
  presentation::ConnectRequest cp_;    // initiator: what we proposed; responder: received
  presentation::ConnectDecision presentation_decision_;
  presentation::DefinedContexts contexts_;
  std::vector<uint8_t> pending_aarq_;  // initiator: sent once the CC arrives
  EncodeBuffer scratch_;
};

const char* upperLayersStateName(UpperLayers::State s);

}  // namespace npac::cmip
