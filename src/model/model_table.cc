// RunModel: the inputs completed (model_table.h says with what), then one evaluation per split.
#include "model/model_table.h"

namespace ccfs {

namespace {

// The inputs of every row but the split.
ModelInputs Inputs(const ModelRequest& r) {
  ModelInputs in;
  in.memory_bytes = r.memory_bytes;
  in.page_size = r.page_size;
  in.dataset_pages = r.dataset_pages;
  in.dist = r.dist;
  in.raw_tier = r.raw_tier;
  in.ratio = r.ratio.value_or(ThesisRatio(r.codec));
  PathCosts& c = in.costs;
  c = ThesisCosts(r.codec);
  c.trip_us = r.assumed_trip_us;
  if (r.hit_us) c.hit_us = *r.hit_us;
  if (r.decompress_us) c.decompress_us = *r.decompress_us;
  if (r.compress_us) c.compress_us = *r.compress_us;
  if (r.disk_us) c.disk_us = *r.disk_us;
  if (r.trip_us) c.trip_us = *r.trip_us;
  c.kernel_hit_us = r.kernel_hit_us.value_or(c.hit_us);
  in.raw_replacement = r.replacement;
  in.cache_replacement =
      r.replacement == Replacement::kFifo || r.replacement == Replacement::kGclock
          ? Replacement::kLru
          : r.replacement;
  in.clock = r.clock;
  return in;
}

}  // namespace

ModelReport RunModel(const ModelRequest& request) {
  ModelReport report;
  report.inputs = Inputs(request);
  std::vector<int> percents = request.percents;
  if (percents.empty()) {
    for (int c = 0; c <= 90; c += 10) percents.push_back(c);
  }
  for (int c : percents) {
    report.inputs.compressed_fraction = c / 100.0;
    report.rows.push_back({c, EvaluateModel(report.inputs)});
  }
  return report;
}

}  // namespace ccfs
