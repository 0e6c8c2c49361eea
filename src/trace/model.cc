#include "trace/model.h"

#include <algorithm>
#include <memory>

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
  const double pages_of_memory = static_cast<double>(in.memory_bytes) / in.page_size;
  out.raw_capacity_pages = pages_of_memory * (1.0 - c);
  out.compressed_capacity_pages = pages_of_memory * c * std::max(in.ratio, 0.0);
  const double cached = std::min(n, out.raw_capacity_pages + out.compressed_capacity_pages);
  const double raw_cached = std::min(n, out.raw_capacity_pages);
  out.capacity_fraction = cached / n;

  // The share function S(k) of the access law; the distribution's permutation is irrelevant here.
  std::unique_ptr<AccessDistribution> dist;
  if (NewAccessDistribution(in.dist, in.dataset_pages, 0, &dist).ok()) {
    out.raw_hit_ratio = CacheHitRatio(*dist, raw_cached, in.raw_replacement);
    double loss = 0;
    if (in.raw_replacement != in.cache_replacement) {
      loss = std::max(0.0, CacheHitRatio(*dist, raw_cached, in.cache_replacement) - out.raw_hit_ratio);
    }
    out.hit_ratio =
        std::max(out.raw_hit_ratio, CacheHitRatio(*dist, cached, in.cache_replacement) - loss);
  } else {
    out.hit_ratio = cached / n;
    out.raw_hit_ratio = raw_cached / n;
  }
  out.compressed_hit_ratio = std::max(0.0, out.hit_ratio - out.raw_hit_ratio);
  out.miss_ratio = 1.0 - out.hit_ratio;
  const bool measured_rate = in.compressions_per_read >= 0;
  const double compress = c > 0 && !measured_rate ? in.costs.compress_us : 0.0;
  // A raw hit in the kernel's page cache never reaches the daemon; every other read makes one trip.
  const bool kernel = in.raw_tier == RawTierMode::kKernel;
  const double raw_hit = kernel ? in.costs.kernel_hit_us : in.costs.hit_us;
  const double trips = kernel ? out.compressed_hit_ratio + out.miss_ratio : 1.0;
  out.trip_us_per_buffer = trips * in.costs.trip_us;
  out.us_per_buffer = out.raw_hit_ratio * raw_hit +
                      out.compressed_hit_ratio * (in.costs.decompress_us + compress) +
                      out.miss_ratio * (in.costs.disk_us + compress) + out.trip_us_per_buffer;
  if (measured_rate) out.us_per_buffer += in.compressions_per_read * in.costs.compress_us;
  return out;
}

}  // namespace ccfs
