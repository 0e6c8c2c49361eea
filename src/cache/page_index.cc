#include "cache/page_index.h"

#include <xxhash.h>

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstdlib>

#include "cache/rcu.h"

namespace ccfs::cache {

char rcu_grace_token;

namespace {
constexpr uint64_t kMinBuckets = 1024;
}  // namespace

uint64_t HashPageKey(const PageKey& key) {
  // Keys are two integers; xxh3 of the 16 bytes spreads sequential page numbers of one file
  // across the whole table (cds_lfht splits on the hash's bit-reversed order).
  uint64_t words[2] = {key.file_id, key.page_no};
  return XXH3_64bits(words, sizeof(words));
}

namespace {

int Match(cds_lfht_node* node, const void* key) {
  const auto* entry = caa_container_of(node, PageEntry, node);
  CCFS_TSAN_ACQUIRE(entry);
  return entry->key == *static_cast<const PageKey*>(key);
}

struct RcuThread {
  bool registered = false;
  ~RcuThread() {
    if (registered) urcu_memb_unregister_thread();
  }
};
thread_local RcuThread rcu_thread;

}  // namespace

void EnsureRcuThread() {
  if (!rcu_thread.registered) {
    urcu_memb_register_thread();
    rcu_thread.registered = true;
  }
}

PageIndex::PageIndex(uint64_t expected_entries)
    : spans_(new SpanShard[kSpanShards]), max_buckets_(kMinBuckets), buckets_(kMinBuckets) {
  // The bucket array is initialized whole when the table is made or resized (16 bytes a bucket),
  // so it starts at kMinBuckets and Grow() follows the entries. Growth stops at the size the cache
  // can reach, capped at 2^24 buckets (256 MiB); beyond that cds_lfht still grows by itself.
  while (max_buckets_ < expected_entries && max_buckets_ < (1ul << 24)) max_buckets_ <<= 1;
  table_ = cds_lfht_new_flavor(kMinBuckets, kMinBuckets, 0, CDS_LFHT_AUTO_RESIZE | CDS_LFHT_ACCOUNTING,
                               &urcu_memb_flavor, nullptr);
  if (table_ == nullptr) {
    std::fprintf(stderr, "ccfs: cannot allocate the page index\n");
    std::abort();
  }
}

bool PageIndex::Grow() {
  const uint64_t have = buckets_.load(std::memory_order_relaxed);
  const uint64_t n = count_.load(std::memory_order_relaxed);
  if (n <= have || have >= max_buckets_) return false;
  const uint64_t want = std::min<uint64_t>(std::bit_ceil(2 * n), max_buckets_);
  EnsureRcuThread();
  cds_lfht_resize(table_, want);
  buckets_.store(want, std::memory_order_relaxed);
  return true;
}

PageIndex::~PageIndex() { cds_lfht_destroy(table_, nullptr); }

PageEntry* PageIndex::Lookup(const PageKey& key) const {
  cds_lfht_iter iter;
  cds_lfht_lookup(table_, HashPageKey(key), Match, &key, &iter);
  cds_lfht_node* node = cds_lfht_iter_get_node(&iter);
  if (node == nullptr) return nullptr;
  PageEntry* entry = caa_container_of(node, PageEntry, node);
  CCFS_TSAN_ACQUIRE(entry);
  return entry;
}

PageEntry* PageIndex::InsertUnique(PageEntry* entry) {
  cds_lfht_node_init(&entry->node);
  CCFS_TSAN_RELEASE(entry);
  Counted(entry->key);
  cds_lfht_node* node =
      cds_lfht_add_unique(table_, HashPageKey(entry->key), Match, &entry->key, &entry->node);
  PageEntry* present = caa_container_of(node, PageEntry, node);
  CCFS_TSAN_ACQUIRE(present);
  if (present == entry) {
    count_.fetch_add(1, std::memory_order_relaxed);
  } else {
    Uncounted(entry->key);
  }
  return present;
}

bool PageIndex::Remove(PageEntry* entry) {
  if (cds_lfht_del(table_, &entry->node) != 0) return false;
  count_.fetch_sub(1, std::memory_order_relaxed);
  Uncounted(entry->key);
  return true;
}

PageIndex::SpanShard& PageIndex::ShardOf(uint64_t file_id) const {
  // File ids are inode numbers and the like, often consecutive: mixed before taking the shard.
  constexpr int kShift = 64 - std::countr_zero(static_cast<unsigned>(kSpanShards));
  return spans_[(file_id * 0x9E3779B97F4A7C15ull) >> kShift];
}

void PageIndex::Counted(const PageKey& key) {
  SpanShard& shard = ShardOf(key.file_id);
  MutexLock lock(&shard.mu);
  FileSpan& span = shard.files[key.file_id];
  ++span.entries;
  span.end_page = std::max(span.end_page, key.page_no + 1);
}

void PageIndex::Uncounted(const PageKey& key) {
  SpanShard& shard = ShardOf(key.file_id);
  MutexLock lock(&shard.mu);
  auto it = shard.files.find(key.file_id);
  if (it != shard.files.end() && --it->second.entries == 0) shard.files.erase(it);
}

PageIndex::FileSpan PageIndex::SpanOf(uint64_t file_id) const {
  SpanShard& shard = ShardOf(file_id);
  MutexLock lock(&shard.mu);
  auto it = shard.files.find(file_id);
  return it == shard.files.end() ? FileSpan{} : it->second;
}

void PageIndex::ForEachOfFile(uint64_t file_id, uint64_t first_page,
                              const std::function<void(PageEntry*)>& fn) const {
  const FileSpan span = SpanOf(file_id);
  if (span.entries == 0 || span.end_page <= first_page) return;
  if (span.end_page - first_page > count_.load(std::memory_order_relaxed)) {
    ForEach([&](PageEntry* e) {
      if (e->key.file_id == file_id && e->key.page_no >= first_page) fn(e);
    });
    return;
  }
  for (uint64_t p = first_page; p < span.end_page; ++p) {
    if (PageEntry* e = Lookup(PageKey{file_id, p})) fn(e);
  }
}

void PageIndex::ForEach(const std::function<void(PageEntry*)>& fn) const {
  cds_lfht_iter iter;
  PageEntry* entry;
  cds_lfht_for_each_entry(table_, &iter, entry, node) {
    CCFS_TSAN_ACQUIRE(entry);
    fn(entry);
  }
}

}  // namespace ccfs::cache
