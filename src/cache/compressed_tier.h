// CompressedTier: the CLOCK ring of compressed pages and the accounting of their budget.
//
// Every transition into or out of kCompressed happens here under mu_, together with the ring
// link/unlink and the budget charge, so ring membership always equals "state is kCompressed".
// Readers decompress a kCompressed page's blob without mu_ (the blob is freed only after an RCU
// grace period). When charged bytes exceed the budget the hand drops the coldest pages: a
// referenced page has its bit cleared and is passed over once; data is clean, so dropping is
// always allowed, and newcomers are never refused.
//
// Entries this class kills (state kDead, unlinked) are returned to the caller, who removes them
// from the index and retires them (call_rcu) after mu_ is released.
//
// Lock order: mu_ may be taken while inside an RCU read-side section; nothing is locked under mu_.
#ifndef CCFS_CACHE_COMPRESSED_TIER_H_
#define CCFS_CACHE_COMPRESSED_TIER_H_

#include <cstdint>
#include <mutex>
#include <vector>

#include "cache/page_entry.h"

namespace ccfs::cache {

class CompressedTier {
 public:
  explicit CompressedTier(uint64_t budget) : budget_(budget) {}

  enum class Publish { kPublished, kPinned, kStale };
  // Moves a kEvicting entry with no pins to kCompressed holding `blob` (nullptr = zero page),
  // links it and charges `charged` bytes; then drops cold pages while over budget into *dropped.
  // kPinned: a reader still copies from the frame, try again shortly. kStale: invalidated; the
  // caller drops the page instead.
  Publish Insert(PageEntry* e, Blob* blob, uint32_t charged, uint32_t logical,
                 std::vector<PageEntry*>* dropped);

  // Moves a kCompressed entry to kRaw in `frame`, pinned once and referenced, and unlinks it.
  // Returns the blob to retire through *old_blob. False if it is no longer kCompressed.
  bool Promote(PageEntry* e, uint32_t frame, Blob** old_blob);

  // kCompressed -> kDead and unlink; false if it is no longer kCompressed.
  bool Kill(PageEntry* e);

  // Changes the budget, dropping cold pages into *dropped while over it.
  void SetBudget(uint64_t budget, std::vector<PageEntry*>* dropped);

  struct Counts {
    uint64_t budget, charged, pages, logical, evictions, wasted;
  };
  Counts counts() const;

 private:
  void LinkLocked(PageEntry* e);
  void UnlinkLocked(PageEntry* e);
  void EvictLocked(std::vector<PageEntry*>* dropped);

  mutable std::mutex mu_;
  PageEntry* hand_ = nullptr;  // ring of kCompressed entries; the hand is the next to inspect
  uint64_t budget_;
  uint64_t charged_ = 0;
  uint64_t pages_ = 0;
  uint64_t logical_ = 0;
  uint64_t evictions_ = 0;
  uint64_t wasted_ = 0;
};

}  // namespace ccfs::cache

#endif  // CCFS_CACHE_COMPRESSED_TIER_H_
