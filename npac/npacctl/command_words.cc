#include "npac/npacctl/command_words.h"

#include "common/nearest_name.h"

namespace npac::npacctl {
namespace {

// The option `name` ("--api", "-h") as `command` or a command above it knows it.
const CLI::Option* findOption(const CLI::App* command, const std::string& name) {
  for (const CLI::App* at = command; at != nullptr; at = at->get_parent()) {
    if (const CLI::Option* option = at->get_option_no_throw(name)) return option;
  }
  return nullptr;
}

std::vector<std::string> commandNames(const CLI::App* group) {
  std::vector<std::string> names;
  for (const CLI::App* command : group->get_subcommands([](const CLI::App*) { return true; })) {
    names.push_back(command->get_name());
  }
  return names;
}

// "npacctl sp" for the group `sp`.
std::string path(const CLI::App* command) {
  std::string out;
  for (const CLI::App* at = command; at != nullptr; at = at->get_parent()) {
    out = at->get_parent() == nullptr ? "npacctl" + out : " " + at->get_name() + out;
  }
  return out;
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& name : names) out += (out.empty() ? "" : ", ") + name;
  return out;
}

}  // namespace

std::optional<std::string> commandWordError(const CLI::App& app, const std::vector<std::string>& args) {
  const CLI::App* group = &app;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& word = args[i];
    if (word == "--") break;
    if (word.size() > 1 && word[0] == '-') {
      // An option; "--api=X" carries its value, "--api X" takes the next word.
      if (word.find('=') != std::string::npos) continue;
      const CLI::Option* option = findOption(group, word);
      if (option != nullptr && option->get_type_size_max() > 0) {
        if (i + 1 == args.size()) return std::nullopt;  // "--api" without its value: CLI11 says so
        ++i;
      }
      continue;
    }
    const std::vector<std::string> names = commandNames(group);
    if (names.empty()) return std::nullopt;  // a command's own arguments
    const CLI::App* command = nullptr;
    for (const CLI::App* c : group->get_subcommands([](const CLI::App*) { return true; })) {
      if (c->check_name(word)) command = c;
    }
    if (command == nullptr) {
      return path(group) + ": '" + word + "' is not a command" + common::didYouMean(word, names) +
             "; the commands: " + joined(names) + " (" + path(group) + " --help)";
    }
    group = command;
  }
  const std::vector<std::string> names = commandNames(group);
  if (names.empty() || group->get_require_subcommand_min() == 0) return std::nullopt;
  return path(group) + ": which command? " + joined(names) + " (" + path(group) + " --help)";
}

}  // namespace npac::npacctl
