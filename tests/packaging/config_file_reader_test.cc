// npacd's configuration file reader in-process (npac/npacd/config_file.h) against npacd's
// real options (command_line.h): TOML strings decoded, integers read in decimal, control
// characters and NULs refused, and every number option's range (config.h kNumberOptions)
// applied to the file with its line.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "npac/npacd/command_line.h"
#include "npac/npacd/config_file.h"

using namespace npac::npacd;

namespace {

// The reader with npacd's own keys.
class NpacdReader {
 public:
  NpacdReader() {
    declareNpacdOptions(app_, line_);
    keys_ = configKeysOf(app_);
  }
  // The settings of `text`; REQUIREs that it is accepted.
  std::vector<ConfigSetting> accepted(const std::string& text) {
    INFO(text);
    npac::Result<std::vector<ConfigSetting>> read = readConfigText("npacd.toml", text, keys_);
    INFO(read.status().toString());
    REQUIRE(read.isOk());
    return std::move(read).value();
  }
  // The reason `text` is refused ("" when it is accepted).
  std::string refusal(const std::string& text) {
    npac::Result<std::vector<ConfigSetting>> read = readConfigText("npacd.toml", text, keys_);
    if (read.isOk()) return "";
    CHECK(read.status().code() == npac::StatusCode::kBadDocument);
    return read.status().message();
  }
  const std::vector<ConfigKey>& keys() const { return keys_; }

 private:
  CLI::App app_;
  NpacdCommandLine line_;
  std::vector<ConfigKey> keys_;
};

// A string literal with its NULs, all but the terminating one.
template <std::size_t N>
std::string bytes(const char (&text)[N]) {
  return std::string(text, N - 1);
}

std::string valueOf(NpacdReader& reader, const std::string& text) {
  const auto settings = reader.accepted(text);
  REQUIRE(settings.size() == 1);
  return settings[0].value;
}

}  // namespace

TEST_CASE("a basic string in the configuration file has its escapes decoded") {
  NpacdReader reader;
  CHECK(valueOf(reader, R"(db = "var/a\"b\\c\td\u00e9\U0001F600.db")") == "var/a\"b\\c\td\xC3\xA9\xF0\x9F\x98\x80.db");
}

TEST_CASE("a literal string in the configuration file is taken as written") {
  NpacdReader reader;
  CHECK(valueOf(reader, R"(db = 'C:\npac\u0041 "x".db' # comment)") == R"(C:\npac\u0041 "x".db)");
}

TEST_CASE("an unknown escape or an escape that is not a Unicode scalar value is refused with its line and key") {
  NpacdReader reader;
  CHECK_THAT(reader.refusal("\ndb = \"C:\\npac\\x.db\"\n"),
             Catch::StartsWith("npacd.toml:2: key 'db': unknown escape \\x"));
  CHECK_THAT(reader.refusal("db = \"a\\uD800\"\n"), Catch::StartsWith("npacd.toml:1: key 'db': \\uD800 is not a Unicode"));
  CHECK_THAT(reader.refusal("db = \"a\\U00110000\"\n"), Catch::StartsWith("npacd.toml:1: key 'db': \\U00110000 is not"));
  CHECK_THAT(reader.refusal("db = \"a\\u12\"\n"), Catch::StartsWith("npacd.toml:1: key 'db': \\u12\" is not"));
}

TEST_CASE("a NUL byte anywhere in the configuration file is refused with its line") {
  NpacdReader reader;
  CHECK_THAT(reader.refusal(bytes("durability = \"full\"\ndb = \"var/x.db\0y\"\n")),
             Catch::StartsWith("npacd.toml:2: a control character (0x00)"));
  CHECK_THAT(reader.refusal(bytes("# a comment \0\n")), Catch::StartsWith("npacd.toml:1: a control character (0x00)"));
}

TEST_CASE("a string that decodes to a NUL in the configuration file is refused with its line and key") {
  NpacdReader reader;
  CHECK(reader.refusal("db = \"var/x.db\\u0000y\"\n") ==
        "npacd.toml:1: key 'db': the string holds a NUL character (\\u0000), which no setting can hold");
}

