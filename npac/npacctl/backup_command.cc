// `npacctl backup FILE`: a consistent copy of npacd's SQLite database, taken while npacd
// runs (POST /v1/backup, docs/API.md "Backup") and written to FILE, then checked before
// it is called a backup (docs/OPERATIONS.md "Backup, restore and upgrade").
//
// FILE holds everything npacd keeps, the NPAC's private keys and the token digests too, so
// it is created mode 0600, and never over an existing file. The bytes go first to a
// temporary file beside FILE (FILE.XXXXXX, also 0600), which becomes FILE only when
//   - the body is whole: as many bytes as X-Npac-Backup-Bytes and the same SHA-256 as
//     X-Npac-Backup-Sha256 (a body cut short by a dropped connection or a stopping npacd
//     fails here),
//   - it is flushed to disk (fsync), and
//   - SQLite finds it sound (PRAGMA integrity_check) at the schema version npacd said;
// so a FILE that exists is a backup npacd can start on. Anything else removes the
// temporary file and exits non-zero: 2 for a FILE that cannot be written (before npacd is
// asked), 1 for a refusal or a copy that fails its checks, 3 when npacd cannot be reached
// or the answer is cut short.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>

#include "db/sqlite_backup.h"
#include "npac/npacctl/server_command.h"
#include "npac/npacctl/token_source.h"

namespace npac::npacctl {

using nlohmann::json;
using V = boost::beast::http::verb;

namespace {

namespace fs = std::filesystem;

// How long npacctl waits for npacd to begin its answer (npacd copies the whole database
// first) and for each piece of it after.
constexpr std::chrono::seconds kBackupWait{3600};

// Why FILE cannot be the backup's name, or "" when it can.
std::string unusableTarget(const std::string& file) {
  if (file.empty()) return "FILE is empty: name the file to write the backup to";
  struct stat st{};
  if (::lstat(file.c_str(), &st) == 0) {
    return file + (S_ISDIR(st.st_mode) ? " is a directory: name a file in it" : " exists: npacctl backup never "
                                                                                 "overwrites a file; name a new one");
  }
  fs::path dir = fs::path(file).parent_path();
  if (dir.empty()) dir = ".";
  if (::stat(dir.c_str(), &st) != 0) return "the directory " + dir.string() + " does not exist";
  if (!S_ISDIR(st.st_mode)) return dir.string() + " is not a directory";
  if (::access(dir.c_str(), W_OK | X_OK) != 0) {
    return "cannot write in " + dir.string() + ": " + std::strerror(errno);
  }
  return "";
}

std::string hex(const unsigned char* data, unsigned int length) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < length; ++i) {
    out.push_back(kHex[data[i] >> 4]);
    out.push_back(kHex[data[i] & 0xf]);
  }
  return out;
}

// The temporary file, removed unless kept().
class PartialFile {
 public:
  explicit PartialFile(const std::string& file) : path_(file + ".XXXXXX") {
    fd_ = ::mkstemp(path_.data());  // mode 0600 (glibc, POSIX.1-2008)
    if (fd_ < 0) error_ = "cannot create " + path_ + ": " + std::strerror(errno);
    digest_ = EVP_MD_CTX_new();
    EVP_DigestInit_ex(digest_, EVP_sha256(), nullptr);
  }
  ~PartialFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!kept_) ::unlink(path_.c_str());
    EVP_MD_CTX_free(digest_);
  }
  PartialFile(const PartialFile&) = delete;
  PartialFile& operator=(const PartialFile&) = delete;

  const std::string& path() const { return path_; }
  const std::string& error() const { return error_; }
  std::uint64_t bytes() const { return bytes_; }

  bool write(std::string_view data) {
    EVP_DigestUpdate(digest_, data.data(), data.size());
    while (!data.empty()) {
      const ssize_t n = ::write(fd_, data.data(), data.size());
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        error_ = "cannot write " + path_ + ": " + std::strerror(errno);
        return false;
      }
      data.remove_prefix(static_cast<std::size_t>(n));
      bytes_ += static_cast<std::uint64_t>(n);
    }
    return true;
  }
  std::string sha256() {
    std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
    unsigned int length = 0;
    EVP_DigestFinal_ex(digest_, digest.data(), &length);
    return hex(digest.data(), length);
  }
  // fsync and close; false (and error()) when the disk did not take it.
  bool flush() {
    if (::fsync(fd_) != 0 || ::close(fd_) != 0) {
      error_ = "cannot flush " + path_ + " to disk: " + std::strerror(errno);
      fd_ = -1;
      return false;
    }
    fd_ = -1;
    return true;
  }
  // Gives the file its final name without replacing one that appeared meanwhile (link(2)
  // fails with EEXIST), and flushes the directory entry.
  bool keepAs(const std::string& file) {
    if (::link(path_.c_str(), file.c_str()) != 0) {
      error_ = "cannot name the backup " + file + ": " + std::strerror(errno);
      return false;
    }
    kept_ = true;
    ::unlink(path_.c_str());
    fs::path dir = fs::path(file).parent_path();
    const int dfd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
      ::fsync(dfd);
      ::close(dfd);
    }
    return true;
  }

 private:
  std::string path_;
  int fd_ = -1;
  std::string error_;
  std::uint64_t bytes_ = 0;
  EVP_MD_CTX* digest_ = nullptr;
  bool kept_ = false;
};

