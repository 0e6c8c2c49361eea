// The engine: PageCache::Impl ties the index, the two tiers, the evictor and the compression pool
// together. page_entry.h describes the state machine every path below follows.
//
// Read path, per page (no lock on a raw hit):
//   lookup under RCU -> kRaw/kEvicting: pin, copy, unpin            (raw hit)
//                    -> kCompressed:   decompress; promote into a free frame if one is free now,
//                                      otherwise serve from a scratch page  (compressed hit)
//                    -> kLoading:      wait for the loader, then read again  (counted as a miss)
//                    -> absent:        take a frame (waiting only if none is free: a stall),
//                                      insert kLoading, read the backing file, publish kRaw (miss)
// Eviction: a single evictor thread watches free frames; below the low watermark it sweeps a
// batch of victims (kRaw -> kEvicting: pages on probation first, raw_tier.h, then the CLOCK
// hand's) and hands them to the compression pool in a few chunks; with no compressed budget it
// drops them at once. Compression never runs on a reader's thread.
#include "ccfs/page_cache.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "cache/admission.h"
#include "cache/blob.h"
#include "cache/frequency.h"
#include "cache/compressed_tier.h"
#include "cache/page_entry.h"
#include "cache/page_index.h"
#include "cache/raw_tier.h"
#include "cache/rcu.h"
#include "compress/compression_pool.h"
#include "config/live_options.h"
#include "util/cpus.h"

namespace ccfs {

using cache::Blob;
using cache::FrequencySketch;
using cache::GhostSet;
using cache::RejectMemory;
using cache::CompressedTier;
using cache::PageEntry;
using cache::PageIndex;
using cache::PageKey;
using cache::RawTier;
using cache::RcuReadLock;

namespace {

// Counters are sharded by thread so that two readers never write the same cache line.
enum Counter {
  kReads,
  kRawHits,
  kCompressedHits,
  kMisses,
  kReadErrors,
  kBufferedMisses,
  kPageWrites,
  kInvalidations,
  kEvictions,
  kEvictSweeps,
  kCompressions,
  kCompressedStored,
  kRejects,
  kZeroPages,
  kAdmissionDrops,
  kIncompressibleSkips,
  kPressureDrops,
  kPromotions,
  kStalls,
  kStallNs,
  kCompressNs,
  kDecompressNs,
  kNumCounters
};

constexpr int kShards = 8;

struct alignas(64) CounterShard {
  std::atomic<uint64_t> v[kNumCounters];
};

std::atomic<unsigned> next_shard{0};
unsigned MyShard() {
  thread_local unsigned shard = next_shard.fetch_add(1, std::memory_order_relaxed) % kShards;
  return shard;
}

uint64_t NowNs() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

bool IsAllZero(const char* p, size_t n) {
  // Pages are 4 KiB-aligned and a multiple of 8 bytes long in practice; handle any length.
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    if (w != 0) return false;
  }
  for (; i < n; ++i) {
    if (p[i] != 0) return false;
  }
  return true;
}

// Decompression on reader threads: one codec per kind per thread, made on first use.
Codec& ReaderCodec(uint8_t kind) {
  thread_local std::unique_ptr<Codec> codecs[2];
  auto& c = codecs[kind & 1];
  if (!c) c = NewCodec(static_cast<CodecKind>(kind & 1), 1);
  return *c;
}

char* ScratchPage(size_t page_size) {
  thread_local std::vector<char> scratch;
  if (scratch.size() < page_size) scratch.resize(page_size);
  return scratch.data();
}

// Where a blob stored in two pieces is made contiguous for the decompressor.
char* BlobScratch(size_t page_size) {
  thread_local std::vector<char> scratch;
  if (scratch.size() < page_size) scratch.resize(page_size);
  return scratch.data();
}

}  // namespace

class PageCache::Impl {
 public:
  explicit Impl(const Options& o);
  ~Impl();

  Status Read(uint64_t file_id, BackingFile* file, uint64_t offset, size_t len, void* dst,
              size_t* n);
  Status Write(uint64_t file_id, BackingFile* file, uint64_t offset, const void* src, size_t len);
  void InvalidateFile(uint64_t file_id, uint64_t from);
  Status Reconfigure(const Options& o);
  CacheStats Stats() const;
  void Quiesce();
  Options options() const {
    std::lock_guard<std::mutex> lock(options_mu_);
    return options_;
  }

 private:
  enum class Path { kRawHit, kCompressedHit, kMiss, kNone };

