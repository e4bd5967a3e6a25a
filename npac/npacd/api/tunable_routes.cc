// The tunable routes: the catalogue with effective values, get, set, clear, and the
// `srr` convenience route. Validation, persistence, audit and change notification are
// the TunableRegistry's (tunables/registry.h); errors keep its specific text.
#include "npac/npacd/api/request.h"
#include "npac/npacd/api/routes.h"
#include "tunables/catalogue.h"
#include "tunables/registry.h"

namespace npac::npacd {

using nlohmann::json;

namespace {

json specJson(const tunables::Catalogue& catalogue, const tunables::TunableSpec& spec) {
  return {{"name", spec.name},
          {"type", tunables::toString(spec.type)},
          {"scope", tunables::toString(spec.scope)},
          {"unit", spec.unit},
          {"default", catalogue.format(spec, spec.default_value)},
          {"range", catalogue.describeRange(spec)},
          {"description", spec.description}};
}

// "?spid=" must be a SPID when present.
bool scopeSpid(ApiRequest& r, std::string* spid, ApiResponse* error) {
  *spid = r.queryValue("spid").value_or("");
  if (r.body.contains("spid")) {
    if (!r.body["spid"].is_string()) {
      *error = errorResponse(ApiStatus::kBadRequest, "invalid_provider", "spid must be a string");
      return false;
    }
    *spid = r.body["spid"].get<std::string>();
  }
  if (!spid->empty() && !tunables::isValidSpid(*spid)) {
    *error = errorResponse(ApiStatus::kBadRequest, "invalid_provider",
                           "'" + *spid + "' is not a SPID: 4 ASCII letters or digits");
    return false;
  }
  return true;
}

// The value text of a PUT: a string, or a JSON bool / number typed as the operator would.
bool valueText(const json& value, std::string* out) {
  if (value.is_string()) *out = value.get<std::string>();
  else if (value.is_boolean()) *out = value.get<bool>() ? "on" : "off";
  else if (value.is_number_integer()) *out = std::to_string(value.get<std::int64_t>());
  else return false;
  return true;
}

}  // namespace

ApiResponse listTunables(ApiContext& api, ApiRequest& r) {
  std::string spid;
  ApiResponse error;
  if (!scopeSpid(r, &spid, &error)) return error;
  const tunables::Catalogue& catalogue = api.registry.catalogue();
  json out = json::array();
  for (const tunables::TunableSpec& spec : catalogue.all()) {
    json item = specJson(catalogue, spec);
    std::string value;
    tunables::Status status = api.registry.getText(spec.name, spid, &value);
    if (!status.isOk()) return statusResponse(status);
    item["value"] = value;
    out.push_back(std::move(item));
  }
  json overrides = json::array();
  for (const auto& o : api.registry.listOverrides()) {
    if (!spid.empty() && !o.spid.empty() && o.spid != spid) continue;
    overrides.push_back({{"name", o.name}, {"spid", o.spid}, {"value", o.value}});
  }
  json body = {{"tunables", out}, {"overrides", overrides}};
  if (!spid.empty()) body["spid"] = spid;
  return jsonResponse(ApiStatus::kOk, body);
}

ApiResponse getTunable(ApiContext& api, ApiRequest& r, const std::string& name) {
  std::string spid;
  ApiResponse error;
  if (!scopeSpid(r, &spid, &error)) return error;
  const tunables::TunableSpec* spec = api.registry.catalogue().find(name);
  if (spec == nullptr) {
    return statusResponse(api.registry.catalogue().unknownName(name));
  }
  std::string value;
  tunables::Status status = api.registry.getText(name, spid, &value);
  if (!status.isOk()) return statusResponse(status);
  json out = specJson(api.registry.catalogue(), *spec);
  out["value"] = value;
  out["spid"] = spid;
  return jsonResponse(ApiStatus::kOk, out);
}

ApiResponse setTunable(ApiContext& api, ApiRequest& r, const std::string& name) {
  std::string spid;
  ApiResponse error;
  if (!scopeSpid(r, &spid, &error)) return error;
  std::string text;
  if (!r.body.contains("value") || !valueText(r.body["value"], &text)) {
    return errorResponse(ApiStatus::kBadRequest, "wrong_type",
                         "\"value\" is required: the value as text (\"15m\", \"on\", \"weighted\") or a number/bool");
  }
  std::string actor = r.actor();
  if (actor.empty()) return actorRequired("setting a tunable");
  tunables::Status status = api.registry.set(name, spid, text, actor);
  if (!status.isOk()) return statusResponse(status);
  std::string value;
  (void)api.registry.getText(name, spid, &value);
  return jsonResponse(ApiStatus::kOk, {{"name", name}, {"spid", spid}, {"value", value}});
}

ApiResponse clearTunable(ApiContext& api, ApiRequest& r, const std::string& name) {
  std::string spid;
  ApiResponse error;
  if (!scopeSpid(r, &spid, &error)) return error;
  std::string actor = r.actor();
  if (actor.empty()) return actorRequired("clearing a tunable");
  tunables::Status status = api.registry.clear(name, spid, actor);
  if (!status.isOk()) return statusResponse(status);
  std::string value;
  (void)api.registry.getText(name, spid, &value);
  return jsonResponse(ApiStatus::kOk, {{"name", name}, {"spid", spid}, {"value", value}});
}

ApiResponse setSrr(ApiContext& api, ApiRequest& r, const std::string& spid) {
  ApiResponse error;
  if (!requireProvider(api, spid, &error)) return error;
  if (!r.body.contains("on") || !r.body["on"].is_boolean()) {
    return errorResponse(ApiStatus::kBadRequest, "wrong_type", "body must be {\"on\": true|false, \"actor\": ...}");
  }
  std::string actor = r.actor();
  if (actor.empty()) return actorRequired("switching SRR");
  tunables::Status status = api.registry.set("srr", spid, r.body["on"].get<bool>() ? "on" : "off", actor);
  if (!status.isOk()) return statusResponse(status);
  return jsonResponse(ApiStatus::kOk, {{"spid", spid}, {"srr", api.registry.get(tunables::kSrr, spid)}});
}

}  // namespace npac::npacd
