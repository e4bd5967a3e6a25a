// Where npacctl finds the bearer token it sends to npacd's admin API, in this order:
//   --token TOKEN, $NPACCTL_TOKEN, --token-file FILE, $NPACCTL_TOKEN_FILE,
//   then npacd.db.token and var/npacd.db.token in the working directory and each parent
//   (npacd writes <db>.token at its first start; `make run` uses var/npacd.db), then
//   /var/lib/npacd/npacd.db.token.
// A token file holds the token on its first line. A file given by flag or variable that
// cannot be read is an error naming it; the search reports every path it tried.
//
// Threading: npacctl is single-threaded; the options are process-wide, set by main.cc.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "npac/npacctl/client.h"

namespace npac::npacctl {

struct TokenOptions {
  std::string token;       // --token
  std::string token_file;  // --token-file
};

// Adds --token and --token-file to `app` (the top-level npacctl), bound to the
// process-wide options tokenFrom() reads.
void addTokenOptions(CLI::App& app);

struct FoundToken {
  std::string token;   // empty: none, see `error`
  std::string source;  // "--token", "$NPACCTL_TOKEN", or the file read
  std::string error;   // names every place tried
};
// The search above from `cwd`, with the process environment and options.
FoundToken tokenFrom(const TokenOptions& options, const std::string& cwd);

// Gives `client` the token (the process-wide options, the working directory); false after
// printing "npacctl: <why>" to stderr when there is none.
bool authorize(ApiClient& client);

void addTokenCommands(CLI::App& app, int& exit_code);  // token create, list, revoke

}  // namespace npac::npacctl
