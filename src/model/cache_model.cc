#include "model/cache_model.h"

#include <algorithm>
#include <functional>
#include <memory>

#include "model/clock_model.h"

namespace ccfs {

PathCosts ThesisCosts(CodecKind codec) {
  PathCosts costs;
  if (codec == CodecKind::kZstd) {
    costs.compress_us = 8.0;
    costs.decompress_us = 3.0;
  }
  return costs;
}

double ThesisRatio(CodecKind codec) { return codec == CodecKind::kZstd ? 2.97 : 2.13; }

const char* RawTierModeName(RawTierMode mode) {
  return mode == RawTierMode::kKernel ? kRawTierNames[1] : kRawTierNames[0];
}

bool ParseRawTierMode(const std::string& text, RawTierMode* mode) {
  if (text == kRawTierNames[0]) {
    *mode = RawTierMode::kDaemon;
  } else if (text == kRawTierNames[1]) {
    *mode = RawTierMode::kKernel;
  } else {
    return false;
  }
  return true;
}

ModelResult EvaluateModel(const ModelInputs& in) {
  ModelResult out;
  if (in.dataset_pages == 0 || in.page_size == 0) return out;
  const double n = static_cast<double>(in.dataset_pages);
  const double c = std::clamp(in.compressed_fraction, 0.0, 1.0);
  const double storable = std::clamp(in.storable_fraction, 0.0, 1.0);
  const double pages_of_memory = static_cast<double>(in.memory_bytes) / in.page_size;
  out.raw_capacity_pages = pages_of_memory * (1.0 - c);
  out.compressed_capacity_pages = pages_of_memory * c * std::max(in.ratio, 0.0);
  if (in.raw_pages >= 0) out.raw_capacity_pages = in.raw_pages;
  const double raw_cached = std::min(n, out.raw_capacity_pages);
  // The compressed pages lie among K_comp / s positions of the hotness order (none if s = 0).
  const double spread = storable > 0 ? out.compressed_capacity_pages / storable : 0.0;
  out.reach_pages = std::min(n, out.raw_capacity_pages + spread);
  out.capacity_fraction = out.reach_pages / n;

  // The share function S(k): the one given, or the access law's read through each level's
  // replacement (che.h; its permutation is irrelevant), or k / N.
  std::unique_ptr<AccessDistribution> dist;
  const bool law = !in.hot_share && NewAccessDistribution(in.dist, in.dataset_pages, 0, &dist).ok();
  auto share = [&](double pages, Replacement replacement) {
    if (in.hot_share) return in.hot_share(pages);
    if (law) return CacheHitRatio(*dist, pages, replacement, in.window, in.clock);
    return pages / n;
  };
  const bool kernel = in.raw_tier == RawTierMode::kKernel;
  if (law && !kernel && in.raw_replacement == Replacement::kGclock) {
    // The daemon's two CLOCKs, both tiers at once (clock_model.h).
    ClockTiers tiers;
    tiers.raw_pages = out.raw_capacity_pages;
    tiers.compressed_pages = out.compressed_capacity_pages;
    tiers.storable = storable;
    tiers.memory_pages = pages_of_memory;
    tiers.engine = in.clock;
    const ClockTierHits hits = ClockTierHitRatios(*dist, tiers, in.window);
    out.raw_hit_ratio = hits.raw;
    out.compressed_hit_ratio = hits.compressed;
    out.hit_ratio = std::min(1.0, hits.raw + hits.compressed);
  } else {
    out.raw_hit_ratio = share(raw_cached, in.raw_replacement);
    double loss = 0;
    if (law && in.raw_replacement != in.cache_replacement) {
      loss = std::max(0.0, share(raw_cached, in.cache_replacement) - out.raw_hit_ratio);
    }
    const double reached =
        std::max(out.raw_hit_ratio, share(out.reach_pages, in.cache_replacement) - loss);
    out.compressed_hit_ratio = std::max(0.0, storable * (reached - out.raw_hit_ratio));
    out.hit_ratio =
        storable >= 1 ? reached : std::min(1.0, out.raw_hit_ratio + out.compressed_hit_ratio);
  }
  out.miss_ratio = 1.0 - out.hit_ratio;
  // A raw hit in the kernel's page cache never reaches the daemon; every other read makes one trip.
  const double raw_hit = kernel ? in.costs.kernel_hit_us : in.costs.hit_us;
  const double trips = kernel ? out.compressed_hit_ratio + out.miss_ratio : 1.0;
  out.trip_us_per_buffer = trips * in.costs.trip_us;
  if (in.compressions_per_read < 0) {
    // The thesis's charge: a compression per compressed hit and per miss (each displaces a raw
    // victim that must be compressed), none without a compressed tier. Summed in the thesis's
    // order, so that `ccfs model` gives its figures to the last bit.
    const double compress = c > 0 ? in.compress_share * in.costs.compress_us : 0.0;
    out.compressions_per_read = c > 0 ? out.compressed_hit_ratio + out.miss_ratio : 0.0;
    out.compress_us_per_buffer = out.compressions_per_read * compress;
    out.us_per_buffer = out.raw_hit_ratio * raw_hit +
                        out.compressed_hit_ratio * (in.costs.decompress_us + compress) +
                        out.miss_ratio * (in.costs.disk_us + compress) + out.trip_us_per_buffer;
  } else {
    out.compressions_per_read = c > 0 ? in.compressions_per_read : 0.0;
    out.compress_us_per_buffer =
        out.compressions_per_read * in.compress_share * in.costs.compress_us;
    out.us_per_buffer = out.raw_hit_ratio * raw_hit +
                        out.compressed_hit_ratio * in.costs.decompress_us +
                        out.miss_ratio * in.costs.disk_us + out.compress_us_per_buffer +
                        out.trip_us_per_buffer;
  }
  return out;
}

ModelResult EvaluatePhasedModel(const ModelInputs& inputs, const std::vector<DistSpec>& laws,
                                uint64_t phase_ops, uint64_t begin, uint64_t end) {
  if (laws.empty() || phase_ops == 0 || end <= begin) {
    ModelInputs steady = inputs;
    steady.window = {};
    return EvaluateModel(steady);
  }
  std::vector<uint64_t> ops(laws.size(), 0);
  for (uint64_t at = begin; at < end;) {
    const uint64_t phase = at / phase_ops;
    const uint64_t stop = std::min(end, (phase + 1) * phase_ops);
    ops[phase % laws.size()] += stop - at;
    at = stop;
  }
  // Every field is a per-buffer or per-cache figure, so the mix is their weighted mean; a field
  // added to ModelResult must join the list below (the assertion says so).
  static_assert(sizeof(ModelResult) == 12 * sizeof(double), "ModelResult changed: weigh it here");
  ModelResult out;
  const double total = static_cast<double>(end - begin);
  for (size_t i = 0; i < laws.size(); ++i) {
    if (ops[i] == 0) continue;
    ModelInputs one = inputs;
    one.dist = laws[i];
    one.window = {};
    const ModelResult m = EvaluateModel(one);
    const double w = static_cast<double>(ops[i]) / total;
    for (auto field : {&ModelResult::raw_capacity_pages, &ModelResult::compressed_capacity_pages,
                       &ModelResult::reach_pages, &ModelResult::capacity_fraction,
                       &ModelResult::raw_hit_ratio, &ModelResult::compressed_hit_ratio,
                       &ModelResult::hit_ratio, &ModelResult::miss_ratio,
                       &ModelResult::us_per_buffer, &ModelResult::trip_us_per_buffer,
                       &ModelResult::compressions_per_read,
                       &ModelResult::compress_us_per_buffer}) {
      out.*field += w * (m.*field);
    }
  }
  return out;
}

}  // namespace ccfs
