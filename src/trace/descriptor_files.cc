// DescriptorFiles (trace/replay_target.h): the plain-descriptor I/O under the mount and directory
// targets.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include <fmt/format.h>

#include "trace/replay_target.h"

namespace ccfs {

DescriptorFiles::~DescriptorFiles() {
  for (int fd : fds_) ::close(fd);
}

Status DescriptorFiles::Open(const Dataset& dataset, bool writable) {
  for (uint32_t i = 0; i < dataset.files().size(); ++i) {
    std::string path = dataset.FullPath(i);
    int fd = ::open(path.c_str(), (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC);
    if (fd < 0) return Status::FromErrno(errno, path);
    fds_.push_back(fd);
  }
  return Status::Ok();
}

Status DescriptorFiles::Read(uint32_t file, uint64_t offset, size_t len, char* buf) {
  size_t done = 0;
  while (done < len) {
    ssize_t n = ::pread(fds_[file], buf + done, len - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::FromErrno(errno, fmt::format("pread file #{} at {}", file, offset));
    if (n == 0) break;
    done += static_cast<size_t>(n);
  }
  return Status::Ok();
}

Status DescriptorFiles::Write(uint32_t file, uint64_t offset, const char* buf, size_t len) {
  size_t done = 0;
  while (done < len) {
    ssize_t n = ::pwrite(fds_[file], buf + done, len - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Status::FromErrno(errno, fmt::format("pwrite file #{} at {}", file, offset));
    done += static_cast<size_t>(n);
  }
  return Status::Ok();
}

}  // namespace ccfs