  // Reads the part [in_page, in_page + want) of one page into dst; *copied is what the page had
  // (less than want at end of file).
  Status ReadPage(const PageKey& key, BackingFile* file, uint32_t in_page, uint32_t want,
                  char* dst, uint32_t* copied, Path* path);
  // Copies from a pinned raw entry and unpins it.
  uint32_t CopyPinned(PageEntry* e, uint32_t in_page, uint32_t want, char* dst);
  Status ReadCompressed(PageEntry* e, uint64_t s, uint32_t in_page, uint32_t want, char* dst,
                        uint32_t* copied, bool* retry);
  // A miss: reads the page from `file` into a free frame and publishes it. *path is kMiss when a
  // page was read, kNone at end of file or on error (nothing is counted then).
  Status Load(const PageKey& key, BackingFile* file, uint32_t in_page, uint32_t want, char* dst,
              uint32_t* copied, bool* retry, Path* path);

  // Drops one entry, whatever its state (writes, truncates, changes underneath).
  // REQUIRES: RCU read-side.
  void Invalidate(PageEntry* e);
  // kEvicting (owned by the caller) -> kDead: unlink, free the frame, retire.
  void DropEvicting(PageEntry* e);
  void RetireDropped(std::vector<PageEntry*>* dropped);
  void CompressChunk(Codec& codec, const std::vector<PageEntry*>& chunk);

  void EvictorLoop();
  // Splits a sweep's victims into those worth compressing (kept in *victims) and those dropped at
  // once (admission.h). Evictor thread only.
  void Admit(std::vector<PageEntry*>* victims);
  bool NeedEviction() const { return Pressure() != Evict::kNone; }
  // kCompress: take a batch for the pool. kDrop: the pool is saturated and free frames are nearly
  // gone; misses would wait for compressions, so a batch is dropped uncompressed instead.
  enum class Evict { kNone, kCompress, kDrop };
  Evict Pressure() const;
  void KickEvictor();
  void ApplyGeometry(const Options& o);

  void Count(Counter c, uint64_t n = 1) {
    shards_[MyShard()].v[c].fetch_add(n, std::memory_order_relaxed);
  }
  uint64_t Sum(Counter c) const {
    uint64_t total = 0;
    for (const auto& s : shards_) total += s.v[c].load(std::memory_order_relaxed);
    return total;
  }

  const uint32_t page_size_;
  const uint64_t memory_;
  mutable std::mutex options_mu_;
  Options options_;  // guarded by options_mu_

  PageIndex index_;
  RawTier raw_;
  CompressedTier compressed_;
  std::unique_ptr<CompressionPool> pool_;

  std::atomic<bool> compress_enabled_;
  std::atomic<bool> admission_filter_;
  std::atomic<bool> probation_;
  std::atomic<uint64_t> ghost_slots_{0};  // wanted size of ghost_; the evictor applies it
  GhostSet ghost_;                         // evictor thread only
  uint64_t ghost_applied_ = 0;             // evictor thread only
  RejectMemory reject_memory_;
  FrequencySketch frequency_;
  uint64_t reads_at_last_aging_ = 0;  // evictor thread only
  std::atomic<uint32_t> low_watermark_{1};
  std::atomic<uint32_t> batch_{1};
  std::atomic<double> min_savings_;
  std::atomic<uint32_t> in_flight_{0};  // victims handed to the pool, not yet done

  std::mutex evict_mu_;
  std::condition_variable evict_cv_;
  bool stop_ = false;           // guarded by evict_mu_
  bool evictor_busy_ = false;   // guarded by evict_mu_
  std::atomic<bool> evictor_sleeping_{false};  // waiting on evict_cv_ (KickEvictor)
  std::thread evictor_;

  CounterShard shards_[kShards];
  LatencyHistogram latency_[3];  // raw hit, compressed hit, miss
};

PageCache::Impl::Impl(const Options& o)
    : page_size_(o.page_size),
      memory_(o.memory),
      options_(o),
      // Raw frames plus compressed pages at the ratio a good codec reaches on mixed data.
      index_(o.memory / o.page_size * 4),
      raw_(o.page_size, static_cast<uint32_t>(o.memory / o.page_size),
           static_cast<uint32_t>(o.raw_budget() / o.page_size)),
      compressed_(o.compressed_budget()),
      compress_enabled_(o.compressed_percent > 0),
      admission_filter_(o.admission_filter),
      probation_(o.probation),
      ghost_(std::max<uint64_t>(1024, o.memory / o.page_size * 2)),
      reject_memory_(o.page_size),
      frequency_(o.memory / o.page_size * 4, o.memory / o.page_size),
      min_savings_(o.min_savings_percent) {
  for (auto& s : shards_) {
    for (auto& v : s.v) v.store(0, std::memory_order_relaxed);
  }
  ApplyGeometry(o);
  // liburcu starts its reclamation thread on the first call_rcu, from whichever thread makes it,
  // and the new thread inherits that thread's name, scheduling class, nice value and CPUs: made by
  // a compression worker it would run as a pinned, SCHED_BATCH "ccfs-compress". Start it here.
  urcu_memb_get_default_call_rcu_data();
  pool_ = std::make_unique<CompressionPool>(
      o.compress_threads, o.compressor, o.compression_level,
      o.pin_threads ? SplitCpus(o.compress_threads).compress : std::vector<int>{});
  evictor_ = std::thread([this] { EvictorLoop(); });
}

