#include "npac/npacd/initial_token.h"

#include "db/postgres_connection.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "db/audit_store.h"
#include "db/token_store.h"
#include "db/transaction.h"

namespace npac::npacd {
namespace {

constexpr int kMaxInitialNames = 100;

bool hasUsableOperatorToken(const std::vector<db::ApiToken>& tokens) {
  for (const db::ApiToken& t : tokens) {
    if (t.role == db::TokenRole::kOperator && !t.revoked_at) return true;
  }
  return false;
}

std::string freeInitialName(const std::vector<db::ApiToken>& tokens) {
  for (int n = 1; n <= kMaxInitialNames; ++n) {
    std::string name = n == 1 ? std::string(kInitialTokenName) : std::string(kInitialTokenName) + "-" + std::to_string(n);
    bool used = false;
    for (const db::ApiToken& t : tokens) used = used || t.name == name;
    if (!used) return name;
  }
  return "";
}

std::string systemError(const std::string& what, const std::string& file) {
  return what + " " + file + ": " + std::strerror(errno);
}

// The first line of `file` without surrounding whitespace; nullopt if it cannot be read.
std::optional<std::string> readFirstLine(const std::string& file) {
  std::ifstream in(file);
  if (!in) return std::nullopt;
  std::string line;
  std::getline(in, line);
  const auto first = line.find_first_not_of(" \t\r");
  if (first == std::string::npos) return std::string();
  return line.substr(first, line.find_last_not_of(" \t\r") - first + 1);
}

db::Status writeAll(int fd, const std::string& text, const std::string& file) {
  std::size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return db::Status::make(db::Status::Code::kIoError, systemError("cannot write", file));
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0) return db::Status::make(db::Status::Code::kIoError, systemError("cannot fsync", file));
  return db::Status::ok();
}

// The token file `out.file` exists: the token it names, or a warning when it holds none
// npacd can use (it is left as it is).
db::Result<InitialToken> fromTokenFile(db::TokenStore& tokens, InitialToken out) {
  std::optional<std::string> secret = readFirstLine(out.file);
  if (!secret) {
    out.warning = systemError("cannot read the token file", out.file);
    return out;
  }
  db::Result<db::ApiToken> token = tokens.verify(*secret);
  if (token && !token->revoked_at) {
    out.name = token->name;
    return out;
  }
  if (!token && !token.status().isNotFound() && token.status().code() != db::Status::Code::kInvalidArgument) {
    return token.status();
  }
  out.warning = "the token file " + out.file + " holds " +
                (token ? "token '" + token->name + "', which is revoked" : std::string("no token npacd issued")) +
                ": it is left as it is; delete it and restart npacd for a new operator token if no "
                "operator token is left";
  return out;
}

}  // namespace

std::string tokenFilePath(const std::string& db_path, const std::string& token_file) {
  if (!token_file.empty()) return token_file;
  if (db::isPostgresUrl(db_path)) return "var/npacd.db.token";
  return db_path + ".token";
}

db::Result<InitialToken> ensureInitialToken(db::Database& db, const std::string& token_path, db::TimeMs now) {
  InitialToken out;
  out.file = token_path;
  db::TokenStore tokens(db);

  if (::access(out.file.c_str(), F_OK) == 0) return fromTokenFile(tokens, std::move(out));

  db::Result<std::vector<db::ApiToken>> existing = tokens.list();
  if (!existing) return existing.status();
  if (hasUsableOperatorToken(*existing)) {
    out.warning = "no token file " + out.file + ": the database has operator tokens, so none is created";
    return out;
  }
  const std::string name = freeInitialName(*existing);
  if (name.empty()) return db::Status::internal("every npacd-initial token name up to 100 is used");

  // Claim the file first (O_EXCL: never through a link or over a file someone else made),
  // mode 0600 from creation; removed again if the token cannot be stored.
  const int fd = ::open(out.file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return db::Status::make(db::Status::Code::kCantOpen, systemError("cannot create the token file", out.file));
  std::optional<db::IssuedToken> issued;
  db::Status status = [&]() -> db::Status {
    db::Transaction tx(db);
    if (db::Status s = tx.begin(); !s) return s;
    db::Result<db::IssuedToken> created = tokens.create(name, db::TokenRole::kOperator, "npacd", now);
    if (!created) return created.status();
    issued = std::move(created).value();
    db::AuditStore audit(db);
    nlohmann::json value{{"name", name}, {"role", "operator"}, {"file", out.file}};
    if (auto id = audit.append({0, now, "npacd", "token.create", "token " + name, std::nullopt, value.dump()}); !id) {
      return id.status();
    }
    if (db::Status s = writeAll(fd, issued->secret + "\n", out.file); !s) return s;
    return tx.commit();
  }();
  ::close(fd);
  if (!status) {
    ::unlink(out.file.c_str());
    return status;
  }
  out.name = name;
  out.created = true;
  return out;
}

}  // namespace npac::npacd
