#include "stats/request_stats.h"

#include <algorithm>
#include <utility>

namespace ccfs {

uint64_t RequestStats::Kind::count() const {
  uint64_t n = 0;
  for (uint64_t b : buckets) n += b;
  return n;
}

RequestStats::RequestStats(std::vector<std::string> kinds)
    : kinds_(std::move(kinds)), slots_(new Slot[kShards * kinds_.size()]) {}

size_t RequestStats::BucketOf(uint64_t ns) {
  return static_cast<size_t>(std::lower_bound(std::begin(kLatencyBoundsNs),
                                              std::end(kLatencyBoundsNs), ns) -
                             std::begin(kLatencyBoundsNs));
}

std::vector<RequestStats::Kind> RequestStats::Snapshot() const {
  std::vector<Kind> out(kinds_.size());
  for (size_t k = 0; k < kinds_.size(); ++k) {
    out[k].name = kinds_[k];
    for (unsigned shard = 0; shard < kShards; ++shard) {
      const Slot& slot = slots_[shard * kinds_.size() + k];
      out[k].sum_ns += slot.sum_ns.load(std::memory_order_relaxed);
      for (size_t b = 0; b < kLatencyBuckets; ++b) {
        out[k].buckets[b] += slot.buckets[b].load(std::memory_order_relaxed);
      }
    }
  }
  return out;
}

}  // namespace ccfs