TEST_CASE("a control character other than a tab in the configuration file is refused with its line") {
  NpacdReader reader;
  CHECK_THAT(reader.refusal("db = \"var/\x1b[31m.db\"\n"), Catch::StartsWith("npacd.toml:1: a control character (0x1b)"));
  CHECK_THAT(reader.refusal("threads = 2\r# hidden\n"), Catch::StartsWith("npacd.toml:1: a control character (0x0d)"));
  CHECK(valueOf(reader, "threads\t=\t2\t# tabs are blanks\r\n") == "2");  // and CRLF ends a line
}

TEST_CASE("an integer in the configuration file is read in decimal with underscores only between digits") {
  NpacdReader reader;
  CHECK(valueOf(reader, "api-max-connections = 1_000\n") == "1000");
  CHECK(valueOf(reader, "api-max-connections = +32\n") == "32");
  for (const char* bad : {"1__2", "_12", "12_", "010", "0x10", "1e3", "1.0", "12 34", "\"12\"", "--1"}) {
    INFO(bad);
    CHECK_THAT(reader.refusal(std::string("api-max-per-client = ") + bad + "\n"),
               Catch::StartsWith(std::string("npacd.toml:1: key 'api-max-per-client' takes an integer")) ||
                   Catch::StartsWith("npacd.toml:1: key 'api-max-per-client': unexpected text"));
  }
}

TEST_CASE("a number outside its option's range in the configuration file is refused with its line and key") {
  NpacdReader reader;
  for (const NumberOption& option : kNumberOptions) {
    const std::string key(option.name);
    std::vector<std::string> outside{"-1", "99999999999999999999999", std::to_string(option.range.max + 1)};
    if (option.range.min > 0) outside.push_back(std::to_string(option.range.min - 1));
    for (const std::string& value : outside) {
      INFO(key << " = " << value);
      CHECK(reader.refusal("# the limits\n" + key + " = " + value + "\n") ==
            "npacd.toml:2: key '" + key + "': must be an integer from " + std::to_string(option.range.min) + " to " +
                std::to_string(option.range.max) + ", got '" + value + "'");
    }
    CHECK(valueOf(reader, key + " = " + std::to_string(option.range.max)) == std::to_string(option.range.max));
  }
}

TEST_CASE("every number option of npacd is an integer key of the configuration file with a range") {
  NpacdReader reader;
  int integers = 0;
  for (const ConfigKey& key : reader.keys()) {
    INFO(key.name);
    CHECK((key.kind == ConfigKey::Kind::kInteger) == numberRangeOf(key.name).has_value());
    integers += key.kind == ConfigKey::Kind::kInteger ? 1 : 0;
  }
  CHECK(integers == static_cast<int>(std::size(kNumberOptions)));
}

TEST_CASE("a value the option refuses in the configuration file is refused by the reader with its line and key") {
  NpacdReader reader;
  CHECK(reader.refusal("db = \"\"\n") ==
        "npacd.toml:1: key 'db': must name a SQLite file or a postgresql:// URL, not be empty");
  CHECK_THAT(reader.refusal("db-timeout = \"-1\"\n"),
             Catch::StartsWith("npacd.toml:1: key 'db-timeout': must be a duration from 100ms to 10m"));
  CHECK_THAT(reader.refusal("listen = \"localhost:102\"\n"),
             Catch::StartsWith("npacd.toml:1: key 'listen': 'localhost' in 'localhost:102' is not a numeric IP address"));
  CHECK(reader.refusal("check-db = \"fast\"\n") ==
        "npacd.toml:1: key 'check-db': must be auto, quick, full or off, got 'fast'");
  CHECK_THAT(reader.refusal("node = \"a b\"\n"), Catch::StartsWith("npacd.toml:1: key 'node': a node name holds only"));
}

TEST_CASE("a multi-line string in the configuration file is refused with its line") {
  NpacdReader reader;
  CHECK_THAT(reader.refusal("db = \"\"\"var/x.db\"\"\"\n"),
             Catch::StartsWith("npacd.toml:1: key 'db': multi-line strings are not used"));
  CHECK_THAT(reader.refusal("db = '''var/x.db'''\n"), Catch::StartsWith("npacd.toml:1: key 'db': multi-line strings"));
}
