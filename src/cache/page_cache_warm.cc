// Warm-up (page_cache.h, section 5): pages loaded because someone asked for them on purpose, not
// because a reader missed, and what the tiers hold of a file; and pins (section 6): the files
// whose pages both CLOCKs keep while they have other victims.
//
// A warm-up goes no faster than the compression pool: a load that waited for a free frame while
// the pool is behind would make the evictor drop victims uncompressed (Evictor::Pressure), the
// warm-up's own pages first. So it loads only while the pool keeps up, into half the free frames
// at most, and otherwise compresses a chunk of the pool's queue itself (CompressionPool::RunOne)
// or waits for the evictor; readers' misses keep the valve.
// A warm-up loads with the read path's runs of misses (LoadRun, Load::kWarm), so it claims pages
// in the same order and under the same rules as a reader: a reader that reaches a page being
// warmed waits for that one load, a write or an invalidation meanwhile leaves it unpublished, and
// a warm-up never waits for another load while it holds claimed pages.
#include <algorithm>
#include <chrono>
#include <limits>
#include <thread>

#include "cache/page_cache_impl.h"
#include "cache/page_entry.h"
#include "cache/rcu.h"

namespace ccfs {

using cache::PageEntry;
using cache::PageKey;
using cache::RcuReadLock;

namespace {
// FramesToWarm's "no bound": the run is as long as LoadRun makes it. Times any page size it still
// fits in 64 bits.
constexpr uint64_t kUnboundedFrames = std::numeric_limits<uint32_t>::max();
}  // namespace

uint64_t PageCache::Impl::FramesToWarm() {
  for (;;) {
    // With no compressed tier a victim is dropped at once: waiting for a frame costs nothing, so
    // the run is as long as LoadRun makes it (it takes the frames free at once after the first).
    if (!evictor_->compression_enabled()) return kUnboundedFrames;
    // At most half of the free frames: other warm-ups and readers take frames too, and a load
    // that took the last one would leave the next waiting.
    const uint64_t free = raw_.free_count();
    if (free >= 2 && !evictor_->Behind()) return free / 2;
    KickEvictor();
    // Rather than wait for the pool, compress a chunk of its queue here: the warm-up then loads
    // at the speed of the CPUs, not of the pool's threads alone (one on two CPUs).
    if (!pool_->RunOne()) std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

Status PageCache::Impl::Warm(uint64_t file_id, BackingFile* file, uint64_t offset, uint64_t len,
                             uint64_t* loaded) {
  *loaded = 0;
  uint64_t size = 0;
  Status st = file->Size(&size);
  if (!st.ok()) return st;
  const uint64_t page = page_size_;
  const uint64_t end =
      std::min((offset + len + page - 1) / page * page, (size + page - 1) / page * page);
  for (uint64_t at = offset / page * page; at < end;) {
    {
      RcuReadLock rcu;
      if (PageEntry* e = index_.Lookup(PageKey{file_id, at / page}); e != nullptr) {
        const uint64_t kind = cache::KindOf(e->state.load(std::memory_order_acquire));
        if (kind == cache::kRaw || kind == cache::kEvicting) cache::MarkWanted(e);
        at += page;  // cached, or loading for someone else
        continue;
      }
    }
    const uint64_t room = FramesToWarm();
    size_t got = 0;
    bool eof = false, retry = false;
    st = LoadRun(file_id, file, at, std::min(end - at, room * page), nullptr, CpuSample(), 0, &got,
                 &eof, &retry, Load::kWarm);
    if (!st.ok()) return st;
    *loaded += got;
    if (eof) break;  // the file is shorter than its size said: it changed meanwhile
    if (retry) continue;
    at += (got + page - 1) / page * page;
  }
  return Status::Ok();
}

void PageCache::Impl::Pin(uint64_t file_id) {
  MutexLock lock(&pins_mu_);
  pinned_.insert(file_id);
  any_pinned_.store(true, std::memory_order_relaxed);
}

void PageCache::Impl::UnpinAll() {
  {
    MutexLock lock(&pins_mu_);
    pinned_.clear();
    any_pinned_.store(false, std::memory_order_relaxed);
  }
  // Pages loaded from here on are not pinned; those cached lose the bit.
  RcuReadLock rcu;
  std::vector<PageEntry*> marked;
  index_.ForEach([&](PageEntry* e) {
    if (e->state.load(std::memory_order_relaxed) & cache::kPinBit) marked.push_back(e);
  });
  for (PageEntry* e : marked) compressed_.Unpin(e);
}

bool PageCache::Impl::IsPinned(uint64_t file_id) const {
  if (!any_pinned_.load(std::memory_order_relaxed)) return false;
  MutexLock lock(&pins_mu_);
  return pinned_.count(file_id) != 0;
}

void PageCache::Impl::CountPinned(CacheStats* s) const {
  const cache::CompressedTier::Counts c = compressed_.counts();
  uint64_t raw = 0;
  if (c.pinned_pages > 0 || any_pinned_.load(std::memory_order_relaxed)) {
    RcuReadLock rcu;
    raw = raw_.CountPinned();
  }
  s->pinned_pages = raw + c.pinned_pages;
  s->pinned_bytes = raw * page_size_ + c.pinned_charged;
}

PageCache::Residency PageCache::Impl::ResidencyOf(uint64_t file_id, uint64_t first_page,
                                                  uint64_t pages) const {
  Residency r;
  RcuReadLock rcu;
  for (uint64_t p = first_page; p < first_page + pages; ++p) {
    PageEntry* e = index_.Lookup(PageKey{file_id, p});
    if (e == nullptr) continue;
    const uint64_t kind = cache::KindOf(e->state.load(std::memory_order_acquire));
    if (kind == cache::kCompressed) {
      ++r.compressed_pages;
      // Blobs are freed through RCU: this one stays readable until the section ends.
      if (const cache::Blob* b = e->blob.load(std::memory_order_acquire); b != nullptr) {
        r.compressed_bytes += b->size;
      }
    } else if (kind != cache::kDead) {
      ++r.raw_pages;
    }
  }
  return r;
}

}  // namespace ccfs
