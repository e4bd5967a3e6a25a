// The provisioned egress throttle groups (docs/API.md "Throttle groups", docs/OPERATIONS.md
// "Egress throttling"; DSR "Egress Throttle Groups" and "Egress Throttle Lists"):
//   POST   /v1/throttle-groups           a group for the SPIDs one far end serves
//   GET    /v1/throttle-groups           every group with what this node knows live
//   GET    /v1/throttle-groups/{name}    one group: effective maxima, level, each node's
//                                        last report with its age, unreachable peers
//   PUT    /v1/throttle-groups/{name}    the fields given change
//   DELETE /v1/throttle-groups/{name}
// Each change and its audit entry ("throttle-group.add" / ".set" / ".remove", with the
// group before and after) commit in one transaction; the node's ThrottleExchange then reads
// the groups at once (every other node within its period, throttle_exchange.h).
#include <variant>

#include "db/provider_store.h"
#include "db/throttle_group_store.h"
#include "npac/npacd/api/admin_api.h"
#include "npac/npacd/api/audited.h"
#include "npac/npacd/api/request.h"
#include "npac/npacd/api/throttle_group_json.h"

namespace npac::npacd {

using nlohmann::json;

namespace {

json withLive(const db::ThrottleGroupDefinition& group, const ThrottleGroups* groups) {
  json out = toJson(group);
  std::shared_ptr<ThrottleGroup> live = groups != nullptr ? groups->find(group.name) : nullptr;
  // Not yet in force here (made a moment ago; the exchange reads it within a period).
  out["live"] = live != nullptr ? toJson(live->view(groups->clock().now())) : json(nullptr);
  if (groups != nullptr) out["node"] = groups->node();
  return out;
}

HttpResponse groupNotFound(const std::string& name) {
  return errorResponse(http::status::not_found, "throttle_group_not_found", "no throttle group named '" + name + "'");
}

// The stored group `name`, or the answer saying why there is none.
std::variant<db::ThrottleGroupDefinition, HttpResponse> storedGroup(db::Database& db, const std::string& name) {
  auto group = db::ThrottleGroupStore(db).get(name);
  if (group.isOk()) return std::move(group).value();
  if (group.status().isNotFound()) return groupNotFound(name);
  return dbErrorResponse(group.status());
}

HttpResponse conflictOrError(const db::Status& status) {
  if (status.code() == db::Status::Code::kConstraint) {
    return errorResponse(http::status::conflict, "throttle_group_conflict", status.message());
  }
  return dbErrorResponse(status);
}

}  // namespace

bool AdminApi::requireMembers(ApiRequest& r, const db::ThrottleGroupDefinition& group, HttpResponse* error) {
  for (const std::string& spid : group.members) {
    if (!requireProvider(r, spid, error)) return false;
  }
  return true;
}

HttpResponse AdminApi::addThrottleGroup(ApiRequest& r) {
  Parsed<db::ThrottleGroupDefinition> parsed = parseThrottleGroup(r.body, nullptr);
  if (!parsed.ok()) return errorResponse(http::status::bad_request, parsed.error.code, parsed.error.message);
  db::ThrottleGroupDefinition group = std::move(*parsed.value);
  HttpResponse error;
  if (!requireMembers(r, group, &error)) return error;
  const std::string actor = r.actor();
  if (actor.empty()) return actorRequired("adding a throttle group");
  group.updated_at = clock_();
  group.updated_by = actor;
  db::ThrottleGroupStore store(db_);
  db::Status status = audited(db_,
                              {0, group.updated_at, actor, "throttle-group.add", "throttle group " + group.name,
                               std::nullopt, toJson(group).dump()},
                              [&] { return store.create(group); });
  if (!status.isOk()) return conflictOrError(status);
  if (throttle_groups_ != nullptr) throttle_groups_->requestReload();
  return jsonResponse(http::status::created, toJson(group));
}

HttpResponse AdminApi::listThrottleGroups(ApiRequest&) {
  db::ThrottleGroupStore store(db_);
  auto groups = store.list();
  if (!groups.isOk()) return dbErrorResponse(groups.status());
  json out = json::array();
  for (const db::ThrottleGroupDefinition& group : groups.value()) out.push_back(withLive(group, throttle_groups_));
  return jsonResponse(http::status::ok, {{"throttle_groups", out}});
}

HttpResponse AdminApi::showThrottleGroup(ApiRequest&, const std::string& name) {
  auto group = storedGroup(db_, name);
  if (auto* error = std::get_if<HttpResponse>(&group)) return std::move(*error);
  return jsonResponse(http::status::ok, withLive(std::get<db::ThrottleGroupDefinition>(group), throttle_groups_));
}

HttpResponse AdminApi::setThrottleGroup(ApiRequest& r, const std::string& name) {
  auto stored = storedGroup(db_, name);
  if (auto* error = std::get_if<HttpResponse>(&stored)) return std::move(*error);
  const db::ThrottleGroupDefinition& current = std::get<db::ThrottleGroupDefinition>(stored);
  db::ThrottleGroupStore store(db_);
  Parsed<db::ThrottleGroupDefinition> parsed = parseThrottleGroup(r.body, &current);
  if (!parsed.ok()) return errorResponse(http::status::bad_request, parsed.error.code, parsed.error.message);
  db::ThrottleGroupDefinition group = std::move(*parsed.value);
  HttpResponse error;
  if (!requireMembers(r, group, &error)) return error;
  const std::string actor = r.actor();
  if (actor.empty()) return actorRequired("changing a throttle group");
  group.updated_at = clock_();
  group.updated_by = actor;
  db::Status status = audited(db_,
                              {0, group.updated_at, actor, "throttle-group.set", "throttle group " + name,
                               toJson(current).dump(), toJson(group).dump()},
                              [&] { return store.replace(group); });
  if (status.isNotFound()) {
    return groupNotFound(name);
  }
  if (!status.isOk()) return conflictOrError(status);
  if (throttle_groups_ != nullptr) throttle_groups_->requestReload();
  return jsonResponse(http::status::ok, toJson(group));
}

HttpResponse AdminApi::removeThrottleGroup(ApiRequest& r, const std::string& name) {
  auto stored = storedGroup(db_, name);
  if (auto* error = std::get_if<HttpResponse>(&stored)) return std::move(*error);
  const db::ThrottleGroupDefinition& current = std::get<db::ThrottleGroupDefinition>(stored);
  db::ThrottleGroupStore store(db_);
  const std::string actor = r.actor();
  if (actor.empty()) return actorRequired("removing a throttle group");
  db::Status status = audited(db_,
                              {0, clock_(), actor, "throttle-group.remove", "throttle group " + name,
                               toJson(current).dump(), std::nullopt},
                              [&] { return store.remove(name); });
  if (status.isNotFound()) {
    return groupNotFound(name);
  }
  if (!status.isOk()) return dbErrorResponse(status);
  if (throttle_groups_ != nullptr) throttle_groups_->requestReload();
  return jsonResponse(http::status::ok, {{"removed", name}});
}

}  // namespace npac::npacd
