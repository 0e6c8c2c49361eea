// ReplayTarget: where a replay's page operations go, one implementation per kind of target
// (trace/replay.h describes the three). Internal to the replay.
//
//   engine     (engine_target.cc)    a PageCache in this process over the data set's files.
//   mount      (mount_target.cc)     pread/pwrite through a ccfs mount; counters from the daemon
//                                    (client/mount_client.h).
//   directory  (directory_target.cc) pread/pwrite on a plain directory: the kernel page cache,
//                                    optionally confined to a MemoryCgroup for the target's life.
//
// Ownership: a target borrows the Dataset it was opened on (which must outlive it) and owns its
// descriptors, cache or cgroup.
// Thread-safety: Read and Write may be called from many threads at once; Counters from one other
// thread meanwhile (the progress monitor); Quiesce with no operation running.
#ifndef CCFS_TRACE_REPLAY_TARGET_H_
#define CCFS_TRACE_REPLAY_TARGET_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ccfs/options.h"
#include "ccfs/stats.h"
#include "ccfs/status.h"
#include "trace/bounded_files.h"
#include "trace/dataset.h"

namespace ccfs {

class ReplayTarget {
 public:
  virtual ~ReplayTarget() = default;

  // Reads `len` bytes of file #`file` at `offset` into buf (REQUIRES: buf aligned to kIoAlignment
  // and at least a page). A short file reads short, as pread does.
  virtual Status Read(uint32_t file, uint64_t offset, size_t len, char* buf) = 0;
  virtual Status Write(uint32_t file, uint64_t offset, const char* buf, size_t len) = 0;

  // The cache's counters now; false if this target has none. The directory target has no hit
  // counter: it reports only `misses`, the pages this process made the block layer read since it
  // started, and the caller works out hits from its own read count.
  virtual bool Counters(CacheStats* stats) = 0;

  // Lets background work finish between warm-up and measurement (the engine's evictor).
  virtual void Quiesce() {}

  // Whether a read of [offset, offset + len) of file #`file` made now would be answered by the
  // kernel's page cache without a request to the daemon: 1 yes (it holds every page of the range),
  // 0 no, -1 not known (the target has no kernel raw tier, or the kernel will not say). Only looks:
  // the pages' recency is not touched. The runner asks before a measured read, off the clock.
  virtual int KernelHolds(uint32_t file, uint64_t offset, size_t len) { return -1; }

  // The bytes of the data set's files the kernel's page cache holds now, where it is ccfs's raw
  // tier; -1 where it is not, or the kernel will not say. Only looks.
  virtual int64_t KernelCachedBytes() { return -1; }
};

// Opens every file of `dataset` read-only (or read-write) through a PosixBackingStore and builds a
// PageCache with `options` over them.
Status OpenEngineTarget(const Dataset& dataset, const Options& options, bool writable,
                        std::unique_ptr<ReplayTarget>* target);

// Opens every file of `dataset`, whose root is a ccfs mount point; `daemon` is the mount's counters
// at the start. With raw_tier = kernel (daemon.kernel_raw_tier) the kernel's pages of the mount's
// files are part of ccfs's memory: the pages cached before the run are dropped (they were charged
// to no budget), the files are read with POSIX_FADV_RANDOM as the page cache baseline's are, and
// this process (the reader, whose reads the kernel's pages are charged to) and
// the daemon join a fresh memory cgroup of the mount's `memory` for the run (memory_cgroup.h), so
// everything ccfs uses is held to the same RAM as the page cache baseline. Its KernelHolds asks
// cachestat(2) (Linux 6.5+) and answers -1 from the first refusal on.
Status OpenMountTarget(const Dataset& dataset, bool writable, const CacheStats& daemon,
                       std::unique_ptr<ReplayTarget>* target);

// Opens every file of `dataset` (a plain directory), drops its cached pages and turns read-ahead
// off (a miss reads the page asked for, as the cache would). With cgroup_memory > 0 this process
// then runs in a fresh MemoryCgroup of that size until the target is destroyed.
Status OpenDirectoryTarget(const Dataset& dataset, bool writable, uint64_t cgroup_memory,
                           std::unique_ptr<ReplayTarget>* target);

// Builds a T and calls its Open(args...); on success hands it over as *target. For the factories
// above, whose targets open in two steps.
template <typename T, typename... Args>
Status OpenTargetAs(std::unique_ptr<ReplayTarget>* target, Args&&... args) {
  auto t = std::make_unique<T>();
  Status s = t->Open(std::forward<Args>(args)...);
  if (!s.ok()) return s;
  *target = std::move(t);
  return Status::Ok();
}

// A descriptor that closes itself.
class OwnedFd {
 public:
  OwnedFd() = default;
  explicit OwnedFd(int fd) : fd_(fd) {}
  OwnedFd(OwnedFd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  OwnedFd& operator=(OwnedFd&& o) noexcept {
    if (this != &o) {
      Reset();
      fd_ = std::exchange(o.fd_, -1);
    }
    return *this;
  }
  ~OwnedFd() { Reset(); }
  int get() const { return fd_; }

 private:
  void Reset();
  int fd_ = -1;
};

// The data set's files opened as plain descriptors, for the mount and directory targets and
// advise's measurement: all up front while they fit in half the descriptor limit, else on demand
// (trace/bounded_files.h).
class DescriptorFiles {
 public:
  DescriptorFiles() = default;
  DescriptorFiles(const DescriptorFiles&) = delete;
  DescriptorFiles& operator=(const DescriptorFiles&) = delete;

  // `on_open` (may be empty) runs on each descriptor when it is opened (posix_fadvise hints);
  // `first` is true the first time its file is opened (a file opened again on demand, in a tree
  // beyond the bound, keeps what the kernel cached of it).
  Status Open(const Dataset& dataset, bool writable,
              std::function<void(int fd, bool first)> on_open = nullptr);

  // pread/pwrite until `len` bytes are done (a read stops early at end of file).
  Status Read(uint32_t file, uint64_t offset, size_t len, char* buf);
  Status Write(uint32_t file, uint64_t offset, const char* buf, size_t len);

  // Whether the kernel's page cache holds all of the range: 1 yes, 0 no, -1 not known (cachestat(2)
  // refused; never asked again). Only looks. Any thread.
  int Holds(uint32_t file, uint64_t offset, size_t len);
  // The bytes of all the files the kernel's page cache holds; -1 not known (as Holds).
  int64_t CachedBytes();

 private:
  BoundedFiles<OwnedFd> files_;
  std::unique_ptr<std::atomic<bool>[]> opened_;  // per file: opened before
  std::atomic<bool> cachestat_works_{true};
};

}  // namespace ccfs

#endif  // CCFS_TRACE_REPLAY_TARGET_H_
