// The JSON of the provisioned egress throttle groups; see throttle_group_json.h.
#include "npac/npacd/api/throttle_group_json.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "db/provider_store.h"
#include "tunables/throttle_levels.h"
#include "tunables/value.h"

namespace npac::npacd {

using nlohmann::json;

namespace {

constexpr std::size_t kMaxNameLength = 64;

Status bad(const std::string& field, const std::string& why) {
  return Status::error(StatusCode::kInvalidThrottleGroup, field + ": " + why);
}

bool validName(const std::string& name) {
  if (name.empty() || name.size() > kMaxNameLength) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
           c == '-';
  });
}

// An integer field in [min, max], if present. False with `*error` set when it is wrong.
bool integerField(const json& body, const char* name, std::int64_t min, std::int64_t max, std::int64_t* out,
                  Status* error) {
  if (!body.contains(name)) return true;
  const json& v = body[name];
  if (!v.is_number_integer()) {
    *error = bad(name, "must be a whole number " + std::to_string(min) + ".." + std::to_string(max));
    return false;
  }
  // An unsigned value above INT64_MAX reads as negative through get<int64_t>: refuse it first.
  if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(max)) {
    *error = bad(name, std::to_string(v.get<std::uint64_t>()) + " is outside " + std::to_string(min) + ".." +
                           std::to_string(max));
    return false;
  }
  const std::int64_t n = v.get<std::int64_t>();
  if (n < min || n > max) {
    *error = bad(name, std::to_string(n) + " is outside " + std::to_string(min) + ".." + std::to_string(max));
    return false;
  }
  *out = n;
  return true;
}

// The "name" field: a valid name, the group's own when `current` is set. False with
// `*error` set when it is wrong.
bool nameField(const json& value, const db::ThrottleGroupDefinition* current, db::ThrottleGroupDefinition* group,
               Status* error) {
  if (!value.is_string()) {
    *error = bad("name", "must be a string");
    return false;
  }
  const std::string name = value.get<std::string>();
  if (current != nullptr && name != current->name) {
    *error = bad("name", "'" + name + "' differs from the group's name '" + current->name + "' (a group is not renamed)");
    return false;
  }
  if (!validName(name)) {
    *error = bad("name", "'" + name + "' is not 1..64 of A-Z a-z 0-9 . _ -");
    return false;
  }
  group->name = name;
  return true;
}

// The "members" field: 1..kMaxThrottleGroupMembers distinct SPIDs. False with `*error`
// set when it is wrong.
bool membersField(const json& members, db::ThrottleGroupDefinition* group, Status* error) {
  const auto refuse = [error](const std::string& field, const std::string& why) {
    *error = bad(field, why);
    return false;
  };
  if (!members.is_array()) return refuse("members", "must be a list of SPIDs");
  if (members.empty()) return refuse("members", "must name at least one SPID");
  if (members.size() > kMaxThrottleGroupMembers) {
    return refuse("members",
                  std::to_string(members.size()) + " SPIDs, at most " + std::to_string(kMaxThrottleGroupMembers));
  }
  std::set<std::string> spids;
  for (std::size_t i = 0; i < members.size(); ++i) {
    const std::string where = "members[" + std::to_string(i) + "]";
    if (!members[i].is_string() || !db::isValidSpid(members[i].get<std::string>())) {
      return refuse(where, "not a SPID (4 ASCII letters or digits)");
    }
    if (!spids.insert(members[i].get<std::string>()).second) {
      return refuse(where, "SPID " + members[i].get<std::string>() + " is named twice");
    }
  }
  group->members.assign(spids.begin(), spids.end());
  return true;
}

}  // namespace

