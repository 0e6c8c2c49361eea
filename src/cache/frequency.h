// FrequencySketch: how often each page was read recently, including while it was not cached.
//
// The raw tier's CLOCK keeps a small use count per page (GCLOCK, page_entry.h): a hit adds one, a
// pass of the hand takes one away, the hand evicts at zero. A page loaded by a miss starts with
// the count this sketch gives it, so a page that is read often but keeps being evicted between
// reads (the warm middle of a skewed workload, which plain CLOCK cannot tell from pages read once)
// comes back with credit. Under independent, skewed accesses (the 80/20 traces) this is what an
// LFU-like policy gains over CLOCK/LRU: about two points of hit ratio at equal memory.
//
// A count-min sketch of two rows of small (saturating at 15) counters, conservative update,
// halved every 10 × (pages the cache holds) reads so that old popularity fades and counts stay
// below saturation for all but the hottest pages (as TinyLFU does). Counters are relaxed atomics:
// a lost update only makes an estimate one lower.
#ifndef CCFS_CACHE_FREQUENCY_H_
#define CCFS_CACHE_FREQUENCY_H_

#include <atomic>
#include <cstdint>
#include <memory>

#include "cache/page_entry.h"
#include "util/lazy_array.h"

namespace ccfs::cache {

class FrequencySketch {
 public:
  // About `slots` counters per row (rounded up to a power of two, at least 4096); counts are
  // halved every 10 × `cache_pages` reads.
  FrequencySketch(uint64_t slots, uint64_t cache_pages);

  // A counter saturates here; all are halved every kAgingReadsPerPage x (pages the cache holds)
  // reads (model/clock_model.h models both).
  static constexpr uint8_t kMax = 15;
  static constexpr uint64_t kAgingReadsPerPage = 10;

  void Increment(const PageKey& key);
  uint32_t Estimate(const PageKey& key) const;
  // Halves every counter. One thread at a time (the evictor).
  void Age();
  // Reads between two agings.
  uint64_t sample_size() const { return sample_; }

 private:
  void Slots(const PageKey& key, uint64_t* a, uint64_t* b) const;

  uint64_t mask_;
  uint64_t sample_;
  LazyArray<std::atomic<uint8_t>> rows_;  // two rows of mask_ + 1 counters, resident as written
};

}  // namespace ccfs::cache

#endif  // CCFS_CACHE_FREQUENCY_H_
