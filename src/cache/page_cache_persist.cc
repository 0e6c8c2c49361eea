// Persistence (page_cache.h, section 7): the pages copied out for a cache file, and those restored
// from one.
//
// Copies follow the readers' rules: a compressed page's blob is copied inside an RCU read-side
// section (blobs are freed only after a grace period, and never change), a raw page's frame while
// it is pinned (TryPinToCopy: the frame is not reused while pinned, and a copy is not a read, so
// the CLOCKs and the admission filter see nothing of it). Each page is copied in a section of its
// own, so a walk over many pages never holds back reclamation for long.
//
// A restored page takes the demoter's way into the compressed tier (an entry with D and no frame,
// kLoading while it is published; CompressedTier::InsertRestored), with Demote's defence against a
// change: `epoch` was read before the caller checked the file, a moved epoch refuses the page, and
// the epoch is looked at again after the insert, so a write or an invalidation that ran between
// the first look and the insert (and may have missed the page) has it dropped here.
#include <cstring>
#include <vector>

#include "cache/blob.h"
#include "cache/page_cache_impl.h"
#include "cache/page_entry.h"
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

std::vector<PageCache::CachedPage> PageCache::Impl::CachedPages() const {
  std::vector<CachedPage> pages;
  pages.reserve(index_.size());
  RcuReadLock rcu;
  index_.ForEach([&](PageEntry* e) {
    const uint64_t kind = cache::KindOf(e->state.load(std::memory_order_acquire));
    if (kind == cache::kRaw || kind == cache::kEvicting || kind == cache::kCompressed) {
      pages.push_back(CachedPage{e->key.file_id, e->key.page_no, kind != cache::kCompressed});
    }
  });
  return pages;
}

void PageCache::Impl::SavePages(uint64_t file_id, const std::vector<uint64_t>& pages,
                                std::vector<SavedPage>* out) const {
  std::vector<char> scratch(page_size_);
  for (uint64_t page_no : pages) {
    RcuReadLock rcu;
    PageEntry* e = index_.Lookup(PageKey{file_id, page_no});
    if (e == nullptr) continue;
    SavedPage saved;
    saved.page_no = page_no;
    uint64_t s = e->state.load(std::memory_order_acquire);
    bool copied = false;
    for (;;) {
      const uint64_t kind = cache::KindOf(s);
      if (kind == cache::kRaw || kind == cache::kEvicting) {
        if (!cache::TryPinToCopy(e, &s)) continue;
        saved.length = e->length.load(std::memory_order_relaxed);
        saved.raw = true;
        saved.bytes.assign(raw_.data(e->frame.load(std::memory_order_relaxed)), saved.length);
        cache::Unpin(e);
        copied = true;
      } else if (kind == cache::kCompressed) {
        const Blob* blob = e->blob.load(std::memory_order_acquire);
        if (blob == nullptr &&
            cache::KindOf(e->state.load(std::memory_order_acquire)) != cache::kCompressed) {
          break;  // it left the tier between the two loads: skipped
        }
        saved.length = e->length.load(std::memory_order_relaxed);
        if (blob == nullptr) {
          saved.zero = true;
        } else {
          saved.codec = static_cast<CodecKind>(blob->codec);
          saved.bytes.assign(cache::BlobBytes(blob, scratch.data()), blob->size);
        }
        copied = true;
      }
      break;  // loading or dead: not cached now
    }
    if (copied && saved.length > 0) out->push_back(std::move(saved));
  }
}

PageCache::Restored PageCache::Impl::Restore(uint64_t file_id, uint64_t page_no, uint32_t length,
                                             bool zero, CodecKind codec, const char* bytes,
                                             size_t size, uint64_t epoch) {
  if (epoch != ChangeEpoch()) return Restored::kChanged;
  if (!evictor_->compression_enabled()) return Restored::kFull;
  Blob* blob = nullptr;
  size_t charged = sizeof(PageEntry);  // a zero page keeps no blob: the entry is what it costs
  if (!zero) {
    blob = cache::AllocBlob(bytes, size, &charged);
    blob->codec = static_cast<uint8_t>(codec);
  }
  auto* e = new PageEntry;
  e->key = PageKey{file_id, page_no};
  e->length.store(length, std::memory_order_relaxed);
  // A pinned file's restored pages are pinned as its loaded ones are (the persister pins the file
  // before it restores its pages, when `pin` names it).
  cache::InitLoading(e, /*demoted=*/true, /*ahead=*/false, /*wanted=*/false, IsPinned(file_id));
  RcuReadLock rcu;
  if (index_.InsertUnique(e) != e) {
    delete e;  // never published
    if (blob) cache::FreeBlob(blob);
    return Restored::kCached;
  }
  uint64_t before = 0;
  const auto r = compressed_.InsertRestored(e, blob, static_cast<uint32_t>(charged), length,
                                            &before);
  if (before & cache::kWaiterBit) e->state.notify_all();
  if (r != CompressedTier::Publish::kPublished) {
    if (blob) cache::FreeBlob(blob);
    index_.Remove(e);
    cache::RetireEntry(e);
    return r == CompressedTier::Publish::kFull ? Restored::kFull : Restored::kChanged;
  }
  if (epoch != ChangeEpoch()) {
    Invalidate(e);
    return Restored::kChanged;
  }
  return Restored::kRestored;
}

void PageCache::Impl::CountPersistence(uint64_t written, uint64_t restored, uint64_t dropped_stale,
                                       uint64_t errors) {
  if (written) Count(&Shard::persist_pages_written, written);
  if (restored) Count(&Shard::persist_pages_restored, restored);
  if (dropped_stale) Count(&Shard::persist_pages_dropped_stale, dropped_stale);
  if (errors) Count(&Shard::persist_errors, errors);
}

}  // namespace ccfs
