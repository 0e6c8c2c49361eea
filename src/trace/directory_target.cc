// The directory target (trace/replay_target.h): the kernel page cache over a plain directory, the
// baseline ccfs is compared with, at equal RAM when confined to a memory cgroup.
#include <fcntl.h>
#include <unistd.h>

#include <fstream>
#include <memory>
#include <string>

#include "trace/memory_cgroup.h"
#include "trace/replay_target.h"

namespace ccfs {

namespace {

// Bytes this process made the block layer read: with read-ahead off, the page cache's misses, one
// page each — on a block device. A FUSE store's reads (sshfs, GlusterFS, delay_fs) never reach the
// block layer, so the runner asks cachestat(2) before each read instead (KernelHolds) and this is
// only the fallback where the kernel has no cachestat.
uint64_t ProcessReadBytes() {
  std::ifstream io("/proc/self/io");
  std::string key;
  uint64_t value;
  while (io >> key >> value) {
    if (key == "read_bytes:") return value;
  }
  return 0;
}

class DirectoryTarget final : public ReplayTarget {
 public:
  Status Open(const Dataset& dataset, bool writable, uint64_t cgroup_memory) {
    page_size_ = dataset.page_size();
    Status s = files_.Open(dataset, writable, [](int fd, bool first) {
      // Cold start, and no read-ahead: a miss reads the page asked for, as the cache would.
      if (first) ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
      ::posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
    });
    if (!s.ok()) return s;
    if (cgroup_memory > 0) {
      s = MemoryCgroup::Create(cgroup_memory, &cgroup_);
      if (s.ok()) s = cgroup_->AddProcess(::getpid());
      if (!s.ok()) return s;
    }
    return Status::Ok();
  }

  Status Read(uint32_t file, uint64_t offset, size_t len, char* buf) override {
    return files_.Read(file, offset, len, buf);
  }
  Status Write(uint32_t file, uint64_t offset, const char* buf, size_t len) override {
    return files_.Write(file, offset, buf, len);
  }
  bool Counters(CacheStats* stats) override {
    *stats = CacheStats();
    stats->misses = ProcessReadBytes() / page_size_;
    return true;
  }
  int KernelHolds(uint32_t file, uint64_t offset, size_t len) override {
    return files_.Holds(file, offset, len);
  }

 private:
  uint32_t page_size_ = 8192;
  DescriptorFiles files_;
  std::unique_ptr<MemoryCgroup> cgroup_;  // after files_: this process leaves it first
};

}  // namespace

Status OpenDirectoryTarget(const Dataset& dataset, bool writable, uint64_t cgroup_memory,
                           std::unique_ptr<ReplayTarget>* target) {
  return OpenTargetAs<DirectoryTarget>(target, dataset, writable, cgroup_memory);
}

}  // namespace ccfs
