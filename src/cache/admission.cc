#include "cache/admission.h"

#include <algorithm>
#include <bit>

namespace ccfs::cache {

namespace {

uint64_t RoundUpPow2(uint64_t n) { return std::bit_ceil(std::max<uint64_t>(n, 1)); }

// Slot index from the low bits of the key's hash, fingerprint from the high bits (never 0: 0 is
// an empty slot).
void SlotAndPrint(const PageKey& key, uint64_t mask, uint64_t* slot, uint32_t* print) {
  uint64_t h = HashPageKey(key);
  *slot = h & mask;
  *print = static_cast<uint32_t>(h >> 32) | 1u;
}

}  // namespace

GhostSet::GhostSet(uint64_t max_slots)
    : table_(RoundUpPow2(max_slots)), max_slots_(RoundUpPow2(max_slots)) {
  mask_ = max_slots_ - 1;
}

void GhostSet::Resize(uint64_t slots) {
  mask_ = std::min(RoundUpPow2(slots), max_slots_) - 1;
  table_.Clear();
}

bool GhostSet::Contains(const PageKey& key) const {
  uint64_t slot;
  uint32_t print;
  SlotAndPrint(key, mask_, &slot, &print);
  return table_[slot] == print;
}

void GhostSet::Remember(const PageKey& key) {
  uint64_t slot;
  uint32_t print;
  SlotAndPrint(key, mask_, &slot, &print);
  table_[slot] = print;
}

RejectMemory::RejectMemory(uint32_t page_size)
    : page_shift_(std::countr_zero(page_size)), streak_(new std::atomic<uint8_t>[kSlots]) {
  for (size_t i = 0; i < kSlots; ++i) streak_[i].store(0, std::memory_order_relaxed);
}

size_t RejectMemory::Slot(const PageKey& key) const {
  int shift = std::max(0, kRegionShiftBytes - page_shift_);
  return HashPageKey(PageKey{key.file_id, key.page_no >> shift}) % kSlots;
}

bool RejectMemory::ShouldSkip(const PageKey& key) {
  if (streak_[Slot(key)].load(std::memory_order_relaxed) < kSkipAfter) return false;
  return ++probe_ % kProbeEvery != 0;
}

void RejectMemory::Record(const PageKey& key, bool rejected) {
  std::atomic<uint8_t>& s = streak_[Slot(key)];
  if (!rejected) {
    if (s.load(std::memory_order_relaxed) != 0) s.store(0, std::memory_order_relaxed);
    return;
  }
  uint8_t v = s.load(std::memory_order_relaxed);
  if (v < 255) s.store(static_cast<uint8_t>(v + 1), std::memory_order_relaxed);
}

}  // namespace ccfs::cache
