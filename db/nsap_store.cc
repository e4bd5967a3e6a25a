#include "db/nsap_store.h"

#include "db/database.h"

namespace npac::db {
namespace {

Status validate(const ProvisionedNsap& nsap) {
  if (nsap.nsap.empty() || nsap.nsap.size() > kMaxNsapOctets) {
    return Status::invalidArgument("an NSAP has 1 to 20 octets, got " +
                                   std::to_string(nsap.nsap.size()));
  }
  if (nsap.weight && (*nsap.weight < kMinNsapWeight || *nsap.weight > kMaxNsapWeight)) {
    return Status::invalidArgument("NSAP weight must be 1–99, got " + std::to_string(*nsap.weight));
  }
  return Status::ok();
}

std::optional<std::int64_t> widen(const std::optional<std::uint32_t>& value) {
  if (!value) return std::nullopt;
  return static_cast<std::int64_t>(*value);
}

std::optional<std::uint32_t> narrow(const std::optional<std::int64_t>& value) {
  if (!value) return std::nullopt;
  return static_cast<std::uint32_t>(*value);
}

Status nsapNotFound(std::string_view spid, std::span<const std::uint8_t> nsap) {
  return Status::notFound("NSAP " + toHex(nsap) + " is not provisioned for provider '" +
                          std::string(spid) + "'");
}

}  // namespace

Status NsapStore::add(const ProvisionedNsap& nsap) {
  if (Status status = validate(nsap); !status) return status;
  Result<Statement> insert = db_.prepare(
      "INSERT INTO provider_nsaps(spid, nsap, weight, relative_cost) VALUES(?, ?, ?, ?)");
  if (!insert) return insert.status();
  insert->bindText(0, nsap.spid)
      .bindBlob(1, nsap.nsap)
      .bindOptionalInt64(2, widen(nsap.weight))
      .bindOptionalInt64(3, widen(nsap.relative_cost));
  return insert->run();
}

Status NsapStore::update(const ProvisionedNsap& nsap) {
  if (Status status = validate(nsap); !status) return status;
  Result<Statement> update = db_.prepare(
      "UPDATE provider_nsaps SET weight = ?, relative_cost = ? WHERE spid = ? AND nsap = ?");
  if (!update) return update.status();
  update->bindOptionalInt64(0, widen(nsap.weight))
      .bindOptionalInt64(1, widen(nsap.relative_cost))
      .bindText(2, nsap.spid)
      .bindBlob(3, nsap.nsap);
  if (Status status = update->run(); !status) return status;
  return db_.changes() == 1 ? Status::ok() : nsapNotFound(nsap.spid, nsap.nsap);
}

Status NsapStore::remove(std::string_view spid, std::span<const std::uint8_t> nsap) {
  Result<Statement> erase = db_.prepare("DELETE FROM provider_nsaps WHERE spid = ? AND nsap = ?");
  if (!erase) return erase.status();
  erase->bindText(0, spid).bindBlob(1, nsap);
  if (Status status = erase->run(); !status) return status;
  return db_.changes() == 1 ? Status::ok() : nsapNotFound(spid, nsap);
}

Result<bool> NsapStore::isProvisioned(std::string_view spid, std::span<const std::uint8_t> nsap) {
  Result<Statement> query = db_.prepare("SELECT 1 FROM provider_nsaps WHERE spid = ? AND nsap = ?");
  if (!query) return query.status();
  query->bindText(0, spid).bindBlob(1, nsap);
  return query->step();
}

Result<std::vector<ProvisionedNsap>> NsapStore::listForProvider(std::string_view spid) {
  Result<Statement> query = db_.prepare(
      "SELECT spid, nsap, weight, relative_cost FROM provider_nsaps WHERE spid = ? ORDER BY nsap");
  if (!query) return query.status();
  query->bindText(0, spid);
  std::vector<ProvisionedNsap> out;
  for (;;) {
    Result<bool> row = query->step();
    if (!row) return row.status();
    if (!*row) return out;
    out.push_back(ProvisionedNsap{query->columnText(0), query->columnBlob(1),
                                  narrow(query->columnOptionalInt64(2)),
                                  narrow(query->columnOptionalInt64(3))});
  }
}

}  // namespace npac::db
