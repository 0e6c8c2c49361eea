#include "cache/raw_tier.h"

#include <sys/mman.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

namespace ccfs::cache {

RawTier::RawTier(uint32_t page_size, uint32_t max_frames, uint32_t capacity)
    : page_size_(page_size),
      max_frames_(max_frames),
      owners_(new std::atomic<PageEntry*>[max_frames]),
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
  free_.reserve(max_frames);
  parked_.reserve(max_frames);
  for (uint32_t f = 0; f < max_frames; ++f) owners_[f].store(nullptr, std::memory_order_relaxed);
  // Hand out low frames first (free_ is a stack).
  uint32_t cap = capacity_.load();
  for (uint32_t f = max_frames; f-- > 0;) {
    (f < cap ? free_ : parked_).push_back(f);
  }
  free_count_ = static_cast<uint32_t>(free_.size());
  active_ = cap;
}

RawTier::~RawTier() { munmap(base_, map_bytes_); }

bool RawTier::TryAlloc(uint32_t* frame) {
  MutexLock lock(&mu_);
  if (free_.empty()) return false;
  *frame = free_.back();
  free_.pop_back();
  free_count_.store(static_cast<uint32_t>(free_.size()), std::memory_order_relaxed);
  return true;
}

uint32_t RawTier::Alloc(uint64_t* waited_ns, const std::function<void()>& on_wait) {
  *waited_ns = 0;
  MutexLock lock(&mu_);
  if (free_.empty()) {
    auto start = std::chrono::steady_clock::now();
    waiters_.fetch_add(1, std::memory_order_relaxed);
    while (free_.empty()) {
      lock.Unlock();
      on_wait();
      lock.Lock();
      if (!free_.empty()) break;
      freed_.WaitFor(&mu_, std::chrono::milliseconds(5));
    }
    waiters_.fetch_sub(1, std::memory_order_relaxed);
    *waited_ns = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                           std::chrono::steady_clock::now() - start)
                                           .count());
  }
  uint32_t frame = free_.back();
  free_.pop_back();
  free_count_.store(static_cast<uint32_t>(free_.size()), std::memory_order_relaxed);
  return frame;
}

void RawTier::Free(uint32_t frame) {
  MutexLock lock(&mu_);
  free_.push_back(frame);
  ParkExcessLocked();
  free_count_.store(static_cast<uint32_t>(free_.size()), std::memory_order_relaxed);
  if (waiters_.load(std::memory_order_relaxed) > 0) freed_.SignalAll();
}

void RawTier::SetCapacity(uint32_t frames) {
  if (frames > max_frames_) frames = max_frames_;
  MutexLock lock(&mu_);
  capacity_.store(frames, std::memory_order_relaxed);
  while (active_.load(std::memory_order_relaxed) < frames && !parked_.empty()) {
    free_.push_back(parked_.back());
    parked_.pop_back();
    active_.fetch_add(1, std::memory_order_relaxed);
  }
  ParkExcessLocked();
  free_count_.store(static_cast<uint32_t>(free_.size()), std::memory_order_relaxed);
  if (waiters_.load(std::memory_order_relaxed) > 0) freed_.SignalAll();
}

void RawTier::ParkExcessLocked() {
  while (active_.load(std::memory_order_relaxed) > capacity_.load(std::memory_order_relaxed) &&
         !free_.empty()) {
    uint32_t f = free_.back();
    free_.pop_back();
    madvise(data(f), page_size_, MADV_DONTNEED);
    parked_.push_back(f);
    active_.fetch_sub(1, std::memory_order_relaxed);
  }
}

void RawTier::Probation(uint32_t frame, PageEntry* e) {
  MutexLock lock(&probation_mu_);
  if (probation_.size() >= capacity_.load(std::memory_order_relaxed) / 4) return;
  probation_.emplace_back(frame, e);
}

size_t RawTier::Sweep(size_t want, std::vector<PageEntry*>* victims) {
  size_t taken = 0;
  // Pages put on probation before the previous sweep: one sweep's worth of reads has had the
  // chance to read them again (the second half of a page read in two pieces, say).
  while (taken < want && probation_head_ < probation_work_.size()) {
    auto [f, pe] = probation_work_[probation_head_++];
    // Still the page that was put on probation (the frame may have been reused since)?
    PageEntry* e = owners_[f].load(std::memory_order_acquire);
    if (e != pe) continue;
    uint64_t s = e->state.load(std::memory_order_acquire);
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
  const uint64_t limit = (kUseMax + 1) * max_frames_ + 1;
  for (uint64_t step = 0; step < limit && taken < want; ++step) {
    uint32_t f = hand_;
    hand_ = (hand_ + 1 == max_frames_) ? 0 : hand_ + 1;
    PageEntry* e = owners_[f].load(std::memory_order_acquire);
    if (e == nullptr) continue;
    uint64_t s = e->state.load(std::memory_order_acquire);
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
