// RawTier: the page frames of the raw tier, their free list and the CLOCK hand over them.
//
// Frames live in one anonymous mapping sized for the whole memory budget (so compressed_percent can
// change live); only `capacity` frames are in use at a time, the rest are "parked" (their memory
// returned with MADV_DONTNEED). Frame memory is page-aligned, so misses can read into it with
// O_DIRECT. Nothing is allocated on a hit.
//
// What the tier costs follows the frames used, not the budget: the mapping and the owner table
// (util/lazy_array.h) take memory only as frames are first written, and frames never used yet are
// not listed anywhere: frames [0, fresh) have been handed out at least once, and `fresh_free_` of
// the frames from `fresh` on count as free. A frame is taken from the free list first (its memory
// is resident already), then from the fresh ones, so a budget larger than the data set leaves the
// rest of the mapping untouched. The CLOCK hand walks frames [0, fresh) only.
//
// owner(f) names the entry whose page frame f holds once the page is published (kRaw/kEvicting),
// or nullptr. The CLOCK hand walks frames in order; a page with uses left loses one and is passed
// over, a kRaw page at zero becomes kEvicting and is returned as a victim.
//
// Probation (TinyLFU's doorkeeper): a page loaded by a miss that the frequency sketch had not seen
// lately is put on a probation list, and sweeps take those pages first, before the hand moves,
// unless they were read again meanwhile. A page waits at least one sweep there (a page read in
// two pieces gets its second read). Under skewed reads most misses are pages read once; without
// probation each of them would hold a frame for a whole turn of the hand and push out pages read
// often. (On the 80/20 trace at C = 0: hit ratio 0.685 -> 0.698.) A page read ahead and not read
// yet (A) is passed over and put back on the list: the pages its stream has read already are the
// ones to take first, and otherwise a stream's read-ahead is evicted before its reader gets there
// whenever other pages fill the tier (a small raw share under several streams). It
// is put back until half the tier's frames' worth of pages have gone on probation after it; then
// its reader is taken not to be coming, and it goes like the rest. The list holds at most a
// quarter of the frames, but pages read ahead may fill it to all of them, and the hand passes
// over such a page while it is not read: when several readers' read-ahead outgrows a quarter of a
// small tier (kernel mode's staging tier), a page the list had no room for would otherwise go to
// the hand at its first pass, before its reader came.
//
// Thread-safety: Alloc/TryAlloc/Free/SetCapacity take mu_, Probation takes probation_mu_ (both are
// leaves: nothing is locked under them). Sweep is called by the single evictor thread only, inside
// an RCU read-side section; it takes probation_mu_ briefly. Entry states change only through the
// transitions of page_entry.h (TryTakeUse, TryBeginEviction).
#ifndef CCFS_CACHE_RAW_TIER_H_
#define CCFS_CACHE_RAW_TIER_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "cache/page_entry.h"
#include "util/lazy_array.h"
#include "util/mutex.h"

namespace ccfs::cache {

class RawTier {
 public:
  RawTier(uint32_t page_size, uint32_t max_frames, uint32_t capacity);
  ~RawTier();
  RawTier(const RawTier&) = delete;
  RawTier& operator=(const RawTier&) = delete;

  char* data(uint32_t frame) const { return base_ + static_cast<size_t>(frame) * page_size_; }
  std::atomic<PageEntry*>& owner(uint32_t frame) { return owners_[frame]; }

  // Takes a free frame without waiting; false if none is free.
  bool TryAlloc(uint32_t* frame) EXCLUDES(mu_);
  // Takes a free frame, waiting if none is free. Sets *waited_ns (0 when it did not wait).
  // `on_wait` is called (without mu_) before each wait, to wake the evictor.
  uint32_t Alloc(uint64_t* waited_ns, const std::function<void()>& on_wait) EXCLUDES(mu_);
  // Returns a frame. REQUIRES: no reader pins it and owner(frame) is nullptr.
  void Free(uint32_t frame) EXCLUDES(mu_);
  // Changes how many frames may be in use; frames beyond it are parked as they come free.
  void SetCapacity(uint32_t frames) EXCLUDES(mu_);

