#include "fuse/mount_readahead.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "util/mount_table.h"

namespace ccfs {

Status SetMountReadahead(const std::string& mountpoint, uint64_t bytes) {
  const std::string dev = MountDeviceAt(mountpoint);
  if (dev.empty()) {
    return Status::FromErrno(ENOENT, mountpoint + ": not in /proc/self/mountinfo");
  }
  const std::string path = "/sys/class/bdi/" + dev + "/read_ahead_kb";
  int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return Status::FromErrno(errno, path);
  const std::string kib = std::to_string(bytes / 1024);
  const ssize_t n = write(fd, kib.data(), kib.size());
  const int err = errno;
  close(fd);
  if (n != static_cast<ssize_t>(kib.size())) return Status::FromErrno(n < 0 ? err : EIO, path);
  return Status::Ok();
}

}  // namespace ccfs
