// PageCache::Impl, the engine behind include/ccfs/page_cache.h. Private to the three files that
// define it, one concern each:
//   page_cache.cc           the read path (its design at the top of that file), read-ahead,
//                           writes and invalidation
//   page_cache_config.cc    construction from the options and teardown, the live keys
//                           (Reconfigure, the split tuner's changes) and what the engine reports
//                           (Stats, the hit-ratio curve)
//   page_cache_demotion.cc  what moves pages between the tiers outside the read path: raw_tier =
//                           kernel's demotions into the compressed tier and compressed hits handed
//                           back to the kernel, and a budget change between the tiers
//   page_cache_warm.cc      warm-up: pages loaded on purpose, and what the tiers hold of a file
//   page_cache_persist.cc   persistence: the pages copied out for a cache file, and those
//                           restored from one
// Ownership and thread-safety are PageCache's (page_cache.h); the locks and their order are at
// their declarations below.
#ifndef CCFS_CACHE_PAGE_CACHE_IMPL_H_
#define CCFS_CACHE_PAGE_CACHE_IMPL_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <unordered_set>
#include <vector>

#include "cache/compressed_tier.h"
#include "cache/engine_counters.h"
#include "cache/evictor.h"
#include "cache/frequency.h"
#include "cache/mrc.h"
#include "cache/page_entry.h"
#include "cache/page_index.h"
#include "cache/raw_tier.h"
#include "cache/readahead.h"
#include "cache/split_tuner.h"
#include "ccfs/codec.h"
#include "ccfs/options.h"
#include "ccfs/page_cache.h"
#include "ccfs/stats.h"
#include "ccfs/status.h"
#include "compress/compression_pool.h"
#include "util/mutex.h"
#include "util/thread_cpu.h"

namespace ccfs {

class PageCache::Impl final : public cache::SplitTuner::Engine {
 public:
  explicit Impl(const Options& o);
  ~Impl();

  // file == nullptr: TryRead (*whole is set; it is unused otherwise). load_to: PageCache::Read.
  Status Read(uint64_t file_id, BackingFile* file, uint64_t offset, size_t len, void* dst,
              size_t* n, bool* whole = nullptr, uint64_t load_to = 0);
  Status Write(uint64_t file_id, BackingFile* file, uint64_t offset, const void* src, size_t len);
  void InvalidateFile(uint64_t file_id, uint64_t from);
  bool PrefetchFile(uint64_t file_id,
                    std::function<std::shared_ptr<BackingFile>(uint64_t* len)> open);
  uint64_t ReadAheadWindow() const;
  void ReadAhead(Stream* stream, uint64_t file_id, const std::shared_ptr<BackingFile>& file,
                 uint64_t offset, uint64_t n, bool at_end);
  uint64_t WholeFileBytes() const { return whole_file_max_.load(std::memory_order_relaxed); }
  static uint64_t WholeFileMax(const Options& o);
  void Demote(uint64_t file_id, uint64_t page_no, const void* bytes, uint32_t len, uint64_t epoch);
  // A pool task: compresses a demoted page and publishes it; false if it was not kept.
  bool PublishDemoted(Codec& codec, const cache::PageKey& key, const char* page, uint32_t len,
                      uint64_t epoch);
  uint64_t ChangeEpoch() const { return change_epoch_.load(std::memory_order_seq_cst); }
  Status Reconfigure(const Options& o) EXCLUDES(reconfigure_mu_);
  CacheStats Stats() const override;
  std::vector<CurvePoint> HitRatioCurve() const override;
  void Quiesce();
  Options options() const override EXCLUDES(options_mu_) {
    MutexLock lock(&options_mu_);
    return options_;
  }
  bool KeepsFromKernel(uint64_t file_id, uint64_t page_no) const {
    return keep_from_kernel_.load(std::memory_order_relaxed) &&
           mrc_.Sampled(cache::HashPageKey(cache::PageKey{file_id, page_no}));
  }
  void AttachKernelSide(KernelSide side) EXCLUDES(kernel_side_mu_);
  double TripUs() override EXCLUDES(kernel_side_mu_);
  uint64_t CurveReuses() const override { return mrc_.counts().reuses; }
  uint64_t CurveReads() const override { return mrc_.counts().covered; }
  void SplitApplied() override EXCLUDES(kernel_side_mu_);