PageCache::Impl::~Impl() {
  {
    std::lock_guard<std::mutex> lock(evict_mu_);
    stop_ = true;
  }
  evict_cv_.notify_all();
  evictor_.join();
  pool_->Wait();
  pool_.reset();
  {
    RcuReadLock rcu;
    std::vector<PageEntry*> all;
    index_.ForEach([&](PageEntry* e) { all.push_back(e); });
    for (PageEntry* e : all) Invalidate(e);
  }
  urcu_memb_barrier();  // every retired entry and blob is freed before the index goes
}

void PageCache::Impl::ApplyGeometry(const Options& o) {
  uint32_t frames = static_cast<uint32_t>(o.raw_budget() / page_size_);
  low_watermark_ = std::max<uint32_t>(1, static_cast<uint32_t>(frames * o.low_watermark_percent / 100));
  batch_ = std::max<uint32_t>(1, static_cast<uint32_t>(frames * o.evict_batch_percent / 100));
  min_savings_.store(o.min_savings_percent);
  admission_filter_.store(o.admission_filter);
  probation_.store(o.probation);
  // About as many fingerprints as the compressed tier holds pages at a 2:1 ratio.
  ghost_slots_.store(std::max<uint64_t>(1024, o.compressed_budget() / page_size_ * 2));
}

// ---- reads ------------------------------------------------------------------------------------

Status PageCache::Impl::Read(uint64_t file_id, BackingFile* file, uint64_t offset, size_t len,
                             void* dst, size_t* n) {
  *n = 0;
  char* out = static_cast<char*>(dst);
  while (len > 0) {
    uint64_t page_no = offset / page_size_;
    uint32_t in_page = static_cast<uint32_t>(offset % page_size_);
    uint32_t want = static_cast<uint32_t>(std::min<uint64_t>(len, page_size_ - in_page));
    uint32_t copied = 0;
    Path path = Path::kNone;
    uint64_t start = NowNs();
    const PageKey key{file_id, page_no};
    Status st = ReadPage(key, file, in_page, want, out, &copied, &path);
    if (!st.ok()) return *n > 0 ? Status::Ok() : st;
    if (path != Path::kNone) {
      frequency_.Increment(key);
      uint64_t ns = NowNs() - start;
      latency_[static_cast<int>(path)].Record(ns);
      Count(kReads);
      Count(path == Path::kRawHit ? kRawHits : path == Path::kCompressedHit ? kCompressedHits : kMisses);
    }
    *n += copied;
    out += copied;
    offset += copied;
    len -= copied;
    if (copied < want) break;  // end of file
  }
  return Status::Ok();
}

uint32_t PageCache::Impl::CopyPinned(PageEntry* e, uint32_t in_page, uint32_t want, char* dst) {
  uint32_t length = e->length.load(std::memory_order_relaxed);
  uint32_t copied = in_page >= length ? 0 : std::min(want, length - in_page);
  std::memcpy(dst, raw_.data(e->frame.load(std::memory_order_relaxed)) + in_page, copied);
  e->state.fetch_sub(cache::kPinOne, std::memory_order_release);
  return copied;
}

Status PageCache::Impl::ReadPage(const PageKey& key, BackingFile* file, uint32_t in_page,
                                 uint32_t want, char* dst, uint32_t* copied, Path* path) {
  bool waited_for_load = false;
  for (;;) {
    bool retry = false;
    {
      RcuReadLock rcu;
      PageEntry* e = index_.Lookup(key);
      if (e != nullptr) {
        uint64_t s = e->state.load(std::memory_order_acquire);
        for (;;) {
          uint64_t kind = cache::KindOf(s);
          if (kind == cache::kRaw || kind == cache::kEvicting) {
            // Pin and mark referenced in one CAS; the frame cannot be reused while pinned.
            uint64_t next = (s + cache::kPinOne) | cache::kSeenBit;
            if (cache::UsesOf(s) < cache::kUseMax) next += cache::kUseOne;
            if (e->state.compare_exchange_weak(s, next, std::memory_order_acquire)) {
              *copied = CopyPinned(e, in_page, want, dst);
              *path = waited_for_load ? Path::kMiss : Path::kRawHit;
              return Status::Ok();
            }
            continue;
          }
          if (kind == cache::kCompressed) {
            Status st = ReadCompressed(e, s, in_page, want, dst, copied, &retry);
            if (!retry) {
              *path = waited_for_load ? Path::kMiss : Path::kCompressedHit;
              return st;
            }
            break;
          }
          if (kind == cache::kLoading) {
            // Another thread is reading this page from the backing file: wait for it. Waiting
            // inside the read-side section keeps the entry alive; it only delays reclamation.
            if (!(s & cache::kWaiterBit) &&
                !e->state.compare_exchange_weak(s, s | cache::kWaiterBit, std::memory_order_acquire)) {
              continue;
            }
            e->state.wait(s | cache::kWaiterBit, std::memory_order_acquire);
            waited_for_load = true;
            s = e->state.load(std::memory_order_acquire);
            continue;
          }
          // kDead: being removed; look it up again.
          retry = true;
          break;
        }
      }
    }
    if (retry) continue;
    bool lost_race = false;
    Status st = Load(key, file, in_page, want, dst, copied, &lost_race, path);
    if (lost_race) continue;
    return st;
  }
}

