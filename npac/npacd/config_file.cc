#include "npac/npacd/config_file.h"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <optional>
#include <string_view>

#include "common/text.h"

namespace npac::npacd {

namespace {

bool isBareKey(std::string_view key) {
  // TOML 1.0 "Keys": bare keys are A-Za-z0-9_- (options are named with '-').
  return !key.empty() && std::all_of(key.begin(), key.end(), [](unsigned char c) {
    return std::isalnum(c) != 0 || c == '-' || c == '_';
  });
}

// TOML 1.0 "Comment": control characters other than tab are not permitted anywhere — in a
// string they must be escaped. (A NUL would cut a path short where it reaches the C library.)
int controlCharacterIn(std::string_view line) {
  for (unsigned char c : line) {
    if ((c < 0x20 && c != '\t') || c == 0x7f) return c;
  }
  return -1;
}

// The TOML decimal integer `token` ([+-] then 0 or a non-zero digit, an underscore only
// between two digits) as an optional '-' and plain digits; false when it is none.
bool decimalInteger(std::string_view token, std::string* digits) {
  std::string_view rest = token;
  bool negative = false;
  if (!rest.empty() && (rest[0] == '+' || rest[0] == '-')) {
    negative = rest[0] == '-';
    rest.remove_prefix(1);
  }
  if (rest.empty() || (rest.size() > 1 && rest[0] == '0')) return false;  // TOML: no leading zeros
  std::string out;
  for (std::size_t i = 0; i < rest.size(); ++i) {
    const char c = rest[i];
    if (c == '_') {
      const bool between = i > 0 && i + 1 < rest.size() && std::isdigit(static_cast<unsigned char>(rest[i - 1])) &&
                           std::isdigit(static_cast<unsigned char>(rest[i + 1]));
      if (!between) return false;
      continue;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) == 0) return false;
    out.push_back(c);
  }
  *digits = (negative && out != "0") ? "-" + out : out;
  return true;
}

void appendUtf8(char32_t code, std::string* out) {
  if (code < 0x80) {
    out->push_back(static_cast<char>(code));
  } else if (code < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (code >> 6)));
    out->push_back(static_cast<char>(0x80 | (code & 0x3F)));
  } else if (code < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (code >> 12)));
    out->push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (code & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (code >> 18)));
    out->push_back(static_cast<char>(0x80 | ((code >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (code & 0x3F)));
  }
}

// One value as written after "=": a string, or a bare token (an integer, true, false, or
// anything else, refused by kind later).
struct RawValue {
  bool quoted = false;
  std::string text;     // a string's decoded characters; a bare token as written
  std::string written;  // the value as written, for messages
};

// The escape of a basic string whose letter is v[i] (just past the backslash), decoded
// onto *text; `i` is left on its last character. False, with *why, when it is no TOML
// escape.
bool readEscape(std::string_view v, std::size_t& i, std::string* text, std::string* why) {
  const char e = v[i];
  switch (e) {
    case 'b': text->push_back('\b'); return true;
    case 't': text->push_back('\t'); return true;
    case 'n': text->push_back('\n'); return true;
    case 'f': text->push_back('\f'); return true;
    case 'r': text->push_back('\r'); return true;
    case '"': text->push_back('"'); return true;
    case '\\': text->push_back('\\'); return true;
    case 'u':
    case 'U': {
      const std::size_t digits = e == 'u' ? 4 : 8;
      const std::string_view hex = v.substr(i + 1, digits);
      char32_t code = 0;
      const bool is_hex = hex.size() == digits && std::all_of(hex.begin(), hex.end(), [](unsigned char c) {
        return std::isxdigit(c) != 0;
      });
      if (is_hex) code = static_cast<char32_t>(std::stoul(std::string(hex), nullptr, 16));
      // A Unicode scalar value: not a surrogate, at most U+10FFFF.
      if (!is_hex || (code >= 0xD800 && code <= 0xDFFF) || code > 0x10FFFF) {
        *why = "\\" + std::string(1, e) + std::string(hex) + " is not a Unicode scalar value (\\" +
               std::string(1, e) + " takes " + std::to_string(digits) + " hex digits)";
        return false;
      }
      appendUtf8(code, text);
      i += digits;
      return true;
    }
    default:
      *why = "unknown escape \\" + std::string(1, e) + " (TOML's are \\b \\t \\n \\f \\r \\\" \\\\ \\uXXXX "
             "\\UXXXXXXXX; a path's \\ is written \\\\, or the path in 'single quotes')";
      return false;
  }
}

