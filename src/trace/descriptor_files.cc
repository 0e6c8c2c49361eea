// DescriptorFiles (trace/replay_target.h): the plain-descriptor I/O under the mount and directory
// targets.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include <fmt/format.h>

#include "trace/replay_target.h"
#include "util/cachestat.h"

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

// The kernel holds the range if it holds each of its pages (a ccfs page of 8 KiB is two of the
// kernel's 4 KiB ones, and a read needs both). A kernel that refuses (ENOSYS before 6.5; EPERM
// where cachestat is kept to files the caller may write) is not asked again.
int DescriptorFiles::Holds(uint32_t file, uint64_t offset, size_t len) {
  if (len == 0 || !cachestat_works_.load(std::memory_order_relaxed)) return -1;
  uint64_t cached = 0;
  if (CachedPages(fds_[file], offset, len, &cached) != 0) {
    cachestat_works_.store(false, std::memory_order_relaxed);
    return -1;
  }
  const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  const uint64_t first = offset / page;
  const uint64_t last = (offset + len - 1) / page;
  return cached >= last - first + 1 ? 1 : 0;
}

int64_t DescriptorFiles::CachedBytes() {
  if (!cachestat_works_.load(std::memory_order_relaxed)) return -1;
  uint64_t total = 0;
  for (int fd : fds_) {
    uint64_t cached = 0;
    if (CachedPages(fd, 0, 0, &cached) != 0) {
      cachestat_works_.store(false, std::memory_order_relaxed);
      return -1;
    }
    total += cached;
  }
  return static_cast<int64_t>(total * static_cast<uint64_t>(::sysconf(_SC_PAGESIZE)));
}

}  // namespace ccfs
