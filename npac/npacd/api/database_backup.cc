#include "npac/npacd/api/database_backup.h"

#include <openssl/evp.h>
#include <sys/resource.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <utility>
#include <vector>

namespace npac::npacd {
namespace {

// Below npacd's other threads (nice 0): a backup takes what CPU the core leaves. Linux
// keeps the nice value per thread (setpriority(2), NOTES); a refusal (no permission to
// change it) leaves the worker at the normal priority, which only costs speed elsewhere.
constexpr int kWorkerNice = 10;

// The SHA-256 of `path` in lower-case hex, or why it could not be read; kShutdown once
// `stopping` is set (npacd stopping must not wait for a large file to be read).
db::Result<std::string> sha256Of(const std::string& path, std::uint64_t* bytes, const std::atomic<bool>& stopping) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) {
    return db::Status::make(db::Status::Code::kIoError, "cannot read the backup copy " + path + ": " +
                                                            std::strerror(errno), path);
  }
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr);
  std::vector<unsigned char> buffer(1 << 20);
  *bytes = 0;
  std::size_t n = 0;
  while (!stopping && (n = std::fread(buffer.data(), 1, buffer.size(), file)) > 0) {
    EVP_DigestUpdate(ctx, buffer.data(), n);
    *bytes += n;
  }
  const bool failed = std::ferror(file) != 0;
  std::fclose(file);
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int length = 0;
  EVP_DigestFinal_ex(ctx, digest.data(), &length);
  EVP_MD_CTX_free(ctx);
  if (failed) return db::Status::make(db::Status::Code::kIoError, "cannot read the backup copy " + path, path);
  if (stopping) return db::Status::shutdown("the backup was interrupted: npacd is stopping");
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  for (unsigned int i = 0; i < length; ++i) {
    hex.push_back(kHex[digest[i] >> 4]);
    hex.push_back(kHex[digest[i] & 0xf]);
  }
  return hex;
}

}  // namespace

DatabaseBackup::DatabaseBackup(PostToApiThread post, std::string database)
    : post_(std::move(post)), database_(std::move(database)), copy_path_(database_ + ".backup.tmp") {}

std::shared_ptr<DatabaseBackup> DatabaseBackup::start(PostToApiThread post, std::string database, Ready ready) {
  std::shared_ptr<DatabaseBackup> backup(new DatabaseBackup(std::move(post), std::move(database)));
  // A copy left by an npacd that died during a backup is ours by its name: one npacd per
  // database (the instance lock), one backup at a time.
  ::unlink(backup->copy_path_.c_str());
  backup->worker_ = std::thread([raw = backup.get(), ready = std::move(ready)]() mutable { raw->run(std::move(ready)); });
  return backup;
}

DatabaseBackup::~DatabaseBackup() {
  cancel();
  if (worker_.joinable()) worker_.join();
  ::unlink(copy_path_.c_str());
}

void DatabaseBackup::run(Ready ready) {
  ::setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), kWorkerNice);
  db::Result<Copy> result = [&]() -> db::Result<Copy> {
    if (db::Status copied = copier_.copy(database_, copy_path_); !copied.isOk()) return copied;
    Copy copy;
    copy.path = copy_path_;
    db::Result<std::string> digest = sha256Of(copy_path_, &copy.bytes, stopping_);
    if (!digest) return digest.status();
    copy.sha256 = *digest;
    db::Result<db::BackupSummary> summary = db::inspectSqliteBackup(copy_path_, db::BackupCheck::kSchemaOnly);
    if (!summary) return summary.status();
    copy.schema_version = summary->schema_version;
    return copy;
  }();
  // The object outlives this thread (its destructor joins it), but not necessarily the
  // posted answer: that holds a weak reference.
  post_([weak = weak_from_this(), ready = std::move(ready), result = std::move(result)] {
    std::shared_ptr<DatabaseBackup> self = weak.lock();
    if (self == nullptr || self->cancelled_) return;
    ready(result);
  });
}

void DatabaseBackup::send(std::shared_ptr<ResponseStream> stream, Ended ended) {
  stream_ = std::move(stream);
  ended_ = std::move(ended);
  file_ = std::fopen(copy_path_.c_str(), "rb");
  if (file_ == nullptr) {
    return end(false, "cannot read the backup copy " + copy_path_ + ": " + std::strerror(errno));
  }
  stream_->onClose([weak = weak_from_this()](const std::string& why) {
    if (std::shared_ptr<DatabaseBackup> self = weak.lock()) self->end(self->finished_, why);
  });
  sendNextPiece();
}

void DatabaseBackup::sendNextPiece() {
  if (cancelled_ || stream_ == nullptr || stream_->closed() || finished_) return;
  std::string piece(kPieceBytes, '\0');
  const std::size_t n = std::fread(piece.data(), 1, piece.size(), file_);
  if (n == 0) {
    if (std::ferror(file_) != 0) return end(false, "reading the backup copy failed");
    finished_ = true;
    stream_->finish();  // onClose reports the end once the last chunk is written
    return;
  }
  piece.resize(n);
  if (!stream_->send(std::move(piece))) return;  // closed: onClose says why
  sent_ += n;
  stream_->whenQueueEmpty([weak = weak_from_this()] {
    if (std::shared_ptr<DatabaseBackup> self = weak.lock()) self->sendNextPiece();
  });
}

void DatabaseBackup::end(bool complete, const std::string& why) {
  auto keep = shared_from_this();  // `ended` may drop the ApiContext's reference
  if (file_ != nullptr) {
    std::fclose(file_);
    file_ = nullptr;
  }
  ::unlink(copy_path_.c_str());
  if (stream_ != nullptr && !stream_->closed()) stream_->finish();
  Ended ended = std::exchange(ended_, nullptr);
  if (ended) ended(complete, why);
}

void DatabaseBackup::cancel() {
  if (cancelled_) return;
  cancelled_ = true;
  ended_ = nullptr;
  stopping_ = true;
  copier_.interrupt();
  if (file_ != nullptr) {
    std::fclose(file_);
    file_ = nullptr;
  }
  // The stream is not finished here — a finished body would look whole — but left to the
  // server, whose stop() cuts it; the client sees a body cut short (npacctl says so).
  stream_.reset();
  ::unlink(copy_path_.c_str());
}

}  // namespace npac::npacd
