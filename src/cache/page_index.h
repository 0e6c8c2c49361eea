// PageIndex: PageKey -> PageEntry, a liburcu lock-free hash table (cds_lfht), and per file the
// span of its pages present (FileSpan).
//
// Lookups never take a lock and never wait for writers. REQUIRES for every method but the
// constructor/destructor: the caller is inside an RcuReadLock. The index does not own entries:
// a removed entry is freed by its remover with call_rcu (see page_entry.h).
//
// Why the spans: dropping one file's pages (a write underneath, an unlink, an O_TRUNC open) must
// not cost a walk of the whole table, which grows with the cache rather than with the file. The
// span bounds the page numbers to look up, and a file with no page present costs one map lookup.
// Invariant: an entry visible in the table is counted in its file's span and its page number is
// below the span's end (both are raised before the node is linked and lowered only after it is
// unlinked); a span whose count reaches zero is erased. Spans are kept in shards under mutexes,
// touched only when an entry is inserted or removed (a miss or an eviction), never by Lookup.
#ifndef CCFS_CACHE_PAGE_INDEX_H_
#define CCFS_CACHE_PAGE_INDEX_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <unordered_map>

#include "cache/page_entry.h"
#include "util/mutex.h"
#include "util/thread_annotations.h"

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

  // What the table holds of one file: `entries` present, every one with a page number below
  // `end_page` (an upper bound: it is not lowered when the last page goes but others stay).
  struct FileSpan {
    uint64_t entries = 0;
    uint64_t end_page = 0;
  };
  FileSpan SpanOf(uint64_t file_id) const;
  // Calls fn on every entry of `file_id` present with a page number >= first_page: by lookups of
  // the span's page numbers, or by a walk of the whole table when the span has more page numbers
  // than the table has entries. Entries inserted during the call may be missed, as by ForEach.
  void ForEachOfFile(uint64_t file_id, uint64_t first_page,
                     const std::function<void(PageEntry*)>& fn) const;

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
  static constexpr int kSpanShards = 64;  // a power of two
  struct alignas(64) SpanShard {
    mutable Mutex mu;
    std::unordered_map<uint64_t, FileSpan> files GUARDED_BY(mu);
  };
  SpanShard& ShardOf(uint64_t file_id) const;
  void Counted(const PageKey& key);    // before the node is linked
  void Uncounted(const PageKey& key);  // after it is unlinked, or was not linked

  cds_lfht* table_;
  std::unique_ptr<SpanShard[]> spans_;
  uint64_t max_buckets_;
  std::atomic<uint64_t> buckets_;
  std::atomic<uint64_t> count_{0};
};

}  // namespace ccfs::cache

#endif  // CCFS_CACHE_PAGE_INDEX_H_
