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
  // What the cgroup is charged now beyond page cache (its processes' anonymous memory: the
  // daemon's and its readers'); 0 without a limit.
  uint64_t cgroup_unreclaimable_bytes = 0;
  uint64_t self_anon_bytes = 0;     // this process's anonymous resident memory (RssAnon); 0: unknown

  // This machine and this process's memory cgroup, now.
  static HostMemory Read();
};

// Room kept free in the cgroup beside what CheckSplitFits counts: a reader's heap and pages in
// flight grow between two decisions.
inline constexpr uint64_t kSplitHeadroomBytes = 4ull << 20;

// Ok, or InvalidArgument naming `memory` (and, in kernel mode, `compressed_percent`) with the
// figures, when `o` cannot fit in `host` as the file comment says.
Status CheckMemoryFits(const Options& o, const HostMemory& host);

// raw_tier = kernel, a split auto may move to: CheckMemoryFits, then whether the cgroup the daemon
// is in now holds the daemon's tiers at their budgets under `o`'s split beside what it holds
// already. A daemon may be moved into a cgroup after its mount (ccfs replay puts it beside its
// reader), so the mount's check says nothing of it. Counted: the daemon's own memory (its RssAnon
// beyond `tiers_now`, the bytes its tiers hold now; at least kDaemonOwnBytes), the cgroup's other
// unreclaimable charge (its readers'), the tiers' budgets and kSplitHeadroomBytes.
Status CheckSplitFits(const Options& o, const HostMemory& host, uint64_t tiers_now);

// raw_tier = kernel: the page cache the kernel's share can hold under `o`'s split: its budget
// (Options::kernel_budget), or less where the memory cgroup the daemon is in now cannot hold that
// much beside what CheckSplitFits counts (its limit less the daemon's own memory, its readers' and
// the daemon-held tiers at their budgets; no headroom, the kernel reclaims page cache down to the
// limit itself; the daemon's own memory as measured, below the mount's allowance too, since an
// estimate that is not a safety check should not be pessimistic). A daemon in a cgroup of
// `memory`, as ccfs replay puts it, has a kernel share smaller than its budget, and the smaller
// the higher the split.
uint64_t KernelShareBytes(const Options& o, const HostMemory& host, uint64_t tiers_now);

}  // namespace ccfs

#endif  // CCFS_CONFIG_MEMORY_BOUND_H_
