// A configuration error for the dispatch policies in this folder that take a config
// struct (LRTM, egress throttle group/list): which field is wrong and why, in words an
// operator can act on. `validate()` returns std::nullopt when the config is usable.
//
// Plain value type; no threading concerns.
#pragma once

#include <string>

namespace npac::dispatch {

struct ConfigError {
  std::string field;   // e.g. "rate.levels[1].abatement_percent"
  std::string reason;  // e.g. "must be below onset_percent (90)"

  std::string message() const { return field + ": " + reason; }
};

}  // namespace npac::dispatch
