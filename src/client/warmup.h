// Warm-up of a running mount (`ccfs warmup`): load chosen files on purpose, say how much of them
// is cached, or drop them.
//
// Everything goes through the mount: the files are walked and opened at MOUNTPOINT, and each range
// is loaded by the daemon through the file's warm-up ioctl (ccfs/mount_protocol.h), so the pages
// enter as pages someone wants (past probation, into the compressed tier once the raw share is
// full) without crossing to this process. The daemon serves these requests like reads that miss:
// on its miss pool, beside other readers, so a warm-up costs them what a reader of the same files
// would. Under raw_tier = kernel the raw tier is the kernel's page cache, which only reads fill:
// once the daemon's tiers hold what fits, the first ranges walked, up to 9/10 of the kernel's
// share, are also read through the mount (the bytes cross to this process and are dropped).
//
// 1. Plan. PlanWarmup resolves each PATH (relative: to MOUNTPOINT; absolute: must lie inside it),
//    walks directories (symbolic links are not followed; what cannot be listed is counted as an
//    error, the walk goes on) and keeps regular files with their sizes.
// 2. Load. Warmup cuts the files into ranges of 2 MiB and loads `jobs` of them at once, in the
//    order walked. While they load it asks the daemon, again and again, what the files it has
//    loaded hold now, and stops (counting the rest as not warmed) once they take max_percent of
//    `memory`, or 95% of what the daemon's tiers may hold (under raw_tier = kernel: the
//    compressed and staging tiers; the kernel's share is read into afterwards), or once pages it
//    loaded are gone again (the cache began to push out what the warm-up brought in). So "what
//    fits" is measured, not guessed: the compressed size of a page is known only once the daemon
//    has compressed it. Ranges in flight finish: it stops within a few MiB.
// 3. Residency and eviction: what the tiers (and, under raw_tier = kernel, the kernel's page cache,
//    by cachestat(2)) hold of the files; dropping their pages (the daemon's user and root only).
//
// Errors: a PATH outside the mount is InvalidArgument naming it; a file that vanishes or cannot be
// opened is counted with its message and the rest go on; a daemon without the ioctls (an older
// ccfs) is NotSupported. Thread-safety: each call runs on its own; Warmup runs its jobs on threads
// of its own and calls `tick` on the caller's thread.
#ifndef CCFS_CLIENT_WARMUP_H_
#define CCFS_CLIENT_WARMUP_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ccfs/status.h"

namespace ccfs {

struct WarmupFile {
  std::string path;  // as opened: MOUNTPOINT/...
  uint64_t size = 0;
};

struct WarmupPlan {
  std::string mountpoint;
  std::vector<WarmupFile> files;
  uint64_t bytes = 0;  // the files' sizes, summed
  uint64_t errors = 0;
  std::string first_error;  // names the path
};

// Section 1. InvalidArgument for a PATH outside MOUNTPOINT or one that does not exist.
Status PlanWarmup(const std::string& mountpoint, const std::vector<std::string>& paths,
                  WarmupPlan* plan);

// What the cache holds of some files.
struct CachedBytes {
  uint64_t files = 0;
  uint64_t bytes = 0;             // the files' sizes
  uint64_t raw_bytes = 0;         // in the daemon's raw tier (pages x page size)
  uint64_t kernel_bytes = 0;      // raw_tier = kernel: in the kernel's page cache
  uint64_t compressed_bytes = 0;  // in the compressed tier, as file bytes (pages x page size)
  uint64_t compressed_ram = 0;    // ... and what they take there
  // Of the files' bytes, how many some tier holds: per file the tiers' sum, at most its size. With
  // kernel_demote = off the compressed tier also holds copies of pages in the kernel's share.
  uint64_t held_bytes = 0;
  bool kernel_tier = false;
  int kernel_errno = 0;  // cachestat failed with this (the kernel's share is then unknown)
  // RAM the files' pages take: raw and kernel bytes whole, compressed ones at their size.
  uint64_t footprint() const { return raw_bytes + kernel_bytes + compressed_ram; }
  uint64_t cached() const { return held_bytes; }
  void Add(const CachedBytes& o);
};

struct WarmupOptions {
  int jobs = 4;               // ranges loaded at once
  double max_percent = 100;   // stop once the files take this share of `memory` (RAM)
};

// Counters of a running warm-up, read by the caller's `tick`.
struct WarmupProgress {
  std::atomic<uint64_t> bytes_done{0};    // of the plan's bytes, handled
  std::atomic<uint64_t> bytes_loaded{0};  // read from the store (the rest was cached already)
  std::atomic<uint64_t> files_done{0};
  std::atomic<uint64_t> errors{0};
};

struct WarmupResult {
  uint64_t memory_bytes = 0;    // the mount's budget
  uint64_t limit_bytes = 0;     // max_percent of it
  uint64_t skipped_files = 0;   // not warmed: the cache was full for them
  uint64_t skipped_bytes = 0;
  bool full = false;            // stopped because pages it loaded were pushed out again
  bool at_limit = false;        // stopped at max_percent
  CachedBytes cached;           // what the files it handled hold at the end
  std::string first_error;      // names the path
  double seconds = 0;
};

// Section 2. Calls `tick` on this thread many times a second while the jobs run, and once at the
// end.
Status Warmup(const WarmupPlan& plan, const WarmupOptions& options, WarmupProgress* progress,
              const std::function<void()>& tick, WarmupResult* result);

// Section 3. Adds what the cache holds of each file to *out; errors are counted in *errors (the
// first one's message in *first_error).
Status CheckCached(const WarmupPlan& plan, CachedBytes* out, uint64_t* errors,
                   std::string* first_error);
// Drops every page of each file; *out gets what they held just before.
Status EvictCached(const WarmupPlan& plan, CachedBytes* out, uint64_t* errors,
                   std::string* first_error);

}  // namespace ccfs

#endif  // CCFS_CLIENT_WARMUP_H_
