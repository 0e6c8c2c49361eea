// Advise: measures, offline and without a mount, what the split prediction
// (model/split_prediction.h) needs to give the hit ratio and µs per buffer of every split C% of
// memory between the raw and compressed tiers, for each codec: three measurements of a data set
// and a workload (`ccfs advise`, src/cli/advise_command.cc):
//
//   the workload's reuse   ReuseProfile: the exact LRU stack distance of every read of an
//                          operation stream (a recorded trace, or the stream `ccfs replay` draws
//                          from a law), and of the next read of the same page;
//   the data's compressibility  CodecProfile (model/codec_profile.h): each codec's ratio and share
//                          of pages kept on a seeded sample of the data set's pages (SamplePages),
//                          and its µs per page both ways;
//   the paths' costs       a page copy (raw hit), O_DIRECT reads of the sampled pages (miss),
//                          buffered re-reads of a memory file (a kernel hit: raw_tier = kernel,
//                          and the page cache alone).
// These feed the model of model/cache_model.h with its refinements (hot_share from the curve,
// storable_fraction, compressions_per_read).
//
// The compression charge. The thesis charges one compression per miss and per compressed hit,
// synchronously. ccfs compresses in the background, and only the raw victims its admission
// filter lets through (cache/admission.h): a victim read again while raw, one promoted from the
// compressed tier, or one that comes back while the ghost set still remembers it being dropped.
// With each read's distance d and the distance e of its page's next read, K_raw raw pages, the
// tiers reaching `reach` positions and a ghost set of G pages, a read with d >= K_raw starts a stay
// in the raw tier that ends in one victim, compressed if
//   e < K_raw  (read again while raw)  or  d < reach  (a promoted compressed hit; raw_tier = daemon
//   only: in kernel mode compressed hits are served without promotion)  or  d < K_raw + G.
// Without the filter every victim is compressed. The charge is that count per read times the
// codec's µs per page: CPU the machine spends per buffer, which on a small machine whose CPUs the
// readers and the FUSE trip keep busy comes out of the readers' time.
//
// Thread-safety: pure functions and plain values; SamplePages and MeasureKernelHitUs do I/O.
#ifndef CCFS_TRACE_ADVISE_H_
#define CCFS_TRACE_ADVISE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ccfs/options.h"
#include "ccfs/status.h"
#include "model/codec_profile.h"
#include "model/distribution.h"
#include "model/split_prediction.h"
#include "trace/dataset.h"
#include "trace/op_source.h"
#include "trace/stack_distance.h"
#include "trace/trace_file.h"

namespace ccfs {

// ---- the workload ---------------------------------------------------------------------------------

class ReuseProfile {
 public:
  // A distance too large to matter (or a first read).
  static constexpr uint32_t kFar = UINT32_MAX;

  // Runs operations [0, warmup + ops) of `source` over `dataset` through an LRU stack and keeps the
  // reads from `warmup` on (the warm-up only orders the stack; writes are left out). REQUIRES:
  // source was made for dataset.
  static ReuseProfile Build(const Dataset& dataset, const OpSource& source, uint64_t warmup,
                            uint64_t ops);
  // The same from page indices given directly (for tests): reads[i] is a global page < pages.
  static ReuseProfile FromPages(const std::vector<uint64_t>& reads, uint64_t pages,
                                uint64_t warmup);

  // The hit-ratio curve of the counted reads (LRU, exact).
  const LruHitCurve& curve() const { return curve_; }
  uint64_t reads() const { return distance_.size(); }
  // Distinct pages the counted reads touched.
  uint64_t distinct_pages() const { return distinct_; }

  // Raw victims compressed per read (see the top of this file). `promote`: compressed hits move
  // back into the raw tier (raw_tier = daemon); `filter`: the admission filter is on.
  double AdmittedPerRead(double raw_pages, double reach_pages, double ghost_pages, bool promote,
                         bool filter) const;

