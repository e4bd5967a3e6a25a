// The tunable routes: the catalogue with effective values, get, set, clear, and the
// `srr` convenience route. Validation, persistence, audit and change notification are
// the TunableRegistry's (tunables/registry.h); errors keep its specific text.
#include "npac/npacd/api/admin_api.h"
#include "npac/npacd/api/request.h"
#include "tunables/catalogue.h"

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
bool scopeSpid(ApiRequest& r, std::string* spid, HttpResponse* error) {
  *spid = r.queryValue("spid").value_or("");
  if (r.body.contains("spid")) {
    if (!r.body["spid"].is_string()) {
      *error = errorResponse(http::status::bad_request, "invalid_provider", "spid must be a string");
      return false;
    }
    *spid = r.body["spid"].get<std::string>();
  }
  if (!spid->empty() && !tunables::isValidSpid(*spid)) {
    *error = errorResponse(http::status::bad_request, "invalid_provider",
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

HttpResponse AdminApi::listTunables(ApiRequest& r) {
  std::string spid;
  HttpResponse error;
  if (!scopeSpid(r, &spid, &error)) return error;
  const tunables::Catalogue& catalogue = registry_.catalogue();
  json out = json::array();
  for (const tunables::TunableSpec& spec : catalogue.all()) {
    json item = specJson(catalogue, spec);
    std::string value;
    tunables::Status status = registry_.getText(spec.name, spid, &value);
    if (!status.isOk()) return tunableErrorResponse(status);
    item["value"] = value;
    out.push_back(std::move(item));
  }
  json overrides = json::array();
  for (const auto& o : registry_.listOverrides()) {
    if (!spid.empty() && !o.spid.empty() && o.spid != spid) continue;
    overrides.push_back({{"name", o.name}, {"spid", o.spid}, {"value", o.value}});
  }
  json body = {{"tunables", out}, {"overrides", overrides}};
  if (!spid.empty()) body["spid"] = spid;
  return jsonResponse(http::status::ok, body);
}

HttpResponse AdminApi::getTunable(ApiRequest& r, const std::string& name) {
  std::string spid;
  HttpResponse error;
  if (!scopeSpid(r, &spid, &error)) return error;
  const tunables::TunableSpec* spec = registry_.catalogue().find(name);
  if (spec == nullptr) {
    return tunableErrorResponse(registry_.catalogue().unknownName(name));
  }
  std::string value;
  tunables::Status status = registry_.getText(name, spid, &value);
  if (!status.isOk()) return tunableErrorResponse(status);
  json out = specJson(registry_.catalogue(), *spec);
  out["value"] = value;
  out["spid"] = spid;
  return jsonResponse(http::status::ok, out);
}

HttpResponse AdminApi::setTunable(ApiRequest& r, const std::string& name) {
  std::string spid;
  HttpResponse error;
  if (!scopeSpid(r, &spid, &error)) return error;
  std::string text;
  if (!r.body.contains("value") || !valueText(r.body["value"], &text)) {
    return errorResponse(http::status::bad_request, "wrong_type",
                         "\"value\" is required: the value as text (\"15m\", \"on\", \"weighted\") or a number/bool");
  }
  std::string actor = r.actor();
  if (actor.empty()) return actorRequired("setting a tunable");
  tunables::Status status = registry_.set(name, spid, text, actor);
  if (!status.isOk()) return tunableErrorResponse(status);
  std::string value;
  (void)registry_.getText(name, spid, &value);
  return jsonResponse(http::status::ok, {{"name", name}, {"spid", spid}, {"value", value}});
}

HttpResponse AdminApi::clearTunable(ApiRequest& r, const std::string& name) {
  std::string spid;
  HttpResponse error;
  if (!scopeSpid(r, &spid, &error)) return error;
  std::string actor = r.actor();
  if (actor.empty()) return actorRequired("clearing a tunable");
  tunables::Status status = registry_.clear(name, spid, actor);
  if (!status.isOk()) return tunableErrorResponse(status);
  std::string value;
  (void)registry_.getText(name, spid, &value);
  return jsonResponse(http::status::ok, {{"name", name}, {"spid", spid}, {"value", value}});
}

HttpResponse AdminApi::setSrr(ApiRequest& r, const std::string& spid) {
  HttpResponse error;
  if (!requireProvider(r, spid, &error)) return error;
  if (!r.body.contains("on") || !r.body["on"].is_boolean()) {
    return errorResponse(http::status::bad_request, "wrong_type", "body must be {\"on\": true|false, \"actor\": ...}");
  }
  std::string actor = r.actor();
  if (actor.empty()) return actorRequired("switching SRR");
  tunables::Status status = registry_.set("srr", spid, r.body["on"].get<bool>() ? "on" : "off", actor);
  if (!status.isOk()) return tunableErrorResponse(status);
  return jsonResponse(http::status::ok, {{"spid", spid}, {"srr", registry_.get(tunables::kSrr, spid)}});
}

}  // namespace npac::npacd
