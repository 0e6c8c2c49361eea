// The split prediction: the hit ratio and µs per buffer of every split C% of memory between the
// raw and compressed tiers, for each codec, and the choice among them. Its inputs are the
// workload's reuse (a hit-ratio curve and the raw victims compressed per read), the data's
// compressibility (codec_profile.h) and the paths' costs; each split is evaluated by the model of
// cache_model.h. `ccfs advise` measures the inputs on a trace and a data set (trace/advise.h);
// the split tuner takes them live from the engine (cache/split_tuner.h).
//
// Thread-safety: pure functions and plain values.
#ifndef CCFS_MODEL_SPLIT_PREDICTION_H_
#define CCFS_MODEL_SPLIT_PREDICTION_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ccfs/codec.h"
#include "model/cache_model.h"
#include "model/codec_profile.h"
#include "model/distribution.h"

namespace ccfs {

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
  // The raw level's pages at a split, where they are fewer than its share of memory_bytes (the
  // kernel's share squeezed by a memory cgroup: config/memory_bound.h KernelShareBytes). Empty:
  // the share.
  std::function<double(int percent)> raw_pages_at;
};

struct AdviseRow {
  RawTierMode raw_tier = RawTierMode::kDaemon;
  int percent = 0;
  CodecKind codec = CodecKind::kLz4;
  ModelResult model;
  double speedup = 1.0;  // µs per buffer at C = 0 (of the same raw tier) / this row's
  // The band the row's µs per buffer may lie in (SetErrorBands); both 0 until set.
  double us_low = 0, us_high = 0;
};

// One row per (percent, codec), percents outermost. C = 0 has no compressed tier and is the same
// for every codec: its rows are computed once per codec all the same, so each line of a plot
// starts there.
std::vector<AdviseRow> PredictSplits(const AdviseInputs& inputs);

// A split pays when it is predicted at least this much faster than C = 0 (below, the difference
// is within the model's error: docs/MEASUREMENTS.md, "How close does `ccfs advise` come?").
inline constexpr double kWorthwhileSpeedup = 1.02;

struct Advice {
  bool compress = false;  // the best row is worth it
  AdviseRow best;         // the row with the fewest µs per buffer
  std::string text;       // one line
};
// REQUIRES: rows from PredictSplits, with a C = 0 row.
Advice ChooseSplit(const std::vector<AdviseRow>& rows);

// ---- against the page cache alone ---------------------------------------------------------------
//
// The question before any split: does ccfs pay here at all? The alternative is the kernel's page
// cache alone with the same memory: raw_tier = kernel at C = 0 without the FUSE trip (a hit costs
// kernel_hit_us, a miss disk_us), the same reuse curve.
ModelResult PredictPageCache(const AdviseInputs& inputs);

// The model's error on µs per buffer against the engine in the same run, as the band a row is
// given (docs/MEASUREMENTS.md, "How close does `ccfs advise` come?", holds the measured error).
inline constexpr double kModelError = 0.12;

// One prediction of every configuration at one miss cost: the rows of every raw tier evaluated,
// and the page cache alone.
struct Prediction {
  std::vector<AdviseRow> rows;
  ModelResult page_cache;
};

// Sets each row's band of `median` from the same row at the fastest and slowest miss costs seen
// (`fast`, `slow`: the same inputs but disk_us), widened by kModelError. REQUIRES: the three hold
// the same rows in the same order.
void SetErrorBands(const Prediction& fast, const Prediction& slow, Prediction* median);

struct Verdict {
  enum class Kind {
    kCcfs,       // faster than the page cache by more than the model's error, at every miss cost
    kClose,      // faster at the median miss cost, but within the error or not at every cost
    kPageCache,  // not faster: the page cache alone
  };
  Kind kind = Kind::kPageCache;
  AdviseRow best;             // ccfs's fastest configuration at the median miss cost
  double ratio = 1;           // its µs per buffer / the page cache's, at the median miss cost
  double ratio_fast = 1;      // the same at the fast and slow miss costs
  double ratio_slow = 1;
  std::string text;           // one line, beginning "yes", "close" or "no"
};
// REQUIRES: as SetErrorBands, and at least one row.
Verdict JudgeAgainstPageCache(const Prediction& median, const Prediction& fast,
                              const Prediction& slow);
const char* VerdictName(Verdict::Kind kind);  // "yes", "close", "no"

}  // namespace ccfs

#endif  // CCFS_MODEL_SPLIT_PREDICTION_H_
