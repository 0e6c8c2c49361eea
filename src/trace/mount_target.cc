// The mount target (trace/replay_target.h): page reads through a ccfs mount, so a replay measures
// what an application would see, FUSE trip included; the daemon's counters come from the mount.
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>

#include <fmt/format.h>

#include "client/mount_client.h"
#include "trace/memory_cgroup.h"
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

class MountTarget final : public ReplayTarget {
 public:
  Status Open(const Dataset& dataset, bool writable, const CacheStats& daemon) {
    mountpoint_ = dataset.root();
    kernel_raw_tier_ = daemon.kernel_raw_tier;
    Status s = files_.Open(dataset, writable);
    if (!s.ok() || !daemon.kernel_raw_tier) return s;
    for (int fd : files_.fds()) {
      // Clean pages go without a request to the daemon (whose ledger then over-counts, harmlessly).
      ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
      // As the page cache baseline's reader does (directory_target.cc): the trace's reads are its
      // own; the kernel's readahead would otherwise take cached neighbours for a stream and fill
      // the cache with pages nobody asked for.
      ::posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
    }
    const pid_t daemon_pid = ReadDaemonPid(mountpoint_, std::chrono::milliseconds(2000));
    if (daemon_pid <= 0) {
      return Status::IOError(0, mountpoint_ + ": cannot read the daemon's pid from stats.json");
    }
    s = MemoryCgroup::Create(daemon.memory_bytes, &cgroup_);
    if (s.ok()) s = cgroup_->AddProcess(::getpid());
    if (s.ok()) s = cgroup_->AddProcess(daemon_pid);
    if (!s.ok()) {
      return Status::IOError(0, fmt::format("raw_tier = kernel: cannot hold the reader and the "
                                            "daemon to memory = {} bytes: {}",
                                            daemon.memory_bytes, s.ToString()));
    }
    return s;
  }

  Status Read(uint32_t file, uint64_t offset, size_t len, char* buf) override {
    return files_.Read(file, offset, len, buf);
  }
  Status Write(uint32_t file, uint64_t offset, const char* buf, size_t len) override {
    return files_.Write(file, offset, buf, len);
  }
  bool Counters(CacheStats* stats) override {
    return ReadMountStatsFile(mountpoint_, stats).ok();
  }

  // The kernel holds the range if it holds each of its pages (its pages: a ccfs page of 8 KiB is
  // two of the kernel's 4 KiB ones, and a read needs both). A kernel that refuses (ENOSYS before
  // 6.5; EPERM where cachestat is kept to files the caller may write) is not asked again.
  int KernelHolds(uint32_t file, uint64_t offset, size_t len) override {
    if (!kernel_raw_tier_ || len == 0 || !cachestat_works_.load(std::memory_order_relaxed)) {
      return -1;
    }
    CachestatRange range{offset, len};
    Cachestat cs{};
    if (::syscall(__NR_cachestat, files_.fd(file), &range, &cs, 0) != 0) {
      cachestat_works_.store(false, std::memory_order_relaxed);
      return -1;
    }
    const uint64_t first = offset / kernel_page_;
    const uint64_t last = (offset + len - 1) / kernel_page_;
    return cs.nr_cache >= last - first + 1 ? 1 : 0;
  }

 private:
  std::string mountpoint_;
  bool kernel_raw_tier_ = false;
  const uint64_t kernel_page_ = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  std::atomic<bool> cachestat_works_{true};
  DescriptorFiles files_;
  std::unique_ptr<MemoryCgroup> cgroup_;  // after files_: the processes leave it first
};

}  // namespace

Status OpenMountTarget(const Dataset& dataset, bool writable, const CacheStats& daemon,
                       std::unique_ptr<ReplayTarget>* target) {
  return OpenTargetAs<MountTarget>(target, dataset, writable, daemon);
}

}  // namespace ccfs
