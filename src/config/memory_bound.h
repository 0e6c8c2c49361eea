// The upper bound of `memory`: what the machine and the memory cgroup the daemon runs in can hold.
//
// The daemon's tiers are anonymous memory and, without swap, cannot be reclaimed: a budget beyond
// the machine's RAM ends in the OOM killer, and a budget beyond the room of the memory cgroup the
// daemon runs in ends in that cgroup's OOM killer, which ends the mount (readers then get
// ECONNABORTED). So `ccfs mount` refuses, before anything is allocated or mounted, a `memory`
// above the machine's RAM (MemTotal) or above the cgroup's limit, and a budget whose part held by
// the daemon (all of it in daemon mode; in kernel mode the compressed tier and the staging tier,
// since the kernel's share is page cache that the cgroup reclaims) plus the daemon's own memory
// beside its tiers (kDaemonOwnBytes) does not fit in the cgroup's limit.
//
// Thread-safety: plain functions; any thread.
#ifndef CCFS_CONFIG_MEMORY_BOUND_H_
#define CCFS_CONFIG_MEMORY_BOUND_H_

#include <cstdint>

#include "ccfs/options.h"
#include "ccfs/status.h"

namespace ccfs {

// The daemon's resident memory beside its tiers' pages when it serves a small budget: code and
// libraries, thread stacks, the FUSE request buffers, the page index's first buckets, malloc's
// arenas. `ccfs stat` shows the real figure (rss_bytes); this is the allowance the mount check
// makes for it.
inline constexpr uint64_t kDaemonOwnBytes = 16ull << 20;

struct HostMemory {
  uint64_t ram_bytes = 0;           // MemTotal; 0: unknown, not checked
  uint64_t cgroup_limit_bytes = 0;  // the memory cgroup's limit (the tightest of its ancestors'); 0: none

  // This machine and this process's memory cgroup, now.
  static HostMemory Read();
};

// Ok, or InvalidArgument naming `memory` (and, in kernel mode, `compressed_percent`) with the
// figures, when `o` cannot fit in `host` as the file comment says.
Status CheckMemoryFits(const Options& o, const HostMemory& host);

}  // namespace ccfs

#endif  // CCFS_CONFIG_MEMORY_BOUND_H_
