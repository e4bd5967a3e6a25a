// The operator's read-only views of what happened (docs/API.md "Logs").
//   GET /v1/association-log?spid=&limit=   every bind, reject, release and abort, newest
//                                          first (with spid: that provider's only)
//   GET /v1/audit-log?limit=               every configuration change, newest first
#include <charconv>

#include "associations/bind_facts.h"
#include "db/association_log_store.h"
#include "db/audit_store.h"
#include "npac/npacd/api/request.h"
#include "npac/npacd/api/routes.h"
#include "npac/npacd/api/json.h"

namespace npac::npacd {

using nlohmann::json;

namespace {

constexpr std::size_t kDefaultLogLimit = 100;
constexpr std::size_t kMaxLogLimit = 10000;

// "limit" from the query: 1..kMaxLogLimit, default kDefaultLogLimit; false if malformed.
bool logLimit(const ApiRequest& r, std::size_t* limit, ApiResponse* error) {
  *limit = kDefaultLogLimit;
  auto text = r.queryValue("limit");
  if (!text) return true;
  std::size_t n = 0;
  auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), n);
  if (ec != std::errc() || end != text->data() + text->size() || n < 1 || n > kMaxLogLimit) {
    *error = errorResponse(ApiStatus::kBadRequest, "invalid_limit",
                           "limit must be an integer 1.." + std::to_string(kMaxLogLimit) + ", got '" + *text + "'");
    return false;
  }
  *limit = n;
  return true;
}

json optionalText(const std::optional<std::string>& text) { return text ? json(*text) : json(nullptr); }

json eventJson(const db::AssociationEvent& e) {
  std::string nsap_hex;
  static const char* kHex = "0123456789abcdef";
  for (std::uint8_t b : e.nsap) {
    nsap_hex.push_back(kHex[b >> 4]);
    nsap_hex.push_back(kHex[b & 15]);
  }
  return json{{"id", e.id},
              {"at", formatTime(e.at)},
              {"event", db::toString(e.kind)},
              {"spid", e.spid},
              {"nsap", nsap_hex},
              {"association", e.association_id ? json(*e.association_id) : json(nullptr)},
              {"function_mask", e.function_mask},
              {"functions", associations::FunctionMask(static_cast<std::uint8_t>(e.function_mask)).toString()},
              {"recovery_mode", e.recovery_mode},
              {"bound_at", e.bound_at ? json(formatTime(*e.bound_at)) : json(nullptr)},
              {"reason", e.reason},
              {"diagnostic", e.diagnostic}};
}

json auditJson(const db::AuditEntry& e) {
  return json{{"id", e.id},         {"at", formatTime(e.at)},           {"actor", e.actor},
              {"action", e.action}, {"subject", e.subject},             {"old_value", optionalText(e.old_value)},
              {"new_value", optionalText(e.new_value)}};
}

}  // namespace

ApiResponse associationLog(ApiContext& api, ApiRequest& r) {
  std::size_t limit = 0;
  ApiResponse error;
  if (!logLimit(r, &limit, &error)) return error;
  const std::string spid = r.queryValue("spid").value_or("");
  if (!spid.empty() && !db::isValidSpid(spid)) {
    return errorResponse(ApiStatus::kBadRequest, "invalid_spid", "'" + spid + "' is not a SPID");
  }
  db::AssociationLogStore store(api.db);
  auto events = spid.empty() ? store.recent(limit) : store.recentForProvider(spid, limit);
  if (!events.isOk()) return statusResponse(events.status());
  json list = json::array();
  for (const auto& e : events.value()) list.push_back(eventJson(e));
  return jsonResponse(ApiStatus::kOk, json{{"events", list}});
}

ApiResponse auditLog(ApiContext& api, ApiRequest& r) {
  std::size_t limit = 0;
  ApiResponse error;
  if (!logLimit(r, &limit, &error)) return error;
  auto entries = db::AuditStore(api.db).recent(limit);
  if (!entries.isOk()) return statusResponse(entries.status());
  json list = json::array();
  for (const auto& e : entries.value()) list.push_back(auditJson(e));
  return jsonResponse(ApiStatus::kOk, json{{"entries", list}});
}

}  // namespace npac::npacd
