// SessionLink: a Session (session.h) as the AssociationLink of a ProviderCore.
//
// Threading: the core thread.
#pragma once

#include <memory>

#include "associations/bind_facts.h"
#include "npac/npacd/core/association_link.h"
#include "npac/npacd/core/session.h"

namespace npac::npacd {

class SessionLink final : public AssociationLink {
 public:
  explicit SessionLink(std::shared_ptr<Session> session) : session_(std::move(session)) {}
  bool send(const std::vector<std::uint8_t>& apdu, std::int64_t tag) override {
    return session_->sendRoseEncoded(apdu, tag);
  }
  void abort(const std::string& reason) override { session_->abort(reason); }
  void setReleaseReason(const std::string& reason) override { session_->setReleaseReason(reason); }
  void requestRelease() override { session_->requestRelease(); }
  void countRetransmission() override { ++session_->traffic().retransmissions; }
  bool releasing() const override { return session_->releasing(); }
  AssociationInfo describe() const override {
    AssociationInfo info;
    info.id = session_->associationId();
    info.spid = session_->spid;
    info.nsap_hex = session_->nsap().toHex();
    info.peer_address = session_->peer();
    info.function_mask = session_->function_mask;
    info.functions =
        associations::FunctionMask(static_cast<std::uint8_t>(session_->function_mask)).toString();
    info.recovery_mode = session_->recovery_mode;
    info.bound_at = session_->bound_at_ms;
    const SessionTraffic& traffic = session_->traffic();
    info.sent = traffic.sent;
    info.received = traffic.received;
    info.retransmissions = traffic.retransmissions;
    return info;
  }
  const std::shared_ptr<Session>& session() const { return session_; }

 private:
  std::shared_ptr<Session> session_;
};

}  // namespace npac::npacd