 private:
  enum class Path { kRawHit, kCompressedHit, kMiss, kNone };

  // ---- page_cache.cc: reads ---------------------------------------------------------------------

  // Reads the part [in_page, in_page + want) of one page into dst from the tiers, waiting for it
  // if another reader is loading it (unless !wait); *copied is what the page had (less than want
  // at end of file). Sets *missing instead, with nothing copied, when the page is in neither tier
  // (or, !wait, is loading).
  Status ReadPage(const cache::PageKey& key, uint32_t in_page, uint32_t want, char* dst,
                  uint32_t* copied, Path* path, bool* missing, bool wait = true);
  // Copies from a pinned raw entry and unpins it.
  uint32_t CopyPinned(cache::PageEntry* e, uint32_t in_page, uint32_t want, char* dst);
  Status ReadCompressed(cache::PageEntry* e, uint64_t s, uint32_t in_page, uint32_t want,
                        char* dst, uint32_t* copied, bool* retry);
  // A run of misses (see the top of page_cache.cc) for the request [offset, offset + len), whose
  // first page was just found missing: claims it and the missing pages after it, reads them with
  // one backing read, publishes them and copies their part of the request to dst. *copied is the
  // bytes copied: less than len when the run ended before the request did, or at end of file
  // (then *eof). *retry, with nothing copied or claimed, when the first page was inserted by
  // another reader meanwhile. Counts each page read as a miss, its latency the run's time
  // (since `start`, the first page's lookup included) shared by its pages, and *copied as
  // miss_bytes; `cpu` is the run's.
  // Who loads the run: a reader (kRead), or for no reader (offset and len page-aligned, dst
  // null, nothing copied or counted as read, *copied the bytes loaded) a read-ahead thread
  // (kAhead: the pages are marked read ahead) or a warm-up (kWarm: the pages are marked wanted).
  // A reader's run goes on past the request through missing pages up to byte `load_to` (if
  // further): those are loaded as read ahead, in the same backing read (PageCache::Read).
  // known_size: the file's size as the caller read it just before (BackingFile::ReadPages).
  enum class Load { kRead, kAhead, kWarm };
  Status LoadRun(uint64_t file_id, BackingFile* file, uint64_t offset, size_t len, char* dst,
                 const CpuSample& cpu, uint64_t start, size_t* copied, bool* eof, bool* retry,
                 Load kind = Load::kRead, uint64_t load_to = 0,
                 uint64_t known_size = kUnknownSize);
  // A read-ahead thread's task: loads the pages of [offset, offset + len) found in neither tier.
  void Prefetch(const cache::ReadaheadQueue::Task& task);

  // ---- page_cache_warm.cc: warm-up and pins -----------------------------------------------------

 public:
  Status Warm(uint64_t file_id, BackingFile* file, uint64_t offset, uint64_t len,
              uint64_t* loaded);
  PageCache::Residency ResidencyOf(uint64_t file_id, uint64_t first_page, uint64_t pages) const;
  void Pin(uint64_t file_id) EXCLUDES(pins_mu_);
  void UnpinAll() EXCLUDES(pins_mu_);

  // ---- page_cache_persist.cc: persistence -------------------------------------------------------

  std::vector<CachedPage> CachedPages() const;
  void SavePages(uint64_t file_id, const std::vector<uint64_t>& pages,
                 std::vector<SavedPage>* out) const;
  Restored Restore(uint64_t file_id, uint64_t page_no, uint32_t length, bool zero,
                   CodecKind codec, const char* bytes, size_t size, uint64_t epoch);
  void CountPersistence(uint64_t written, uint64_t restored, uint64_t dropped_stale,
                        uint64_t errors);

 private:
  // Whether pages of `file_id` load pinned (one lookup per run of misses, none while no file is).
  bool IsPinned(uint64_t file_id) const EXCLUDES(pins_mu_);
  // Pinned pages now, raw and compressed, and the bytes they take (Stats).
  void CountPinned(CacheStats* s) const;
  // The frames a warm-up may load into now (at least 1), once the evictor has made room.
  uint64_t FramesToWarm();
  // Counts one page read, served by `path` in `ns`.
  void RecordRead(const cache::PageKey& key, Path path, uint64_t ns);

