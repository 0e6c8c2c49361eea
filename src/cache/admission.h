// Admission: which raw victims are worth a compression.
//
// Compressing a page costs far more CPU than a hit; most victims of a skewed workload are pages
// read once and never again, and a compressed copy of such a page is dropped from the compressed
// tier before any hit, so its compression is wasted. Two filters run in the evictor before a
// victim reaches the compression pool:
//
//  - Reuse (GhostSet): a victim is compressed only if it showed reuse: it was read again after it
//    was loaded (the entry's kSeenBit), or it comes back after an earlier eviction. The second
//    test needs memory of pages that are no longer cached: a direct-mapped table of key
//    fingerprints of victims dropped uncompressed (a "ghost" list, like RocksDB's dummy entries
//    in its compressed secondary cache: compress on the second eviction). Sized from the
//    compressed tier's capacity in pages, so a page that comes back within the time the tier
//    would have kept it is remembered. Once the compressed tier is full, a victim a stream loaded
//    (read ahead, or in a large run: page_entry.h, Q) must also have been read more often lately
//    (the frequency sketch) than the page it would displace (TinyLFU's admission;
//    Evictor::Admit), so data scanned in loops larger than the tier keeps a share cached instead
//    of displacing itself. While the tier has room, such a page is compressed at its first
//    eviction only where the store streams slower than the pool compresses (the two measured
//    live: Evictor::NoteStreamRead): a fast store's cold stream would fill the tier on the
//    reader's CPUs with pages it may never read again.
//  - Incompressible regions (RejectMemory): per 512 KiB region of a file (hashed into a fixed
//    table), the number of consecutive victims whose compression was rejected. Once a region has
//    failed kSkipAfter times in a row its victims are dropped without trying, except one in
//    kProbeEvery, which re-tests the region (data can change).
//
// Thread-safety: GhostSet is used by the evictor thread only. RejectMemory is read by the evictor
// and updated by compression workers: relaxed atomics (a lost update only delays a decision).
#ifndef CCFS_CACHE_ADMISSION_H_
#define CCFS_CACHE_ADMISSION_H_

#include <atomic>
#include <cstdint>
#include <memory>

#include "cache/page_entry.h"
#include "util/lazy_array.h"

namespace ccfs::cache {

class GhostSet {
 public:
  // Room for up to `max_slots` fingerprints (rounded up to a power of two).
  explicit GhostSet(uint64_t max_slots);

  // Uses the first `slots` slots (rounded up to a power of two, capped at the maximum); clears
  // the table.
  void Resize(uint64_t slots);

  // True if `key` was remembered and not overwritten since.
  bool Contains(const PageKey& key) const;
  void Remember(const PageKey& key);
  uint64_t slots() const { return mask_ + 1; }

 private:
  LazyArray<uint32_t> table_;  // resident as fingerprints are written (util/lazy_array.h)
  uint64_t max_slots_;
  uint64_t mask_ = 0;
};

class RejectMemory {
 public:
  static constexpr int kRegionShiftBytes = 19;  // 512 KiB regions
  static constexpr uint8_t kSkipAfter = 4;
  static constexpr uint32_t kProbeEvery = 16;

  explicit RejectMemory(uint32_t page_size);

  // True if the victim should be dropped without trying to compress it. Evictor thread only.
  bool ShouldSkip(const PageKey& key);
  // A compression of `key` was rejected (true) or kept (false).
  void Record(const PageKey& key, bool rejected);

 private:
  static constexpr size_t kSlots = 8192;
  size_t Slot(const PageKey& key) const;

  int page_shift_;
  std::unique_ptr<std::atomic<uint8_t>[]> streak_;
  uint32_t probe_ = 0;
};

}  // namespace ccfs::cache

#endif  // CCFS_CACHE_ADMISSION_H_
