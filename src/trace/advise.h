// Advise: predicts, offline and without a mount, the hit ratio and µs per buffer of every split
// C% of memory between the raw and compressed tiers, for each codec, from three measurements of a
// data set and a workload (`ccfs advise`, src/cli/advise.cc):
//
//   the workload's reuse   ReuseProfile: the exact LRU stack distance of every read of an
//                          operation stream (a recorded trace, or the stream `ccfs replay` draws
//                          from a law), and of the next read of the same page;
//   the data's compressibility  CodecProfile: each codec's ratio and share of pages kept on a seeded
//                          sample of the data set's pages, and its µs per page both ways;
//   the paths' costs       a page copy (raw hit), O_DIRECT reads of the sampled pages (miss),
//                          buffered re-reads (a kernel hit, raw_tier = kernel).
// These feed the model of trace/model.h with its refinements (hot_share from the curve,
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
#include <functional>
#include <string>
#include <vector>

#include "ccfs/codec.h"
#include "ccfs/status.h"
#include "trace/dataset.h"
#include "trace/distribution.h"
#include "trace/model.h"
#include "trace/op_source.h"
#include "trace/stack_distance.h"

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

// A seeded sample of a data set's pages, read with O_DIRECT where the file system allows it.
struct PageSample {
  std::vector<uint64_t> pages;         // global page indices, in the order read
  std::vector<std::vector<char>> data; // their bytes (the last page of a file may be short)
  double read_us = 0;                  // mean µs per page read
  bool direct = true;                  // every read bypassed the page cache
};

// Reads `count` distinct pages chosen by `seed` (all of them if the data set has no more), each
// with one O_DIRECT pread, timed. Errors name the file.
Status SamplePages(const Dataset& dataset, uint64_t count, uint64_t seed, PageSample* sample);
// The sample `ccfs advise` takes by default (±1 point of sampling error on a storable share of
// ~0.87).
inline constexpr uint64_t kDefaultSamplePages = 1024;

struct CodecProfile {
  CodecKind codec = CodecKind::kLz4;
  int level = 1;
  // Logical bytes / bytes the compressed tier is charged, over the pages it keeps (cache/blob.h's
  // allocator classes; an all-zero page costs its entry).
  double ratio = 1.0;
  double storable_fraction = 0;  // pages kept: all-zero, or saving at least min_savings_percent
  double zero_fraction = 0;
  double compress_us = 0;        // per victim, all sampled pages (rejects and zero checks too)
  double decompress_us = 0;      // per kept page
};

// Compresses and decompresses every sampled page with `codec` at `level`, repeating passes for at
// least `min_seconds` per direction, and checks each page decodes to its bytes (Corruption if not).
Status MeasureCodec(const PageSample& sample, CodecKind codec, int level,
                    double min_savings_percent, double min_seconds, CodecProfile* profile);

// Mean µs to copy one sampled page (what a raw hit costs beyond its lookup).
double MeasureCopyUs(const PageSample& sample, double min_seconds);

// Mean µs of a buffered pread of a page the kernel's page cache holds: up to 64 sampled pages are
// read once to load them, then re-read and timed.
Status MeasureKernelHitUs(const Dataset& dataset, const PageSample& sample, double* us);

// ---- the prediction -------------------------------------------------------------------------------

struct AdviseInputs {
  uint64_t memory_bytes = 0;
  uint32_t page_size = 8192;
  uint64_t dataset_pages = 0;
  RawTierMode raw_tier = RawTierMode::kDaemon;
  bool admission_filter = true;
  // hit_us, disk_us, trip_us, kernel_hit_us; the codec's own costs are filled in per codec (a
  // compressed hit costs its decompression plus hit_us, the copy out).
  PathCosts costs;
  std::vector<CodecProfile> codecs;
  std::vector<int> percents;
  // The hit ratio of an LRU cache of `pages` pages: a trace's exact curve (ReuseProfile::curve) or
  // the live estimate of a mount (cache/mrc.h). Empty: `dist`'s law (the thesis's oracle).
  std::function<double(double pages)> hot_share;
  DistSpec dist;
  // Raw victims compressed per read with K_raw = raw_pages raw pages, the tiers reaching
  // reach_pages and a ghost set of ghost_pages (ReuseProfile::AdmittedPerRead, or a mount's
  // measured rate). REQUIRES: set.
  std::function<double(double raw_pages, double reach_pages, double ghost_pages)> admitted_per_read;
};

// `in` with hot_share (if `exact`) and admitted_per_read taken from `reuse`, which must outlive
// every use of the result.
void UseReuseProfile(const ReuseProfile& reuse, bool exact, AdviseInputs* in);

struct AdviseRow {
  int percent = 0;
  CodecKind codec = CodecKind::kLz4;
  ModelResult model;
  double speedup = 1.0;  // µs per buffer at C = 0 / this row's
};

// One row per (percent, codec), percents outermost. C = 0 has no compressed tier and is the same
// for every codec: its rows are computed once per codec all the same, so each line of a plot
// starts there.
std::vector<AdviseRow> PredictSplits(const AdviseInputs& inputs);

// A split pays when it is predicted at least this much faster than C = 0 (below, the difference
// is within the model's error: docs/MEASUREMENTS.md, "How close does ccfs advise come").
inline constexpr double kWorthwhileSpeedup = 1.02;

struct Advice {
  bool compress = false;  // the best row is worth it
  AdviseRow best;         // the row with the fewest µs per buffer
  std::string text;       // one line
};
// REQUIRES: rows from PredictSplits, with a C = 0 row.
Advice ChooseSplit(const std::vector<AdviseRow>& rows);

}  // namespace ccfs

#endif  // CCFS_TRACE_ADVISE_H_
