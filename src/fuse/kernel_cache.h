// KernelCache: the kernel's page cache as ccfs's raw tier (raw_tier = kernel), seen from the
// daemon.
//
// In kernel mode data files are opened with keep_cache: the kernel keeps the pages the daemon sent
// and answers repeats itself, without a request. The daemon cannot see those hits, but it sees
// every page the kernel gets: a page enters the kernel's cache of a FUSE file only through a READ
// reply or a WRITE through the mount (ccfs never pushes pages with notify_store). So the pages the
// daemon has served, and not since invalidated, are an upper bound on what the kernel holds of the
// mount's files. KernelCache keeps that ledger, one entry per ccfs page (page_size; a partly served
// page counts whole), in the order the pages were served, and holds it within a budget
// (Options::kernel_budget(): the raw share of `memory` less the daemon's staging tier). Once the
// ledger passes the budget by a slack (1/32 of it, at most kMaxSlackBytes, so that one wake-up of
// the invalidation thread drops a batch), it tells the kernel to drop the pages served longest ago
// (fuse_lowlevel_notify_inval_inode) until it is back within the budget, so the kernel's pages plus
// the daemon's tiers stay within `memory` whoever reads the mount. With kernel_evict = false it
// only forgets them, leaving the kernel's share to a memory cgroup the readers share with the
// daemon. The kernel may drop pages earlier by itself (memory pressure, a memory cgroup); the
// ledger then over-counts and the kernel's share is under-used, never exceeded. A page the kernel
// asks for again while the ledger still holds it was dropped by the kernel itself; those are
// counted (rerequests).
//
// The daemon also tells the kernel to drop its pages of a file that changed underneath (the
// change detector found a new signature on a read that reached the daemon), beyond what the
// kernel's own check does when it refreshes attributes (auto_inval_data, every attr_timeout).
//
// Invalidations run on a thread of their own, never on a request thread: the kernel locks a page
// while a READ fills it, and invalidating that page from the thread that must reply would deadlock.
//
// Thread-safety: every method may be called from any thread. Ownership: the session is borrowed
// from Start until Stop (call Stop before fuse_session_destroy).
#ifndef CCFS_FUSE_KERNEL_CACHE_H_
#define CCFS_FUSE_KERNEL_CACHE_H_

#include <cstdint>
#include <deque>
#include <list>
#include <thread>
#include <unordered_map>

#include "fuse/fuse_api.h"
#include "util/mutex.h"
#include "util/thread_annotations.h"

namespace ccfs {

class KernelCache {
 public:
  struct Counts {
    uint64_t budget_bytes = 0;     // what the kernel may hold of the mount's files
    uint64_t held_pages = 0;       // the ledger: served and not invalidated (an upper bound)
    uint64_t held_bytes = 0;       // held_pages * page_size
    uint64_t rerequests = 0;       // pages asked for again while still in the ledger
    uint64_t evicted_pages = 0;    // pages the daemon told the kernel to drop for the budget
  };

  KernelCache(uint64_t budget_bytes, uint32_t page_size, bool evict);
  ~KernelCache();
  KernelCache(const KernelCache&) = delete;
  KernelCache& operator=(const KernelCache&) = delete;

  // Starts the invalidation thread on `se` (borrowed until Stop). Before Start, invalidations are
  // only recorded (the ledger still counts).
  void Start(fuse_session* se);
  // Stops the thread once its current invalidation returns; what is still queued is dropped (the
  // mount is going away). Call while requests are still answered. Idempotent.
  void Stop();

  // Bytes [off, off + len) of inode `ino` were sent to the kernel's page cache (a READ reply or a
  // WRITE through the mount).
  void Served(fuse_ino_t ino, uint64_t off, uint64_t len);
  // Bytes from `off` (rounded down to a page; 0: the whole file) to the end of `ino` changed in a
  // way the kernel did not see (underneath, or an append that landed elsewhere): drop them.
  void InvalidateFrom(fuse_ino_t ino, uint64_t off);
  // The kernel forgot `ino` (its pages went with it).
  void Forget(fuse_ino_t ino);
  // A new budget (compressed_percent changed live). Shrinking evicts at once.
  void SetBudget(uint64_t budget_bytes);

  Counts counts() const;

 private:
  static constexpr uint64_t kMaxSlackBytes = 4ull << 20;

  struct Key {
    fuse_ino_t ino;
    uint64_t page;
  };
  using Order = std::list<Key>;
  struct Invalidation {
    fuse_ino_t ino;
    uint64_t off;
    uint64_t len;  // 0 = to the end of the file
  };

  void EvictOverBudgetLocked() REQUIRES(mu_);
  void DropFileLocked(fuse_ino_t ino, uint64_t from_page) REQUIRES(mu_);
  void QueueLocked(const Invalidation& inv) REQUIRES(mu_);
  void Run();

  const uint32_t page_size_;
  // kernel_evict: pages over the budget are dropped from the kernel (true) or only from the ledger
  // (false: a memory cgroup holds the kernel's share; the ledger stays a bounded estimate).
  const bool evict_;
  mutable Mutex mu_;
  CondVar wake_;
  uint64_t budget_pages_ GUARDED_BY(mu_);
  uint64_t slack_pages_ GUARDED_BY(mu_) = 0;

  // The ledger: served pages, oldest first, and where each sits in that order.
  Order order_ GUARDED_BY(mu_);
  std::unordered_map<fuse_ino_t, std::unordered_map<uint64_t, Order::iterator>> where_
      GUARDED_BY(mu_);
  std::deque<Invalidation> queue_ GUARDED_BY(mu_);
  Counts counts_ GUARDED_BY(mu_);
  fuse_session* session_ GUARDED_BY(mu_) = nullptr;
  bool stop_ GUARDED_BY(mu_) = false;
  bool warned_ = false;  // only the invalidation thread touches it
  std::thread thread_;
};

}  // namespace ccfs

#endif  // CCFS_FUSE_KERNEL_CACHE_H_
