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
#include "npac/npacd/api/audited.h"
#include "npac/npacd/api/request.h"
#include "npac/npacd/api/routes.h"
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

ApiResponse groupNotFound(const std::string& name) {
  return errorResponse(ApiStatus::kNotFound, "throttle_group_not_found", "no throttle group named '" + name + "'");
}

// The stored group `name`, or the answer saying why there is none.
std::variant<db::ThrottleGroupDefinition, ApiResponse> storedGroup(db::Database& db, const std::string& name) {
  auto group = db::ThrottleGroupStore(db).get(name);
  if (group.isOk()) return std::move(group).value();
  if (group.status().isNotFound()) return groupNotFound(name);
  return statusResponse(group.status());
}

ApiResponse conflictOrError(const db::Status& status) {
  if (status.code() == db::Status::Code::kConstraint) {
    return errorResponse(ApiStatus::kConflict, "throttle_group_conflict", status.message());
  }
  return statusResponse(status);
}

// requireProvider for each member of `group`.
bool requireMembers(ApiContext& api, const db::ThrottleGroupDefinition& group, ApiResponse* error) {
  for (const std::string& spid : group.members) {
    if (!requireProvider(api, spid, error)) return false;
  }
  return true;
}

}  // namespace

ApiResponse addThrottleGroup(ApiContext& api, ApiRequest& r) {
  Result<db::ThrottleGroupDefinition> parsed = parseThrottleGroup(r.body, nullptr);
  if (!parsed.isOk()) return statusResponse(parsed.status());
  db::ThrottleGroupDefinition group = std::move(parsed).value();
  ApiResponse error;
  if (!requireMembers(api, group, &error)) return error;
  const std::string actor = r.actor();
  if (actor.empty()) return actorRequired("adding a throttle group");
  group.updated_at = api.clock();
  group.updated_by = actor;
  db::ThrottleGroupStore store(api.db);
  db::Status status = audited(api.db,
                              {0, group.updated_at, actor, "throttle-group.add", "throttle group " + group.name,
                               std::nullopt, toJson(group).dump()},
                              [&] { return store.create(group); });
  if (!status.isOk()) return conflictOrError(status);
  if (api.throttle_groups != nullptr) api.throttle_groups->requestReload();
  return jsonResponse(ApiStatus::kCreated, toJson(group));
}

ApiResponse listThrottleGroups(ApiContext& api, ApiRequest&) {
  db::ThrottleGroupStore store(api.db);
  auto groups = store.list();
  if (!groups.isOk()) return statusResponse(groups.status());
  json out = json::array();
  for (const db::ThrottleGroupDefinition& group : groups.value()) out.push_back(withLive(group, api.throttle_groups));
  return jsonResponse(ApiStatus::kOk, {{"throttle_groups", out}});
}

ApiResponse showThrottleGroup(ApiContext& api, ApiRequest&, const std::string& name) {
  auto group = storedGroup(api.db, name);
  if (auto* error = std::get_if<ApiResponse>(&group)) return std::move(*error);
  return jsonResponse(ApiStatus::kOk, withLive(std::get<db::ThrottleGroupDefinition>(group), api.throttle_groups));
}

ApiResponse setThrottleGroup(ApiContext& api, ApiRequest& r, const std::string& name) {
  auto stored = storedGroup(api.db, name);
  if (auto* error = std::get_if<ApiResponse>(&stored)) return std::move(*error);
  const db::ThrottleGroupDefinition& current = std::get<db::ThrottleGroupDefinition>(stored);
  db::ThrottleGroupStore store(api.db);
  Result<db::ThrottleGroupDefinition> parsed = parseThrottleGroup(r.body, &current);
  if (!parsed.isOk()) return statusResponse(parsed.status());
  db::ThrottleGroupDefinition group = std::move(parsed).value();
  ApiResponse error;
  if (!requireMembers(api, group, &error)) return error;
  const std::string actor = r.actor();
  if (actor.empty()) return actorRequired("changing a throttle group");
  group.updated_at = api.clock();
  group.updated_by = actor;
  db::Status status = audited(api.db,
                              {0, group.updated_at, actor, "throttle-group.set", "throttle group " + name,
                               toJson(current).dump(), toJson(group).dump()},
                              [&] { return store.replace(group); });
  if (status.isNotFound()) {
    return groupNotFound(name);
  }
  if (!status.isOk()) return conflictOrError(status);
  if (api.throttle_groups != nullptr) api.throttle_groups->requestReload();
  return jsonResponse(ApiStatus::kOk, toJson(group));
}

ApiResponse removeThrottleGroup(ApiContext& api, ApiRequest& r, const std::string& name) {
  auto stored = storedGroup(api.db, name);
  if (auto* error = std::get_if<ApiResponse>(&stored)) return std::move(*error);
  const db::ThrottleGroupDefinition& current = std::get<db::ThrottleGroupDefinition>(stored);
  db::ThrottleGroupStore store(api.db);
  const std::string actor = r.actor();
  if (actor.empty()) return actorRequired("removing a throttle group");
  db::Status status = audited(api.db,
                              {0, api.clock(), actor, "throttle-group.remove", "throttle group " + name,
                               toJson(current).dump(), std::nullopt},
                              [&] { return store.remove(name); });
  if (status.isNotFound()) {
    return groupNotFound(name);
  }
  if (!status.isOk()) return statusResponse(status);
  if (api.throttle_groups != nullptr) api.throttle_groups->requestReload();
  return jsonResponse(ApiStatus::kOk, {{"removed", name}});
}

}  // namespace npac::npacd
