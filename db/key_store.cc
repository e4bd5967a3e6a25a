#include "db/key_store.h"

#include "db/database.h"

namespace npac::db {
namespace {

constexpr const char* kSelectKeys =
    "SELECT spid, list_id, key_id, algorithm, public_key_pem, not_before_at, not_after_at, "
    "state, last_sequence FROM provider_keys ";
constexpr std::string_view kKeyPemPrefix = "-----BEGIN ";

std::string keyName(std::string_view spid, std::int64_t list_id, std::int64_t key_id) {
  return "key " + std::string(spid) + "/" + std::to_string(list_id) + "/" + std::to_string(key_id);
}

ProviderKey readKey(const Statement& row) {
  ProviderKey key;
  key.spid = row.columnText(0);
  key.list_id = row.columnInt64(1);
  key.key_id = row.columnInt64(2);
  key.algorithm = parseKeyAlgorithm(row.columnText(3)).value_or(KeyAlgorithm::kRsaSha256);
  key.public_key_pem = row.columnText(4);
  key.not_before_at = row.columnInt64(5);
  key.not_after_at = row.columnInt64(6);
  key.state = parseKeyState(row.columnText(7)).value_or(KeyState::kRevoked);
  key.last_sequence = row.columnOptionalInt64(8);
  return key;
}

}  // namespace

const char* toString(KeyAlgorithm algorithm) {
  return algorithm == KeyAlgorithm::kRsaSha256 ? "rsa-sha256" : "ed25519";
}

std::optional<KeyAlgorithm> parseKeyAlgorithm(std::string_view text) {
  if (text == "rsa-sha256") return KeyAlgorithm::kRsaSha256;
  if (text == "ed25519") return KeyAlgorithm::kEd25519;
  return std::nullopt;
}

Status KeyStore::add(const ProviderKey& key) {
  if (key.not_after_at <= key.not_before_at) {
    return Status::invalidArgument(keyName(key.spid, key.list_id, key.key_id) +
                                   ": not-after must be later than not-before");
  }
  if (key.public_key_pem.compare(0, kKeyPemPrefix.size(), kKeyPemPrefix) != 0) {
    return Status::invalidArgument(keyName(key.spid, key.list_id, key.key_id) +
                                   ": public key must be PEM (-----BEGIN PUBLIC KEY-----)");
  }
  Result<Statement> insert = db_.prepare(
      "INSERT INTO provider_keys(spid, list_id, key_id, algorithm, public_key_pem, "
      "not_before_at, not_after_at, state, last_sequence) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?)");
  if (!insert) return insert.status();
  insert->bindText(0, key.spid)
      .bindInt64(1, key.list_id)
      .bindInt64(2, key.key_id)
      .bindText(3, toString(key.algorithm))
      .bindText(4, key.public_key_pem)
      .bindInt64(5, key.not_before_at)
      .bindInt64(6, key.not_after_at)
      .bindText(7, toString(key.state))
      .bindOptionalInt64(8, key.last_sequence);
  return insert->run();
}

Result<ProviderKey> KeyStore::get(std::string_view spid, std::int64_t list_id,
                                  std::int64_t key_id) {
  Result<Statement> query =
      db_.prepare(std::string(kSelectKeys) + "WHERE spid = ? AND list_id = ? AND key_id = ?");
  if (!query) return query.status();
  query->bindText(0, spid).bindInt64(1, list_id).bindInt64(2, key_id);
  Result<bool> row = query->step();
  if (!row) return row.status();
  if (!*row) return Status::notFound(keyName(spid, list_id, key_id) + " is not provisioned");
  return readKey(*query);
}

Result<std::vector<ProviderKey>> KeyStore::listForProvider(std::string_view spid) {
  Result<Statement> query =
      db_.prepare(std::string(kSelectKeys) + "WHERE spid = ? ORDER BY list_id, key_id");
  if (!query) return query.status();
  query->bindText(0, spid);
  std::vector<ProviderKey> out;
  for (;;) {
    Result<bool> row = query->step();
    if (!row) return row.status();
    if (!*row) return out;
    out.push_back(readKey(*query));
  }
}

Status KeyStore::setState(std::string_view spid, std::int64_t list_id, std::int64_t key_id,
                          KeyState state) {
  Result<Statement> update = db_.prepare(
      "UPDATE provider_keys SET state = ? WHERE spid = ? AND list_id = ? AND key_id = ?");
  if (!update) return update.status();
  update->bindText(0, toString(state)).bindText(1, spid).bindInt64(2, list_id).bindInt64(3, key_id);
  if (Status status = update->run(); !status) return status;
  if (db_.changes() == 1) return Status::ok();
  return Status::notFound(keyName(spid, list_id, key_id) + " is not provisioned");
}

Result<std::size_t> KeyStore::expireDue(TimeMs now) {
  Result<Statement> update = db_.prepare(
      "UPDATE provider_keys SET state = 'expired' WHERE state = 'active' AND not_after_at <= ?");
  if (!update) return update.status();
  update->bindInt64(0, now);
  if (Status status = update->run(); !status) return status;
  return static_cast<std::size_t>(db_.changes());
}

Status KeyStore::acceptSequence(std::string_view spid, std::int64_t list_id, std::int64_t key_id,
                                std::int64_t sequence) {
  Result<Statement> update = db_.prepare(
      "UPDATE provider_keys SET last_sequence = ? WHERE spid = ? AND list_id = ? AND key_id = ? "
      "AND (last_sequence IS NULL OR last_sequence < ?)");
  if (!update) return update.status();
  update->bindInt64(0, sequence)
      .bindText(1, spid)
      .bindInt64(2, list_id)
      .bindInt64(3, key_id)
      .bindInt64(4, sequence);
  if (Status status = update->run(); !status) return status;
  if (db_.changes() == 1) return Status::ok();
  Result<ProviderKey> key = get(spid, list_id, key_id);
  if (!key) return key.status();
  return Status::invalidArgument(
      "bind sequence number " + std::to_string(sequence) + " for " +
      keyName(spid, list_id, key_id) + " is not above the last accepted " +
      std::to_string(key->last_sequence.value_or(0)) + ": replayed or reordered bind refused");
}

}  // namespace npac::db
