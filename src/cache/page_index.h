// PageIndex: PageKey -> PageEntry, a liburcu lock-free hash table (cds_lfht).
//
// Lookups never take a lock and never wait for writers. REQUIRES for every method but the
// constructor/destructor: the caller is inside an RcuReadLock. The index does not own entries:
// a removed entry is freed by its remover with call_rcu (see page_entry.h).
#ifndef CCFS_CACHE_PAGE_INDEX_H_
#define CCFS_CACHE_PAGE_INDEX_H_

#include <atomic>
#include <cstdint>
#include <functional>

#include "cache/page_entry.h"

namespace ccfs::cache {

class PageIndex {
 public:
  // `expected_entries`: how many pages the cache can hold. The table starts small, so a large
  // budget over a small data set costs little, and Grow() sizes it to the entries present, up to
  // about `expected_entries` buckets (cds_lfht's own resizing goes on beyond that).
  explicit PageIndex(uint64_t expected_entries);
  // REQUIRES: empty (every entry removed), and not inside a read-side section.
  ~PageIndex();
  PageIndex(const PageIndex&) = delete;
  PageIndex& operator=(const PageIndex&) = delete;

  PageEntry* Lookup(const PageKey& key) const;
  // Inserts `entry` unless an entry with its key is present; returns the entry that is in the
  // index afterwards (== entry when inserted).
  PageEntry* InsertUnique(PageEntry* entry);
  // Unlinks `entry`; false if it was already unlinked.
  bool Remove(PageEntry* entry);
  // Calls fn on every entry present (a removal during the walk is fine).
  void ForEach(const std::function<void(PageEntry*)>& fn) const;

  // Entries present (inserted and not removed).
  uint64_t size() const { return count_.load(std::memory_order_relaxed); }
  // Buckets the table was last sized to (by the constructor or Grow()).
  uint64_t buckets() const { return buckets_.load(std::memory_order_relaxed); }
  // When the entries outnumber the buckets, resizes the table to twice as many buckets as entries
  // (a power of two, capped as the constructor says) and returns true. cds_lfht grows by itself
  // only once chains are long, too late for a cache that fills at miss speed; the evictor calls
  // this on each wake-up. REQUIRES: outside any read-side section (it waits for grace periods);
  // one caller at a time.
  bool Grow();

 private:
  cds_lfht* table_;
  uint64_t max_buckets_;
  std::atomic<uint64_t> buckets_;
  std::atomic<uint64_t> count_{0};
};

}  // namespace ccfs::cache

#endif  // CCFS_CACHE_PAGE_INDEX_H_