Status PageCache::Impl::ReadCompressed(PageEntry* e, uint64_t s, uint32_t in_page, uint32_t want,
                                       char* dst, uint32_t* copied, bool* retry) {
  // REQUIRES: RCU read-side; `s` was read as kCompressed.
  Blob* blob = e->blob.load(std::memory_order_acquire);
  if (blob == nullptr && cache::KindOf(e->state.load(std::memory_order_acquire)) != cache::kCompressed) {
    *retry = true;  // the entry left the tier between our two loads
    return Status::Ok();
  }
  uint32_t length = e->length.load(std::memory_order_relaxed);
  uint32_t frame;
  // A page is promoted on its second hit while compressed: a promotion displaces a raw page,
  // which then costs a compression, so a page read once from the compressed tier is served from
  // a scratch copy instead. Promotion is optional: it also leaves the last few free frames to
  // misses, which must have one.
  bool promote = (s & cache::kTierHitBit) != 0 &&
                 raw_.free_count() > low_watermark_.load(std::memory_order_relaxed) / 4 &&
                 raw_.TryAlloc(&frame);
  char* page = promote ? raw_.data(frame) : ScratchPage(page_size_);
  uint64_t t0 = NowNs();
  if (blob == nullptr) {
    std::memset(page, 0, length);
  } else {
    const char* bytes = cache::BlobBytes(blob, BlobScratch(page_size_));
    Status st = ReaderCodec(blob->codec).Decompress(bytes, blob->size, page, length);
    if (!st.ok()) {
      if (promote) raw_.Free(frame);
      Invalidate(e);
      return Status::Corruption("compressed page of file " + std::to_string(e->key.file_id) +
                                " page " + std::to_string(e->key.page_no) + ": " + st.message());
    }
  }
  Count(kDecompressNs, NowNs() - t0);
  if (length < page_size_) std::memset(page + length, 0, page_size_ - length);
  if (promote) {
    Blob* old_blob = nullptr;
    if (compressed_.Promote(e, frame, &old_blob)) {
      raw_.owner(frame).store(e, std::memory_order_release);
      cache::RetireBlob(old_blob);
      Count(kPromotions);
      *copied = CopyPinned(e, in_page, want, dst);
      if (raw_.free_count() < low_watermark_.load(std::memory_order_relaxed)) KickEvictor();
      return Status::Ok();
    }
    // Someone else promoted or dropped it meanwhile: the bytes are still right, serve them.
    raw_.Free(frame);
    *retry = true;
    return Status::Ok();
  }
  e->state.fetch_or(cache::kRefBit | cache::kTierHitBit, std::memory_order_relaxed);
  *copied = in_page >= length ? 0 : std::min(want, length - in_page);
  std::memcpy(dst, page + in_page, *copied);
  if (raw_.free_count() < low_watermark_.load(std::memory_order_relaxed)) KickEvictor();
  return Status::Ok();
}

