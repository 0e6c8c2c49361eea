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
// (fuse_lowlevel_notify_inval_inode) until it is back within the budget (a page asked for again
// after such a drop, which readers keep coming back to, gets one more turn first), so the kernel's pages plus
// the daemon's tiers stay within `memory` whoever reads the mount. With kernel_evict = false it
// only forgets them, leaving the kernel's share to a memory cgroup the readers share with the
// daemon. The kernel may drop pages earlier by itself (memory pressure, a memory cgroup); the
// ledger then over-counts and the kernel's share is under-used, never exceeded. A page the kernel
// asks for again while the ledger still holds it was dropped by the kernel itself; those are
// counted (rerequests).
//
// The daemon also tells the kernel to drop its pages of a file that changed underneath: the change
// detector found a new signature at an open, an attribute reply, a read that reached the daemon,
// or the open-file watch's check of each open file every attr_timeout (open_file_watch.h).
//
// Invalidations run on a thread of their own, never on a request thread: the kernel locks a page
// while a READ fills it, and invalidating that page from the thread that must reply would deadlock.
//
// Demotion (kernel_demote = exclusive | mix, set by SetDemoter): before the thread tells the kernel
// to drop pages for the budget it asks for their bytes back (fuse_lowlevel_notify_retrieve, one
// request per run of consecutive pages). The kernel takes references to the pages it still holds
// when it receives the request, so the invalidation that follows cannot lose them; their bytes
// arrive later as a request of their own (the retrieve_reply op), which looks the run up here
// (Retrieved) and hands each page to the engine (PageCache::Demote). A run is forgotten, and its
// reply ignored, when its file is forgotten or invalidated first. "mix" asks back every page until
// the compressed tier first fills, then only pages that came back: asked for again while the
// ledger held them, or after they left it (a table of fingerprints of the pages dropped lately).
//
// Thread-safety: every method may be called from any thread. Ownership: the session is borrowed
// from Start until Stop (call Stop before fuse_session_destroy).
#ifndef CCFS_FUSE_KERNEL_CACHE_H_
#define CCFS_FUSE_KERNEL_CACHE_H_

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <list>
#include <map>
#include <thread>
#include <unordered_map>