  // Marks a just-loaded page as the first candidate for eviction: the next sweeps take it before
  // the hand moves unless it has been read again meanwhile. Bounded; when full it is ignored.
  // `ahead`: the page was read ahead (it may be evicted and freed by the time this runs, so `e`
  // is only stored here, never read).
  void Probation(uint32_t frame, PageEntry* e, bool ahead) EXCLUDES(probation_mu_);

  // Moves up to `want` kRaw pages to kEvicting and appends them to *victims: pages on probation
  // since before the previous sweep and not read again first (those read ahead and not read yet
  // go back on the list), then the hand's (taking uses away
  // on the way, passing over pages of pinned files while it meets others). Gives up after
  // kUseMax + 1 turns of the hand. REQUIRES: RCU read-side.
  size_t Sweep(size_t want, std::vector<PageEntry*>* victims) EXCLUDES(probation_mu_);

  uint32_t page_size() const { return page_size_; }
  uint32_t max_frames() const { return max_frames_; }
  uint32_t capacity() const { return capacity_.load(std::memory_order_relaxed); }
  uint32_t free_count() const { return free_count_.load(std::memory_order_relaxed); }
  // Frames handed out at least once: the most frames that have held a page at one time.
  uint32_t used_frames() const { return fresh_.load(std::memory_order_acquire); }
  // Frames holding a page of a pinned file (P) now. Walks every frame handed out: for stats, not
  // for a read. REQUIRES: RCU read-side.
  uint64_t CountPinned() const;
  // Frames not parked (free or holding a page).
  uint32_t active() const { return active_.load(std::memory_order_relaxed); }
  uint32_t waiters() const { return waiters_.load(std::memory_order_relaxed); }

 private:
  // How many pages the probation list holds at most: a quarter of the frames, or all of them
  // while the page to be listed was read ahead and not read yet (`ahead`).
  size_t ProbationRoom(bool ahead) const;
  void ParkExcessLocked() REQUIRES(mu_);
  // Takes a free frame (the free list's first, then a fresh one); false if none is free.
  bool TakeLocked(uint32_t* frame) REQUIRES(mu_);
  uint32_t FreeLocked() const REQUIRES(mu_) {
    return static_cast<uint32_t>(free_.size()) + fresh_free_;
  }

  const uint32_t page_size_;
  const uint32_t max_frames_;
  char* base_ = nullptr;
  size_t map_bytes_ = 0;
  LazyArray<std::atomic<PageEntry*>> owners_;

  Mutex mu_;
  CondVar freed_;  // with mu_: a frame was freed or the capacity grew (signalled only with waiters)
  std::vector<uint32_t> free_ GUARDED_BY(mu_);    // used before, free now
  std::vector<uint32_t> parked_ GUARDED_BY(mu_);  // used before, parked
  uint32_t fresh_free_ GUARDED_BY(mu_) = 0;       // free frames among [fresh_, max_frames_)
  std::atomic<uint32_t> fresh_{0};  // frames [0, fresh_) have been handed out; grows under mu_
  std::atomic<uint32_t> capacity_;
  std::atomic<uint32_t> free_count_{0};
  std::atomic<uint32_t> active_{0};
  std::atomic<uint32_t> waiters_{0};

  uint32_t hand_ = 0;  // evictor thread only
  Mutex probation_mu_;
  struct OnProbation {
    uint32_t frame;
    PageEntry* e;
    uint64_t seq;  // probation_seq_ when it first went on the list
  };
  uint64_t probation_seq_ GUARDED_BY(probation_mu_) = 0;  // pages put on probation so far
  std::vector<OnProbation> probation_ GUARDED_BY(probation_mu_);
  std::vector<OnProbation> probation_work_;  // evictor thread only
  size_t probation_head_ = 0;  // evictor thread only: next in probation_work_
};

}  // namespace ccfs::cache

#endif  // CCFS_CACHE_RAW_TIER_H_