// The characters of the basic string opening `v` (v[0] is its "), decoded onto *text up
// to its closing quote: that quote's index, or v.size() when there is none. None, with
// *why, at an unknown escape.
std::optional<std::size_t> readBasicString(std::string_view v, std::string* text, std::string* why) {
  std::size_t i = 1;
  for (; i < v.size() && v[i] != '"'; ++i) {
    if (v[i] != '\\') {
      text->push_back(v[i]);
      continue;
    }
    if (++i == v.size()) break;
    if (!readEscape(v, i, text, why)) return std::nullopt;
  }
  return i;
}

// Reads the value at the start of `v` (blanks trimmed), and checks that only a comment
// follows it. Empty *why when it is well formed.
RawValue readValue(std::string_view v, std::string* why) {
  RawValue value;
  if (v.substr(0, 3) == "\"\"\"" || v.substr(0, 3) == "'''") {
    *why = "multi-line strings are not used: write the value on one line";
    return value;
  }
  std::size_t end = 0;  // just past the value
  if (!v.empty() && v[0] == '\'') {
    // TOML "Literal strings": everything up to the next ' as written.
    const auto close = v.find('\'', 1);
    if (close == std::string_view::npos) {
      *why = "the string has no closing quote";
      return value;
    }
    value.quoted = true;
    value.text = std::string(v.substr(1, close - 1));
    end = close + 1;
  } else if (!v.empty() && v[0] == '"') {
    // TOML "Basic strings": escapes decoded.
    value.quoted = true;
    const std::optional<std::size_t> i = readBasicString(v, &value.text, why);
    if (!i) return value;
    if (*i >= v.size()) {
      *why = "the string has no closing quote";
      return value;
    }
    end = *i + 1;
  } else {
    end = std::min(v.find_first_of(" \t#"), v.size());
    value.text = std::string(v.substr(0, end));
  }
  value.written = std::string(v.substr(0, end));
  const std::string_view rest = common::trimBlanks(v.substr(end));
  if (!rest.empty() && rest[0] != '#') *why = "unexpected text after the value: '" + std::string(rest) + "'";
  return value;
}

const char* kindText(ConfigKey::Kind kind) {
  switch (kind) {
    case ConfigKey::Kind::kFlag: return "true or false";
    case ConfigKey::Kind::kInteger: return "an integer";
    case ConfigKey::Kind::kText: return "a quoted string";
  }
  return "";
}

// The value `raw` of `known`'s line as the text its option parses (*checked): why it is
// refused, or "" when it is not.
std::string checkedValue(const ConfigKey& known, const RawValue& raw, std::string* checked) {
  const std::string& key = known.name;
  if (!raw.quoted && raw.text.empty()) return "key '" + key + "' has no value";
  std::string value;
  bool ok = false;
  switch (known.kind) {
    case ConfigKey::Kind::kFlag:
      ok = !raw.quoted && (raw.text == "true" || raw.text == "false");
      value = raw.text;
      break;
    case ConfigKey::Kind::kInteger:
      ok = !raw.quoted && decimalInteger(raw.text, &value);
      break;
    case ConfigKey::Kind::kText:
      ok = raw.quoted;
      value = raw.text;
      break;
  }
  if (!ok) {
    const char* hint =
        known.kind == ConfigKey::Kind::kInteger ? " (decimal digits, a '_' only between two of them)" : "";
    return "key '" + key + "' takes " + kindText(known.kind) + ", got " + raw.written + hint;
  }
  if (value.find('\0') != std::string::npos) {
    return "key '" + key + "': the string holds a NUL character (\\u0000), which no setting can hold";
  }
  // The option's own checks, as the command line's value would meet them.
  for (const CLI::Validator& check : known.checks) {
    std::string refused;
    try {
      refused = check(value);
    } catch (const CLI::ValidationError& e) {
      refused = e.what();
    }
    if (!refused.empty()) return "key '" + key + "': " + refused;
  }
  *checked = value;
  return "";
}

}  // namespace

std::vector<ConfigKey> configKeysOf(CLI::App& app) {
  std::vector<ConfigKey> keys;
  for (CLI::Option* option : app.get_options()) {
    if (!option->get_configurable()) continue;  // --config itself
    if (option == app.get_help_ptr() || option == app.get_version_ptr()) continue;
    ConfigKey key;
    const std::string type = option->get_type_name();  // "UINT:1..64": the type, then the checks
    if (option->get_expected_min() == 0) {
      key.kind = ConfigKey::Kind::kFlag;
    } else if (type.rfind("INT", 0) == 0 || type.rfind("UINT", 0) == 0) {
      key.kind = ConfigKey::Kind::kInteger;  // CLI11 names integers INT and UINT
    }
    for (int i = 0;; ++i) {
      try {
        key.checks.push_back(*option->get_validator(i));
      } catch (const CLI::OptionNotFound&) {
        break;  // past the last one
      }
    }
    for (const std::string& name : option->get_lnames()) {
      key.name = name;
      keys.push_back(key);
    }
  }
  return keys;
}

