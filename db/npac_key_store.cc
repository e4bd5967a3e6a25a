#include "db/npac_key_store.h"

#include <string_view>

#include "db/database.h"

namespace npac::db {
namespace {

constexpr const char* kSelectNpacKeys =
    "SELECT list_id, key_id, algorithm, public_key_pem, private_key_pem, not_before_at, "
    "not_after_at, state, created_at, last_sequence FROM npac_keys ";
constexpr std::string_view kNpacKeyPemPrefix = "-----BEGIN ";
// NPACD-BIND-PROFILE: listId, keyId INTEGER (0..2147483647); sequenceNumber (0..4294967295).
constexpr std::int64_t kMaxKeyNumber = 2147483647;
constexpr std::int64_t kMaxSequence = 4294967295;

std::string keyName(std::int64_t list_id, std::int64_t key_id) {
  return "NPAC key " + std::to_string(list_id) + "/" + std::to_string(key_id);
}

NpacKey readNpacKey(const Statement& row) {
  NpacKey key;
  key.list_id = row.columnInt64(0);
  key.key_id = row.columnInt64(1);
  key.algorithm = parseKeyAlgorithm(row.columnText(2)).value_or(KeyAlgorithm::kEd25519);
  key.public_key_pem = row.columnText(3);
  key.private_key_pem = row.columnText(4);
  key.not_before_at = row.columnInt64(5);
  key.not_after_at = row.columnInt64(6);
  key.state = parseKeyState(row.columnText(7)).value_or(KeyState::kRevoked);
  key.created_at = row.columnInt64(8);
  key.last_sequence = row.columnInt64(9);
  return key;
}

bool isPem(const std::string& text) { return text.compare(0, kNpacKeyPemPrefix.size(), kNpacKeyPemPrefix) == 0; }

}  // namespace

Status NpacKeyStore::add(const NpacKey& key) {
  const std::string name = keyName(key.list_id, key.key_id);
  if (key.list_id < 0 || key.list_id > kMaxKeyNumber || key.key_id < 0 || key.key_id > kMaxKeyNumber) {
    return Status::invalidArgument(name + ": list and key ids must be 0..2147483647");
  }
  if (key.not_after_at <= key.not_before_at) {
    return Status::invalidArgument(name + ": not-after must be later than not-before");
  }
  if (!isPem(key.public_key_pem) || !isPem(key.private_key_pem)) {
    return Status::invalidArgument(name + ": both halves must be PEM (-----BEGIN ...)");
  }
  Result<Statement> insert = db_.prepare(
      "INSERT INTO npac_keys(list_id, key_id, algorithm, public_key_pem, private_key_pem, "
      "not_before_at, not_after_at, state, created_at, last_sequence) "
      "VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  if (!insert) return insert.status();
  insert->bindInt64(0, key.list_id)
      .bindInt64(1, key.key_id)
      .bindText(2, toString(key.algorithm))
      .bindText(3, key.public_key_pem)
      .bindText(4, key.private_key_pem)
      .bindInt64(5, key.not_before_at)
      .bindInt64(6, key.not_after_at)
      .bindText(7, toString(key.state))
      .bindInt64(8, key.created_at)
      .bindInt64(9, key.last_sequence);
  return insert->run();
}

Result<NpacKey> NpacKeyStore::get(std::int64_t list_id, std::int64_t key_id) {
  Result<Statement> query = db_.prepare(std::string(kSelectNpacKeys) + "WHERE list_id = ? AND key_id = ?");
  if (!query) return query.status();
  query->bindInt64(0, list_id).bindInt64(1, key_id);
  Result<bool> row = query->step();
  if (!row) return row.status();
  if (!*row) return Status::notFound(keyName(list_id, key_id) + " does not exist");
  return readNpacKey(*query);
}

Result<std::vector<NpacKey>> NpacKeyStore::list() {
  Result<Statement> query = db_.prepare(std::string(kSelectNpacKeys) + "ORDER BY list_id, key_id");
  if (!query) return query.status();
  std::vector<NpacKey> out;
  for (;;) {
    Result<bool> row = query->step();
    if (!row) return row.status();
    if (!*row) return out;
    out.push_back(readNpacKey(*query));
  }
}

Status NpacKeyStore::setState(std::int64_t list_id, std::int64_t key_id, KeyState state) {
  Result<Statement> update =
      db_.prepare("UPDATE npac_keys SET state = ? WHERE list_id = ? AND key_id = ?");
  if (!update) return update.status();
  update->bindText(0, toString(state)).bindInt64(1, list_id).bindInt64(2, key_id);
  if (Status status = update->run(); !status) return status;
  if (db_.changes() == 1) return Status::ok();
  return Status::notFound(keyName(list_id, key_id) + " does not exist");
}

Result<NpacKey> NpacKeyStore::signingKeyAt(TimeMs at) {
  Result<Statement> query = db_.prepare(
      std::string(kSelectNpacKeys) +
      "WHERE state = 'active' AND not_before_at <= ? AND not_after_at > ? "
      "ORDER BY not_before_at DESC, created_at DESC, list_id DESC, key_id DESC LIMIT 1");
  if (!query) return query.status();
  query->bindInt64(0, at).bindInt64(1, at);
  Result<bool> row = query->step();
  if (!row) return row.status();
  if (!*row) return Status::notFound("no active NPAC key is valid now: add one (npacctl npac-key add)");
  return readNpacKey(*query);
}

Result<std::int64_t> NpacKeyStore::nextSequence(std::int64_t list_id, std::int64_t key_id) {
  Result<Statement> update = db_.prepare(
      "UPDATE npac_keys SET last_sequence = last_sequence + 1 "
      "WHERE list_id = ? AND key_id = ? AND last_sequence < ? RETURNING last_sequence");
  if (!update) return update.status();
  update->bindInt64(0, list_id).bindInt64(1, key_id).bindInt64(2, kMaxSequence);
  Result<bool> row = update->step();
  if (!row) return row.status();
  if (*row) {
    const std::int64_t sequence = update->columnInt64(0);
    // Finish the statement so the UPDATE is complete before the number is used.
    Result<bool> done = update->step();
    if (!done) return done.status();
    return sequence;
  }
  Result<NpacKey> key = get(list_id, key_id);
  if (!key) return key.status();
  return Status::invalidArgument(keyName(list_id, key_id) +
                                 " has used every sequence number (4294967295): add a new key");
}

}  // namespace npac::db
