// A configuration error of the dispatch policies in this folder that take a config struct
// (weighted, LRTM, egress throttle group/list) is a Status of the one family
// (common/status.h): code kBadEgressPolicy, message "FIELD: REASON" — which field is wrong
// and why, in words an operator can act on (e.g. "rate.levels[1].abatement_percent: must
// be above 70 (the onset of the level below)"). `validate()` answers an ok Status when the
// config is usable.
//
// Plain functions; no threading concerns.
#pragma once

#include <string>

#include "common/status.h"

namespace npac::dispatch {

inline Status configError(const std::string& field, const std::string& reason) {
  return Status::error(StatusCode::kBadEgressPolicy, field + ": " + reason);
}

}  // namespace npac::dispatch
