// PageIndex: PageKey -> PageEntry, a liburcu lock-free hash table (cds_lfht).
//
// Lookups never take a lock and never wait for writers. REQUIRES for every method but the
// constructor/destructor: the caller is inside an RcuReadLock. The index does not own entries:
// a removed entry is freed by its remover with call_rcu (see page_entry.h).
#ifndef CCFS_CACHE_PAGE_INDEX_H_
#define CCFS_CACHE_PAGE_INDEX_H_

#include <cstdint>
#include <functional>

#include "cache/page_entry.h"

namespace ccfs::cache {

class PageIndex {
 public:
  // `expected_entries`: how many pages the cache can hold; the table starts with about that many
  // buckets (it still grows and shrinks on its own), so lookups stay O(1) from the first page.
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

 private:
  cds_lfht* table_;
};

}  // namespace ccfs::cache

#endif  // CCFS_CACHE_PAGE_INDEX_H_
