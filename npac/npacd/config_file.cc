#include "npac/npacd/config_file.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <sstream>

namespace npac::npacd {

namespace {

std::string trim(const std::string& s) {
  const auto first = s.find_first_not_of(" \t\r");
  if (first == std::string::npos) return "";
  const auto last = s.find_last_not_of(" \t\r");
  return s.substr(first, last - first + 1);
}

bool isBareKey(const std::string& key) {
  // TOML 1.0 "Keys": bare keys are A-Za-z0-9_- (options are named with '-').
  return !key.empty() && std::all_of(key.begin(), key.end(), [](unsigned char c) {
    return std::isalnum(c) != 0 || c == '-' || c == '_';
  });
}

bool isInteger(const std::string& v) {
  std::size_t i = (!v.empty() && (v[0] == '+' || v[0] == '-')) ? 1 : 0;
  if (i == v.size()) return false;
  for (; i < v.size(); ++i) {
    if (std::isdigit(static_cast<unsigned char>(v[i])) == 0 && v[i] != '_') return false;
  }
  return true;
}

// The value without a trailing "# comment"; `why` set when a quoted string is unterminated
// or followed by anything but a comment.
std::string valueOf(const std::string& raw, std::string* why) {
  const std::string v = trim(raw);
  if (!v.empty() && (v[0] == '"' || v[0] == '\'')) {
    const char quote = v[0];
    std::size_t i = 1;
    for (; i < v.size(); ++i) {
      if (quote == '"' && v[i] == '\\') {
        ++i;
        continue;
      }
      if (v[i] == quote) break;
    }
    if (i >= v.size()) {
      *why = "the string has no closing quote";
      return "";
    }
    const std::string rest = trim(v.substr(i + 1));
    if (!rest.empty() && rest[0] != '#') {
      *why = "unexpected text after the string: '" + rest + "'";
      return "";
    }
    return v.substr(0, i + 1);
  }
  return trim(v.substr(0, v.find('#')));
}

const char* kindText(ConfigKey::Kind kind) {
  switch (kind) {
    case ConfigKey::Kind::kFlag: return "true or false";
    case ConfigKey::Kind::kInteger: return "an integer";
    case ConfigKey::Kind::kText: return "a quoted string";
  }
  return "";
}

}  // namespace

std::vector<ConfigKey> configKeysOf(const CLI::App& app) {
  std::vector<ConfigKey> keys;
  for (const CLI::Option* option : app.get_options()) {
    if (!option->get_configurable()) continue;  // --config itself
    if (option == app.get_help_ptr() || option == app.get_version_ptr()) continue;
    ConfigKey::Kind kind = ConfigKey::Kind::kText;
    if (option->get_expected_min() == 0) {
      kind = ConfigKey::Kind::kFlag;
    } else if (option->get_type_name().find("INT") != std::string::npos) {
      kind = ConfigKey::Kind::kInteger;  // CLI11 names integers INT and UINT
    }
    for (const std::string& name : option->get_lnames()) keys.push_back({name, kind});
  }
  return keys;
}

bool checkConfigText(const std::string& file, const std::string& text, const std::vector<ConfigKey>& keys,
                     std::string* error) {
  std::istringstream in(text);
  std::string raw;
  std::map<std::string, int> seen;
  int number = 0;
  auto refuse = [&](const std::string& why) {
    *error = file + ":" + std::to_string(number) + ": " + why;
    return false;
  };
  while (std::getline(in, raw)) {
    ++number;
    const std::string line = trim(raw);
    if (line.empty() || line[0] == '#') continue;
    if (line[0] == '[') {
      return refuse("sections are not used: npacd's keys are all at the top level (got " + line + ")");
    }
    const auto equals = line.find('=');
    if (equals == std::string::npos) return refuse("expected key = value, got '" + line + "'");
    const std::string key = trim(line.substr(0, equals));
    if (!isBareKey(key)) return refuse("'" + key + "' is not a key (letters, digits, '-' and '_')");
    const auto known = std::find_if(keys.begin(), keys.end(), [&](const ConfigKey& k) { return k.name == key; });
    if (known == keys.end()) {
      return refuse("unknown key '" + key + "' (the keys are the long options of npacd --help, without --)");
    }
    if (auto [it, inserted] = seen.emplace(key, number); !inserted) {
      return refuse("key '" + key + "' is set twice (first on line " + std::to_string(it->second) + ")");
    }
    std::string why;
    const std::string value = valueOf(line.substr(equals + 1), &why);
    if (!why.empty()) return refuse("key '" + key + "': " + why);
    if (value.empty()) return refuse("key '" + key + "' has no value");
    const bool quoted = value[0] == '"' || value[0] == '\'';
    const bool boolean = value == "true" || value == "false";
    bool ok = false;
    switch (known->kind) {
      case ConfigKey::Kind::kFlag: ok = boolean; break;
      case ConfigKey::Kind::kInteger: ok = isInteger(value); break;
      case ConfigKey::Kind::kText: ok = quoted; break;
    }
    if (!ok) return refuse("key '" + key + "' takes " + kindText(known->kind) + ", got " + value);
  }
  return true;
}

std::vector<CLI::ConfigItem> CheckedTomlConfig::from_config(std::istream& input) const {
  std::stringstream text;
  text << input.rdbuf();
  const std::string file = config_option_->count() > 0 ? config_option_->as<std::string>() : "config";
  std::string error;
  if (!checkConfigText(file, text.str(), configKeysOf(app_), &error)) throw CLI::ConfigError(error);
  text.clear();
  text.seekg(0);
  return CLI::ConfigTOML::from_config(text);
}

}  // namespace npac::npacd
