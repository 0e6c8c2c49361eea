// MemoryCgroup: a fresh memory cgroup (v1) with a limit, for comparing caches at equal RAM.
//
// The kernel charges page-cache pages to the cgroup of the process that faulted them in, so a
// process inside a cgroup of N bytes gets at most N bytes of page cache: the baseline a ccfs cache
// of N bytes is measured against. Create() makes /sys/fs/cgroup/memory/ccfs-replay-PID (PID: this
// process) with memory.limit_in_bytes set; AddProcess() moves a process in (this one for a replay
// of a plain directory; later a daemon and its readers together).
//
// The destructor moves what is left in the cgroup (this process, a daemon it added) back to the
// root cgroup, asks the kernel to reclaim the cgroup's page cache (memory.force_empty) and removes
// the directory. A process ended by a signal runs no destructor: a guardian, a child forked by
// Create() and left outside the cgroup, waits for this process to end and does the same, so a
// replay killed (kill -9, its cgroup's OOM killer) leaves no cgroup behind and no daemon held to
// its limit. Create() also removes the cgroups of replays whose guardian died with them.
//
// Needs the cgroup v1 memory controller mounted at /sys/fs/cgroup/memory and the right to create
// cgroups there (root): Create() says which is missing.
//
// Thread-safety: not thread-safe; one owner.
#ifndef CCFS_TRACE_MEMORY_CGROUP_H_
#define CCFS_TRACE_MEMORY_CGROUP_H_

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>

#include "ccfs/status.h"

namespace ccfs {

class MemoryCgroup {
 public:
  static constexpr const char* kRoot = "/sys/fs/cgroup/memory";

  // Creates the cgroup with a limit of `limit` bytes. On error nothing is left behind.
  static Status Create(uint64_t limit, std::unique_ptr<MemoryCgroup>* cgroup);
  ~MemoryCgroup();
  MemoryCgroup(const MemoryCgroup&) = delete;
  MemoryCgroup& operator=(const MemoryCgroup&) = delete;

  // Moves process `pid` into the cgroup; its later page-cache use is charged here, and so are the
  // pages it had charged elsewhere (move_charge_at_immigrate), so memory a process allocated
  // before it joined counts too. The destructor (or the guardian) moves it back to the root
  // cgroup.
  Status AddProcess(pid_t pid);

  // The cgroup's directory.
  const std::string& path() const { return path_; }

 private:
  MemoryCgroup() = default;

  std::string path_;
  bool created_ = false;
  pid_t guardian_ = -1;  // the child that removes the cgroup if this process dies first
};

}  // namespace ccfs

#endif  // CCFS_TRACE_MEMORY_CGROUP_H_
