#include "dispatch/factory.h"

namespace npac::dispatch {
namespace {

Status thresholdError(const std::string& field, std::uint32_t percent) {
  if (percent >= kMinThresholdPercent && percent <= kMaxThresholdPercent) return Status::ok();
  return configError(field,
                     "in-service threshold must be 1–100 % (EAGLE weighted GTT), got " + std::to_string(percent));
}

std::string knownNames() {
  std::string out;
  for (std::string_view n : policyNames()) {
    if (!out.empty()) out += ", ";
    out += n;
  }
  return out;
}

Result<std::unique_ptr<Policy>> makeLeaf(const std::string& name, const PolicyConfig& config, const char* field) {
  if (name == kRoundRobinName) return std::unique_ptr<Policy>(std::make_unique<RoundRobinPolicy>());
  if (name == kWeightedName) {
    NPAC_RETURN_IF_ERROR(validate(config.weighted));
    return std::unique_ptr<Policy>(std::make_unique<WeightedPolicy>(config.weighted));
  }
  if (name == kLrtmName) {
    NPAC_RETURN_IF_ERROR(config.lrtm.validate());
    return std::unique_ptr<Policy>(std::make_unique<LrtmPolicy>(config.lrtm));
  }
  return configError(field, "unknown policy \"" + name + "\" (known: " + knownNames() + ")");
}

}  // namespace

std::vector<std::string_view> policyNames() {
  return {kRoundRobinName, kWeightedName, kLrtmName, kThrottleName};
}

Status validate(const WeightedConfig& config) {
  NPAC_RETURN_IF_ERROR(thresholdError("weighted.default_threshold_percent", config.default_threshold_percent));
  for (const auto& [rc, percent] : config.threshold_percent_by_rc) {
    NPAC_RETURN_IF_ERROR(thresholdError("weighted.thresholds[" + std::to_string(rc) + "]", percent));
  }
  return Status::ok();
}

Result<std::unique_ptr<Policy>> makePolicy(const PolicyConfig& config) {
  if (config.name != kThrottleName) return makeLeaf(config.name, config, "policy.name");
  if (config.inner == kThrottleName) {
    return configError("policy.inner", "a throttle wraps round-robin, weighted or lrtm, not another throttle");
  }
  NPAC_RETURN_IF_ERROR(config.throttle_group.validate());
  if (config.throttle_list) NPAC_RETURN_IF_ERROR(config.throttle_list->validate());
  NPAC_ASSIGN_OR_RETURN(std::unique_ptr<Policy> inner, makeLeaf(config.inner, config, "policy.inner"));
  return std::unique_ptr<Policy>(
      std::make_unique<ThrottledPolicy>(std::move(inner), config.throttle_group, config.throttle_list));
}

}  // namespace npac::dispatch