  // Drops one entry, whatever its state (writes, truncates, changes underneath).
  // REQUIRES: RCU read-side.
  void Invalidate(cache::PageEntry* e);

  void KickEvictor() { evictor_->Kick(); }

  // ---- page_cache_config.cc: the live keys ------------------------------------------------------

  // Applies validated options whose live keys may differ from the ones in force.
  Status ApplyLocked(const Options& o) REQUIRES(reconfigure_mu_);
  bool CurveKeptFromKernel(const Options& o) const;
  // The split tuner's change: a new split and codec for the keys under "auto".
  Status ApplySplit(int percent, CodecKind codec) override EXCLUDES(reconfigure_mu_);
  // The live keys the engine itself uses (probation) and the evictor's (Evictor::Configure).
  void ApplyGeometry(const Options& o);

  // ---- page_cache_demotion.cc: between the tiers ------------------------------------------------

  // A compressed hit under kernel_demote: the page leaves the compressed tier, since the kernel
  // holds it again (exclusive levels). REQUIRES: RCU read-side.
  void HandToKernel(cache::PageEntry* e);
  // The tiers' budgets from `cur`'s to `o`'s: the compressed tier shrinks (and gives its memory
  // back) before the raw tier grows, so that the two never hold more than the budget between them.
  void ResizeTiers(const Options& cur, const Options& o) REQUIRES(reconfigure_mu_);

  void Count(cache::EngineCounters::Counter c, uint64_t n = 1) { counters_.Add(c, n); }

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
  // raw_tier = kernel and a key under auto (ApplyLocked): the curve's pages stay out of the
  // kernel's cache (KeepsFromKernel).
  std::atomic<bool> keep_from_kernel_{false};
  // Held across each call into the side, so that detaching waits for the call in progress.
  Mutex kernel_side_mu_;
  KernelSide kernel_side_ GUARDED_BY(kernel_side_mu_);
  // Serialises Reconfigure and the tuner's changes (each reads the options in force, then applies).
  Mutex reconfigure_mu_;  // taken before options_mu_
  mutable Mutex options_mu_;
  Options options_ GUARDED_BY(options_mu_);

  cache::PageIndex index_;
  cache::RawTier raw_;
  cache::CompressedTier compressed_;
  std::unique_ptr<CompressionPool> pool_;

  std::atomic<bool> probation_;
  mutable Mutex pins_mu_;
  std::unordered_set<uint64_t> pinned_ GUARDED_BY(pins_mu_);
  std::atomic<bool> any_pinned_{false};
  std::atomic<uint64_t> readahead_max_;  // Options::readahead
  std::atomic<uint64_t> whole_file_max_;  // WholeFileMax(the options in force)
  cache::FrequencySketch frequency_;
  cache::MissRatioCurve mrc_;
  cache::EngineCounters counters_;
  // The latency of reads by the path they took (RecordRead), one histogram per path.
  LatencyHistogram raw_hit_latency_, compressed_hit_latency_, miss_latency_;
  // REQUIRES: path != kNone.
  LatencyHistogram& LatencyOf(Path path) {
    return path == Path::kRawHit          ? raw_hit_latency_
           : path == Path::kCompressedHit ? compressed_hit_latency_
                                          : miss_latency_;
  }
  std::unique_ptr<cache::VictimSample> victims_;  // null unless estimate_
  // It borrows the parts above. Stopped by the destructor after the tuner.
  std::unique_ptr<cache::Evictor> evictor_;
  // It calls back into the engine (Prefetch). Stopped first.
  std::unique_ptr<cache::ReadaheadQueue> readahead_;
  // Last: it calls Stats, HitRatioCurve and ApplySplit. Stopped next. Null unless estimate_.
  std::unique_ptr<cache::SplitTuner> tuner_;
};

}  // namespace ccfs

#endif  // CCFS_CACHE_PAGE_CACHE_IMPL_H_
