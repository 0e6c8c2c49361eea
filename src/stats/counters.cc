#include "stats/counters.h"

namespace ccfs {

uint64_t CpuTimes::total_ns() const {
  uint64_t total = 0;
  for (uint64_t v : ns) total += v;
  return total;
}

double CpuTimes::UsPerBuffer(int i, uint64_t reads) const {
  return reads ? static_cast<double>(ns[i]) / static_cast<double>(reads) / 1000.0 : 0.0;
}

double CpuTimes::TotalUsPerBuffer(uint64_t reads) const {
  return reads ? static_cast<double>(total_ns()) / static_cast<double>(reads) / 1000.0 : 0.0;
}

CpuTimes CpuTimesOf(const CacheStats& s) {
  CpuTimes t;
  const uint64_t read_paths = s.cpu_raw_hit_ns + s.cpu_decompress_ns + s.cpu_miss_ns;
  t.ns[CpuTimes::kRequest] =
      s.cpu_request_threads_ns > read_paths ? s.cpu_request_threads_ns - read_paths : 0;
  t.ns[CpuTimes::kRawHit] = s.cpu_raw_hit_ns;
  t.ns[CpuTimes::kDecompress] = s.cpu_decompress_ns;
  t.ns[CpuTimes::kMiss] = s.cpu_miss_ns;
  t.ns[CpuTimes::kCompress] = s.cpu_compress_ns;
  t.ns[CpuTimes::kEvictor] = s.cpu_evictor_ns;
  return t;
}

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
