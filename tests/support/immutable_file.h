// setImmutable: sets or clears a file's or directory's immutable attribute (chattr +i), the
// tests' way to make writes fail with EPERM even as root — an unwritable WAL, database or
// directory. Threading: any thread; the attribute is the file system's.
#pragma once

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <filesystem>

namespace npac::testing {

// False when the file cannot be opened or the file system has no such attribute.
inline bool setImmutable(const std::filesystem::path& path, bool on) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) return false;
  int flags = 0;
  bool ok = ::ioctl(fd, FS_IOC_GETFLAGS, &flags) == 0;
  if (ok) {
    flags = on ? (flags | FS_IMMUTABLE_FL) : (flags & ~FS_IMMUTABLE_FL);
    ok = ::ioctl(fd, FS_IOC_SETFLAGS, &flags) == 0;
  }
  ::close(fd);
  return ok;
}

}  // namespace npac::testing
