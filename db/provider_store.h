// ProviderStore: the service providers npacd serves (table service_providers).
//
// A provider is identified by its SPID — 4 characters (NPAC service provider id) — and
// has a name, a system type (the IIS's SOA, LSMS, both, or NPAC) and an enabled flag: a
// disabled provider stays provisioned (its NSAPs, keys and queued messages are kept) but
// may not bind. Removing a provider removes its NSAPs and keys; it is refused while the
// outbound queue still holds messages for it (nothing queued is ever dropped silently).
//
// Threading: as the Database it wraps (one thread at a time). Cheap to construct.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/vocabulary.h"
#include "db/status.h"

namespace npac::db {

class Database;

// The column system_type holds the one spelling of common/vocabulary.h.
using common::parseSystemType;
using common::SystemType;
using common::toString;

inline constexpr std::size_t kSpidLength = 4;
// A SPID is exactly 4 printable ASCII letters or digits.
bool isValidSpid(std::string_view spid);

struct ServiceProvider {
  std::string spid;
  std::string name;
  SystemType system_type = SystemType::kSoa;
  bool enabled = true;

  friend bool operator==(const ServiceProvider&, const ServiceProvider&) = default;
};

class ProviderStore {
 public:
  explicit ProviderStore(Database& db) : db_(db) {}

  // Adds a provider; kConstraint if the SPID exists, kInvalidArgument for a bad SPID/name.
  Status add(const ServiceProvider& provider);
  // Replaces name, system type and enabled flag; kNotFound if absent.
  Status update(const ServiceProvider& provider);
  Status setEnabled(std::string_view spid, bool enabled);
  // kNotFound if absent; kConstraint while queued messages reference it.
  Status remove(std::string_view spid);
  Result<ServiceProvider> get(std::string_view spid);  // kNotFound if absent
  Result<std::vector<ServiceProvider>> list();         // by SPID

 private:
  Database& db_;
};

}  // namespace npac::db
