// What npacctl says when the command words themselves are wrong: `npacctl spp list` and
// `npacctl sp lsit` name the word that is not a command and suggest the nearest one
// (common/nearest_name.h); `npacctl sp` alone lists the commands it takes. CLI11 says "A
// subcommand is required" for all three, which names neither the word nor the choices.
//
// The words are read as CLI11 reads them: options (and the value of an option that takes
// one, looked up in the command and the commands above it, as fallthrough() does) are
// skipped; the first other word must name a command of the group it follows; a command
// without commands of its own ends the walk (what follows are its arguments).
//
// Threading: pure; npacctl is single-threaded.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace npac::npacctl {

// "npacctl sp: 'lsit' is not a command (did you mean 'list'?); the commands: add, list,
// show, disable, enable" for the words after the program name, or nullopt when the
// command words are right (the fault, if any, is elsewhere: CLI11's message stands).
std::optional<std::string> commandWordError(const CLI::App& app, const std::vector<std::string>& args);

}  // namespace npac::npacctl