Result<std::vector<ConfigSetting>> readConfigText(const std::string& file, const std::string& text,
                                                  const std::vector<ConfigKey>& keys) {
  std::map<std::string, int> seen;
  int number = 0;
  auto refuse = [&](const std::string& why) {
    return Status::badDocument(file + ":" + std::to_string(number) + ": " + why);
  };
  std::vector<ConfigSetting> settings;
  for (std::size_t start = 0; start <= text.size();) {
    const std::size_t newline = std::min(text.find('\n', start), text.size());
    std::string_view line(text.data() + start, newline - start);
    start = newline + 1;
    ++number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);  // CRLF
    if (const int c = controlCharacterIn(line); c >= 0) {
      char code[8];
      std::snprintf(code, sizeof code, "0x%02x", c);
      return refuse(std::string("a control character (") + code +
                    ") in the line: a configuration file is text (in a string, write a tab or newline as \\t, \\n)");
    }
    line = common::trimBlanks(line);
    if (line.empty() || line[0] == '#') continue;
    if (line[0] == '[') {
      return refuse("sections are not used: npacd's keys are all at the top level (got " + std::string(line) + ")");
    }
    const auto equals = line.find('=');
    if (equals == std::string_view::npos) return refuse("expected key = value, got '" + std::string(line) + "'");
    const std::string key(common::trimBlanks(line.substr(0, equals)));
    if (!isBareKey(key)) return refuse("'" + key + "' is not a key (letters, digits, '-' and '_')");
    const auto known = std::find_if(keys.begin(), keys.end(), [&](const ConfigKey& k) { return k.name == key; });
    if (known == keys.end()) {
      return refuse("unknown key '" + key + "' (the keys are the long options of npacd --help, without --)");
    }
    if (auto [it, inserted] = seen.emplace(key, number); !inserted) {
      return refuse("key '" + key + "' is set twice (first on line " + std::to_string(it->second) + ")");
    }
    std::string why;
    const RawValue raw = readValue(common::trimBlanks(line.substr(equals + 1)), &why);
    if (!why.empty()) return refuse("key '" + key + "': " + why);
    std::string value;
    if (std::string refused = checkedValue(*known, raw, &value); !refused.empty()) return refuse(refused);
    settings.push_back({key, value, number});
  }
  return settings;
}

std::string checkConfigFile(const std::string& path) {
  struct stat file {};
  if (::stat(path.c_str(), &file) != 0) return path + ": " + std::strerror(errno);
  if (!S_ISREG(file.st_mode)) {
    const char* what = S_ISDIR(file.st_mode)    ? "a directory"
                       : S_ISFIFO(file.st_mode) ? "a FIFO"
                       : S_ISSOCK(file.st_mode) ? "a socket"
                       : S_ISCHR(file.st_mode)  ? "a character device"
                       : S_ISBLK(file.st_mode)  ? "a block device"
                                                : "not a file";
    return path + " is " + what + ": npacd reads its configuration from a regular file only";
  }
  if (static_cast<std::uint64_t>(file.st_size) > kMaxConfigFileBytes) {
    return path + " has " + std::to_string(file.st_size) + " bytes: a configuration file has at most " +
           std::to_string(kMaxConfigFileBytes) + " bytes";
  }
  return "";
}

std::vector<CLI::ConfigItem> CheckedTomlConfig::from_config(std::istream& input) const {
  const std::string file = config_option_->count() > 0 ? config_option_->as<std::string>() : "config";
  // Bounded whatever the stream is: a file that grew since checkConfigFile() is refused.
  std::string text(kMaxConfigFileBytes + 1, '\0');
  input.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(input.gcount()));
  if (text.size() > kMaxConfigFileBytes) {
    throw CLI::ConfigError(file + ": larger than " + std::to_string(kMaxConfigFileBytes) +
                           " bytes: a configuration file has at most that");
  }
  Result<std::vector<ConfigSetting>> read = readConfigText(file, text, configKeysOf(app_));
  if (!read.isOk()) throw CLI::ConfigError(read.status().message());
  std::vector<ConfigSetting> settings = std::move(read).value();
  std::vector<CLI::ConfigItem> items;
  for (ConfigSetting& setting : settings) {
    CLI::ConfigItem item;
    item.name = setting.key;
    item.inputs = {std::move(setting.value)};
    items.push_back(std::move(item));
  }
  return items;
}

}  // namespace npac::npacd
