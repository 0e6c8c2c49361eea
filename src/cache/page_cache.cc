// The engine: PageCache::Impl ties the index, the two tiers, the evictor and the compression pool
// together. page_entry.h describes the state machine every path below follows (its transitions
// table names each change of state made here); evictor.h is the other half of the engine.
//
// Read path, per page (no lock on a raw hit):
//   lookup under RCU -> kRaw/kEvicting: pin, copy, unpin            (raw hit)
//                    -> kCompressed:   decompress; promote into a free frame if one is free now,
//                                      otherwise serve from a scratch page  (compressed hit)
//                    -> kLoading:      wait for the loader, then read again  (counted as a miss)
//                    -> absent:        the first page of a run of misses (below)
// A run of misses: the absent page and the pages after it that the request covers, up to the
// first page found in the index (cached, or loading by another reader), the first for which no
// frame is free at once, or kMaxRunBytes. Each page is claimed, in order, by inserting it kLoading
// with a frame; one ReadPages call reads them all; each is then published kRaw (or abandoned
// past end of file or on an error), waking its waiters. Only the run's first page may wait for a
// frame (a stall), because it is the only time the reader holds no claimed page: a reader never
// waits (for a frame or for another reader's load) while it holds pages in kLoading, so loads
// never wait on each other in a cycle, and every claimed page is published or abandoned before
// Read looks at the next page.
// Read-ahead (page_cache.h; cache/readahead.h for the window and the threads): a read-ahead
// thread loads a window as runs of misses of its own (LoadRun with `ahead`): the same claims and
// the same order, so a reader that reaches a page being read ahead waits for that load like any
// other, and a write or invalidation during it leaves the page unpublished (kStaleBit). Its pages
// carry kAheadBit until a reader asks for them, start with no uses and go on probation.
// Every page read, whatever its path, is also recorded by the hit-ratio curve estimator (mrc.h),
// after the latency is taken.
// Eviction (evictor.h): a single evictor thread watches free frames; below the low watermark it
// sweeps a batch of victims and hands them to the compression pool in a few chunks; with no
// compressed budget it drops them at once. Compression never runs on a reader's thread.
#include "ccfs/page_cache.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <thread>
#include <vector>

#include "cache/blob.h"
#include "cache/compressed_tier.h"
#include "cache/engine_counters.h"
#include "cache/evictor.h"
#include "cache/frequency.h"
#include "cache/mrc.h"
#include "cache/page_entry.h"
#include "cache/page_index.h"
#include "cache/raw_tier.h"
#include "cache/rcu.h"
#include "cache/readahead.h"
#include "cache/split_tuner.h"
#include "compress/compression_pool.h"
#include "config/live_options.h"
#include "util/cpus.h"
#include "util/mutex.h"
#include "util/thread_cpu.h"

namespace ccfs {

using cache::Blob;
using cache::CompressedTier;
using cache::EngineCounters;
using cache::Evictor;
using cache::FrequencySketch;
using cache::MissRatioCurve;
using cache::NowNs;
using cache::PageEntry;
using cache::PageIndex;
using cache::PageKey;
using cache::RawTier;
using cache::RcuReadLock;

namespace {

using Shard = EngineCounters::Shard;

// CPU time of each read path (Path's order), estimated from a sample of the reads.
constexpr EngineCounters::Counter kPathCpu[] = {&Shard::cpu_raw_hit_ns, &Shard::cpu_decompress_ns,
                                                &Shard::cpu_miss_ns};
// Bytes copied to readers by each read path (Path's order): exact, counted with the page reads.
constexpr EngineCounters::Counter kPathBytes[] = {&Shard::raw_hit_bytes,
                                                  &Shard::compressed_hit_bytes, &Shard::miss_bytes};

// The most one backing read asks for: the largest FUSE request (max_pages 256 of 4 KiB). A longer
// request is read as several runs.
constexpr uint64_t kMaxRunBytes = 1 << 20;

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

