#include "npac/npacctl/token_source.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

namespace npac::npacctl {
namespace {

namespace fs = std::filesystem;

TokenOptions& globalOptions() {
  static TokenOptions options;
  return options;
}

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? value : "";
}

enum class ReadOutcome { kRead, kMissing, kUnreadable, kEmpty };

ReadOutcome readToken(const fs::path& file, std::string* token) {
  std::error_code ec;
  if (!fs::exists(file, ec)) return ReadOutcome::kMissing;
  std::ifstream in(file);
  if (!in) return ReadOutcome::kUnreadable;
  std::string line;
  std::getline(in, line);
  const auto first = line.find_first_not_of(" \t\r");
  if (first == std::string::npos) return ReadOutcome::kEmpty;
  *token = line.substr(first, line.find_last_not_of(" \t\r") - first + 1);
  return ReadOutcome::kRead;
}

std::string why(ReadOutcome outcome) {
  switch (outcome) {
    case ReadOutcome::kMissing: return "no such file";
    case ReadOutcome::kUnreadable: return "cannot be read (permission? npacd creates it mode 0600 for its own user)";
    case ReadOutcome::kEmpty: return "is empty";
    case ReadOutcome::kRead: break;
  }
  return "";
}

}  // namespace

void addTokenOptions(CLI::App& app) {
  TokenOptions& options = globalOptions();
  app.add_option("--token", options.token, "admin API bearer token (else $NPACCTL_TOKEN, --token-file, ...)");
  app.add_option("--token-file", options.token_file,
                 "file holding the admin API token (else $NPACCTL_TOKEN_FILE, then npacd.db.token and "
                 "var/npacd.db.token here and in each parent, then /var/lib/npacd/npacd.db.token)");
}

FoundToken tokenFrom(const TokenOptions& options, const std::string& cwd) {
  FoundToken found;
  if (!options.token.empty()) return FoundToken{options.token, "--token", ""};
  if (std::string t = env("NPACCTL_TOKEN"); !t.empty()) return FoundToken{t, "$NPACCTL_TOKEN", ""};
  for (auto [file, source] : {std::pair{options.token_file, std::string("--token-file")},
                              std::pair{env("NPACCTL_TOKEN_FILE"), std::string("$NPACCTL_TOKEN_FILE")}}) {
    if (file.empty()) continue;
    std::string token;
    ReadOutcome outcome = readToken(file, &token);
    if (outcome == ReadOutcome::kRead) return FoundToken{token, file, ""};
    found.error = "the token file " + file + " (" + source + ") " + why(outcome);
    return found;
  }
  std::vector<std::string> tried;
  std::string unreadable;
  std::error_code ec;
  fs::path dir = fs::absolute(cwd, ec);
  std::vector<fs::path> candidates;
  for (fs::path d = dir;; d = d.parent_path()) {
    candidates.push_back(d / "npacd.db.token");
    candidates.push_back(d / "var" / "npacd.db.token");
    if (d == d.parent_path() || d.empty()) break;
  }
  candidates.emplace_back("/var/lib/npacd/npacd.db.token");
  for (const fs::path& file : candidates) {
    std::string token;
    ReadOutcome outcome = readToken(file, &token);
    if (outcome == ReadOutcome::kRead) return FoundToken{token, file.string(), ""};
    tried.push_back(file.string());
    if (outcome != ReadOutcome::kMissing && unreadable.empty()) unreadable = file.string() + " " + why(outcome);
  }
  found.error = "no admin API token: none given by --token, $NPACCTL_TOKEN, --token-file or $NPACCTL_TOKEN_FILE";
  if (!unreadable.empty()) found.error += "; " + unreadable;
  found.error += "; tried";
  for (const std::string& t : tried) found.error += " " + t;
  found.error += " (npacd writes <db>.token at its first start: pass --token-file PATH)";
  return found;
}

bool authorize(ApiClient& client) {
  std::error_code ec;
  FoundToken found = tokenFrom(globalOptions(), fs::current_path(ec).string());
  if (found.token.empty()) {
    std::cerr << "npacctl: " << found.error << "\n";
    return false;
  }
  client.setBearerToken(found.token, found.source);
  return true;
}

}  // namespace npac::npacctl
