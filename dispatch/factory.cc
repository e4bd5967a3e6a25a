#include "dispatch/factory.h"

namespace npac::dispatch {
namespace {

std::optional<ConfigError> thresholdError(const std::string& field, std::uint32_t percent) {
  if (percent >= kMinThresholdPercent && percent <= kMaxThresholdPercent) return std::nullopt;
  return ConfigError{field, "in-service threshold must be 1–100 % (EAGLE weighted GTT), got " +
                                std::to_string(percent)};
}

PolicyOrError failure(std::string field, std::string reason) {
  return PolicyOrError{nullptr, ConfigError{std::move(field), std::move(reason)}};
}

std::string knownNames() {
  std::string out;
  for (std::string_view n : policyNames()) {
    if (!out.empty()) out += ", ";
    out += n;
  }
  return out;
}

PolicyOrError makeLeaf(const std::string& name, const PolicyConfig& config, const char* field) {
  if (name == kRoundRobinName) return PolicyOrError{std::make_unique<RoundRobinPolicy>(), {}};
  if (name == kWeightedName) {
    if (auto err = validate(config.weighted)) return PolicyOrError{nullptr, err};
    return PolicyOrError{std::make_unique<WeightedPolicy>(config.weighted), {}};
  }
  if (name == kLrtmName) {
    if (auto err = config.lrtm.validate()) return PolicyOrError{nullptr, err};
    return PolicyOrError{std::make_unique<LrtmPolicy>(config.lrtm), {}};
  }
  return failure(field, "unknown policy \"" + name + "\" (known: " + knownNames() + ")");
}

}  // namespace

std::vector<std::string_view> policyNames() {
  return {kRoundRobinName, kWeightedName, kLrtmName, kThrottleName};
}

std::optional<ConfigError> validate(const WeightedConfig& config) {
  if (auto err = thresholdError("weighted.default_threshold_percent",
                                config.default_threshold_percent)) {
    return err;
  }
  for (const auto& [rc, percent] : config.threshold_percent_by_rc) {
    if (auto err = thresholdError("weighted.thresholds[" + std::to_string(rc) + "]", percent)) {
      return err;
    }
  }
  return std::nullopt;
}

PolicyOrError makePolicy(const PolicyConfig& config) {
  if (config.name != kThrottleName) return makeLeaf(config.name, config, "policy.name");
  if (config.inner == kThrottleName) {
    return failure("policy.inner", "a throttle wraps round-robin, weighted or lrtm, not another throttle");
  }
  if (auto err = config.throttle_group.validate()) return PolicyOrError{nullptr, err};
  if (config.throttle_list) {
    if (auto err = config.throttle_list->validate()) return PolicyOrError{nullptr, err};
  }
  PolicyOrError inner = makeLeaf(config.inner, config, "policy.inner");
  if (!inner.ok()) return inner;
  return PolicyOrError{std::make_unique<ThrottledPolicy>(std::move(inner.policy),
                                                         config.throttle_group,
                                                         config.throttle_list),
                       std::nullopt};
}

}  // namespace npac::dispatch
