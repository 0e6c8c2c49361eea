#include "stats/counters.h"

#include <algorithm>

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
  t.ns[CpuTimes::kRawHit] = s.cpu_raw_hit_ns;
  t.ns[CpuTimes::kDecompress] = s.cpu_decompress_ns;
  t.ns[CpuTimes::kMiss] = s.cpu_miss_ns;
  t.ns[CpuTimes::kCompress] = s.cpu_compress_ns;
  t.ns[CpuTimes::kEvictor] = s.cpu_evictor_ns;
  const uint64_t read_paths = s.cpu_raw_hit_ns + s.cpu_decompress_ns + s.cpu_miss_ns;
  const uint64_t threads = s.cpu_request_threads_ns;
  if (threads == 0 || threads >= read_paths) {
    t.ns[CpuTimes::kRequest] = threads - std::min(threads, read_paths);
    return t;
  }
  // The read paths' estimates exceed what the request threads measured (a short interval): they
  // share the measured time in proportion, so that the paths still add up to it.
  const double scale = static_cast<double>(threads) / static_cast<double>(read_paths);
  t.ns[CpuTimes::kRawHit] = static_cast<uint64_t>(static_cast<double>(s.cpu_raw_hit_ns) * scale);
  t.ns[CpuTimes::kDecompress] = std::min(
      threads - t.ns[CpuTimes::kRawHit], static_cast<uint64_t>(static_cast<double>(s.cpu_decompress_ns) * scale));
  t.ns[CpuTimes::kMiss] = threads - t.ns[CpuTimes::kRawHit] - t.ns[CpuTimes::kDecompress];
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
