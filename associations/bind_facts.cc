#include "associations/bind_facts.h"

namespace npac::associations {

std::string FunctionMask::toString() const {
  std::string text;
  for (std::size_t i = 0; i < kFunctionCount; ++i) {
    const auto function = static_cast<AssociationFunction>(i);
    if (!has(function)) continue;
    if (!text.empty()) text += '|';
    text += common::toString(function);
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
      return FunctionMask::of({F::kSoaManagement, F::kNetworkDataManagement, F::kNotifications, F::kQueries});
    case SystemType::kLsms:
      return FunctionMask::of(
          {F::kLsmsDataDownload, F::kNetworkDataManagement, F::kNotifications, F::kQueries});
    case SystemType::kSoaAndLsms:
      return FunctionMask::of({F::kSoaManagement, F::kLsmsDataDownload, F::kNetworkDataManagement,
                               F::kNotifications, F::kQueries});
    case SystemType::kNpac:
      return FunctionMask();
  }
  return FunctionMask();
}

}  // namespace npac::associations