Result<db::ThrottleGroupDefinition> parseThrottleGroup(const json& body, const db::ThrottleGroupDefinition* current) {
  if (!body.is_object()) return Status::error(StatusCode::kInvalidThrottleGroup, "the body must be a JSON object");
  static const std::set<std::string> kFields{"name",        "members",     "max_rate",           "max_pending",
                                             "onset_1",     "abatement_1", "onset_2",            "abatement_2",
                                             "onset_3",     "abatement_3", "min_abatement_time", "peer_loss_reduction_percent"};
  for (const auto& [key, value] : body.items()) {
    if (kFields.count(key) == 0) return bad(key, "not a field of a throttle group (fields: name, members, max_rate, "
                                               "max_pending, onset_1..3, abatement_1..3, min_abatement_time, "
                                               "peer_loss_reduction_percent)");
  }
  db::ThrottleGroupDefinition group = current != nullptr ? *current : db::ThrottleGroupDefinition{};
  if (current == nullptr) {
    if (!body.contains("name")) return bad("name", "required");
    if (!body.contains("members")) return bad("members", "required: the SPIDs the group's far end serves");
  }
  Status error;
  if (body.contains("name") && !nameField(body["name"], current, &group, &error)) return error;
  if (body.contains("members") && !membersField(body["members"], &group, &error)) return error;
  if (!integerField(body, "max_rate", 0, kMaxThrottleGroupLimit, &group.max_rate, &error)) return error;
  if (!integerField(body, "max_pending", 0, kMaxThrottleGroupLimit, &group.max_pending, &error)) return error;
  for (std::size_t n = 0; n < 3; ++n) {
    const std::string onset = "onset_" + std::to_string(n + 1);
    const std::string abatement = "abatement_" + std::to_string(n + 1);
    std::int64_t value = group.onset[n];
    if (!integerField(body, onset.c_str(), n == 0 ? 1 : 0, 100, &value, &error)) return error;
    group.onset[n] = static_cast<std::int32_t>(value);
    value = group.abatement[n];
    if (!integerField(body, abatement.c_str(), n == 0 ? 1 : 0, 100, &value, &error)) return error;
    group.abatement[n] = static_cast<std::int32_t>(value);
  }
  std::int64_t reduction = group.peer_loss_reduction_percent;
  if (!integerField(body, "peer_loss_reduction_percent", 0, 100, &reduction, &error)) return error;
  group.peer_loss_reduction_percent = static_cast<std::int32_t>(reduction);
  if (body.contains("min_abatement_time")) {
    const json& v = body["min_abatement_time"];
    tunables::Duration d{};
    if (!v.is_string() || !tunables::parseDuration(v.get<std::string>(), &d).isOk() || d.count() < 0 ||
        d > std::chrono::minutes(1)) {
      return bad("min_abatement_time", "must be a duration 0..1min (\"2s\", \"500ms\")");
    }
    group.min_abatement_ms = std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
  }
  if (group.max_rate == 0 && group.max_pending == 0) {
    return bad("max_rate", "max_rate and max_pending are both 0: give at least one limit");
  }
  const std::array<std::int64_t, 3> onsets{group.onset[0], group.onset[1], group.onset[2]};
  const std::array<std::int64_t, 3> abatements{group.abatement[0], group.abatement[1], group.abatement[2]};
  if (tunables::Status levels = tunables::checkLevelPercentages(onsets, abatements, "", ""); !levels.isOk()) {
    return Status::error(StatusCode::kInvalidThrottleGroup, levels.message());
  }
  return group;
}

json toJson(const db::ThrottleGroupDefinition& group) {
  return {{"name", group.name},
          {"members", group.members},
          {"max_rate", group.max_rate},
          {"max_pending", group.max_pending},
          {"onset_1", group.onset[0]},
          {"abatement_1", group.abatement[0]},
          {"onset_2", group.onset[1]},
          {"abatement_2", group.abatement[1]},
          {"onset_3", group.onset[2]},
          {"abatement_3", group.abatement[2]},
          {"min_abatement_time", tunables::formatDuration(std::chrono::milliseconds(group.min_abatement_ms))},
          {"peer_loss_reduction_percent", group.peer_loss_reduction_percent},
          {"updated_at", group.updated_at != 0 ? json(formatTime(group.updated_at)) : json(nullptr)},
          {"updated_by", group.updated_by}};
}

json toJson(const ThrottleGroup::View& view) {
  const auto rounded = [](double v) { return std::round(v * 10.0) / 10.0; };
  json nodes = json::array();
  for (const ThrottleGroup::NodeShare& n : view.nodes) {
    nodes.push_back({{"node", n.node},
                     {"local", n.local},
                     {"rate", rounded(n.rate)},
                     {"pending", n.pending},
                     {"wanting", n.wanting},
                     {"age_seconds", std::round(n.age_seconds * 1000.0) / 1000.0},
                     {"reachable", n.counted}});
  }
  return {{"level", view.level},
          {"max_rate", rounded(view.max_rate)},
          {"max_pending", rounded(view.max_pending)},
          {"rate", rounded(view.rate)},
          {"pending", view.pending},
          {"share", {{"rate", rounded(view.rate_share)}, {"pending", rounded(view.pending_share)}}},
          {"nodes", nodes},
          {"unreachable", view.unreachable},
          {"holds", view.held},
          {"admitted", view.admitted}};
}

}  // namespace npac::npacd
