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
};

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
// is within the model's error: docs/MEASUREMENTS.md, "How close does `ccfs advise` come?").
inline constexpr double kWorthwhileSpeedup = 1.02;

struct Advice {
  bool compress = false;  // the best row is worth it
  AdviseRow best;         // the row with the fewest µs per buffer
  std::string text;       // one line
};
// REQUIRES: rows from PredictSplits, with a C = 0 row.
Advice ChooseSplit(const std::vector<AdviseRow>& rows);

}  // namespace ccfs

#endif  // CCFS_MODEL_SPLIT_PREDICTION_H_
