#include "cache/raw_tier.h"

#include <sys/mman.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

namespace ccfs::cache {

RawTier::RawTier(uint32_t page_size, uint32_t max_frames, uint32_t capacity)
    : page_size_(page_size),
      max_frames_(max_frames),
      owners_(max_frames),
      capacity_(capacity > max_frames ? max_frames : capacity) {
  map_bytes_ = static_cast<size_t>(page_size) * max_frames;
  // MAP_NORESERVE: frames are touched only when used; parked frames give their memory back.
  void* p = mmap(nullptr, map_bytes_, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) {
    std::perror("ccfs: mmap of the raw tier");
    std::abort();
  }
  base_ = static_cast<char*>(p);
  // Every frame is fresh: the first `capacity` are free, the rest parked, and none is listed.
  const uint32_t cap = capacity_.load();
  MutexLock lock(&mu_);
  fresh_free_ = cap;
  free_count_ = cap;
  active_ = cap;
}

RawTier::~RawTier() { munmap(base_, map_bytes_); }

bool RawTier::TakeLocked(uint32_t* frame) {
  if (!free_.empty()) {
    *frame = free_.back();
    free_.pop_back();
  } else if (fresh_free_ > 0) {
    --fresh_free_;
    *frame = fresh_.load(std::memory_order_relaxed);
    // Release: the hand that sees the new bound sees the owner table's slot of the frame as it
    // was (nullptr) or as published after this.
    fresh_.store(*frame + 1, std::memory_order_release);
  } else {
    return false;
  }
  free_count_.store(FreeLocked(), std::memory_order_relaxed);
  return true;
}

bool RawTier::TryAlloc(uint32_t* frame) {
  MutexLock lock(&mu_);
  return TakeLocked(frame);
}

uint32_t RawTier::Alloc(uint64_t* waited_ns, const std::function<void()>& on_wait) {
  *waited_ns = 0;
  MutexLock lock(&mu_);
  if (FreeLocked() == 0) {
    auto start = std::chrono::steady_clock::now();
    waiters_.fetch_add(1, std::memory_order_relaxed);
    while (FreeLocked() == 0) {
      lock.Unlock();
      on_wait();
      lock.Lock();
      if (FreeLocked() != 0) break;
      freed_.WaitFor(&mu_, std::chrono::milliseconds(5));
    }
    waiters_.fetch_sub(1, std::memory_order_relaxed);
    *waited_ns = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                           std::chrono::steady_clock::now() - start)
                                           .count());
  }
  uint32_t frame = 0;
  TakeLocked(&frame);  // cannot fail: a frame is free and mu_ is held
  return frame;
}

void RawTier::Free(uint32_t frame) {
  MutexLock lock(&mu_);
  free_.push_back(frame);
  ParkExcessLocked();
  free_count_.store(FreeLocked(), std::memory_order_relaxed);
  if (waiters_.load(std::memory_order_relaxed) > 0) freed_.SignalAll();
}

void RawTier::SetCapacity(uint32_t frames) {
  if (frames > max_frames_) frames = max_frames_;
  MutexLock lock(&mu_);
  capacity_.store(frames, std::memory_order_relaxed);
  const uint32_t fresh = fresh_.load(std::memory_order_relaxed);
  while (active_.load(std::memory_order_relaxed) < frames) {
    if (!parked_.empty()) {
      free_.push_back(parked_.back());
      parked_.pop_back();
    } else if (fresh + fresh_free_ < max_frames_) {
      ++fresh_free_;
    } else {
      break;
    }
    active_.fetch_add(1, std::memory_order_relaxed);
  }
  ParkExcessLocked();
  free_count_.store(FreeLocked(), std::memory_order_relaxed);
  if (waiters_.load(std::memory_order_relaxed) > 0) freed_.SignalAll();
}

void RawTier::ParkExcessLocked() {
  while (active_.load(std::memory_order_relaxed) > capacity_.load(std::memory_order_relaxed)) {
    if (fresh_free_ > 0) {
      --fresh_free_;  // never touched: nothing to give back
    } else if (!free_.empty()) {
      uint32_t f = free_.back();
      free_.pop_back();
      madvise(data(f), page_size_, MADV_DONTNEED);
      parked_.push_back(f);
    } else {
      break;
    }
    active_.fetch_sub(1, std::memory_order_relaxed);
  }
}

