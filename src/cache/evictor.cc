// The evictor thread, admission and the compression tasks (evictor.h says what they do).
//
// Why one evictor thread and batches: a sweep takes victims in bulk so the pool gets work in a few
// large chunks (one lock and one wake-up per worker, not per page), and the raw hand has a single
// owner (RawTier::Sweep needs no lock). Why the pressure valve (Evict::kDrop): the pool's workers
// run at background priority and readers have the CPUs; when free frames run out with the pool
// two batches behind, a miss would wait for a compression, so a few victims are dropped
// uncompressed instead (a stall then lasts until the next sweep, not a compression).
#include "cache/evictor.h"

#include <pthread.h>

#include <algorithm>
#include <chrono>
#include <cstring>

#include "cache/blob.h"
#include "cache/rcu.h"
#include "cache/split_tuner.h"

namespace ccfs::cache {
namespace {

using Shard = EngineCounters::Shard;

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

}  // namespace

void RetireDropped(PageIndex* index, std::vector<PageEntry*>* dropped) {
  if (dropped->empty()) return;
  RcuReadLock rcu;
  for (PageEntry* e : *dropped) {
    index->Remove(e);
    RetireEntry(e);
  }
  dropped->clear();
}

Evictor::Evictor(const Parts& parts, const Options& o)
    : parts_(parts),
      page_size_(o.page_size),
      demotes_(o.demotes()),
      compress_enabled_(o.compressed_percent > 0),
      admission_filter_(o.admission_filter),
      min_savings_(o.min_savings_percent),
      ghost_(std::max<uint64_t>(1024, o.memory / o.page_size * 2)),
      stream_ghost_(std::max<uint64_t>(1024, o.memory / o.page_size * kStreamGhostSlotsPerPage)),
      reject_memory_(o.page_size) {
  Configure(o);
  thread_ = std::thread([this] { Loop(); });
}

Evictor::~Evictor() { Stop(); }

void Evictor::Stop() {
  {
    MutexLock lock(&mu_);
    stop_ = true;
  }
  cv_.SignalAll();
  if (thread_.joinable()) thread_.join();
}

void Evictor::Configure(const Options& o) {
  uint32_t frames = static_cast<uint32_t>(o.raw_budget() / page_size_);
  // raw_tier = kernel: the raw tier is only a staging tier through which every miss passes;
  // batches and a watermark of a few percent of it are a frame or two, and misses then wait for
  // the evictor and a compression (PressureTest.KernelModeMissesDoNotWaitForTheStagingTier).
  const double floor_percent = o.kernel_raw_tier() ? kStagingMinPercent : 0;
  low_watermark_ = std::max<uint32_t>(
      1, static_cast<uint32_t>(frames * std::max(o.low_watermark_percent, floor_percent) / 100));
  const uint32_t batch = std::max<uint32_t>(
      1, static_cast<uint32_t>(frames * std::max(o.evict_batch_percent, floor_percent) / 100));
  batch_ = batch;
  stalled_batch_ = std::max(batch, std::min(kStalledBatchFrames, frames / 8));
  min_savings_.store(o.min_savings_percent);
  admission_filter_.store(o.admission_filter);
  // About as many fingerprints as the compressed tier holds pages at a 2:1 ratio.
  ghost_slots_.store(std::max<uint64_t>(1024, o.compressed_budget() / page_size_ * 2));
}

bool Evictor::Behind() const {
  return in_flight_.load(std::memory_order_relaxed) >= 2 * batch_.load(std::memory_order_relaxed);
}

Evictor::Evict Evictor::Pressure() const {
  const RawTier& raw = *parts_.raw;
  uint32_t in_flight = in_flight_.load(std::memory_order_relaxed);
  uint32_t active = raw.active();
  uint32_t capacity = raw.capacity();
  if (active > capacity + in_flight) return Evict::kCompress;  // the raw tier is shrinking
  // Below the watermark, keep at most two batches in the pool (Behind): enough to keep every
  // worker busy, not so many that the tier empties faster than misses refill it. A stalled miss
  // (no free frame) is covered too: zero free frames is always below the watermark.
  if (raw.free_count() >= low_watermark_.load(std::memory_order_relaxed)) return Evict::kNone;
  if (!Behind()) return Evict::kCompress;
  // The pool is behind (its workers run at background priority and readers have the CPUs):
  // rather than let a miss wait for it, drop a few victims once a miss finds no free frame.
  if (compress_enabled_.load(std::memory_order_relaxed) && raw.waiters() > 0) {
    return Evict::kDrop;
  }
  return Evict::kNone;
}

void Evictor::Kick() {
  // Misses and promotions call this often; a wake-up is a futex call, so make it only when the
  // evictor is asleep and has work. The fences pair with the evictor's: either it sees our change
  // to the free frames when it checks before sleeping, or we see it asleep here.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (!sleeping_.load(std::memory_order_relaxed) || !NeedEviction()) return;
  MutexLock lock(&mu_);
  cv_.Signal();
}

void Evictor::Loop() {
  pthread_setname_np(pthread_self(), "ccfs-evictor");
  ThreadCpuGroup::Membership cpu = cpu_.Join();
  RawTier& raw = *parts_.raw;
  CompressionPool& pool = *parts_.pool;
  std::vector<PageEntry*> victims;
  MutexLock lock(&mu_);
  while (!stop_) {
    sleeping_.store(true, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_seq_cst);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(20);
    while (!stop_ && !NeedEviction()) {
      if (!cv_.WaitUntil(&mu_, deadline)) break;  // timed out: look at the sketch's aging anyway
    }
    sleeping_.store(false, std::memory_order_relaxed);
    if (stop_) break;
    if (uint64_t reads = parts_.counters->Sum(&Shard::reads);
        reads - reads_at_last_aging_ >= parts_.frequency->sample_size()) {
      parts_.frequency->Age();  // popularity fades: halve every count
      reads_at_last_aging_ = reads;
    }
    if (parts_.index->size() > parts_.index->buckets()) {
      // The index starts small and follows the pages cached (page_index.h). Resizing waits for
      // grace periods: not under mu_, which the read paths take to wake this thread.
      lock.Unlock();
      parts_.index->Grow();
      lock.Lock();
      if (stop_) break;
    }
    const Evict mode = Pressure();
    if (mode == Evict::kNone) continue;
    busy_ = true;
    lock.Unlock();
    uint32_t want = raw.waiters() > 0 ? stalled_batch_.load(std::memory_order_relaxed)
                                      : batch_.load(std::memory_order_relaxed);
    if (mode == Evict::kDrop) want = std::max<uint32_t>(1, want / 8);
    uint32_t active = raw.active(), capacity = raw.capacity();
    if (active > capacity) want = std::max(want, active - capacity);
    victims.clear();
    {
      RcuReadLock rcu;
      raw.Sweep(want, &victims);
    }
    Count(&Shard::evict_sweeps);
    Count(&Shard::evictions, victims.size());
    if (parts_.victims != nullptr) {
      // A victim's frame is stable while it is kEvicting: the split tuner's codec sample.
      for (PageEntry* e : victims) {
        parts_.victims->Offer(raw.data(e->frame.load(std::memory_order_relaxed)),
                              e->length.load(std::memory_order_relaxed));
      }
    }
    const bool compress =
        mode == Evict::kCompress && compress_enabled_.load(std::memory_order_relaxed);
    if (mode == Evict::kDrop) Count(&Shard::pressure_drops, victims.size());
    if (compress) Admit(&victims);
    if (compress) {
      // Cut the batch into one chunk per worker so the whole pool compresses it at once.
      size_t workers = static_cast<size_t>(pool.threads());
      size_t per = (victims.size() + workers - 1) / std::max<size_t>(workers, 1);
      in_flight_.fetch_add(static_cast<uint32_t>(victims.size()), std::memory_order_relaxed);
      for (size_t i = 0; i < victims.size(); i += per) {
        std::vector<PageEntry*> chunk(victims.begin() + i,
                                      victims.begin() + std::min(victims.size(), i + per));
        pool.Submit([this, chunk = std::move(chunk)](Codec& codec) {
          CompressChunk(codec, chunk);
          in_flight_.fetch_sub(static_cast<uint32_t>(chunk.size()), std::memory_order_relaxed);
          Kick();
        });
      }
    } else {
      for (PageEntry* e : victims) DropEvicting(e);
    }
    lock.Lock();
    busy_ = false;
    if (victims.empty()) {
      // Every page is pinned, loading or being compressed: wait for one to come back.
      cv_.WaitFor(&mu_, std::chrono::milliseconds(1));
    }
  }
}

void Evictor::NotePassed(const PageKey& first, uint32_t pages) {
  MutexLock lock(&passed_mu_);
  if (passed_.size() < kMaxPassedRuns) passed_.emplace_back(first, pages);
}

void Evictor::Admit(std::vector<PageEntry*>* victims) {
  uint64_t slots = ghost_slots_.load(std::memory_order_relaxed);
  if (slots != ghost_applied_) {
    ghost_.Resize(slots);
    ghost_applied_ = slots;
  }
  {
    MutexLock lock(&passed_mu_);
    passed_taken_.swap(passed_);
  }
  for (const auto& [first, pages] : passed_taken_) {
    for (uint32_t i = 0; i < pages; ++i) {
      stream_ghost_.Remember(PageKey{first.file_id, first.page_no + i});
    }
  }
  passed_taken_.clear();
  const bool filter = admission_filter_.load(std::memory_order_relaxed);
  // While the compressed tier has room, every victim is worth keeping: admitting it displaces
  // nothing. Pages already handed to the pool will take about half a page each. (A full tier is
  // left with less than one blob of room after it drops its coldest, hence "more than a page".)
  CompressedTier::Counts c = parts_.compressed->counts();
  const int64_t in_flight = in_flight_.load(std::memory_order_relaxed);
  int64_t room = static_cast<int64_t>(c.budget) - static_cast<int64_t>(c.charged) -
                 in_flight * (page_size_ / 2);
  size_t kept = 0;
  // With the tier full, a victim loaded by a stream (Q, page_entry.h) that would be kept
  // displaces the page the tier's hand drops next only if the frequency sketch counts it read
  // more often lately (TinyLFU's admission; a tie keeps the incumbent). Without this, data scanned
  // in a loop larger than the tier (epochs over a data set) has every page displaced by the next
  // before it is read again, and the tier serves nothing; with it, the tier keeps what it holds
  // and serves that share of every pass. Victims of random readers are let in as before: compared
  // too, skewed random reads lost hit ratio (the commit that added this says how much). Pages the
  // user asked for (warm-up, pins) are not compared. The candidates are fetched once per sweep.
  coldest_.clear();
  bool coldest_read = false;
  size_t displaced = 0;
  // While the tier has room, a page a stream loaded and nobody read again is compressed at its
  // first eviction only if reading it again from the store takes longer than compressing it (the
  // two means above). A store that streams faster than the pool compresses (a local disk, a fast
  // network store on few CPUs) would otherwise have every cold stream fill the tier at the
  // compressor's speed, on the CPUs the reader needs, with pages that may never be read again; a
  // slow store's stream costs the reader nothing while the pool keeps up. Such a page is
  // remembered (stream_ghost_), so that it is kept when it comes back.
  const uint64_t stream_ns = stream_page_ns_.load(std::memory_order_relaxed);
  const uint64_t compress_ns = compress_page_ns_.load(std::memory_order_relaxed);
  const bool streams_outrun_pool = stream_ns > 0 && compress_ns > 0 && stream_ns < compress_ns;
  for (PageEntry* e : *victims) {
    // The kernel holds it: it is demoted when the kernel drops it. A page warmed up and not read
    // since was never sent to the kernel: it goes on to the compressed tier.
    if (demotes_ && !(e->state.load(std::memory_order_relaxed) & kWarmBit)) {
      Count(&Shard::admission_drops);
      DropEvicting(e);
      continue;
    }
    if (reject_memory_.ShouldSkip(e->key)) {
      Count(&Shard::incompressible_skips);
      DropEvicting(e);
      continue;
    }
    if (filter && streams_outrun_pool && room > static_cast<int64_t>(page_size_)) {
      const uint64_t s = e->state.load(std::memory_order_relaxed);
      if ((s & kStreamBit) && !(s & (kSeenBit | kWarmBit | kPinBit)) &&
          !stream_ghost_.Contains(e->key)) {
        stream_ghost_.Remember(e->key);
        Count(&Shard::admission_drops);
        DropEvicting(e);
        continue;
      }
    }
    if (filter && room <= static_cast<int64_t>(page_size_)) {
      const uint64_t s = e->state.load(std::memory_order_relaxed);
      bool reused = (s & kSeenBit) != 0 || ghost_.Contains(e->key) ||
                    ((s & kStreamBit) && stream_ghost_.Contains(e->key));
      if (reused && (s & kStreamBit) && !(s & (kWarmBit | kPinBit))) {
        if (!coldest_read) {
          parts_.compressed->Coldest(victims->size(), &coldest_);
          coldest_read = true;
        }
        if (displaced < coldest_.size()) {
          reused = parts_.frequency->Estimate(e->key) >
                   parts_.frequency->Estimate(coldest_[displaced]);
          displaced += reused;
        }
      }
      if (!reused) {
        ghost_.Remember(e->key);
        Count(&Shard::admission_drops);
        DropEvicting(e);
        continue;
      }
    }
    room -= page_size_ / 2;
    (*victims)[kept++] = e;
  }
  victims->resize(kept);
}

bool Evictor::CompressPage(Codec& codec, const PageKey& key, const char* page, uint32_t length,
                           Blob** blob, size_t* charged) {
  thread_local std::vector<char> out;
  const uint64_t t0 = NowNs();
  bool keep = true;
  *blob = nullptr;
  if (IsAllZero(page, length)) {
    *charged = sizeof(PageEntry);  // no blob; charge what the entry itself costs
    Count(&Shard::zero_pages);
  } else {
    const double min_savings = min_savings_.load(std::memory_order_relaxed);
    size_t cap = static_cast<size_t>(length * (1.0 - min_savings / 100.0));
    if (out.size() < codec.Bound(length)) out.resize(codec.Bound(length));
    size_t size = cap > 0 ? codec.Compress(page, length, out.data(), cap) : 0;
    reject_memory_.Record(key, size == 0);
    if (size == 0) {
      keep = false;
      Count(&Shard::rejects);
    } else {
      *blob = AllocBlob(out.data(), size, charged);
      (*blob)->codec = static_cast<uint8_t>(codec.kind());
    }
    Smooth(&compress_page_ns_, NowNs() - t0);
  }
  Count(&Shard::compressions);
  Count(&Shard::compress_ns, NowNs() - t0);
  return keep;
}

void Evictor::CompressChunk(Codec& codec, const std::vector<PageEntry*>& chunk) {
  RawTier& raw = *parts_.raw;
  std::vector<PageEntry*> dropped;
  for (PageEntry* e : chunk) {
    uint32_t frame = e->frame.load(std::memory_order_relaxed);
    uint32_t length = e->length.load(std::memory_order_relaxed);
    Blob* blob = nullptr;
    size_t charged = 0;
    const bool keep = CompressPage(codec, e->key, raw.data(frame), length, &blob, &charged);
    if (!keep || !compress_enabled_.load(std::memory_order_relaxed)) {
      if (blob) FreeBlob(blob);
      DropEvicting(e);
      continue;
    }
    for (;;) {
      uint64_t before = 0;
      CompressedTier::Publish r = parts_.compressed->Insert(e, blob, static_cast<uint32_t>(charged),
                                                            length, &dropped, &before);
      if (r == CompressedTier::Publish::kPublished) {
        if (before & kAheadBit) Count(&Shard::readahead_wasted);
        raw.owner(frame).store(nullptr, std::memory_order_relaxed);
        raw.Free(frame);
        if (blob) Count(&Shard::compressed_stored);
        break;
      }
      if (r == CompressedTier::Publish::kStale) {
        if (blob) FreeBlob(blob);
        DropEvicting(e);
        break;
      }
      std::this_thread::yield();  // a reader is still copying out of the frame
    }
    RetireDropped(parts_.index, &dropped);
  }
}

void Evictor::DropEvicting(PageEntry* e) {
  uint64_t s = e->state.load(std::memory_order_acquire);
  for (;;) {
    if (PinsOf(s) != 0) {
      std::this_thread::yield();
      s = e->state.load(std::memory_order_acquire);
      continue;
    }
    if (TryDropEvicting(e, &s)) break;
  }
  // Read ahead and never asked for (a reader's first read clears A, even while the page is being
  // evicted): counted as it leaves the raw tier, here or published compressed (CompressChunk).
  if (s & kAheadBit) Count(&Shard::readahead_wasted);
  {
    RcuReadLock rcu;
    parts_.index->Remove(e);
  }
  uint32_t frame = e->frame.load(std::memory_order_relaxed);
  parts_.raw->owner(frame).store(nullptr, std::memory_order_relaxed);
  parts_.raw->Free(frame);
  e->blob.store(nullptr, std::memory_order_relaxed);
  RetireEntry(e);
}

void Evictor::Quiesce() {
  for (;;) {
    parts_.pool->Wait();
    {
      MutexLock lock(&mu_);
      if (!busy_ && in_flight_.load() == 0 && !NeedEviction()) return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

}  // namespace ccfs::cache
