// The npacctl commands that talk to a running npacd through its admin API
// (docs/API.md): sp, nsap, key, srr, tunable (server_commands.cc), assoc, send, msg
// (core_commands.cc), inbound (inbound_commands.cc), queue (queue_commands.cc) and
// throttle-group (throttle_group_commands.cc). Each leaf takes --json (print the API's
// JSON instead of the human form) and --actor (ignored by npacd, kept for old scripts); the
// connection options (--api, --tls, --ca-file, --token, --token-file) are npacctl's own,
// before or after the command (client.h). Exit codes: client.h.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "npac/npacctl/client.h"

namespace npac::npacctl {

struct ServerFlags {
  bool json = false;
  std::string actor;
};

// Adds --json and --actor to `command`, bound to `flags`, and a footer naming the
// connection options (which the top level takes).
void addServerFlags(CLI::App& command, ServerFlags& flags);

// Sends one request and prints the outcome: the JSON (--json) or render(body) on success,
// "npacctl: <code>: <message>" on stderr otherwise. Returns the exit code.
int runRequest(const ServerFlags& flags, boost::beast::http::verb method, const std::string& target,
               const std::optional<nlohmann::json>& body,
               const std::function<std::string(const nlohmann::json&)>& render);

// What an operator at npacctl does about a refusal the API phrases for any client: the
// token's source for a 401, how to get a token that may for a 403, the npacctl command
// listing the names for an unknown tunable, a version check for an unknown route. Empty
// when the API's message says it all.
std::string operatorHint(const ApiReply& reply, const ApiClient& client);

// The actor of a change: --actor, else "npacctl:$USER", else "npacctl".
std::string actorOf(const ServerFlags& flags);

// Left-aligned columns, for the human listings.
std::string table(const std::vector<std::vector<std::string>>& rows);
// An age in milliseconds for a person: "850ms", "12.3s", "4m05s", "2h10m"; "-" when
// `ms` is not a whole number.
std::string ageText(const nlohmann::json& ms);
// A JSON scalar as text ("0001", 5, true → "0001", "5", "true"; null → "-").
std::string text(const nlohmann::json& value);

void addServerCommands(CLI::App& app, int& exit_code);  // sp, nsap, key, srr, tunable
void addCoreCommands(CLI::App& app, int& exit_code);    // assoc, audit, send, msg
void addInboundCommands(CLI::App& app, int& exit_code);  // inbound list, answer
void addNpacKeyCommands(CLI::App& app, int& exit_code);  // npac-key add, list, export, revoke
void addQueueCommands(CLI::App& app, int& exit_code);    // queue [SPID] (queue_commands.cc)
void addLogLevelCommand(CLI::App& app, int& exit_code);  // log-level [LEVEL] (log_level_command.cc)
void addBackupCommand(CLI::App& app, int& exit_code);    // backup FILE (backup_command.cc)
// throttle-group add, list, show, set, remove (throttle_group_commands.cc)
void addThrottleGroupCommands(CLI::App& app, int& exit_code);

}  // namespace npac::npacctl
