// Pages moving between the tiers outside the read path (page_cache_impl.h). With raw_tier =
// kernel and kernel_demote, a page the kernel drops comes back through the FUSE layer's retrieve
// (fuse/kernel_cache.h) and is compressed on the pool into the compressed tier (Demote,
// PublishDemoted); a compressed hit leaves that tier again (HandToKernel), so that the kernel and
// the compressed tier hold each page once. A budget change (ResizeTiers) moves memory from one
// tier to the other: the compressed tier drops its coldest pages down to a smaller budget, and
// frames beyond the raw tier's new capacity are parked as they come free, the evictor moving
// their pages down.
#include <vector>

#include "cache/blob.h"
#include "cache/page_cache_impl.h"
#include "cache/rcu.h"

namespace ccfs {

using cache::Blob;
using cache::CompressedTier;
using cache::EngineCounters;
using cache::PageEntry;
using cache::PageKey;
using cache::RcuReadLock;

namespace {

using Shard = EngineCounters::Shard;

}  // namespace

void PageCache::Impl::Demote(uint64_t file_id, uint64_t page_no, const void* bytes, uint32_t len,
                             uint64_t epoch) {
  if (!demotes_ || len == 0 || len > page_size_) return;
  // Bytes older than a write or an invalidation since they were asked for, a compressed tier of
  // no size, or a pool that many pages behind: not kept.
  if (epoch != ChangeEpoch() || !evictor_->compression_enabled() ||
      demotions_in_flight_.load(std::memory_order_relaxed) >= max_demotions_in_flight_) {
    return Count(&Shard::demote_drops);
  }
  demotions_in_flight_.fetch_add(1, std::memory_order_relaxed);
  std::vector<char> copy(static_cast<const char*>(bytes), static_cast<const char*>(bytes) + len);
  const PageKey key{file_id, page_no};
  pool_->Submit([this, key, copy = std::move(copy), epoch](Codec& codec) {
    const bool kept = PublishDemoted(codec, key, copy.data(), static_cast<uint32_t>(copy.size()),
                                     epoch);
    Count(kept ? &Shard::demotions : &Shard::demote_drops);
    demotions_in_flight_.fetch_sub(1, std::memory_order_relaxed);
  });
}

bool PageCache::Impl::PublishDemoted(Codec& codec, const PageKey& key, const char* page,
                                     uint32_t len, uint64_t epoch) {
  Blob* blob = nullptr;
  size_t charged = 0;
  if (!evictor_->CompressPage(codec, key, page, len, &blob, &charged)) return false;
  auto* e = new PageEntry;
  e->key = key;
  e->length.store(len, std::memory_order_relaxed);
  // A pinned file's pages are kept by the compressed tier here too (the kernel's own copies it
  // cannot hold back).
  cache::InitLoading(e, /*demoted=*/true, /*ahead=*/false, /*wanted=*/false,
                     IsPinned(key.file_id));
  std::vector<PageEntry*> dropped;
  bool kept = false;
  {
    RcuReadLock rcu;
    if (index_.InsertUnique(e) != e) {  // read again meanwhile: cached, or the kernel's again
      delete e;
      if (blob) cache::FreeBlob(blob);
      return false;
    }
    uint64_t before = 0;
    const auto r = compressed_.InsertDemoted(e, blob, static_cast<uint32_t>(charged), len,
                                             &before, &dropped);
    if (before & cache::kWaiterBit) e->state.notify_all();
    if (r == CompressedTier::Publish::kStale) {  // invalidated while being published
      if (blob) cache::FreeBlob(blob);
      index_.Remove(e);
      cache::RetireEntry(e);
    } else if (epoch != ChangeEpoch()) {
      // A write or an invalidation between the caller's check and the insert may have missed the
      // page: with the epoch looked at again after the insert, one of the two drops it.
      Invalidate(e);
    } else {
      kept = true;
      if (blob) Count(&Shard::compressed_stored);
    }
  }
  cache::RetireDropped(&index_, &dropped);
  return kept;
}

void PageCache::Impl::HandToKernel(PageEntry* e) {
  if (compressed_.Kill(e)) {
    index_.Remove(e);
    cache::RetireEntry(e);
  }
}

void PageCache::Impl::ResizeTiers(const Options& cur, const Options& o) {
  std::vector<PageEntry*> dropped;
  const bool shrink = o.compressed_budget() < cur.compressed_budget();
  compressed_.SetBudget(o.compressed_budget(), &dropped);
  cache::RetireDropped(&index_, &dropped);
  if (shrink) cache::ReleaseFreedBlobs();
  raw_.SetCapacity(static_cast<uint32_t>(o.raw_budget() / page_size_));
}

}  // namespace ccfs
