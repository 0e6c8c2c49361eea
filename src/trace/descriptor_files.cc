// DescriptorFiles (trace/replay_target.h): the plain-descriptor I/O under the mount and directory
// targets.
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

#include <fmt/format.h>

#include "trace/replay_target.h"

namespace ccfs {

namespace {

// cachestat(2) (Linux 6.5): how many pages of a file range the page cache holds, without touching
// them. The C library has no wrapper for it and Debian 12's kernel headers predate it, so the call
// and its structures are spelled here (451 is its number in the table most architectures share).
#ifndef __NR_cachestat
#define __NR_cachestat 451
#endif
struct CachestatRange {
  uint64_t off;
  uint64_t len;
};
struct Cachestat {
  uint64_t nr_cache;
  uint64_t nr_dirty;
  uint64_t nr_writeback;
  uint64_t nr_evicted;
  uint64_t nr_recently_evicted;
};

}  // namespace

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
  CachestatRange range{offset, len};
  Cachestat cs{};
  if (::syscall(__NR_cachestat, fds_[file], &range, &cs, 0) != 0) {
    cachestat_works_.store(false, std::memory_order_relaxed);
    return -1;
  }
  const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  const uint64_t first = offset / page;
  const uint64_t last = (offset + len - 1) / page;
  return cs.nr_cache >= last - first + 1 ? 1 : 0;
}

}  // namespace ccfs
