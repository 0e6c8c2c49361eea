// The split prediction (see split_prediction.h): the model of cache_model.h at every split and
// codec, with the compressions the admission filter lets through at each split's capacities.
#include "model/split_prediction.h"

#include <algorithm>

#include <fmt/format.h>

namespace ccfs {

std::vector<AdviseRow> PredictSplits(const AdviseInputs& in) {
  std::vector<AdviseRow> rows;
  for (int percent : in.percents) {
    for (const CodecProfile& codec : in.codecs) {
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
      // First the capacities, then the compressions the admission filter lets through at them.
      m.compressions_per_read = 0;
      ModelResult capacities = EvaluateModel(m);
      const double budget_pages = static_cast<double>(in.memory_bytes) * percent / 100.0 / in.page_size;
      const double ghost_pages = std::max(1024.0, 2 * budget_pages);  // cache/evictor.cc's ghost set
      m.compressions_per_read = in.admitted_per_read(capacities.raw_capacity_pages,
                                                     capacities.reach_pages, ghost_pages);
      AdviseRow row;
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
