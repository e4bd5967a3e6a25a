#include "npac/npac-soa-sim/bind_request.h"

#include <fstream>
#include <sstream>
#include <string_view>

#include "associations/cmip_bind.h"
#include "cmip/cmip.h"
#include "cmip/oids.h"

namespace npac::soasim {

namespace {

// The three refusals of this file (common/status.h, the association group); the message
// is what the simulator prints.
Status unusableKeyFile(std::string why) { return Status::error(StatusCode::kUnusableKeyFile, std::move(why)); }
Status unsignedBind(std::string why) { return Status::error(StatusCode::kUnsignedBind, std::move(why)); }
Status unverifiedBind(std::string why) { return Status::error(StatusCode::kUnverifiedBind, std::move(why)); }

}  // namespace

Result<ProviderKey> loadProviderKey(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return unusableKeyFile("cannot read key file '" + path + "'");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return unusableKeyFile("cannot read key file '" + path + "'");
  const std::string pem = text.str();

  std::string why;
  for (auto algorithm : {associations::SignatureAlgorithm::kEd25519, associations::SignatureAlgorithm::kRsaSha256}) {
    auto signer = associations::SignatureSigner::fromPem(algorithm, pem);
    if (signer.isOk()) return ProviderKey{signer.value(), algorithm};
    // kWrongAlgorithm: try the other one; anything else is this key's real problem.
    if (signer.status().code() != StatusCode::kWrongAlgorithm) {
      why = signer.status().message();
      break;
    }
    why = signer.status().message();
  }
  return unusableKeyFile("key file '" + path +
                         "' is not a usable private key (PKCS#8 PEM, Ed25519 or RSA >= 2048 bits): " + why);
}

uint64_t timeBasedSequence(int64_t now_millis) {
  int64_t ticks = (now_millis - kSequenceEpochUnix * 1000) * kSequenceTicksPerSecond / 1000;
  return ticks < 0 ? 0 : static_cast<uint64_t>(ticks);
}

int64_t millisWhenSequencePassed(uint64_t last_used) {
  return kSequenceEpochUnix * 1000 + static_cast<int64_t>(last_used + 1) * 1000 / kSequenceTicksPerSecond;
}

Result<cmip::LnpAccessControl> signedAccessControl(const BindParameters& p, const ProviderKey& key) {
  if (p.sequence_number > kMaxSequenceNumber) {
    return unsignedBind("sequence number " + std::to_string(p.sequence_number) + " is above 4294967295");
  }
  cmip::LnpAccessControl ac;
  ac.systemId = p.spid;
  ac.systemType = p.system_type;
  ac.userId = p.user_id;
  ac.listId = p.key_list;
  ac.keyId = p.key_id;
  ac.departureTime = p.departure_time;
  ac.sequenceNumber = static_cast<int64_t>(p.sequence_number);
  ac.functions = p.functions;
  ac.recoveryMode = p.recovery_mode;
  ac.signature.assign(1, 0);  // placeholder so validation sees a complete value
  cmip::Status valid = cmip::validateAccessControl(ac);
  if (!valid.isOk()) return unsignedBind(valid.message());
  std::vector<uint8_t> content = cmip::signedContent(ac);
  auto signature = key.signer.sign(content);
  if (!signature.isOk()) return unsignedBind("signing the bind failed: " + signature.status().message());
  ac.signature = signature.value();
  return ac;
}

cmip::Aarq makeAarq(const cmip::LnpAccessControl& ac) {
  cmip::CmipUserInfo info;
  info.protocolVersion = cmip::BitString::withBits(2);
  info.protocolVersion->setBit(cmip::kCmipVersion2Bit);
  info.accessControl = cmip::toExternal(ac);
  cmip::External ext;
  ext.indirect_reference = kCmipPresentationContext;
  ext.data = cmip::encodeCmipUserInfo(info);
  cmip::Aarq aarq;
  aarq.protocolVersion = cmip::BitString::withBits(1);
  aarq.protocolVersion->setBit(0);
  aarq.applicationContext = cmip::oids::kSystemsManagementContext;
  aarq.userInformation.push_back(std::move(ext));
  return aarq;
}

namespace {

constexpr std::string_view kPemBegin = "-----BEGIN PUBLIC KEY-----";
constexpr std::string_view kPemEnd = "-----END PUBLIC KEY-----";

Result<associations::SignatureVerifier> parsePublicKey(const std::string& pem) {
  std::string why;
  for (auto algorithm : {associations::SignatureAlgorithm::kEd25519, associations::SignatureAlgorithm::kRsaSha256}) {
    auto verifier = associations::SignatureVerifier::fromPem(algorithm, pem);
    if (verifier.isOk() || verifier.status().code() != StatusCode::kWrongAlgorithm) return verifier;
    why = verifier.status().message();
  }
  return Status::error(StatusCode::kWrongAlgorithm, why);
}

}  // namespace

Result<NpacKeyRing> loadNpacKeys(const std::vector<std::string>& paths) {
  NpacKeyRing ring;
  for (const std::string& path : paths) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return unusableKeyFile("cannot read NPAC key file '" + path + "'");
    std::ostringstream text;
    text << in.rdbuf();
    const std::string all = text.str();
    size_t found = 0;
    for (size_t at = all.find(kPemBegin); at != std::string::npos; at = all.find(kPemBegin, at + 1)) {
      size_t end = all.find(kPemEnd, at);
      if (end == std::string::npos) return unusableKeyFile("NPAC key file '" + path + "': a PEM block has no END line");
      const std::string block = all.substr(at, end + kPemEnd.size() - at) + "\n";
      auto verifier = parsePublicKey(block);
      if (!verifier.isOk()) {
        return unusableKeyFile("NPAC key file '" + path + "', key " + std::to_string(found + 1) +
                   " is not a usable public key (Ed25519 or RSA >= 2048 bits): " + verifier.status().message());
      }
      auto fingerprint = associations::publicKeyFingerprint(block);
      ring.push_back(NpacPublicKey{verifier.value(), path, fingerprint.isOk() ? fingerprint.value() : ""});
      ++found;
    }
    if (found == 0) {
      return unusableKeyFile("NPAC key file '" + path + "' holds no PEM public key (-----BEGIN PUBLIC KEY-----)");
    }
  }
  return ring;
}

Result<cmip::LnpAccessControl> verifyNpacAnswer(const cmip::Aare& aare, const NpacKeyRing& keys) {
  auto found = cmip::npacAccessControlFrom(aare);
  if (!found.isOk()) {
    return unverifiedBind("the NPAC's access control does not decode: " + found.status().toString());
  }
  if (!found->has_value()) return unverifiedBind(std::string("the AARE carries no NPAC access control"));
  const cmip::LnpAccessControl& npac = **found;
  if (npac.systemType != cmip::SystemType::kNpac) {
    return unverifiedBind(std::string("the AARE's access control has systemType ") +
                          common::toString(npac.systemType) + ", not npac");
  }
  std::string why = "no NPAC key installed";
  for (const NpacPublicKey& key : keys) {
    Status status = associations::verifyNpacAccessControl(npac, key.verifier);
    if (status.isOk()) return npac;
    why = status.message();
  }
  return unverifiedBind("the NPAC's signature (key list " + std::to_string(npac.listId) + " key " +
                        std::to_string(npac.keyId) + ", system " + npac.systemId + ") verifies with none of the " +
                        std::to_string(keys.size()) + " installed NPAC keys: " + why);
}

}  // namespace npac::soasim
