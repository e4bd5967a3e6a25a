#include "associations/provisioning.h"

#include "db/key_store.h"
#include "db/nsap_store.h"
#include "db/provider_store.h"

namespace npac::associations {
namespace {

SystemType fromDb(db::SystemType type) {
  switch (type) {
    case db::SystemType::kSoa: return SystemType::kSoa;
    case db::SystemType::kLsms: return SystemType::kLsms;
    case db::SystemType::kSoaAndLsms: return SystemType::kSoaAndLsms;
    case db::SystemType::kNpac: return SystemType::kNpac;
  }
  return SystemType::kNpac;
}

KeyState fromDb(db::KeyState state) {
  switch (state) {
    case db::KeyState::kActive: return KeyState::kActive;
    case db::KeyState::kExpired: return KeyState::kExpired;
    case db::KeyState::kRevoked: return KeyState::kRevoked;
  }
  return KeyState::kRevoked;
}

WallTime fromMs(db::TimeMs ms) { return WallTime(std::chrono::milliseconds(ms)); }

}  // namespace

db::Result<BindFacts> loadBindFacts(db::Database& database, const BindRequest& request) {
  BindFacts facts;
  db::ProviderStore providers(database);
  auto provider = providers.get(request.spid);
  if (!provider.isOk()) {
    if (provider.status().isNotFound()) return facts;
    return provider.status();
  }
  ProviderRecord record;
  record.spid = provider->spid;
  record.system_type = fromDb(provider->system_type);
  record.enabled = provider->enabled;

  db::NsapStore nsaps(database);
  auto provisioned = nsaps.listForProvider(request.spid);
  if (!provisioned.isOk()) return provisioned.status();
  for (const db::ProvisionedNsap& entry : provisioned.value()) {
    if (entry.nsap.size() != kNsapOctets) {
      ++facts.unusable_nsaps;
      continue;
    }
    Nsap::Octets octets{};
    std::copy(entry.nsap.begin(), entry.nsap.end(), octets.begin());
    auto nsap = Nsap::fromOctets(octets);
    if (!nsap.isOk()) {
      ++facts.unusable_nsaps;
      continue;
    }
    record.provisioned_nsaps.push_back(nsap.value());
    facts.traffic.push_back(NsapTraffic{nsap.value(), entry.weight.value_or(1),
                                        entry.relative_cost.value_or(0)});
  }
  // A provider whose provisioned NSAPs are all unusable keeps a non-empty list, so no
  // peer matches: refusing is safer than admitting every address.
  if (record.provisioned_nsaps.empty() && facts.unusable_nsaps > 0) {
    record.provisioned_nsaps.push_back(Nsap::fromIpv4({0, 0, 0, 0}));
  }
  facts.provider = record;

  db::KeyStore keys(database);
  auto key = keys.get(request.spid, request.key_list_id, request.key_id);
  if (!key.isOk()) {
    if (key.status().isNotFound()) return facts;
    return key.status();
  }
  KeyRecord key_record;
  key_record.key_list_id = static_cast<std::uint32_t>(key->list_id);
  key_record.key_id = static_cast<std::uint32_t>(key->key_id);
  key_record.algorithm = key->algorithm == db::KeyAlgorithm::kEd25519
                             ? SignatureAlgorithm::kEd25519
                             : SignatureAlgorithm::kRsaSha256;
  key_record.public_pem = key->public_key_pem;
  key_record.not_before = fromMs(key->not_before_at);
  key_record.not_after = fromMs(key->not_after_at);
  key_record.state = fromDb(key->state);
  if (key->last_sequence) {
    key_record.last_sequence_number = static_cast<std::uint64_t>(*key->last_sequence);
  }
  facts.key = key_record;
  return facts;
}

NsapTraffic trafficFor(const BindFacts& facts, const Nsap& peer) {
  for (const NsapTraffic& traffic : facts.traffic) {
    if (traffic.nsap == peer) return traffic;
  }
  return NsapTraffic{peer, 1, 0};
}

db::Status recordSequence(db::Database& database, const BindRequest& request,
                          std::uint64_t sequence) {
  db::KeyStore keys(database);
  return keys.acceptSequence(request.spid, request.key_list_id, request.key_id,
                             static_cast<std::int64_t>(sequence));
}

}  // namespace npac::associations
