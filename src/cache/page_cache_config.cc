// PageCache::Impl (page_cache_impl.h) built from its options and torn down, its live keys
// (Reconfigure, and the split tuner's changes to the keys under "auto"), and what it reports
// (Stats, the hit-ratio curve).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "cache/page_cache_impl.h"
#include "cache/rcu.h"
#include "cache/readahead.h"
#include "config/live_options.h"
#include "config/memory_bound.h"
#include "util/cpus.h"

namespace ccfs {

using cache::CompressedTier;
using cache::Evictor;
using cache::MissRatioCurve;
using cache::PageEntry;
using cache::RcuReadLock;

// ---- construction and teardown ------------------------------------------------------------------

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
      whole_file_max_(WholeFileMax(o)),
      frequency_(o.memory / o.page_size * 4, o.memory / o.page_size),
      mrc_(o.kernel_raw_tier() ? MissRatioCurve::Config::ForKernelTier(o.memory / o.page_size)
                               : MissRatioCurve::Config::ForCache(o.memory / o.page_size)) {
  keep_from_kernel_.store(CurveKeptFromKernel(o));
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
    tuner_ = std::make_unique<cache::SplitTuner>(this, victims_.get());
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

// ---- the live keys ------------------------------------------------------------------------------

Status PageCache::Impl::Reconfigure(const Options& wanted) {
  // Read before the lock: Stats takes the tuner's mutex, which Step holds while it reads options.
  const CacheStats now = Stats();
  MutexLock lock(&reconfigure_mu_);
  Options o = wanted;
  const Options cur = options();
  // A key that stays "auto" keeps the value the tuner put in force (the caller's copy may be older).
  if (o.compressed_percent_auto && cur.compressed_percent_auto) {
    o.compressed_percent = cur.compressed_percent;
  }
  if (o.compressor_auto && cur.compressor_auto) o.compressor = cur.compressor;
  // raw_tier = kernel: a higher split grows what the daemon holds, which must fit the memory
  // cgroup it is in now, as auto's moves must (split_tuner.h CandidatePercents). A split set by
  // hand that does not is refused; auto, turned on, starts at the largest that does.
  if (o.kernel_raw_tier() && o.memory - o.kernel_budget() > cur.memory - cur.kernel_budget()) {
    const HostMemory host = HostMemory::Read();
    const uint64_t tiers_now = now.raw_bytes + now.compressed_bytes;
    if (o.compressed_percent_auto) {
      o.compressed_percent = cache::FittingPercentAtMost(o, host, tiers_now);
    } else if (Status st = CheckSplitFits(o, host, tiers_now); !st.ok()) {
      return st;
    }
  }
  return ApplyLocked(o);
}

Status PageCache::Impl::ApplySplit(int percent, CodecKind codec) {
  MutexLock lock(&reconfigure_mu_);
  Options o = options();
  if (o.compressed_percent_auto) o.compressed_percent = percent;
  if (o.compressor_auto) o.compressor = codec;
  return ApplyLocked(o);
}

// Whether the curve's pages are kept out of the kernel (page_cache.h KeepsFromKernel): only while
// the tuner must predict the kernel's hits to choose, since each such page costs a trip per read.
bool PageCache::Impl::CurveKeptFromKernel(const Options& o) const {
  return estimate_ && o.kernel_raw_tier() && (o.compressed_percent_auto || o.compressor_auto);
}

void PageCache::Impl::AttachKernelSide(KernelSide side) {
  MutexLock lock(&kernel_side_mu_);
  kernel_side_ = std::move(side);
}

double PageCache::Impl::TripUs() {
  MutexLock lock(&kernel_side_mu_);
  return kernel_side_.trip_us ? kernel_side_.trip_us() : 0;
}

void PageCache::Impl::SplitApplied() {
  MutexLock lock(&kernel_side_mu_);
  if (kernel_side_.split_applied) kernel_side_.split_applied();
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
  keep_from_kernel_.store(CurveKeptFromKernel(o));
  ApplyGeometry(o);
  pool_->SetCodec(o.compressor, o.compression_level);
  evictor_->EnableCompression(o.compressed_percent > 0);
  ResizeTiers(cur, o);
  KickEvictor();
  return Status::Ok();
}

void PageCache::Impl::ApplyGeometry(const Options& o) {
  probation_.store(o.probation);
  readahead_max_.store(o.readahead, std::memory_order_relaxed);
  whole_file_max_.store(WholeFileMax(o), std::memory_order_relaxed);
  evictor_->Configure(o);
}

// A file its reader's read-ahead window covers (the kernel's for the mount in kernel mode, which
// reads it with one or two more requests after the first; in daemon mode `readahead`, since
// ReadAhead's window is never held below kMinWindow >= kWholeFileBytes), and at most
// cache::kWholeFileBytes; 0 with readahead = 0 (kernel_readahead() is then one page, not 0).
uint64_t PageCache::Impl::WholeFileMax(const Options& o) {
  static_assert(cache::kMinWindow >= cache::kWholeFileBytes);
  if (o.readahead == 0) return 0;
  const uint64_t window = o.kernel_raw_tier() ? o.kernel_readahead() : o.readahead;
  return std::min(window, cache::kWholeFileBytes);
}

// ---- what the engine reports --------------------------------------------------------------------

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
  if (tuner_) {
    tuner_->Fill(&s);
  } else {
    s.split_waiting = split_waiting::kOff;
  }
  s.raw_hit_latency = raw_hit_latency_.Snapshot();
  s.compressed_hit_latency = compressed_hit_latency_.Snapshot();
  s.miss_latency = miss_latency_.Snapshot();
  s.cpu_compress_ns = pool_->cpu_ns();
  s.cpu_evictor_ns = evictor_->cpu_ns();
  const MissRatioCurve::Counts m = mrc_.counts();
  s.mrc_samples = m.samples;
  s.mrc_drops = m.drops;
  CountPinned(&s);
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

}  // namespace ccfs