std::string header(const ApiClient::DownloadHead& head, const std::string& name) {
  for (const auto& [key, value] : head.fields) {
    if (key.size() == name.size() && strncasecmp(key.c_str(), name.c_str(), name.size()) == 0) return value;
  }
  return "";
}

int backup(const ServerFlags& flags, const std::string& file) {
  if (std::string why = unusableTarget(file); !why.empty()) {
    std::cerr << "npacctl backup: " << why << "\n";
    return kExitUsage;
  }
  // npacd answers once the whole copy is made, which for a large database takes a while:
  // the answer's head, and then each piece, may take up to kBackupWait.
  ApiClient client(apiAddress(), kBackupWait);
  if (!authorize(client)) return kExitUsage;
  PartialFile partial(file);
  if (!partial.error().empty()) {
    std::cerr << "npacctl backup: " << partial.error() << "\n";
    return kExitUsage;
  }
  ApiClient::DownloadHead head;
  ApiOutcome outcome = client.download(
      V::post, "/v1/backup", json::object(),
      [&](const ApiClient::DownloadHead& h) {
        head = h;
        return true;
      },
      [&](std::string_view data) { return partial.write(data); });
  if (!partial.error().empty()) {
    std::cerr << "npacctl backup: " << partial.error() << "\n";
    return kExitApiError;
  }
  if (!outcome.reply) {
    std::cerr << "npacctl backup: " << outcome.failure << "\n";
    return kExitUnreachable;
  }
  if (!outcome.reply->ok()) {
    if (flags.json && !outcome.reply->body.is_discarded()) std::cout << outcome.reply->body.dump() << "\n";
    std::cerr << "npacctl backup: " << outcome.reply->errorText() << "\n";
    if (std::string hint = operatorHint(*outcome.reply, client); !hint.empty()) {
      std::cerr << "npacctl backup: " << hint << "\n";
    }
    return kExitApiError;
  }
  // Whole: npacd's length and digest, then flushed, then sound at npacd's schema.
  const std::string expected_bytes = header(head, "X-Npac-Backup-Bytes");
  const std::string expected_sha256 = header(head, "X-Npac-Backup-Sha256");
  const std::string sha256 = partial.sha256();
  if (expected_bytes != std::to_string(partial.bytes()) || expected_sha256 != sha256) {
    std::cerr << "npacctl backup: the copy received is not the one npacd sent (" << partial.bytes()
              << " bytes, SHA-256 " << sha256 << "; npacd sent " << (expected_bytes.empty() ? "?" : expected_bytes)
              << " bytes, SHA-256 " << (expected_sha256.empty() ? "?" : expected_sha256) << "): nothing written\n";
    return kExitApiError;
  }
  if (!partial.flush()) {
    std::cerr << "npacctl backup: " << partial.error() << "\n";
    return kExitApiError;
  }
  db::Result<db::BackupSummary> summary = db::inspectSqliteBackup(partial.path());
  if (!summary) {
    std::cerr << "npacctl backup: the copy cannot be read as a database: " << summary.status().toString()
              << ": nothing written\n";
    return kExitApiError;
  }
  if (!summary->sound()) {
    std::cerr << "npacctl backup: the copy fails PRAGMA integrity_check (" << summary->integrity_problems.front()
              << "): nothing written\n";
    return kExitApiError;
  }
  const std::string expected_schema = header(head, "X-Npac-Backup-Schema-Version");
  if (expected_schema != std::to_string(summary->schema_version)) {
    std::cerr << "npacctl backup: the copy is at schema " << summary->schema_version << ", npacd said "
              << expected_schema << ": nothing written\n";
    return kExitApiError;
  }
  if (!partial.keepAs(file)) {
    std::cerr << "npacctl backup: " << partial.error() << "\n";
    return kExitApiError;
  }
  const db::BackupSummary& s = *summary;
  if (flags.json) {
    std::cout << json{{"file", file},
                      {"bytes", partial.bytes()},
                      {"sha256", sha256},
                      {"schema_version", s.schema_version},
                      {"integrity", "ok"},
                      {"providers", s.providers},
                      {"messages", s.messages},
                      {"unacknowledged", s.unacknowledged},
                      {"npac_keys", s.npac_keys},
                      {"tokens", s.tokens}}
                     .dump()
              << "\n";
  } else {
    std::cout << "wrote " << file << ": " << partial.bytes() << " bytes, schema " << s.schema_version
              << ", integrity ok, SHA-256 " << sha256 << "\n"
              << "holds " << s.providers << " providers, " << s.messages << " messages (" << s.unacknowledged
              << " not yet acknowledged), " << s.npac_keys << " NPAC keys, " << s.tokens << " API tokens\n"
              << "it holds the NPAC's private keys and the token digests: keep it as you keep the database (mode "
                 "0600)\n";
  }
  return kExitOk;
}

}  // namespace

void addBackupCommand(CLI::App& app, int& exit_code) {
  auto* c = app.add_subcommand("backup", "copy npacd's database while it runs into FILE, and check the copy");
  auto f = std::make_shared<ServerFlags>();
  auto file = std::make_shared<std::string>();
  c->add_option("FILE", *file, "the new file to write (never an existing one); mode 0600")->required();
  addServerFlags(*c, *f);
  c->callback([=, &exit_code] { exit_code = backup(*f, *file); });
}

}  // namespace npac::npacctl