size_t RawTier::ProbationRoom(bool ahead) const {
  const size_t capacity = capacity_.load(std::memory_order_relaxed);
  return ahead ? capacity : capacity / 4;
}

void RawTier::Probation(uint32_t frame, PageEntry* e, bool ahead) {
  MutexLock lock(&probation_mu_);
  ++probation_seq_;
  if (probation_.size() >= ProbationRoom(ahead)) return;
  probation_.push_back(OnProbation{frame, e, probation_seq_});
}

uint64_t RawTier::CountPinned() const {
  uint64_t n = 0;
  const uint32_t used = fresh_.load(std::memory_order_acquire);
  for (uint32_t f = 0; f < used; ++f) {
    const PageEntry* e = owners_[f].load(std::memory_order_acquire);
    if (e == nullptr) continue;
    const uint64_t s = e->state.load(std::memory_order_relaxed);
    n += (s & kPinBit) && (KindOf(s) == kRaw || KindOf(s) == kEvicting);
  }
  return n;
}

size_t RawTier::Sweep(size_t want, std::vector<PageEntry*>* victims) {
  size_t taken = 0;
  // Pages put on probation before the previous sweep: one sweep's worth of reads has had the
  // chance to read them again (the second half of a page read in two pieces, say).
  while (taken < want && probation_head_ < probation_work_.size()) {
    const OnProbation p = probation_work_[probation_head_++];
    const uint32_t f = p.frame;
    PageEntry* const pe = p.e;
    // Still the page that was put on probation (the frame may have been reused since)?
    PageEntry* e = owners_[f].load(std::memory_order_acquire);
    if (e != pe) continue;
    uint64_t s = e->state.load(std::memory_order_acquire);
    if (KindOf(s) == kRaw && (s & kAheadBit)) {
      // Read ahead and not read yet: its reader is on the way. The pages a stream has read
      // already (loaded before it, so ahead of it here) are the ones to go first; this one is
      // looked at again by the next sweep (or taken by the hand if the list is full), until half
      // the tier's frames' worth of pages have gone on probation since it did: a reader that has
      // not come by then is not coming (it stopped, or jumped), and the page is taken, wasted.
      MutexLock lock(&probation_mu_);
      if (probation_seq_ - p.seq < capacity_.load(std::memory_order_relaxed) / 2) {
        if (probation_.size() < ProbationRoom(true)) probation_.push_back(p);
        continue;
      }
    }
    while (KindOf(s) == kRaw && UsesOf(s) == 0 && !(s & kSeenBit)) {
      if (TryBeginEviction(e, &s)) {
        victims->push_back(e);
        ++taken;
        break;
      }
    }
  }
  if (probation_head_ == probation_work_.size()) {
    probation_work_.clear();
    probation_head_ = 0;
    MutexLock lock(&probation_mu_);
    probation_work_.swap(probation_);
  }
  // A page with use count u survives u passes: in the worst case (every page at the maximum) the
  // hand goes round kUseMax + 1 times.
  // Frames from fresh_ on have never held a page; fresh_ only grows, so hand_ < used.
  const uint32_t used = fresh_.load(std::memory_order_acquire);
  if (used == 0) return taken;
  const uint64_t limit = (kUseMax + 1) * static_cast<uint64_t>(used) + 1;
  // Pages of pinned files (P), and pages read ahead and not read yet (A: probation decides when
  // their reader is not coming), are passed over, untouched, until a whole turn of the hand has
  // met nothing else: for the rest of this sweep they are then taken like any other.
  uint64_t passed = 0;
  bool protect = true;
  for (uint64_t step = 0; step < limit && taken < want; ++step) {
    uint32_t f = hand_;
    hand_ = (hand_ + 1 >= used) ? 0 : hand_ + 1;
    PageEntry* e = owners_[f].load(std::memory_order_acquire);
    if (e == nullptr) continue;
    uint64_t s = e->state.load(std::memory_order_acquire);
    if (protect && (s & (kPinBit | kAheadBit)) && KindOf(s) == kRaw) {
      if (++passed < used) continue;
      protect = false;
    }
    passed = 0;
    while (KindOf(s) == kRaw) {
      if (UsesOf(s) > 0) {
        // Another chance: take one use away and pass over it this turn.
        if (TryTakeUse(e, &s)) break;
        continue;
      }
      if (TryBeginEviction(e, &s)) {
        victims->push_back(e);
        ++taken;
        break;
      }
    }
  }
  return taken;
}

}  // namespace ccfs::cache
