#include "stats/counters.h"

namespace ccfs {

CacheStats Minus(const CacheStats& after, const CacheStats& before) {
  CacheStats d = after;
  for (const CounterInfo& c : kCacheCounters) {
    if (IsCount(c.kind)) d.*c.field = after.*c.field - before.*c.field;
  }
  d.raw_hit_latency = after.raw_hit_latency.Since(before.raw_hit_latency);
  d.compressed_hit_latency = after.compressed_hit_latency.Since(before.compressed_hit_latency);
  d.miss_latency = after.miss_latency.Since(before.miss_latency);
  return d;
}

}  // namespace ccfs
