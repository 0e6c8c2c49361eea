// Stats for the tests of stats renderers (stats.json, Prometheus).
#ifndef CCFS_TESTS_STATS_STATS_TEST_UTIL_H_
#define CCFS_TESTS_STATS_STATS_TEST_UTIL_H_

#include <cstdint>
#include <random>

#include "ccfs/codec.h"
#include "ccfs/stats.h"
#include "stats/counters.h"

namespace ccfs {

// A CacheStats where every counter has a distinct value, so a swapped field shows up.
inline CacheStats DistinctStats() {
  CacheStats s;
  uint64_t v = 1;
  for (const CounterInfo& c : kCacheCounters) s.*c.field = 1000 + v++;
  s.raw_hits = 700;
  s.compressed_hits = 200;
  s.misses = 100;
  s.reads = 1000;
  s.compressed_percent = 40;
  s.page_size = 16384;
  s.compressor = static_cast<int>(CodecKind::kZstd);
  s.compression_level = -3;
  LatencyHistogram raw, comp, miss;
  std::mt19937 rng(9);
  for (int i = 0; i < 700; ++i) raw.Record(1500 + rng() % 3000);
  for (int i = 0; i < 200; ++i) comp.Record(20000 + rng() % 10000);
  for (int i = 0; i < 100; ++i) miss.Record(60000 + rng() % 200000);
  s.raw_hit_latency = raw.Snapshot();
  s.compressed_hit_latency = comp.Snapshot();
  s.miss_latency = miss.Snapshot();
  return s;
}

}  // namespace ccfs

#endif  // CCFS_TESTS_STATS_STATS_TEST_UTIL_H_