#include "cache/admission.h"
#include "fuse/fuse_api.h"
#include "util/cgroup_memory.h"
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
    uint64_t retrieved_pages = 0;  // demotion: pages asked back before they were dropped
    uint64_t kept_out_pages = 0;   // DropSoon's pages
  };

  // kernel_demote = exclusive | mix (Options::demotes()).
  struct Demoter {
    bool mix = false;                      // only pages that came back, once `full` was true
    std::function<bool()> full;            // the compressed tier has no room left
    std::function<uint64_t()> epoch;       // PageCache::ChangeEpoch
  };
  // A retrieve's run, as Retrieved gives it back.
  struct Run {
    uint64_t file_id = 0;
    uint64_t first_page = 0;
    uint64_t pages = 0;
    uint64_t epoch = 0;  // the engine's change epoch before the bytes were asked for
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

  // Turns demotion on. Call before Start.
  void SetDemoter(Demoter demoter);

  // Bytes [off, off + len) of inode `ino` (the engine's file `file_id`) were sent to the kernel's
  // page cache (a READ reply or a WRITE through the mount).
  void Served(fuse_ino_t ino, uint64_t file_id, uint64_t off, uint64_t len);
  // Bytes [off, off + len) of `ino` were sent to the kernel but must not stay there (the engine's
  // curve samples them: PageCache::KeepsFromKernel): the kernel is told to drop the pages they
  // touch (whole ccfs pages) kKeepOutDelay later, and the ledger never holds them. Not at once: that would race the reader
  // the reply woke, which would find its page gone and ask again.
  void DropSoon(fuse_ino_t ino, uint64_t off, uint64_t len);
  // The reply to the retrieve tagged `cookie` arrived: fills *run and returns true once, or false
  // when the run was cancelled (its file forgotten or invalidated) or is unknown.
  bool Retrieved(uint64_t cookie, Run* run);
  // Bytes from `off` (rounded down to a page; 0: the whole file) to the end of `ino` changed in a
  // way the kernel did not see (underneath, or an append that landed elsewhere): drop them.
  void InvalidateFrom(fuse_ino_t ino, uint64_t off);
  // Waits until every notification queued so far has been sent (the kernel returns from an
  // invalidation once the pages are gone), for at most `timeout`. Returns false on a timeout, or at
  // once when the thread is not running. Call without any Inode's sig_mu held: a READ of the same
  // file may be what the kernel's invalidation is waiting for, and its handler takes sig_mu.
  bool AwaitSent(std::chrono::milliseconds timeout);
  // The kernel forgot `ino` (its pages went with it).
  void Forget(fuse_ino_t ino);
  // A new budget (compressed_percent changed live). Shrinking evicts at once.
  void SetBudget(uint64_t budget_bytes);

  Counts counts() const;
  // Whether the ledger holds page `page` (page_size) of `ino`: the kernel was sent it and has not
  // been told to drop it (it may have dropped it by itself).
  bool Holds(fuse_ino_t ino, uint64_t page) const;
  uint32_t page_size() const { return page_size_; }

 private:
  static constexpr uint64_t kMaxSlackBytes = 4ull << 20;
  static constexpr auto kKeepOutDelay = std::chrono::milliseconds(2);
  // Demotion: how often the cgroup's room is looked at, the least share of the budget the ledger
  // keeps, and what it leaves free below the cgroup's limit.
  static constexpr auto kRoomPeriod = std::chrono::milliseconds(100);
  static constexpr uint64_t kMinRoomShare = 8;  // 1/8
  static constexpr uint64_t kRoomMarginBytes = 2ull << 20;
  // A retrieve asks for at most this much (the kernel caps it at max_write).
  static constexpr uint64_t kMaxRetrieveBytes = 128ull << 10;
  // Runs asked back and not answered yet, at most (the oldest are forgotten past it).
  static constexpr size_t kMaxPendingRuns = 4096;

  struct Key {
    fuse_ino_t ino;
    uint64_t page;
    uint64_t file_id;
    bool came_back;  // asked for again after the ledger had the kernel drop it (or the kernel
                     // dropped it by itself)
    bool spared = false;  // came_back, and given one more turn of the ledger for it
  };
  using Order = std::list<Key>;
  // One notification for the thread: drop a range (cookie 0), or ask a run back (cookie: its
  // entry in pending_).
  struct Notice {
    fuse_ino_t ino;
    uint64_t off;
    uint64_t len;  // 0 = to the end of the file
    uint64_t cookie = 0;
    uint64_t seq = 0;  // QueueLocked's count, for AwaitSent
  };
  struct Pending {
    fuse_ino_t ino;
    Run run;
  };

  void EvictOverBudgetLocked() REQUIRES(mu_);
  // Whether the page leaving the ledger is asked back first.
  bool DemotesLocked(const Key& k) REQUIRES(mu_);
  void DropFileLocked(fuse_ino_t ino, uint64_t from_page) REQUIRES(mu_);
  void QueueLocked(const Notice& n) REQUIRES(mu_);
  void Loop();
  // Demotion: the ledger's budget from the room the cgroup `m` leaves (null: no limit, the whole
  // budget). The thread's, every kRoomPeriod.
  void FitLocked(const CgroupMemory* m) REQUIRES(mu_);
  // Sends one notification; the thread's, without mu_.
  void Send(fuse_session* se, const Notice& n);

  const uint32_t page_size_;
  // kernel_evict: pages over the budget are dropped from the kernel (true) or only from the ledger
  // (false: a memory cgroup holds the kernel's share; the ledger stays a bounded estimate).
  const bool evict_;
  mutable Mutex mu_;
  CondVar wake_;
  uint64_t budget_pages_ GUARDED_BY(mu_);   // what the ledger holds to now
  uint64_t nominal_pages_ GUARDED_BY(mu_);  // the kernel's share of memory (SetBudget)
  uint64_t slack_pages_ GUARDED_BY(mu_) = 0;

  // The ledger: served pages, oldest first, and where each sits in that order.
  Order order_ GUARDED_BY(mu_);
  std::unordered_map<fuse_ino_t, std::unordered_map<uint64_t, Order::iterator>> where_
      GUARDED_BY(mu_);
  std::deque<Notice> queue_ GUARDED_BY(mu_);
  // DropSoon's notices, oldest first, each queued once its time comes.
  struct Soon {
    std::chrono::steady_clock::time_point due;
    Notice notice;
  };
  std::deque<Soon> soon_ GUARDED_BY(mu_);
  // Notifications queued and sent (or skipped) so far; the thread sends them in queue order.
  uint64_t queued_seq_ GUARDED_BY(mu_) = 0;
  uint64_t sent_seq_ GUARDED_BY(mu_) = 0;
  CondVar sent_;
  // Demotion: the policy, pages dropped lately (mix), runs asked back and not answered yet.
  bool demote_ = false;  // set before Start
  Demoter demoter_;
  bool filled_ GUARDED_BY(mu_) = false;  // mix: the compressed tier has been full
  cache::GhostSet dropped_ GUARDED_BY(mu_);
  std::map<uint64_t, Pending> pending_ GUARDED_BY(mu_);
  uint64_t next_cookie_ GUARDED_BY(mu_) = 1;
  Counts counts_ GUARDED_BY(mu_);
  fuse_session* session_ GUARDED_BY(mu_) = nullptr;
  bool stop_ GUARDED_BY(mu_) = false;
  bool warned_ = false;  // only the invalidation thread touches it
  std::thread thread_;
};

}  // namespace ccfs

#endif  // CCFS_FUSE_KERNEL_CACHE_H_
