#include "db/provider_store.h"

#include <cctype>

#include "db/notification_listener.h"
#include "db/database.h"

namespace npac::db {
namespace {

Status validate(const ServiceProvider& provider) {
  if (!isValidSpid(provider.spid)) {
    return Status::invalidArgument("SPID must be 4 letters or digits, got '" + provider.spid + "'");
  }
  if (provider.name.empty()) return Status::invalidArgument("provider " + provider.spid + " needs a name");
  return Status::ok();
}

Status providerNotFound(std::string_view spid) {
  return Status::notFound("service provider '" + std::string(spid) + "' is not provisioned");
}

}  // namespace

bool isValidSpid(std::string_view spid) {
  if (spid.size() != kSpidLength) return false;
  for (char c : spid) {
    if (!std::isalnum(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

Status ProviderStore::add(const ServiceProvider& provider) {
  if (Status status = validate(provider); !status) return status;
  Result<Statement> insert = db_.prepare(
      "INSERT INTO service_providers(spid, name, system_type, enabled) VALUES(?, ?, ?, ?)");
  if (!insert) return insert.status();
  insert->bindText(0, provider.spid)
      .bindText(1, provider.name)
      .bindText(2, toString(provider.system_type))
      .bindBool(3, provider.enabled);
  return insert->run();
}

Status ProviderStore::update(const ServiceProvider& provider) {
  if (Status status = validate(provider); !status) return status;
  Result<Statement> update = db_.prepare(
      "UPDATE service_providers SET name = ?, system_type = ?, enabled = ? WHERE spid = ?");
  if (!update) return update.status();
  update->bindText(0, provider.name)
      .bindText(1, toString(provider.system_type))
      .bindBool(2, provider.enabled)
      .bindText(3, provider.spid);
  if (Status status = update->run(); !status) return status;
  if (db_.changes() != 1) return providerNotFound(provider.spid);
  // The node serving the provider applies it (a disabled provider's associations end).
  return notifyNodes(db_, kChangedChannel, std::string(kProviderChangedPrefix) + provider.spid);
}

Status ProviderStore::setEnabled(std::string_view spid, bool enabled) {
  Result<Statement> update = db_.prepare("UPDATE service_providers SET enabled = ? WHERE spid = ?");
  if (!update) return update.status();
  update->bindBool(0, enabled).bindText(1, spid);
  if (Status status = update->run(); !status) return status;
  if (db_.changes() != 1) return providerNotFound(spid);
  return notifyNodes(db_, kChangedChannel, std::string(kProviderChangedPrefix) + std::string(spid));
}

Status ProviderStore::remove(std::string_view spid) {
  Result<Statement> erase = db_.prepare("DELETE FROM service_providers WHERE spid = ?");
  if (!erase) return erase.status();
  erase->bindText(0, spid);
  if (Status status = erase->run(); !status) {
    if (status.code() != Status::Code::kConstraint) return status;
    return Status::make(Status::Code::kConstraint,
                        "service provider '" + std::string(spid) +
                            "' still has messages in the outbound queue",
                        db_.path(), "let them be acknowledged or mark them failed, purge, then remove",
                        status.sqliteCode(), status.extendedCode());
  }
  return db_.changes() == 1 ? Status::ok() : providerNotFound(spid);
}

Result<ServiceProvider> ProviderStore::get(std::string_view spid) {
  Result<Statement> query = db_.prepare(
      "SELECT spid, name, system_type, enabled FROM service_providers WHERE spid = ?");
  if (!query) return query.status();
  query->bindText(0, spid);
  Result<bool> row = query->step();
  if (!row) return row.status();
  if (!*row) return providerNotFound(spid);
  return ServiceProvider{query->columnText(0), query->columnText(1),
                         parseSystemType(query->columnText(2)).value_or(SystemType::kSoa),
                         query->columnBool(3)};
}

Result<std::vector<ServiceProvider>> ProviderStore::list() {
  Result<Statement> query = db_.prepare(
      "SELECT spid, name, system_type, enabled FROM service_providers ORDER BY spid");
  if (!query) return query.status();
  std::vector<ServiceProvider> out;
  for (;;) {
    Result<bool> row = query->step();
    if (!row) return row.status();
    if (!*row) return out;
    out.push_back(ServiceProvider{query->columnText(0), query->columnText(1),
                                  parseSystemType(query->columnText(2)).value_or(SystemType::kSoa),
                                  query->columnBool(3)});
  }
}

}  // namespace npac::db