Status PageCache::Impl::Load(const PageKey& key, BackingFile* file, uint32_t in_page,
                             uint32_t want, char* dst, uint32_t* copied, bool* retry, Path* path) {
  *path = Path::kNone;
  uint64_t waited_ns = 0;
  uint32_t frame = raw_.Alloc(&waited_ns, [this] { KickEvictor(); });
  if (waited_ns > 0) {
    Count(kStalls);
    Count(kStallNs, waited_ns);
  }
  if (raw_.free_count() < low_watermark_.load(std::memory_order_relaxed)) KickEvictor();

  auto* e = new PageEntry;
  e->key = key;
  e->frame.store(frame, std::memory_order_relaxed);
  e->state.store(cache::kLoading, std::memory_order_relaxed);
  {
    RcuReadLock rcu;
    if (index_.InsertUnique(e) != e) {
      delete e;  // never published
      raw_.Free(frame);
      *retry = true;
      return Status::Ok();
    }
  }

  size_t got = 0;
  Status st = file->ReadPage(key.page_no * page_size_, page_size_, raw_.data(frame), &got);
  if (st.ok() && got > 0) {
    *path = Path::kMiss;
    if (!file->direct()) Count(kBufferedMisses);
    if (got < page_size_) std::memset(raw_.data(frame) + got, 0, page_size_ - got);
    e->length.store(static_cast<uint32_t>(got), std::memory_order_relaxed);
    *copied = in_page >= got ? 0 : std::min<uint32_t>(want, static_cast<uint32_t>(got) - in_page);
    std::memcpy(dst, raw_.data(frame) + in_page, *copied);
    raw_.owner(frame).store(e, std::memory_order_release);
    // A page read often lately (though not cached) starts with credit on the raw CLOCK.
    const uint64_t uses = frequency_.Estimate(key);
    uint64_t s = e->state.load(std::memory_order_relaxed);
    uint64_t next;
    do {
      next = (s & cache::kStaleBit)
                 ? cache::WithKind(s, cache::kDead)
                 : cache::WithUses(cache::WithKind(s & ~cache::kWaiterBit, cache::kRaw), uses);
    } while (!e->state.compare_exchange_weak(s, next, std::memory_order_acq_rel));
    if (s & cache::kWaiterBit) e->state.notify_all();
    if (!(s & cache::kStaleBit)) {
      // A page not read at all lately (a one-off, by the sketch) is the first candidate for
      // eviction, unless it is read again before the next sweep (raw_tier.h, Probation).
      if (uses == 0 && probation_.load(std::memory_order_relaxed)) raw_.Probation(frame, e);
      return Status::Ok();
    }
    // Invalidated while loading: the caller still gets what it read (the read was concurrent with
    // the change), but the page is not kept.
    raw_.owner(frame).store(nullptr, std::memory_order_relaxed);
  } else {
    *copied = 0;
    if (!st.ok()) Count(kReadErrors);
    uint64_t s = e->state.load(std::memory_order_relaxed);
    while (!e->state.compare_exchange_weak(s, cache::WithKind(s, cache::kDead),
                                           std::memory_order_acq_rel)) {
    }
    if (s & cache::kWaiterBit) e->state.notify_all();
  }
  {
    RcuReadLock rcu;
    index_.Remove(e);
  }
  raw_.Free(frame);
  cache::RetireEntry(e);
  return st;
}

// ---- writes and invalidation ------------------------------------------------------------------

Status PageCache::Impl::Write(uint64_t file_id, BackingFile* file, uint64_t offset,
                              const void* src, size_t len) {
  uint64_t old_size = 0;
  Status st = file->Size(&old_size);
  if (!st.ok()) return st;
  st = file->Write(offset, src, len);
  if (!st.ok()) return st;
  if (len == 0) return st;
  // Drop the pages written, and the old last page when the file grows (its cached copy ends at
  // the old end of file).
  uint64_t first = offset / page_size_;
  uint64_t last = (offset + len - 1) / page_size_;
  RcuReadLock rcu;
  auto drop = [&](uint64_t page_no) {
    if (PageEntry* e = index_.Lookup(PageKey{file_id, page_no})) Invalidate(e);
  };
  for (uint64_t p = first; p <= last; ++p) drop(p);
  if (offset + len > old_size && old_size / page_size_ < first) drop(old_size / page_size_);
  Count(kPageWrites, last - first + 1);
  return Status::Ok();
}

void PageCache::Impl::InvalidateFile(uint64_t file_id, uint64_t from) {
  uint64_t first = from / page_size_;
  RcuReadLock rcu;
  std::vector<PageEntry*> doomed;
  index_.ForEach([&](PageEntry* e) {
    if (e->key.file_id == file_id && e->key.page_no >= first) doomed.push_back(e);
  });
  for (PageEntry* e : doomed) Invalidate(e);
}

void PageCache::Impl::Invalidate(PageEntry* e) {
  uint64_t s = e->state.load(std::memory_order_acquire);
  for (;;) {
    switch (cache::KindOf(s)) {
      case cache::kLoading:
      case cache::kEvicting:
        // The owner (loader or compression worker) finishes and, seeing the stale bit, drops it.
        if (!e->state.compare_exchange_weak(s, s | cache::kStaleBit, std::memory_order_acq_rel)) {
          continue;
        }
        if (index_.Remove(e)) Count(kInvalidations);
        return;
      case cache::kRaw: {
        if (!e->state.compare_exchange_weak(s, cache::WithKind(s, cache::kDead),
                                            std::memory_order_acq_rel)) {
          continue;
        }
        index_.Remove(e);
        uint32_t frame = e->frame.load(std::memory_order_relaxed);
        // Readers that pinned before the transition finish their copy first.
        while (cache::PinsOf(e->state.load(std::memory_order_acquire)) != 0) std::this_thread::yield();
        raw_.owner(frame).store(nullptr, std::memory_order_relaxed);
        raw_.Free(frame);
        e->blob.store(nullptr, std::memory_order_relaxed);
        cache::RetireEntry(e);
        Count(kInvalidations);
        return;
      }
      case cache::kCompressed:
        if (!compressed_.Kill(e)) {
          s = e->state.load(std::memory_order_acquire);
          continue;
        }
        index_.Remove(e);
        cache::RetireEntry(e);
        Count(kInvalidations);
        return;
      default:
        return;  // already dead
    }
  }
}

