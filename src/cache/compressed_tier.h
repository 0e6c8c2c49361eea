// CompressedTier: the CLOCK ring of compressed pages and the accounting of their budget.
//
// Every transition into or out of kCompressed happens here under mu_, together with the ring
// link/unlink and the budget charge, so ring membership always equals "state is kCompressed".
// Readers decompress a kCompressed page's blob without mu_ (the blob is freed only after an RCU
// grace period). When charged bytes exceed the budget the hand drops the coldest pages: a
// referenced page has its bit cleared and is passed over once, a page of a pinned file (P) is
// passed over until a whole turn has found nothing else; data is clean, so dropping is always
// allowed, and newcomers are never refused.
//
// Entries this class kills (state kDead, unlinked) are returned to the caller, who removes them
// from the index and retires them (call_rcu) after mu_ is released.
//
// Lock order: mu_ may be taken while inside an RCU read-side section; nothing is locked under mu_.
// The ring links and `charged` of every PageEntry are guarded by mu_ too (noted at PageEntry: the
// analysis cannot name a mutex of another object there). The transitions used here are in
// page_entry.h: TryPublishCompressed, TryPromote, TryKillCompressed, ClearRef.
#ifndef CCFS_CACHE_COMPRESSED_TIER_H_
#define CCFS_CACHE_COMPRESSED_TIER_H_

#include <cstdint>
#include <vector>

#include "cache/page_entry.h"
#include "util/mutex.h"

namespace ccfs::cache {

class CompressedTier {
 public:
  explicit CompressedTier(uint64_t budget) : budget_(budget) {}

  enum class Publish { kPublished, kPinned, kStale, kFull };
  // Moves a kEvicting entry with no pins to kCompressed holding `blob` (nullptr = zero page),
  // links it and charges `charged` bytes; then drops cold pages while over budget into *dropped.
  // kPinned: a reader still copies from the frame, try again shortly. kStale: invalidated; the
  // caller drops the page instead. kPublished sets *before (if given) to the state it left.
  Publish Insert(PageEntry* e, Blob* blob, uint32_t charged, uint32_t logical,
                 std::vector<PageEntry*>* dropped, uint64_t* before = nullptr) EXCLUDES(mu_);
  // The same for a demoted page: a kLoading entry (InitLoading with demoted) already in the index.
  // *before is its state before (test kWaiterBit: readers wait on it). kStale: invalidated
  // meanwhile; the entry is kDead and the caller frees `blob` and retires the entry.
  Publish InsertDemoted(PageEntry* e, Blob* blob, uint32_t charged, uint32_t logical,
                        uint64_t* before, std::vector<PageEntry*>* dropped) EXCLUDES(mu_);
  // The same for a page restored from a cache file, but only into room the budget has left:
  // nothing is dropped for it. kFull: no room; kStale: invalidated meanwhile. Either way the entry
  // is kDead holding no blob, and the caller frees `blob` and retires the entry.
  Publish InsertRestored(PageEntry* e, Blob* blob, uint32_t charged, uint32_t logical,
                         uint64_t* before) EXCLUDES(mu_);

  // Moves a kCompressed entry to kRaw in `frame`, pinned once and referenced, and unlinks it.
  // Returns the blob to retire through *old_blob. False if it is no longer kCompressed.
  bool Promote(PageEntry* e, uint32_t frame, Blob** old_blob) EXCLUDES(mu_);

  // kCompressed -> kDead and unlink; false if it is no longer kCompressed.
  bool Kill(PageEntry* e) EXCLUDES(mu_);

  // The page's file is no longer pinned: clears its P bit (page_entry.h), whatever its kind, and
  // if it is in the ring, takes it out of the pinned count. Under mu_, since every transition into
  // the ring is: the count then always matches the bits of the ring's members.
  void Unpin(PageEntry* e) EXCLUDES(mu_);

  // The keys of up to `n` pages the hand would drop next, in that order, for the evictor's
  // admission (evictor.cc): looked at without moving the hand or clearing a bit. Pages the hand
  // would pass over (referenced, or of a pinned file) are skipped within a bounded walk; if that
  // leaves fewer than n, the rest come from the hand on, as a full turn would take them (fewer
  // than n only if the tier holds fewer pages than the walk's bound).
  void Coldest(size_t n, std::vector<PageKey>* keys) const EXCLUDES(mu_);

  // Changes the budget, dropping cold pages into *dropped while over it.
  void SetBudget(uint64_t budget, std::vector<PageEntry*>* dropped) EXCLUDES(mu_);

  struct Counts {
    uint64_t budget, charged, pages, logical, evictions, wasted;
    uint64_t pinned_pages, pinned_charged;  // members with P (page_entry.h), and their charge
  };
  Counts counts() const EXCLUDES(mu_);

 private:
  void LinkLocked(PageEntry* e) REQUIRES(mu_);
  // Links a page just published, charges it, then drops cold pages while over budget.
  void AdmitLocked(PageEntry* e, uint32_t charged, uint32_t logical,
                   std::vector<PageEntry*>* dropped) REQUIRES(mu_);
  void UnlinkLocked(PageEntry* e) REQUIRES(mu_);
  void EvictLocked(std::vector<PageEntry*>* dropped) REQUIRES(mu_);

  mutable Mutex mu_;
  // Ring of kCompressed entries; the hand is the next to inspect.
  PageEntry* hand_ GUARDED_BY(mu_) = nullptr;
  uint64_t budget_ GUARDED_BY(mu_);
  uint64_t charged_ GUARDED_BY(mu_) = 0;
  uint64_t pages_ GUARDED_BY(mu_) = 0;
  uint64_t logical_ GUARDED_BY(mu_) = 0;
  uint64_t evictions_ GUARDED_BY(mu_) = 0;
  uint64_t wasted_ GUARDED_BY(mu_) = 0;
  uint64_t pinned_pages_ GUARDED_BY(mu_) = 0;
  uint64_t pinned_charged_ GUARDED_BY(mu_) = 0;
};

}  // namespace ccfs::cache

#endif  // CCFS_CACHE_COMPRESSED_TIER_H_
