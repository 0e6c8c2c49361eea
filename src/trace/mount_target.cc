// The mount target (trace/replay_target.h): page reads through a ccfs mount, so a replay measures
// what an application would see, FUSE trip included; the daemon's counters come from the mount.
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <string>

#include <fmt/format.h>

#include "client/mount_client.h"
#include "trace/memory_cgroup.h"
#include "trace/replay_target.h"
#include "util/proc_status.h"

namespace ccfs {

namespace {

// The reader's own heap, stack and the pages in flight: kept free beside the daemon's tiers.
constexpr uint64_t kReaderRoom = 2ull << 20;

// The daemon's memory cannot be reclaimed (it is anonymous, and there is no swap to take it): the
// cgroup must hold what it has beside its tiers' budgets, or its OOM killer ends the daemon, and
// the mount with it, once the tiers fill. The kernel's cached pages are what the cgroup squeezes.
Status CheckDaemonFits(pid_t daemon_pid, const CacheStats& daemon) {
  const uint64_t anon = ProcStatusBytes(daemon_pid, "RssAnon:");  // 0 when unknown
  const uint64_t tiers_now = daemon.raw_bytes + daemon.compressed_bytes;
  const uint64_t own = anon > tiers_now ? anon - tiers_now : 0;
  const uint64_t need = own + daemon.raw_budget_bytes + daemon.compressed_budget_bytes + kReaderRoom;
  if (need <= daemon.memory_bytes) return Status::Ok();
  return Status::InvalidArgument(fmt::format(
      "raw_tier = kernel: memory = {} MiB is too small to hold the reader and the daemon in one "
      "memory cgroup: the daemon's own {:.1f} MiB, its tiers' {:.1f} MiB and {} MiB for the "
      "reader need {:.1f} MiB, and the cgroup's OOM killer would end the daemon; mount with a "
      "larger memory (or a smaller compressed_percent)",
      daemon.memory_bytes >> 20, own / 1048576.0,
      (daemon.raw_budget_bytes + daemon.compressed_budget_bytes) / 1048576.0, kReaderRoom >> 20,
      need / 1048576.0));
}

class MountTarget final : public ReplayTarget {
 public:
  Status Open(const Dataset& dataset, bool writable, const CacheStats& daemon) {
    mountpoint_ = dataset.root();
    kernel_raw_tier_ = daemon.kernel_raw_tier;
    const bool kernel_tier = daemon.kernel_raw_tier;
    Status s = files_.Open(dataset, writable, [kernel_tier](int fd, bool first) {
      if (!kernel_tier) return;
      // Clean pages go without a request to the daemon (whose ledger then over-counts, harmlessly).
      if (first) ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
      // As the page cache baseline's reader does (directory_target.cc): the trace's reads are its
      // own; the kernel's readahead would otherwise take cached neighbours for a stream and fill
      // the cache with pages nobody asked for.
      ::posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
    });
    if (!s.ok() || !daemon.kernel_raw_tier) return s;
    const pid_t daemon_pid = ReadDaemonPid(mountpoint_, std::chrono::milliseconds(2000));
    if (daemon_pid <= 0) {
      return Status::IOError(0, mountpoint_ + ": cannot read the daemon's pid from stats.json");
    }
    s = CheckDaemonFits(daemon_pid, daemon);
    if (!s.ok()) return s;
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
  int64_t KernelCachedBytes() override { return kernel_raw_tier_ ? files_.CachedBytes() : -1; }

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
