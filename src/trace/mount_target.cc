// The mount target (trace/replay_target.h): page reads through a ccfs mount, so a replay measures
// what an application would see, FUSE trip included; the daemon's counters come from the mount.
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>

#include <fmt/format.h>

#include "client/mount_client.h"
#include "trace/memory_cgroup.h"
#include "trace/replay_target.h"

namespace ccfs {

namespace {

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

  int KernelHolds(uint32_t file, uint64_t offset, size_t len) override {
    return kernel_raw_tier_ ? files_.Holds(file, offset, len) : -1;
  }

 private:
  std::string mountpoint_;
  bool kernel_raw_tier_ = false;
  DescriptorFiles files_;
  std::unique_ptr<MemoryCgroup> cgroup_;  // after files_: the processes leave it first
};

}  // namespace

Status OpenMountTarget(const Dataset& dataset, bool writable, const CacheStats& daemon,
                       std::unique_ptr<ReplayTarget>* target) {
  return OpenTargetAs<MountTarget>(target, dataset, writable, daemon);
}

}  // namespace ccfs