void PageCache::Impl::DropEvicting(PageEntry* e) {
  uint64_t s = e->state.load(std::memory_order_acquire);
  for (;;) {
    if (cache::PinsOf(s) != 0) {
      std::this_thread::yield();
      s = e->state.load(std::memory_order_acquire);
      continue;
    }
    if (e->state.compare_exchange_weak(s, cache::WithKind(s, cache::kDead), std::memory_order_acq_rel)) {
      break;
    }
  }
  {
    RcuReadLock rcu;
    index_.Remove(e);
  }
  uint32_t frame = e->frame.load(std::memory_order_relaxed);
  raw_.owner(frame).store(nullptr, std::memory_order_relaxed);
  raw_.Free(frame);
  e->blob.store(nullptr, std::memory_order_relaxed);
  cache::RetireEntry(e);
}

void PageCache::Impl::RetireDropped(std::vector<PageEntry*>* dropped) {
  if (dropped->empty()) return;
  RcuReadLock rcu;
  for (PageEntry* e : *dropped) {
    index_.Remove(e);
    cache::RetireEntry(e);
  }
  dropped->clear();
}

// ---- eviction ---------------------------------------------------------------------------------

void PageCache::Impl::CompressChunk(Codec& codec, const std::vector<PageEntry*>& chunk) {
  thread_local std::vector<char> out;
  std::vector<PageEntry*> dropped;
  const double min_savings = min_savings_.load(std::memory_order_relaxed);
  for (PageEntry* e : chunk) {
    uint32_t frame = e->frame.load(std::memory_order_relaxed);
    const char* page = raw_.data(frame);
    uint32_t length = e->length.load(std::memory_order_relaxed);
    uint64_t t0 = NowNs();
    Blob* blob = nullptr;
    size_t charged = 0;
    bool keep = true;
    if (IsAllZero(page, length)) {
      charged = sizeof(PageEntry);  // no blob; charge what the entry itself costs
      Count(kZeroPages);
    } else {
      size_t cap = static_cast<size_t>(length * (1.0 - min_savings / 100.0));
      if (out.size() < codec.Bound(length)) out.resize(codec.Bound(length));
      size_t size = cap > 0 ? codec.Compress(page, length, out.data(), cap) : 0;
      reject_memory_.Record(e->key, size == 0);
      if (size == 0) {
        keep = false;
        Count(kRejects);
      } else {
        blob = cache::AllocBlob(out.data(), size, &charged);
        blob->codec = static_cast<uint8_t>(codec.kind());
      }
    }
    Count(kCompressions);
    Count(kCompressNs, NowNs() - t0);
    if (!keep || !compress_enabled_.load(std::memory_order_relaxed)) {
      if (blob) cache::FreeBlob(blob);
      DropEvicting(e);
      continue;
    }
    for (;;) {
      CompressedTier::Publish r =
          compressed_.Insert(e, blob, static_cast<uint32_t>(charged), length, &dropped);
      if (r == CompressedTier::Publish::kPublished) {
        raw_.owner(frame).store(nullptr, std::memory_order_relaxed);
        raw_.Free(frame);
        if (blob) Count(kCompressedStored);
        break;
      }
      if (r == CompressedTier::Publish::kStale) {
        if (blob) cache::FreeBlob(blob);
        DropEvicting(e);
        break;
      }
      std::this_thread::yield();  // a reader is still copying out of the frame
    }
    RetireDropped(&dropped);
  }
}

PageCache::Impl::Evict PageCache::Impl::Pressure() const {
  uint32_t in_flight = in_flight_.load(std::memory_order_relaxed);
  uint32_t active = raw_.active();
  uint32_t capacity = raw_.capacity();
  if (active > capacity + in_flight) return Evict::kCompress;  // the raw tier is shrinking
  // Below the watermark, keep at most two batches in the pool: enough to keep every worker busy,
  // not so many that the tier empties faster than misses refill it. A stalled miss (no free frame)
  // is covered too: zero free frames is always below the watermark.
  uint32_t batch = batch_.load(std::memory_order_relaxed);
  uint32_t low = low_watermark_.load(std::memory_order_relaxed);
  uint32_t free = raw_.free_count();
  if (free >= low) return Evict::kNone;
  if (in_flight < 2 * batch) return Evict::kCompress;
  // The pool is behind (its workers run at background priority and readers have the CPUs):
  // rather than let a miss wait for it, drop a few victims once a miss finds no free frame.
  if (compress_enabled_.load(std::memory_order_relaxed) && raw_.waiters() > 0) {
    return Evict::kDrop;
  }
  return Evict::kNone;
}

