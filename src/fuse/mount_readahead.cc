#include "fuse/mount_readahead.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <sstream>
#include <string>

namespace ccfs {
namespace {

// Undoes the kernel's "\ooo" escapes in /proc/self/mountinfo paths (space, tab, newline, '\').
std::string Unescape(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size() && s[i + 1] >= '0' && s[i + 1] <= '3' &&
        s[i + 2] >= '0' && s[i + 2] <= '7' && s[i + 3] >= '0' && s[i + 3] <= '7') {
      out += static_cast<char>((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
      i += 3;
    } else {
      out += s[i];
    }
  }
  return out;
}

// The "MAJ:MIN" of the top mount at `mountpoint`, or "" if none is listed.
std::string DeviceOf(const std::string& mountpoint) {
  // Each line: mount id, parent id, MAJ:MIN, root, mount point, then options not needed here.
  std::ifstream in("/proc/self/mountinfo");
  std::string line, found;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string id, parent, dev, root, point;
    if (!(fields >> id >> parent >> dev >> root >> point)) continue;
    if (Unescape(point) == mountpoint) found = dev;
  }
  return found;
}

}  // namespace

Status SetMountReadahead(const std::string& mountpoint, uint64_t bytes) {
  const std::string dev = DeviceOf(mountpoint);
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
