#include "cache/compressed_tier.h"

#include <algorithm>

namespace ccfs::cache {

void CompressedTier::LinkLocked(PageEntry* e) {
  // Insert just behind the hand: the newest page is the last one the hand reaches.
  if (hand_ == nullptr) {
    e->cprev = e->cnext = e;
    hand_ = e;
    return;
  }
  e->cnext = hand_;
  e->cprev = hand_->cprev;
  hand_->cprev->cnext = e;
  hand_->cprev = e;
}

void CompressedTier::UnlinkLocked(PageEntry* e) {
  if (e->cnext == e) {
    hand_ = nullptr;
  } else {
    if (hand_ == e) hand_ = e->cnext;
    e->cprev->cnext = e->cnext;
    e->cnext->cprev = e->cprev;
  }
  e->cprev = e->cnext = nullptr;
  if (e->state.load(std::memory_order_relaxed) & kPinBit) {
    --pinned_pages_;
    pinned_charged_ -= e->charged;
  }
  charged_ -= e->charged;
  logical_ -= e->length.load(std::memory_order_relaxed);
  --pages_;
  e->charged = 0;
}

CompressedTier::Publish CompressedTier::Insert(PageEntry* e, Blob* blob, uint32_t charged,
                                               uint32_t logical, std::vector<PageEntry*>* dropped,
                                               uint64_t* before) {
  MutexLock lock(&mu_);
  uint64_t s = e->state.load(std::memory_order_acquire);
  for (;;) {
    if (s & kStaleBit) return Publish::kStale;
    if (PinsOf(s) != 0) return Publish::kPinned;
    if (TryPublishCompressed(e, blob, &s)) break;
  }
  if (before != nullptr) *before = s;
  AdmitLocked(e, charged, logical, dropped);
  return Publish::kPublished;
}

CompressedTier::Publish CompressedTier::InsertDemoted(PageEntry* e, Blob* blob, uint32_t charged,
                                                      uint32_t logical, uint64_t* before,
                                                      std::vector<PageEntry*>* dropped) {
  MutexLock lock(&mu_);
  uint64_t s = e->state.load(std::memory_order_acquire);
  for (;;) {
    if (s & kStaleBit) {
      // A failed TryPublishDemoted stored the blob already: the caller frees it, not the entry's
      // retirement as well.
      e->blob.store(nullptr, std::memory_order_relaxed);
      *before = AbandonLoad(e);
      return Publish::kStale;
    }
    *before = s;
    if (TryPublishDemoted(e, blob, &s)) break;
  }
  AdmitLocked(e, charged, logical, dropped);
  return Publish::kPublished;
}

CompressedTier::Publish CompressedTier::InsertRestored(PageEntry* e, Blob* blob, uint32_t charged,
                                                       uint32_t logical, uint64_t* before) {
  MutexLock lock(&mu_);
  uint64_t s = e->state.load(std::memory_order_acquire);
  for (;;) {
    const bool stale = (s & kStaleBit) != 0;
    if (stale || charged_ + charged > budget_) {
      e->blob.store(nullptr, std::memory_order_relaxed);  // the caller frees it
      *before = AbandonLoad(e);
      return stale ? Publish::kStale : Publish::kFull;
    }
    *before = s;
    if (TryPublishDemoted(e, blob, &s)) break;
  }
  std::vector<PageEntry*> none;  // within the budget: the hand drops nothing
  AdmitLocked(e, charged, logical, &none);
  return Publish::kPublished;
}

void CompressedTier::AdmitLocked(PageEntry* e, uint32_t charged, uint32_t logical,
                                 std::vector<PageEntry*>* dropped) {
  e->charged = charged;
  LinkLocked(e);
  if (e->state.load(std::memory_order_relaxed) & kPinBit) {
    ++pinned_pages_;
    pinned_charged_ += charged;
  }
  charged_ += charged;
  logical_ += logical;
  ++pages_;
  EvictLocked(dropped);
}

bool CompressedTier::Promote(PageEntry* e, uint32_t frame, Blob** old_blob) {
  MutexLock lock(&mu_);
  uint64_t s = e->state.load(std::memory_order_acquire);
  while (KindOf(s) == kCompressed) {
    if (TryPromote(e, frame, &s)) {
      *old_blob = e->blob.load(std::memory_order_relaxed);
      UnlinkLocked(e);
      return true;
    }
  }
  return false;
}

bool CompressedTier::Kill(PageEntry* e) {
  MutexLock lock(&mu_);
  uint64_t s = e->state.load(std::memory_order_acquire);
  while (KindOf(s) == kCompressed) {
    if (TryKillCompressed(e, &s)) {
      UnlinkLocked(e);
      return true;
    }
  }
  return false;
}

void CompressedTier::SetBudget(uint64_t budget, std::vector<PageEntry*>* dropped) {
  MutexLock lock(&mu_);
  budget_ = budget;
  EvictLocked(dropped);
}

void CompressedTier::EvictLocked(std::vector<PageEntry*>* dropped) {
  // Every ring member is kCompressed (transitions happen under mu_), so the hand needs no CAS
  // retries beyond reference bits set concurrently by readers.
  // Pinned pages (P) are passed over until a whole turn has met nothing else; from then on, in
  // this call, they are taken like any other.
  uint64_t passed = 0;
  bool protect = true;
  while (charged_ > budget_ && hand_ != nullptr) {
    PageEntry* e = hand_;
    uint64_t s = e->state.load(std::memory_order_acquire);
    if (protect && (s & kPinBit)) {
      if (++passed < pages_) {
        hand_ = e->cnext;
        continue;
      }
      protect = false;
    }
    passed = 0;
    if (s & kRefBit) {
      ClearRef(e);
      hand_ = e->cnext;
      continue;
    }
    if (!TryKillCompressed(e, &s)) {
      continue;  // a reader set the reference bit meanwhile: look again
    }
    ++evictions_;
    if (!(s & kTierHitBit)) ++wasted_;
    UnlinkLocked(e);
    dropped->push_back(e);
  }
}

void CompressedTier::Coldest(size_t n, std::vector<PageKey>* keys) const {
  keys->clear();
  MutexLock lock(&mu_);
  if (hand_ == nullptr || n == 0) return;
  // Bounded so that a ring whose pages were all read since the last turn costs the admission a
  // few microseconds under mu_, not a walk of the whole tier.
  const uint64_t limit = std::min<uint64_t>(pages_, 4 * n + 256);
  for (const bool passed_over : {false, true}) {
    const PageEntry* e = hand_;
    for (uint64_t step = 0; step < limit && keys->size() < n; ++step, e = e->cnext) {
      const bool passes = (e->state.load(std::memory_order_relaxed) & (kRefBit | kPinBit)) != 0;
      if (passes == passed_over) keys->push_back(e->key);
    }
  }
}

CompressedTier::Counts CompressedTier::counts() const {
  MutexLock lock(&mu_);
  return Counts{budget_,  charged_, pages_,        logical_,
                evictions_, wasted_, pinned_pages_, pinned_charged_};
}

void CompressedTier::Unpin(PageEntry* e) {
  MutexLock lock(&mu_);
  const uint64_t before = ClearPin(e);
  if ((before & kPinBit) && KindOf(before) == kCompressed && e->cnext != nullptr) {
    --pinned_pages_;
    pinned_charged_ -= e->charged;
  }
}

}  // namespace ccfs::cache