void PageCache::Impl::KickEvictor() {
  // Misses and promotions call this often; a wake-up is a futex call, so make it only when the
  // evictor is asleep and has work. The fences pair with the evictor's: either it sees our change
  // to the free frames when it checks before sleeping, or we see it asleep here.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (!evictor_sleeping_.load(std::memory_order_relaxed) || !NeedEviction()) return;
  std::lock_guard<std::mutex> lock(evict_mu_);
  evict_cv_.notify_one();
}

void PageCache::Impl::EvictorLoop() {
  pthread_setname_np(pthread_self(), "ccfs-evictor");
  std::vector<PageEntry*> victims;
  std::unique_lock<std::mutex> lock(evict_mu_);
  while (!stop_) {
    evictor_sleeping_.store(true, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_seq_cst);
    evict_cv_.wait_for(lock, std::chrono::milliseconds(20), [&] { return stop_ || NeedEviction(); });
    evictor_sleeping_.store(false, std::memory_order_relaxed);
    if (stop_) break;
    if (uint64_t reads = Sum(kReads); reads - reads_at_last_aging_ >= frequency_.sample_size()) {
      frequency_.Age();  // popularity fades: halve every count
      reads_at_last_aging_ = reads;
    }
    const Evict mode = Pressure();
    if (mode == Evict::kNone) continue;
    evictor_busy_ = true;
    lock.unlock();
    uint32_t want = batch_.load(std::memory_order_relaxed);
    if (mode == Evict::kDrop) want = std::max<uint32_t>(1, want / 8);
    uint32_t active = raw_.active(), capacity = raw_.capacity();
    if (active > capacity) want = std::max(want, active - capacity);
    victims.clear();
    {
      RcuReadLock rcu;
      raw_.Sweep(want, &victims);
    }
    Count(kEvictSweeps);
    Count(kEvictions, victims.size());
    const bool compress = mode == Evict::kCompress && compress_enabled_.load(std::memory_order_relaxed);
    if (mode == Evict::kDrop) Count(kPressureDrops, victims.size());
    if (compress) Admit(&victims);
    if (compress) {
      // Cut the batch into one chunk per worker so the whole pool compresses it at once.
      size_t workers = static_cast<size_t>(pool_->threads());
      size_t per = (victims.size() + workers - 1) / std::max<size_t>(workers, 1);
      in_flight_.fetch_add(static_cast<uint32_t>(victims.size()), std::memory_order_relaxed);
      for (size_t i = 0; i < victims.size(); i += per) {
        std::vector<PageEntry*> chunk(victims.begin() + i,
                                      victims.begin() + std::min(victims.size(), i + per));
        pool_->Submit([this, chunk = std::move(chunk)](Codec& codec) {
          CompressChunk(codec, chunk);
          in_flight_.fetch_sub(static_cast<uint32_t>(chunk.size()), std::memory_order_relaxed);
          KickEvictor();
        });
      }
    } else {
      for (PageEntry* e : victims) DropEvicting(e);
    }
    lock.lock();
    evictor_busy_ = false;
    if (victims.empty()) {
      // Every page is pinned, loading or being compressed: wait for one to come back.
      evict_cv_.wait_for(lock, std::chrono::milliseconds(1));
    }
  }
}

void PageCache::Impl::Admit(std::vector<PageEntry*>* victims) {
  uint64_t slots = ghost_slots_.load(std::memory_order_relaxed);
  if (slots != ghost_applied_) {
    ghost_.Resize(slots);
    ghost_applied_ = slots;
  }
  const bool filter = admission_filter_.load(std::memory_order_relaxed);
  // While the compressed tier has room, every victim is worth keeping: admitting it displaces
  // nothing. Pages already handed to the pool will take about half a page each. (A full tier is
  // left with less than one blob of room after it drops its coldest, hence "more than a page".)
  CompressedTier::Counts c = compressed_.counts();
  int64_t room = static_cast<int64_t>(c.budget) - static_cast<int64_t>(c.charged) -
                 static_cast<int64_t>(in_flight_.load(std::memory_order_relaxed)) * (page_size_ / 2);
  size_t kept = 0;
  for (PageEntry* e : *victims) {
    if (reject_memory_.ShouldSkip(e->key)) {
      Count(kIncompressibleSkips);
      DropEvicting(e);
      continue;
    }
    if (filter && room <= static_cast<int64_t>(page_size_)) {
      bool reused = (e->state.load(std::memory_order_relaxed) & cache::kSeenBit) != 0 ||
                    ghost_.Contains(e->key);
      if (!reused) {
        ghost_.Remember(e->key);
        Count(kAdmissionDrops);
        DropEvicting(e);
        continue;
      }
    }
    room -= page_size_ / 2;
    (*victims)[kept++] = e;
  }
  victims->resize(kept);
}