  // file == nullptr: TryRead (*whole is set; it is unused otherwise).
  Status Read(uint64_t file_id, BackingFile* file, uint64_t offset, size_t len, void* dst,
              size_t* n, bool* whole = nullptr);
  Status Write(uint64_t file_id, BackingFile* file, uint64_t offset, const void* src, size_t len);
  void InvalidateFile(uint64_t file_id, uint64_t from);
  void ReadAhead(Stream* stream, uint64_t file_id, const std::shared_ptr<BackingFile>& file,
                 uint64_t offset, uint64_t n, bool at_end);
  void Demote(uint64_t file_id, uint64_t page_no, const void* bytes, uint32_t len, uint64_t epoch);
  // A pool task: compresses a demoted page and publishes it; false if it was not kept.
  bool PublishDemoted(Codec& codec, const PageKey& key, const char* page, uint32_t len,
                      uint64_t epoch);
  uint64_t ChangeEpoch() const { return change_epoch_.load(std::memory_order_seq_cst); }
  Status Reconfigure(const Options& o) EXCLUDES(reconfigure_mu_);
  CacheStats Stats() const;
  std::vector<CurvePoint> HitRatioCurve() const;
  void Quiesce();
  Options options() const EXCLUDES(options_mu_) {
    MutexLock lock(&options_mu_);
    return options_;
  }

 private:
  enum class Path { kRawHit, kCompressedHit, kMiss, kNone };

  // Reads the part [in_page, in_page + want) of one page into dst from the tiers, waiting for it
  // if another reader is loading it (unless !wait); *copied is what the page had (less than want
  // at end of file). Sets *missing instead, with nothing copied, when the page is in neither tier
  // (or, !wait, is loading).
  Status ReadPage(const PageKey& key, uint32_t in_page, uint32_t want, char* dst,
                  uint32_t* copied, Path* path, bool* missing, bool wait = true);
  // Copies from a pinned raw entry and unpins it.
  uint32_t CopyPinned(PageEntry* e, uint32_t in_page, uint32_t want, char* dst);
  Status ReadCompressed(PageEntry* e, uint64_t s, uint32_t in_page, uint32_t want, char* dst,
                        uint32_t* copied, bool* retry);
  // A run of misses (see the top of this file) for the request [offset, offset + len), whose
  // first page was just found missing: claims it and the missing pages after it, reads them with
  // one backing read, publishes them and copies their part of the request to dst. *copied is the
  // bytes copied: less than len when the run ended before the request did, or at end of file
  // (then *eof). *retry, with nothing copied or claimed, when the first page was inserted by
  // another reader meanwhile. Counts each page read as a miss, its latency the run's time
  // (since `start`, the first page's lookup included) shared by its pages, and *copied as
  // miss_bytes; `cpu` is the run's.
  // `ahead`: a read-ahead thread's run (offset and len page-aligned, dst null): nothing is copied
  // or counted as read; *copied is the bytes loaded, and the pages are marked read ahead.
  Status LoadRun(uint64_t file_id, BackingFile* file, uint64_t offset, size_t len, char* dst,
                 const CpuSample& cpu, uint64_t start, size_t* copied, bool* eof, bool* retry,
                 bool ahead = false);
  // A read-ahead thread's task: loads the pages of [offset, offset + len) found in neither tier.
  void Prefetch(const cache::ReadaheadQueue::Task& task);
  // Counts one page read, served by `path` in `ns`.
  void RecordRead(const PageKey& key, Path path, uint64_t ns);

  // Drops one entry, whatever its state (writes, truncates, changes underneath).
  // REQUIRES: RCU read-side.
  void Invalidate(PageEntry* e);

  void KickEvictor() { evictor_->Kick(); }
  // Applies validated options whose live keys may differ from the ones in force.
  Status ApplyLocked(const Options& o) REQUIRES(reconfigure_mu_);
  // The split tuner's hook: a new split and codec for the keys under "auto".
  Status ApplySplit(int percent, CodecKind codec) EXCLUDES(reconfigure_mu_);
  // The live keys the engine itself uses (probation) and the evictor's (Evictor::Configure).
  void ApplyGeometry(const Options& o);

  void Count(EngineCounters::Counter c, uint64_t n = 1) { counters_.Add(c, n); }

  const uint32_t page_size_;
  // raw_tier = kernel: the kernel keeps the raw copy of what it was sent, so a compressed hit is
  // served from a scratch copy and stays compressed (promoting it into the small staging tier
  // would only cost a compression when it is evicted again).
  const bool promote_;
  // kernel_demote: compressed hits leave the compressed tier (the kernel holds them again).
  const bool demotes_;
  // Bumped by every write and invalidation before it drops pages (Demote's staleness check).
  std::atomic<uint64_t> change_epoch_{0};
  // Demoted pages handed to the pool and not yet published, and the most there may be (their
  // copies are outside the budget while they wait).
  std::atomic<uint64_t> demotions_in_flight_{0};
  const uint64_t max_demotions_in_flight_;
  const uint64_t memory_;
  // estimate_splits: the curve records reads, the evictor samples victims, the tuner runs.
  const bool estimate_;
  // Serialises Reconfigure and the tuner's changes (each reads the options in force, then applies).
  Mutex reconfigure_mu_;  // taken before options_mu_
  mutable Mutex options_mu_;
  Options options_ GUARDED_BY(options_mu_);

