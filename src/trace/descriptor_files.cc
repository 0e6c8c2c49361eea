// DescriptorFiles (trace/replay_target.h): the plain-descriptor I/O under the mount and directory
// targets.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include <fmt/format.h>

#include "trace/replay_target.h"
#include "util/cachestat.h"
#include "util/descriptor_limit.h"

namespace ccfs {

void OwnedFd::Reset() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

Status DescriptorFiles::Open(const Dataset& dataset, bool writable,
                             std::function<void(int fd, bool first)> on_open) {
  const int flags = (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC;
  const size_t count = dataset.files().size();
  opened_ = std::make_unique<std::atomic<bool>[]>(count);
  for (size_t f = 0; f < count; ++f) opened_[f].store(false);
  return files_.Open(count, RaiseDescriptorLimit() / 2,
                     [this, &dataset, flags, on_open](uint32_t file, OwnedFd* fd) {
                       std::string path = dataset.FullPath(file);
                       *fd = OwnedFd(::open(path.c_str(), flags));
                       if (fd->get() < 0) return Status::FromErrno(errno, path);
                       const bool first = !opened_[file].exchange(true);
                       if (on_open) on_open(fd->get(), first);
                       return Status::Ok();
                     });
}

Status DescriptorFiles::Read(uint32_t file, uint64_t offset, size_t len, char* buf) {
  BoundedFiles<OwnedFd>::Lease fd;
  Status s = files_.Acquire(file, &fd);
  if (!s.ok()) return s;
  size_t done = 0;
  while (done < len) {
    ssize_t n = ::pread(fd->get(), buf + done, len - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::FromErrno(errno, fmt::format("pread file #{} at {}", file, offset));
    if (n == 0) break;
    done += static_cast<size_t>(n);
  }
  return Status::Ok();
}

Status DescriptorFiles::Write(uint32_t file, uint64_t offset, const char* buf, size_t len) {
  BoundedFiles<OwnedFd>::Lease fd;
  Status s = files_.Acquire(file, &fd);
  if (!s.ok()) return s;
  size_t done = 0;
  while (done < len) {
    ssize_t n = ::pwrite(fd->get(), buf + done, len - done, static_cast<off_t>(offset + done));
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
  BoundedFiles<OwnedFd>::Lease fd;
  if (!files_.Acquire(file, &fd).ok()) return -1;
  uint64_t cached = 0;
  if (CachedPages(fd->get(), offset, len, &cached) != 0) {
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
  for (uint32_t file = 0; file < files_.size(); ++file) {
    BoundedFiles<OwnedFd>::Lease fd;
    if (!files_.Acquire(file, &fd).ok()) return -1;
    uint64_t cached = 0;
    if (CachedPages(fd->get(), 0, 0, &cached) != 0) {
      cachestat_works_.store(false, std::memory_order_relaxed);
      return -1;
    }
    total += cached;
  }
  return static_cast<int64_t>(total * static_cast<uint64_t>(::sysconf(_SC_PAGESIZE)));
}

}  // namespace ccfs
