#include "cache/frequency.h"

#include <algorithm>
#include <bit>

namespace ccfs::cache {

FrequencySketch::FrequencySketch(uint64_t slots, uint64_t cache_pages)
    : mask_(std::bit_ceil(std::max<uint64_t>(slots, 4096)) - 1),
      sample_(kAgingReadsPerPage * std::max<uint64_t>(cache_pages, 1)),
      rows_(2 * (mask_ + 1)) {}

void FrequencySketch::Slots(const PageKey& key, uint64_t* a, uint64_t* b) const {
  uint64_t h = HashPageKey(key);
  *a = h & mask_;
  *b = (mask_ + 1) + ((h >> 32) & mask_);
}

void FrequencySketch::Increment(const PageKey& key) {
  uint64_t a, b;
  Slots(key, &a, &b);
  uint8_t va = rows_[a].load(std::memory_order_relaxed);
  uint8_t vb = rows_[b].load(std::memory_order_relaxed);
  uint8_t low = std::min(va, vb);
  if (low >= kMax) return;
  // Conservative update: raise only the counters at the minimum (fewer overestimates).
  if (va == low) rows_[a].store(static_cast<uint8_t>(low + 1), std::memory_order_relaxed);
  if (vb == low) rows_[b].store(static_cast<uint8_t>(low + 1), std::memory_order_relaxed);
}

uint32_t FrequencySketch::Estimate(const PageKey& key) const {
  uint64_t a, b;
  Slots(key, &a, &b);
  return std::min(rows_[a].load(std::memory_order_relaxed), rows_[b].load(std::memory_order_relaxed));
}

void FrequencySketch::Age() {
  // Counters at zero are only read, so the parts of the table no key has reached stay
  // unallocated (util/lazy_array.h).
  for (uint64_t i = 0; i < 2 * (mask_ + 1); ++i) {
    uint8_t v = rows_[i].load(std::memory_order_relaxed);
    if (v != 0) rows_[i].store(static_cast<uint8_t>(v >> 1), std::memory_order_relaxed);
  }
}

}  // namespace ccfs::cache
