// SmallDisk: a tmpfs of a given size mounted on a fresh directory for one test case,
// unmounted and removed on destruction, for the tests of npacd on a full disk. Mounting needs
// CAP_SYS_ADMIN; mounted() says whether it worked and error() why not.
// Threading: one thread.
#pragma once

#include <fcntl.h>
#include <sys/mount.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>
#include <system_error>

#include "tests/npac/npacd/npacd_fixture.h"

namespace npacd_test {

// A tmpfs of `size` bytes mounted on a fresh directory; unmounted on destruction.
class SmallDisk {
 public:
  explicit SmallDisk(std::size_t size) {
    static std::atomic<int> counter{0};
    dir_ = fs::temp_directory_path() / label("npacd-flood-disk-", getpid()).append("-").append(std::to_string(counter++));
    fs::create_directories(dir_);
    const std::string data = "size=" + std::to_string(size);
    mounted_ = ::mount("tmpfs", dir_.c_str(), "tmpfs", 0, data.c_str()) == 0;
    if (!mounted_) error_ = std::strerror(errno);
  }
  ~SmallDisk() {
    if (mounted_) ::umount2(dir_.c_str(), MNT_DETACH);
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  SmallDisk(const SmallDisk&) = delete;
  SmallDisk& operator=(const SmallDisk&) = delete;
  bool mounted() const { return mounted_; }
  const std::string& error() const { return error_; }
  fs::path file(const std::string& name) const { return dir_ / name; }

  // Writes a filler file until the filesystem refuses (ENOSPC). True if it did.
  bool fill() {
    const int fd = ::open(file("filler").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) return false;
    const std::string chunk(4096, 'f');
    int error = 0;
    for (;;) {
      const ssize_t n = ::write(fd, chunk.data(), chunk.size());
      if (n < 0) {
        error = errno;
        break;
      }
      if (n == 0) break;
    }
    ::close(fd);
    return error == ENOSPC;
  }
  void makeRoom() { fs::remove(file("filler")); }

 private:
  fs::path dir_;
  bool mounted_ = false;
  std::string error_;
};

}  // namespace npacd_test