 private:
  LruHitCurve curve_;
  std::vector<uint32_t> distance_;       // per counted read
  std::vector<uint32_t> next_distance_;  // distance of the same page's next read, kFar if none
  uint64_t distinct_ = 0;
};

// ---- the data -------------------------------------------------------------------------------------

// Reads `count` distinct pages chosen by `seed` (all of them if the data set has no more), each
// with one O_DIRECT pread, timed. Errors name the file.
Status SamplePages(const Dataset& dataset, uint64_t count, uint64_t seed, PageSample* sample);
// The sample `ccfs advise` takes by default (±1 point of sampling error on a storable share of
// ~0.87).
inline constexpr uint64_t kDefaultSamplePages = 1024;

// What a miss costs, from a sample's O_DIRECT reads: the median (the model's figure: a few slow
// first reads of a file's metadata must not move it), the 10th and 90th percentiles (the spread
// the prediction's band covers), and the mean.
struct MissCost {
  double median = 0, p10 = 0, p90 = 0, mean = 0;
};
MissCost MissCostOf(const PageSample& sample);

// Mean µs of a buffered pread of a page the kernel's page cache holds: up to 64 sampled pages,
// written to a memory file (memfd), read once, then re-read and timed. A hit in the page cache
// costs the same whatever file system the page belongs to; the store's own mount is not used, as
// a network client mounted with direct I/O keeps no pages at all.
Status MeasureKernelHitUs(const PageSample& sample, double* us);

// ---- the prediction -------------------------------------------------------------------------------

// `in` with hot_share (if `exact`) and admitted_per_read taken from `reuse`, which must outlive
// every use of the result.
void UseReuseProfile(const ReuseProfile& reuse, bool exact, AdviseInputs* in);

// Every split and codec of each raw tier in `tiers` (in that order), and the page cache alone, at
// the miss cost `disk_us`: `base` with raw_tier, disk_us and the reuse set per tier.
Prediction PredictConfigurations(const AdviseInputs& base, const std::vector<RawTierMode>& tiers,
                                 const ReuseProfile& reuse, bool exact, double disk_us);

// ---- a whole run of `ccfs advise` ---------------------------------------------------------------

struct AdviseRequest {
  std::string dataset;
  // memory, page_size, compressor and compression_level (the other codec at its default level),
  // min_savings_percent, admission_filter. REQUIRES: valid at the largest of `percents`.
  Options engine;
  std::vector<RawTierMode> tiers;
  std::vector<int> percents;  // ascending, from 0
  DistSpec dist;
  std::string trace;  // empty: `dist`
  TraceFormat trace_format = TraceFormat::kAuto;
  bool exact = false;     // --dist: the exact LRU curve of the law's operations
  uint64_t ops = 0;       // 0: a law 200000 (as ccfs replay), a trace its length
  int64_t warmup = -1;    // -1: DefaultWarmupOps
  uint64_t seed = 1;
  uint64_t sample_pages = kDefaultSamplePages;
  double measure_seconds = 0.05;  // per codec and direction, at least
  double assumed_trip_us = 0;     // the trip when `trip_us` is not given
  // Costs given rather than measured.
  std::optional<double> trip_us, kernel_hit_us, disk_us;
};

struct AdviseReport {
  Dataset dataset;
  std::unique_ptr<AccessDistribution> law;
  std::string workload;  // the law's name, or "trace FILE"
  bool exact = false;    // hit ratios from the exact LRU curve (else the law's hottest pages)
  uint64_t warmup = 0;
  ReuseProfile reuse;
  uint64_t sampled_pages = 0;
  MissCost miss;
  PathCosts costs;  // disk_us: the median miss
  std::vector<CodecProfile> codecs;
  Prediction prediction;  // at the median miss cost, with the bands
  AdviseRow page_cache;   // the page cache alone, with its band
  Verdict verdict;
  std::vector<std::pair<RawTierMode, Advice>> advice;  // the split per raw tier
  std::vector<std::string> assumptions;

  // The hit ratio of `pages` pages of LRU cache, as the prediction read it.
  double HitRatio(double pages) const;
};

// Reads the workload's reuse, measures the data and the paths, and predicts every configuration.
// Errors: InvalidArgument for what the request or the data set make impossible (an empty trace,
// a store refusing O_DIRECT with no disk_us given), the underlying error naming the file else.
Status RunAdvise(const AdviseRequest& request, AdviseReport* report);

}  // namespace ccfs

#endif  // CCFS_TRACE_ADVISE_H_
