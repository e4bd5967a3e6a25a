#include "dispatch/factory.h"

namespace npac::dispatch {
namespace {

std::optional<ConfigError> thresholdError(const std::string& field, std::uint32_t percent) {
  if (percent >= kMinThresholdPercent && percent <= kMaxThresholdPercent) return std::nullopt;
  return ConfigError{field, "in-service threshold must be 1–100 % (seed 000), got " +
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
  return {kRoundRobinName, kWeightedName, kLrtmName};
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
  return makeLeaf(config.name, config, "policy.name");
}

}  // namespace npac::dispatch