  PageIndex index_;
  RawTier raw_;
  CompressedTier compressed_;
  std::unique_ptr<CompressionPool> pool_;

  std::atomic<bool> probation_;
  std::atomic<uint64_t> readahead_max_;  // Options::readahead
  FrequencySketch frequency_;
  MissRatioCurve mrc_;
  EngineCounters counters_;
  LatencyHistogram latency_[3];  // raw hit, compressed hit, miss
  std::unique_ptr<cache::VictimSample> victims_;  // null unless estimate_
  // It borrows the parts above. Stopped by the destructor after the tuner.
  std::unique_ptr<Evictor> evictor_;
  // It calls back into the engine (Prefetch). Stopped first.
  std::unique_ptr<cache::ReadaheadQueue> readahead_;
  // Last: it calls Stats, HitRatioCurve and ApplySplit. Stopped next. Null unless estimate_.
  std::unique_ptr<cache::SplitTuner> tuner_;
};

PageCache::Impl::Impl(const Options& o)
    : page_size_(o.page_size),
      promote_(!o.kernel_raw_tier()),
      demotes_(o.demotes()),
      max_demotions_in_flight_(std::max<uint64_t>(64, o.memory / o.page_size / 32)),
      memory_(o.memory),
      estimate_(o.estimate_splits),
      options_(o),
      // Raw frames plus compressed pages at the ratio a good codec reaches on mixed data.
      index_(o.memory / o.page_size * 4),
      raw_(o.page_size, static_cast<uint32_t>(o.memory / o.page_size),
           static_cast<uint32_t>(o.raw_budget() / o.page_size)),
      compressed_(o.compressed_budget()),
      probation_(o.probation),
      readahead_max_(o.readahead),
      frequency_(o.memory / o.page_size * 4, o.memory / o.page_size),
      mrc_(MissRatioCurve::Config::ForCache(o.memory / o.page_size)) {
  // liburcu starts its reclamation thread on the first call_rcu, from whichever thread makes it,
  // and the new thread inherits that thread's name, scheduling class, nice value and CPUs: made by
  // a compression worker it would run as a pinned, SCHED_BATCH "ccfs-compress". Start it here.
  urcu_memb_get_default_call_rcu_data();
  pool_ = std::make_unique<CompressionPool>(
      o.compress_threads, o.compressor, o.compression_level,
      o.pin_threads ? SplitCpus(o.compress_threads).compress : std::vector<int>{});
  if (estimate_) victims_ = std::make_unique<cache::VictimSample>(o.page_size);
  evictor_ = std::make_unique<Evictor>(
      Evictor::Parts{&index_, &raw_, &compressed_, pool_.get(), &frequency_, &counters_,
                     victims_.get()},
      o);
  readahead_ = std::make_unique<cache::ReadaheadQueue>(
      [this](const cache::ReadaheadQueue::Task& task) { Prefetch(task); });
  if (estimate_) {
    cache::SplitTuner::Hooks hooks;
    hooks.stats = [this] { return Stats(); };
    hooks.curve = [this] { return HitRatioCurve(); };
    hooks.options = [this] { return options(); };
    hooks.apply = [this](int percent, CodecKind codec) { return ApplySplit(percent, codec); };
    tuner_ = std::make_unique<cache::SplitTuner>(std::move(hooks), victims_.get());
    tuner_->Start();
  }
}

PageCache::Impl::~Impl() {
  readahead_->Stop();
  if (tuner_) tuner_->Stop();
  evictor_->Stop();
  pool_->Wait();  // chunks already submitted call back into the evictor
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
  probation_.store(o.probation);
  readahead_max_.store(o.readahead, std::memory_order_relaxed);
  evictor_->Configure(o);
}

// ---- reads ------------------------------------------------------------------------------------

Status PageCache::Impl::Read(uint64_t file_id, BackingFile* file, uint64_t offset, size_t len,
                             void* dst, size_t* n, bool* whole) {
  *n = 0;
  if (whole != nullptr) *whole = true;
  char* out = static_cast<char*>(dst);
  while (len > 0) {
    uint64_t page_no = offset / page_size_;
    uint32_t in_page = static_cast<uint32_t>(offset % page_size_);
    uint32_t want = static_cast<uint32_t>(std::min<uint64_t>(len, page_size_ - in_page));
    CpuSample cpu;  // about one event in 64 is timed on this thread's CPU clock (ccfs/stats.h)
    uint64_t start = NowNs();
    const PageKey key{file_id, page_no};
    // One page from the tiers, or a run of misses from its first page on. An error is the
    // reader's, even after some pages: a short success would read as end of file (in raw_tier =
    // kernel mode the kernel then zero-fills and keeps the rest of the page).
    size_t copied = 0;
    bool end_of_file = false;
    for (;;) {
      uint32_t page_copied = 0;
      Path path = Path::kNone;
      bool missing = false;
      Status st = ReadPage(key, in_page, want, out, &page_copied, &path, &missing,
                           /*wait=*/file != nullptr);
      if (!st.ok()) return st;
      if (missing && file == nullptr) {
        *whole = false;  // TryRead: the rest is the caller's
        return Status::Ok();
      }
      if (!missing) {
        const uint64_t ns = NowNs() - start;
        if (path != Path::kNone) {
          RecordRead(key, path, ns);
          Count(kPathBytes[static_cast<int>(path)], page_copied);
        }
        if (path != Path::kNone && cpu.sampled()) {
          Count(kPathCpu[static_cast<int>(path)], cpu.ScaledNs(ns));
        }
        copied = page_copied;
        end_of_file = page_copied < want;
        break;
      }
      bool retry = false;
      st = LoadRun(file_id, file, offset, len, out, cpu, start, &copied, &end_of_file, &retry);
      if (!st.ok()) return st;
      if (!retry) break;
    }
    *n += copied;
    out += copied;
    offset += copied;
    len -= copied;
    if (end_of_file) break;
  }
  return Status::Ok();
}

void PageCache::Impl::RecordRead(const PageKey& key, Path path, uint64_t ns) {
  frequency_.Increment(key);
  latency_[static_cast<int>(path)].Record(ns);
  if (estimate_) mrc_.Record(cache::HashPageKey(key));
  Count(&Shard::reads);
  Count(path == Path::kRawHit         ? &Shard::raw_hits
        : path == Path::kCompressedHit ? &Shard::compressed_hits
                                       : &Shard::misses);
}

uint32_t PageCache::Impl::CopyPinned(PageEntry* e, uint32_t in_page, uint32_t want, char* dst) {
  uint32_t length = e->length.load(std::memory_order_relaxed);
  uint32_t copied = in_page >= length ? 0 : std::min(want, length - in_page);
  std::memcpy(dst, raw_.data(e->frame.load(std::memory_order_relaxed)) + in_page, copied);
  cache::Unpin(e);
  return copied;
}

Status PageCache::Impl::ReadPage(const PageKey& key, uint32_t in_page, uint32_t want, char* dst,
                                 uint32_t* copied, Path* path, bool* missing, bool wait) {
  *missing = false;
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
            if (cache::TryPin(e, &s)) {
              *copied = CopyPinned(e, in_page, want, dst);
              if (s & cache::kAheadBit) {
                Count(&Shard::readahead_hits);
                Count(&Shard::readahead_hit_bytes, *copied);
              }
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
            if (!wait) break;  // *missing, below
            // Another thread is reading this page from the backing file: wait for it. Waiting
            // inside the read-side section keeps the entry alive; it only delays reclamation.
            if (!(s & cache::kWaiterBit) && !cache::TryMarkWaiter(e, &s)) continue;
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
    *missing = true;
    return Status::Ok();
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
  bool promote = promote_ && (s & cache::kTierHitBit) != 0 &&
                 raw_.free_count() > evictor_->low_watermark() / 4 &&
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
  Count(&Shard::decompress_ns, NowNs() - t0);
  if (length < page_size_) std::memset(page + length, 0, page_size_ - length);
  if (promote) {
    Blob* old_blob = nullptr;
    if (compressed_.Promote(e, frame, &old_blob)) {
      raw_.owner(frame).store(e, std::memory_order_release);
      cache::RetireBlob(old_blob);
      Count(&Shard::promotions);
      *copied = CopyPinned(e, in_page, want, dst);
      if (raw_.free_count() < evictor_->low_watermark()) KickEvictor();
      return Status::Ok();
    }
    // Someone else promoted or dropped it meanwhile: the bytes are still right, serve them.
    raw_.Free(frame);
    *retry = true;
    return Status::Ok();
  }
  cache::MarkCompressedHit(e);
  *copied = in_page >= length ? 0 : std::min(want, length - in_page);
  std::memcpy(dst, page + in_page, *copied);
  // Exclusive levels: the kernel takes the page back and demotes it again when it drops it.
  if (demotes_ && compressed_.Kill(e)) {
    index_.Remove(e);
    cache::RetireEntry(e);
  }
  if (raw_.free_count() < evictor_->low_watermark()) KickEvictor();
  return Status::Ok();
}

Status PageCache::Impl::LoadRun(uint64_t file_id, BackingFile* file, uint64_t offset, size_t len,
                                char* dst, const CpuSample& cpu, uint64_t start, size_t* copied,
                                bool* eof, bool* retry, bool ahead) {
  *copied = 0;
  *eof = false;
  *retry = false;
  struct Claim {
    PageEntry* e;
    uint32_t frame;
  };
  // Per thread, so that a one-page miss allocates nothing but its entry.
  thread_local std::vector<Claim> run;
  thread_local std::vector<char*> bufs;
  run.clear();
  bufs.clear();
  const uint64_t first = offset / page_size_;
  const uint64_t wanted = (offset % page_size_ + len + page_size_ - 1) / page_size_;
  const uint64_t max_pages = std::min<uint64_t>(
      {wanted, std::max<uint64_t>(1, kMaxRunBytes / page_size_), kMaxReadBuffers});

  // Claims page `page_no` in `frame`: false (the frame freed) if the page is in the index already.
  auto claim = [&](uint64_t page_no, uint32_t frame) {
    auto* e = new PageEntry;
    e->key = PageKey{file_id, page_no};
    e->frame.store(frame, std::memory_order_relaxed);
    cache::InitLoading(e, /*demoted=*/false, ahead);
    RcuReadLock rcu;
    if (index_.InsertUnique(e) != e) {
      delete e;  // never published
      raw_.Free(frame);
      return false;
    }
    run.push_back(Claim{e, frame});
    bufs.push_back(raw_.data(frame));
    return true;
  };

  // The first page may wait for a frame: no page is claimed yet (see the top of this file).
  uint64_t waited_ns = 0;
  uint32_t frame = raw_.Alloc(&waited_ns, [this] { KickEvictor(); });
  if (waited_ns > 0 && !ahead) {
    Count(&Shard::stalls);
    Count(&Shard::stall_ns, waited_ns);
  }
  if (!claim(first, frame)) {
    *retry = true;
    return Status::Ok();
  }
  // The pages after it, while they are missing and a frame is free at once.
  for (uint64_t p = first + 1; run.size() < max_pages; ++p) {
    {
      RcuReadLock rcu;
      if (index_.Lookup(PageKey{file_id, p}) != nullptr) break;
    }
    if (!raw_.TryAlloc(&frame)) break;
    if (!claim(p, frame)) break;
  }
  if (raw_.free_count() < evictor_->low_watermark()) KickEvictor();

  size_t got = 0;
  Status st = file->ReadPages(first * page_size_, page_size_, bufs, &got);
  Count(&Shard::backing_reads);
  if (!st.ok()) {
    got = 0;
    if (!ahead) Count(&Shard::read_errors, run.size());
  }

  // Publish (or abandon) every claimed page, in order, copying the request's part of each.
  const bool buffered = !file->direct();
  uint64_t pages_read = 0;
  for (size_t i = 0; i < run.size(); ++i) {
    PageEntry* e = run[i].e;
    const uint32_t f = run[i].frame;
    const uint64_t at = i * static_cast<uint64_t>(page_size_);
    if (got > at) {
      const auto length = static_cast<uint32_t>(std::min<uint64_t>(page_size_, got - at));
      if (length < page_size_) std::memset(raw_.data(f) + length, 0, page_size_ - length);
      e->length.store(length, std::memory_order_relaxed);
      if (!ahead && !*eof) {
        // The request's part of this page: from `in_page` (the first page only) for `want`.
        const uint32_t in_page = i == 0 ? static_cast<uint32_t>(offset % page_size_) : 0;
        const auto want = static_cast<uint32_t>(std::min<uint64_t>(len - *copied,
                                                                   page_size_ - in_page));
        const uint32_t c = in_page >= length ? 0 : std::min(want, length - in_page);
        std::memcpy(dst + *copied, raw_.data(f) + in_page, c);
        *copied += c;
        *eof = c < want;
      }
      ++pages_read;
      raw_.owner(f).store(e, std::memory_order_release);
      // A page read often lately (though not cached) starts with credit on the raw CLOCK; a page
      // read ahead starts with none (it has not been read).
      const uint64_t uses = ahead ? 0 : frequency_.Estimate(e->key);
      const uint64_t s = cache::FinishLoad(e, uses);
      if (s & cache::kWaiterBit) e->state.notify_all();
      if (!(s & cache::kStaleBit)) {
        // A page not read at all lately (a one-off, by the sketch) is the first candidate for
        // eviction, unless it is read again before the next sweep (raw_tier.h, Probation).
        if (uses == 0 && probation_.load(std::memory_order_relaxed)) raw_.Probation(f, e);
        continue;
      }
      // Invalidated while loading: the caller still gets what it read (the read was concurrent
      // with the change), but the page is not kept.
      raw_.owner(f).store(nullptr, std::memory_order_relaxed);
    } else {
      // Past end of file, or the read failed: nothing to publish.
      if (st.ok()) *eof = true;
      const uint64_t s = cache::AbandonLoad(e);
      if (s & cache::kWaiterBit) e->state.notify_all();
    }
    {
      RcuReadLock rcu;
      index_.Remove(e);
    }
    raw_.Free(f);
    cache::RetireEntry(e);
  }
  if (!st.ok()) {
    *copied = 0;
    return st;
  }
  if (ahead) {
    *copied = got;
    *eof = got < run.size() * static_cast<uint64_t>(page_size_);
    Count(&Shard::readahead_pages, pages_read);
    return st;
  }
  if (pages_read == 0) return st;
  // The run's time, shared by its pages; its CPU sample, if one, stands for the whole run.
  const uint64_t ns = NowNs() - start;
  for (uint64_t i = 0; i < pages_read; ++i) {
    RecordRead(PageKey{file_id, first + i}, Path::kMiss, ns / pages_read);
    if (buffered) Count(&Shard::buffered_misses);
  }
  Count(&Shard::miss_bytes, *copied);
  if (cpu.sampled()) Count(kPathCpu[static_cast<int>(Path::kMiss)], cpu.ScaledNs(ns));
  return st;
}

void PageCache::Impl::ReadAhead(Stream* stream, uint64_t file_id,
                                const std::shared_ptr<BackingFile>& file, uint64_t offset,
                                uint64_t n, bool at_end) {
  uint64_t from = 0;
  const uint64_t len = stream->Next(offset, n, at_end,
                                    readahead_max_.load(std::memory_order_relaxed), &from);
  if (len == 0) return;
  // Whole pages: from the page the window starts in to the one it ends in, in pieces of at most
  // kTaskBytes, so that the read-ahead threads read one window with several reads at once.
  const uint64_t first = from / page_size_ * page_size_;
  const uint64_t end = (from + len + page_size_ - 1) / page_size_ * page_size_;
  const uint64_t piece = std::max<uint64_t>(page_size_, cache::ReadaheadQueue::kTaskBytes);
  for (uint64_t at = first; at < end; at += piece) {
    if (!readahead_->Push(cache::ReadaheadQueue::Task{file_id, file, at, std::min(piece, end - at)})) {
      stream->Dropped(at);
      break;
    }
  }
}

void PageCache::Impl::Prefetch(const cache::ReadaheadQueue::Task& task) {
  // Never past the end of the file: a window there would ask the store for nothing, every time a
  // reader near the end moves on. (On this thread, so no reader waits for the size.)
  uint64_t size = 0;
  if (!task.file->Size(&size).ok()) return;
  const uint64_t end = std::min(task.offset + task.len, (size + page_size_ - 1) / page_size_ * page_size_);
  for (uint64_t at = task.offset; at < end;) {
    {
      RcuReadLock rcu;
      if (index_.Lookup(PageKey{task.file_id, at / page_size_}) != nullptr) {
        at += page_size_;  // cached, or loading for a reader
        continue;
      }
    }
    size_t loaded = 0;
    bool eof = false, retry = false;
    Status st = LoadRun(task.file_id, task.file.get(), at, end - at, nullptr, CpuSample(), 0,
                        &loaded, &eof, &retry, /*ahead=*/true);
    if (!st.ok() || eof) return;  // a reader that gets there meets the error itself
    if (retry) continue;          // a reader claimed the page meanwhile: looked up again
    at += loaded;
  }
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
  change_epoch_.fetch_add(1, std::memory_order_seq_cst);
  RcuReadLock rcu;
  auto drop = [&](uint64_t page_no) {
    if (PageEntry* e = index_.Lookup(PageKey{file_id, page_no})) Invalidate(e);
  };
  for (uint64_t p = first; p <= last; ++p) drop(p);
  if (offset + len > old_size && old_size / page_size_ < first) drop(old_size / page_size_);
  Count(&Shard::page_writes, last - first + 1);
  return Status::Ok();
}

void PageCache::Impl::InvalidateFile(uint64_t file_id, uint64_t from) {
  uint64_t first = from / page_size_;
  change_epoch_.fetch_add(1, std::memory_order_seq_cst);
  RcuReadLock rcu;
  std::vector<PageEntry*> doomed;
  index_.ForEach([&](PageEntry* e) {
    if (e->key.file_id == file_id && e->key.page_no >= first) doomed.push_back(e);
  });
  for (PageEntry* e : doomed) Invalidate(e);
}

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
  cache::InitLoading(e, /*demoted=*/true);
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

void PageCache::Impl::Invalidate(PageEntry* e) {
  uint64_t s = e->state.load(std::memory_order_acquire);
  for (;;) {
    switch (cache::KindOf(s)) {
      case cache::kLoading:
      case cache::kEvicting:
        // The owner (loader or compression worker) finishes and, seeing the stale bit, drops it.
        if (!cache::TryMarkStale(e, &s)) continue;
        if (index_.Remove(e)) Count(&Shard::invalidations);
        return;
      case cache::kRaw: {
        if (!cache::TryKillRaw(e, &s)) continue;
        index_.Remove(e);
        uint32_t frame = e->frame.load(std::memory_order_relaxed);
        // Readers that pinned before the transition finish their copy first.
        while (cache::PinsOf(e->state.load(std::memory_order_acquire)) != 0) std::this_thread::yield();
        raw_.owner(frame).store(nullptr, std::memory_order_relaxed);
        raw_.Free(frame);
        e->blob.store(nullptr, std::memory_order_relaxed);
        cache::RetireEntry(e);
        Count(&Shard::invalidations);
        return;
      }
      case cache::kCompressed:
        if (!compressed_.Kill(e)) {
          s = e->state.load(std::memory_order_acquire);
          continue;
        }
        index_.Remove(e);
        cache::RetireEntry(e);
        Count(&Shard::invalidations);
        return;
      default:
        return;  // already dead
    }
  }
}

void PageCache::Impl::Quiesce() {
  readahead_->Quiesce();
  evictor_->Quiesce();
}

// ---- configuration and stats ------------------------------------------------------------------

Status PageCache::Impl::Reconfigure(const Options& wanted) {
  MutexLock lock(&reconfigure_mu_);
  Options o = wanted;
  const Options cur = options();
  // A key that stays "auto" keeps the value the tuner put in force (the caller's copy may be older).
  if (o.compressed_percent_auto && cur.compressed_percent_auto) {
    o.compressed_percent = cur.compressed_percent;
  }
  if (o.compressor_auto && cur.compressor_auto) o.compressor = cur.compressor;
  return ApplyLocked(o);
}

Status PageCache::Impl::ApplySplit(int percent, CodecKind codec) {
  MutexLock lock(&reconfigure_mu_);
  Options o = options();
  if (o.compressed_percent_auto) o.compressed_percent = percent;
  if (o.compressor_auto) o.compressor = codec;
  return ApplyLocked(o);
}

Status PageCache::Impl::ApplyLocked(const Options& o) {
  Status st = o.Validate();
  if (!st.ok()) return st;
  Options cur = options();
  std::vector<std::string> remount = RemountKeys(cur, o);  // the key table's non-live keys
  if (!remount.empty()) {
    return Status::NotSupported(remount[0] + ": cannot change while mounted (needs a remount)");
  }
  {
    MutexLock lock(&options_mu_);
    options_ = o;
  }
  ApplyGeometry(o);
  pool_->SetCodec(o.compressor, o.compression_level);
  evictor_->EnableCompression(o.compressed_percent > 0);
  // Shrink the compressed tier first and give its memory back before the raw tier grows, so that
  // the two never hold more than the budget between them.
  std::vector<PageEntry*> dropped;
  const bool shrink = o.compressed_budget() < cur.compressed_budget();
  compressed_.SetBudget(o.compressed_budget(), &dropped);
  cache::RetireDropped(&index_, &dropped);
  if (shrink) cache::ReleaseFreedBlobs();
  raw_.SetCapacity(static_cast<uint32_t>(o.raw_budget() / page_size_));
  KickEvictor();
  return Status::Ok();
}

CacheStats PageCache::Impl::Stats() const {
  CacheStats s;
  counters_.Snapshot(&s);
  CompressedTier::Counts c = compressed_.counts();
  s.compressed_evictions = c.evictions;
  s.wasted_compressions = c.wasted;
  s.compressed_pages = c.pages;
  s.compressed_bytes = c.charged;
  s.compressed_logical_bytes = c.logical;
  s.compressed_budget_bytes = c.budget;
  Options o = options();
  s.memory_bytes = memory_;
  s.raw_budget_bytes = o.raw_budget();
  s.free_frames = raw_.free_count();
  s.raw_pages = raw_.active() - s.free_frames;
  s.raw_bytes = s.raw_pages * page_size_;
  s.compressed_percent = o.compressed_percent;
  s.kernel_raw_tier = o.kernel_raw_tier();
  s.kernel_evict = o.kernel_raw_tier() && o.kernel_evict;
  s.kernel_budget_bytes = o.kernel_budget();
  s.page_size = page_size_;
  s.compressor = static_cast<int>(o.compressor);
  s.compression_level = o.compression_level;
  s.compressed_percent_auto = o.compressed_percent_auto;
  s.compressor_auto = o.compressor_auto;
  if (tuner_) tuner_->Fill(&s);
  s.raw_hit_latency = latency_[0].Snapshot();
  s.compressed_hit_latency = latency_[1].Snapshot();
  s.miss_latency = latency_[2].Snapshot();
  s.cpu_compress_ns = pool_->cpu_ns();
  s.cpu_evictor_ns = evictor_->cpu_ns();
  const MissRatioCurve::Counts m = mrc_.counts();
  s.mrc_samples = m.samples;
  s.mrc_drops = m.drops;
  return s;
}

std::vector<PageCache::CurvePoint> PageCache::Impl::HitRatioCurve() const {
  // 1/64 .. 4x the cache's pages, four points per doubling.
  const double pages = static_cast<double>(memory_ / page_size_);
  std::vector<uint64_t> sizes;
  for (int i = -24; i <= 8; ++i) {
    const auto k = static_cast<uint64_t>(std::llround(pages * std::exp2(i / 4.0)));
    sizes.push_back(std::max<uint64_t>(k, 1));
  }
  const std::vector<double> hit = mrc_.HitRatios(sizes);
  std::vector<CurvePoint> curve;
  for (size_t i = 0; i < sizes.size(); ++i) curve.push_back(CurvePoint{sizes[i], hit[i]});
  return curve;
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

Status PageCache::TryRead(uint64_t file_id, uint64_t offset, size_t len, void* dst, size_t* n,
                         bool* whole) {
  return impl_->Read(file_id, nullptr, offset, len, dst, n, whole);
}
Status PageCache::Read(uint64_t file_id, BackingFile* file, uint64_t offset, size_t len,
                       void* dst, size_t* n) {
  return impl_->Read(file_id, file, offset, len, dst, n);
}
Status PageCache::Write(uint64_t file_id, BackingFile* file, uint64_t offset, const void* src,
                        size_t len) {
  return impl_->Write(file_id, file, offset, src, len);
}
void PageCache::InvalidateFile(uint64_t file_id, uint64_t from) { impl_->InvalidateFile(file_id, from); }
void PageCache::ReadAhead(Stream* stream, uint64_t file_id,
                          const std::shared_ptr<BackingFile>& file, uint64_t offset, uint64_t n,
                          bool at_end) {
  impl_->ReadAhead(stream, file_id, file, offset, n, at_end);
}
void PageCache::Demote(uint64_t file_id, uint64_t page_no, const void* bytes, uint32_t len,
                       uint64_t epoch) {
  impl_->Demote(file_id, page_no, bytes, len, epoch);
}
uint64_t PageCache::ChangeEpoch() const { return impl_->ChangeEpoch(); }
Status PageCache::Reconfigure(const Options& options) { return impl_->Reconfigure(options); }
CacheStats PageCache::Stats() const { return impl_->Stats(); }
std::vector<PageCache::CurvePoint> PageCache::HitRatioCurve() const {
  return impl_->HitRatioCurve();
}
void PageCache::Quiesce() { impl_->Quiesce(); }
Options PageCache::options() const { return impl_->options(); }

}  // namespace ccfs