void PageCache::Impl::Quiesce() {
  for (;;) {
    pool_->Wait();
    {
      std::lock_guard<std::mutex> lock(evict_mu_);
      if (!evictor_busy_ && in_flight_.load() == 0 && !NeedEviction()) return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

// ---- configuration and stats ------------------------------------------------------------------

Status PageCache::Impl::Reconfigure(const Options& o) {
  Status st = o.Validate();
  if (!st.ok()) return st;
  Options cur = options();
  std::vector<std::string> remount = RemountKeys(cur, o);  // the key table's non-live keys
  if (!remount.empty()) {
    return Status::NotSupported(remount[0] + ": cannot change while mounted (needs a remount)");
  }
  {
    std::lock_guard<std::mutex> lock(options_mu_);
    options_ = o;
  }
  ApplyGeometry(o);
  pool_->SetCodec(o.compressor, o.compression_level);
  compress_enabled_.store(o.compressed_percent > 0);
  // Shrink the compressed tier first and give its memory back before the raw tier grows, so that
  // the two never hold more than the budget between them.
  std::vector<PageEntry*> dropped;
  const bool shrink = o.compressed_budget() < cur.compressed_budget();
  compressed_.SetBudget(o.compressed_budget(), &dropped);
  RetireDropped(&dropped);
  if (shrink) cache::ReleaseFreedBlobs();
  raw_.SetCapacity(static_cast<uint32_t>(o.raw_budget() / page_size_));
  KickEvictor();
  return Status::Ok();
}

CacheStats PageCache::Impl::Stats() const {
  CacheStats s;
  s.reads = Sum(kReads);
  s.raw_hits = Sum(kRawHits);
  s.compressed_hits = Sum(kCompressedHits);
  s.misses = Sum(kMisses);
  s.read_errors = Sum(kReadErrors);
  s.buffered_misses = Sum(kBufferedMisses);
  s.page_writes = Sum(kPageWrites);
  s.invalidations = Sum(kInvalidations);
  s.evictions = Sum(kEvictions);
  s.evict_sweeps = Sum(kEvictSweeps);
  s.compressions = Sum(kCompressions);
  s.compressed_stored = Sum(kCompressedStored);
  s.rejects = Sum(kRejects);
  s.zero_pages = Sum(kZeroPages);
  s.admission_drops = Sum(kAdmissionDrops);
  s.incompressible_skips = Sum(kIncompressibleSkips);
  s.pressure_drops = Sum(kPressureDrops);
  s.promotions = Sum(kPromotions);
  s.stalls = Sum(kStalls);
  s.stall_ns = Sum(kStallNs);
  s.compress_ns = Sum(kCompressNs);
  s.decompress_ns = Sum(kDecompressNs);
  CompressedTier::Counts c = compressed_.counts();
  s.compressed_evictions = c.evictions;
  s.wasted_compressions = c.wasted;
  s.compressed_pages = c.pages;
  s.compressed_bytes = c.charged;
  s.compressed_logical_bytes = c.logical;
  s.compressed_budget_bytes = c.budget;
  Options o = options();
  s.memory_bytes = memory_;
  s.raw_budget_bytes = memory_ - c.budget;
  s.free_frames = raw_.free_count();
  s.raw_pages = raw_.active() - s.free_frames;
  s.raw_bytes = s.raw_pages * page_size_;
  s.compressed_percent = o.compressed_percent;
  s.page_size = page_size_;
  s.compressor = static_cast<int>(o.compressor);
  s.compression_level = o.compression_level;
  s.raw_hit_latency = latency_[0].Snapshot();
  s.compressed_hit_latency = latency_[1].Snapshot();
  s.miss_latency = latency_[2].Snapshot();
  return s;
}

// ---- PageCache --------------------------------------------------------------------------------

Status PageCache::Create(const Options& options, std::unique_ptr<PageCache>* cache) {
  Status st = options.Validate();
  if (!st.ok()) return st;
  cache->reset(new PageCache(std::make_unique<Impl>(options)));
  return Status::Ok();
}

PageCache::PageCache(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
PageCache::~PageCache() = default;

Status PageCache::Read(uint64_t file_id, BackingFile* file, uint64_t offset, size_t len,
                       void* dst, size_t* n) {
  return impl_->Read(file_id, file, offset, len, dst, n);
}
Status PageCache::Write(uint64_t file_id, BackingFile* file, uint64_t offset, const void* src,
                        size_t len) {
  return impl_->Write(file_id, file, offset, src, len);
}
void PageCache::InvalidateFile(uint64_t file_id, uint64_t from) { impl_->InvalidateFile(file_id, from); }
Status PageCache::Reconfigure(const Options& options) { return impl_->Reconfigure(options); }
CacheStats PageCache::Stats() const { return impl_->Stats(); }
void PageCache::Quiesce() { impl_->Quiesce(); }
Options PageCache::options() const { return impl_->options(); }

}  // namespace ccfs
