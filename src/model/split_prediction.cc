// The split prediction (see split_prediction.h): the model of cache_model.h at every split and
// codec, with the compressions the admission filter lets through at each split's capacities.
#include "model/split_prediction.h"

#include <algorithm>

#include <fmt/format.h>

namespace ccfs {

namespace {

// The model's inputs for one split and codec, before the compressions per read are known.
ModelInputs SplitInputs(const AdviseInputs& in, int percent, const CodecProfile& codec) {
  ModelInputs m;
  m.memory_bytes = in.memory_bytes;
  m.page_size = in.page_size;
  m.dataset_pages = in.dataset_pages;
  m.compressed_fraction = percent / 100.0;
  m.ratio = codec.ratio;
  m.storable_fraction = codec.storable_fraction;
  m.dist = in.dist;
  m.raw_tier = in.raw_tier;
  m.costs = in.costs;
  m.costs.compress_us = codec.compress_us;
  m.costs.decompress_us = codec.decompress_us + in.costs.hit_us;
  m.hot_share = in.hot_share;
  m.compressions_per_read = 0;
  if (in.raw_pages_at) m.raw_pages = in.raw_pages_at(percent);
  return m;
}

std::string Configuration(const AdviseRow& r) {
  if (r.percent == 0) {
    return fmt::format("raw_tier = {}, compressed_percent = 0", RawTierModeName(r.raw_tier));
  }
  return fmt::format("raw_tier = {}, compressed_percent = {}, compressor = {}",
                     RawTierModeName(r.raw_tier), r.percent, CodecName(r.codec));
}

}  // namespace

std::vector<AdviseRow> PredictSplits(const AdviseInputs& in) {
  std::vector<AdviseRow> rows;
  for (int percent : in.percents) {
    for (const CodecProfile& codec : in.codecs) {
      ModelInputs m = SplitInputs(in, percent, codec);
      // First the capacities, then the compressions the admission filter lets through at them.
      ModelResult capacities = EvaluateModel(m);
      const double budget_pages = static_cast<double>(in.memory_bytes) * percent / 100.0 / in.page_size;
      const double ghost_pages = std::max(1024.0, 2 * budget_pages);  // cache/evictor.cc's ghost set
      m.compressions_per_read = in.admitted_per_read(capacities.raw_capacity_pages,
                                                     capacities.reach_pages, ghost_pages);
      AdviseRow row;
      row.raw_tier = in.raw_tier;
      row.percent = percent;
      row.codec = codec.codec;
      row.model = EvaluateModel(m);
      rows.push_back(row);
    }
  }
  // Speed-up against C = 0 (the same for every codec).
  double base = 0;
  for (const AdviseRow& r : rows) {
    if (r.percent == 0) base = r.model.us_per_buffer;
  }
  for (AdviseRow& r : rows) r.speedup = r.model.us_per_buffer > 0 ? base / r.model.us_per_buffer : 1;
  return rows;
}

ModelResult PredictPageCache(const AdviseInputs& in) {
  ModelInputs m = SplitInputs(in, 0, in.codecs.empty() ? CodecProfile() : in.codecs.front());
  m.raw_tier = RawTierMode::kKernel;
  m.costs.trip_us = 0;
  return EvaluateModel(m);
}

void SetErrorBands(const Prediction& fast, const Prediction& slow, Prediction* median) {
  for (size_t i = 0; i < median->rows.size(); ++i) {
    median->rows[i].us_low = fast.rows[i].model.us_per_buffer * (1 - kModelError);
    median->rows[i].us_high = slow.rows[i].model.us_per_buffer * (1 + kModelError);
  }
}

const char* VerdictName(Verdict::Kind kind) {
  switch (kind) {
    case Verdict::Kind::kCcfs:
      return "yes";
    case Verdict::Kind::kClose:
      return "close";
    case Verdict::Kind::kPageCache:
      return "no";
  }
  return "no";
}

Verdict JudgeAgainstPageCache(const Prediction& median, const Prediction& fast,
                              const Prediction& slow) {
  Verdict v;
  size_t best = 0;
  for (size_t i = 1; i < median.rows.size(); ++i) {
    if (median.rows[i].model.us_per_buffer < median.rows[best].model.us_per_buffer) best = i;
  }
  v.best = median.rows[best];
  auto ratio = [best](const Prediction& p) {
    return p.page_cache.us_per_buffer > 0
               ? p.rows[best].model.us_per_buffer / p.page_cache.us_per_buffer
               : 1.0;
  };
  v.ratio = ratio(median);
  v.ratio_fast = ratio(fast);
  v.ratio_slow = ratio(slow);
  // No spread when the miss cost was given rather than sampled.
  const std::string spread =
      fast.page_cache.us_per_buffer == slow.page_cache.us_per_buffer
          ? ""
          : fmt::format(" ({:.2f}x with the fastest tenth of misses, {:.2f}x with the slowest)",
                        v.ratio_fast, v.ratio_slow);
  if (v.ratio >= 1) {
    v.kind = Verdict::Kind::kPageCache;
    v.text = fmt::format("no: use the page cache alone; ccfs's best here ({}) is predicted {:.2f}x "
                         "its µs per buffer{}",
                         Configuration(v.best), v.ratio, spread);
  } else if (v.ratio <= 1 - kModelError && v.ratio_fast <= 1 && v.ratio_slow <= 1) {
    v.kind = Verdict::Kind::kCcfs;
    v.text = fmt::format("yes: ccfs with {}: predicted {:.2f}x the page cache's µs per buffer{}",
                         Configuration(v.best), v.ratio, spread);
  } else {
    v.kind = Verdict::Kind::kClose;
    v.text = fmt::format("close: ccfs's best ({}) is predicted {:.2f}x the page cache's µs per "
                         "buffer{}, within the model's error of ±{:.0f}% or not at every miss "
                         "cost; the page cache alone is simpler unless `ccfs replay` on a mount of "
                         "your store shows otherwise",
                         Configuration(v.best), v.ratio, spread, 100 * kModelError);
  }
  return v;
}

Advice ChooseSplit(const std::vector<AdviseRow>& rows) {
  Advice advice;
  const AdviseRow* best = nullptr;
  for (const AdviseRow& r : rows) {
    if (best == nullptr || r.model.us_per_buffer < best->model.us_per_buffer) best = &r;
  }
  if (best == nullptr) return advice;
  advice.best = *best;
  advice.compress = best->percent > 0 && best->speedup >= kWorthwhileSpeedup;
  if (advice.compress) {
    advice.text = fmt::format("use C={}%, {}: predicted {:.2f}x faster than C=0", best->percent,
                              CodecName(best->codec), best->speedup);
  } else if (best->percent > 0) {
    advice.text = fmt::format("keep C=0: compression does not pay here, best C={}% ({}) predicted "
                              "{:.2f}x (less than {:.2f}x is within the model's error)",
                              best->percent, CodecName(best->codec), best->speedup,
                              kWorthwhileSpeedup);
  } else {
    // C = 0 itself is the best: say how far the best compressed split falls behind.
    const AdviseRow* next = nullptr;
    for (const AdviseRow& r : rows) {
      if (r.percent > 0 && (next == nullptr || r.model.us_per_buffer < next->model.us_per_buffer)) {
        next = &r;
      }
    }
    advice.text = next == nullptr
                      ? "keep C=0: no compressed split was evaluated"
                      : fmt::format("keep C=0: compression does not pay here, best C={}% ({}) "
                                    "predicted {:.2f}x",
                                    next->percent, CodecName(next->codec), next->speedup);
  }
  return advice;
}

}  // namespace ccfs
