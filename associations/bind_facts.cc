#include "associations/bind_facts.h"

namespace npac::associations {

std::string_view toString(SystemType type) {
  switch (type) {
    case SystemType::kSoa: return "soa";
    case SystemType::kLsms: return "lsms";
    case SystemType::kSoaAndLsms: return "soa-and-lsms";
    case SystemType::kNpac: return "npac";
  }
  return "unknown";
}

std::string_view toString(AssociationFunction function) {
  switch (function) {
    case AssociationFunction::kSoaManagement: return "soa-management";
    case AssociationFunction::kLsmsDataDownload: return "lsms-data-download";
    case AssociationFunction::kNetworkData: return "network-data";
    case AssociationFunction::kNotifications: return "notifications";
    case AssociationFunction::kQueries: return "queries";
  }
  return "unknown";
}

std::string FunctionMask::toString() const {
  std::string text;
  for (std::size_t i = 0; i < kFunctionCount; ++i) {
    const auto function = static_cast<AssociationFunction>(i);
    if (!has(function)) continue;
    if (!text.empty()) text += '|';
    text += associations::toString(function);
  }
  if (bits_ >> kFunctionCount) {
    if (!text.empty()) text += '|';
    text += "unknown-bits";
  }
  return text.empty() ? "none" : text;
}

FunctionMask allowedFunctions(SystemType type) {
  using F = AssociationFunction;
  switch (type) {
    case SystemType::kSoa:
      return FunctionMask::of({F::kSoaManagement, F::kNetworkData, F::kNotifications, F::kQueries});
    case SystemType::kLsms:
      return FunctionMask::of(
          {F::kLsmsDataDownload, F::kNetworkData, F::kNotifications, F::kQueries});
    case SystemType::kSoaAndLsms:
      return FunctionMask::of({F::kSoaManagement, F::kLsmsDataDownload, F::kNetworkData,
                               F::kNotifications, F::kQueries});
    case SystemType::kNpac:
      return FunctionMask();
  }
  return FunctionMask();
}

}  // namespace npac::associations
