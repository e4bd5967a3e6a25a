// npacd's command line: every option (CLI11) with its default, its check — each number
// option's range from config.h kNumberOptions, the endpoints, durations, names and choices
// — and --config FILE under it (config_file.h). A check runs as its option is parsed, on
// the command line and in the file alike, so a refused value stops npacd (exit 2, naming
// the option, and FILE:LINE for the file) before anything is created on disk. The checks
// only check (a number's also normalises: "010" becomes "10"); they keep nothing, so the file's reader
// may run them on a value the command line then overrides.
//
// Threading: start-up only, on the main thread.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "npac/npacd/config.h"
#include "npac/npacd/logging.h"

namespace npac::npacd {

// What the options fill. Set after app.parse(); the endpoints and the duration are still
// text here (main splits and converts them, which cannot fail once their checks passed).
struct NpacdCommandLine {
  NpacdConfig config;
  LogOptions log;
  std::string listen = "127.0.0.1:" + std::to_string(kDefaultAssociationPort);
  std::string api = "127.0.0.1:" + std::to_string(NpacdConfig{}.api_port);
  std::string durability = "full";
  std::string db_timeout = "5s";
  std::string check_db = "auto";
  std::string metrics = "on";
};

// Declares every option of npacd, --config included, on `app`, bound to `line` (both must
// outlive the parse). --help and --version are the caller's.
void declareNpacdOptions(CLI::App& app, NpacdCommandLine& line);

// A CLI11 check that a number option's value is a decimal integer in `range` (the value is
// rewritten as plain decimal digits, so CLI11's own reading cannot take "010" for octal).
// Its description, shown after the type in --help, is the range: "1..64".
CLI::Validator integerIn(IntegerRange range);

}  // namespace npac::npacd
