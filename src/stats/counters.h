// The counters of CacheStats as a table, and the difference of two snapshots.
//
// kCacheCounters is CCFS_CACHE_COUNTERS (ccfs/stats.h) as data: one row per uint64_t counter, in
// declaration order, with its name (the field's name, which is also its key in stats.json), a
// pointer to the member, its kind and a line of help. Code that handles every counter (stats JSON
// both ways, Minus, tests) walks this table instead of naming counters.
//
// Pure data and pure functions; thread-safe.
#ifndef CCFS_STATS_COUNTERS_H_
#define CCFS_STATS_COUNTERS_H_

#include <cstdint>

#include "ccfs/stats.h"

namespace ccfs {

// The kinds of CCFS_CACHE_COUNTERS.
enum class CounterKind { kOutcome, kEvent, kTierSize, kLevel };

struct CounterInfo {
  const char* name;
  uint64_t CacheStats::*field;
  CounterKind kind;
  const char* help;
};

inline constexpr CounterInfo kCacheCounters[] = {
#define CCFS_COUNTER_INFO(field, kind, help) \
  {#field, &CacheStats::field, CounterKind::k##kind, help},
    CCFS_CACHE_COUNTERS(CCFS_COUNTER_INFO)
#undef CCFS_COUNTER_INFO
};

// True for counts since the engine started (Outcome, Event), false for values now.
constexpr bool IsCount(CounterKind kind) {
  return kind == CounterKind::kOutcome || kind == CounterKind::kEvent;
}

// CPU time by path, from the cpu_*_ns counters of one snapshot (since start) or of the Minus of
// two (an interval). The paths, as stats.json's "cpu_us" names them:
//   request     the FUSE request threads outside the cache's read paths: receiving and answering
//               requests, metadata ops, writes (daemon only; 0 in the engine alone)
//   raw_hit, decompress, miss   the cache's read paths (estimates, see ccfs/stats.h)
//   compress    the compression pool's workers
//   evictor     the evictor thread
// In the daemon, request is the request threads' measured time less the read paths' estimates, so
// the total is what those threads measured plus the workers and the evictor; where the estimates
// exceed the measured time (a short interval), request is 0 and the read paths share the measured
// time in proportion to their estimates.
struct CpuTimes {
  enum Path { kRequest, kRawHit, kDecompress, kMiss, kCompress, kEvictor, kPaths };
  static constexpr const char* kNames[kPaths] = {"request", "raw_hit", "decompress",
                                                 "miss",    "compress", "evictor"};
  uint64_t ns[kPaths] = {};

  uint64_t total_ns() const;
  // µs of path `i` (or of all, total) per page read; 0 when `reads` is 0.
  double UsPerBuffer(int i, uint64_t reads) const;
  double TotalUsPerBuffer(uint64_t reads) const;
};
CpuTimes CpuTimesOf(const CacheStats& s);

// What happened between two snapshots of one engine: every count and latency histogram is
// `after` minus `before` (HistogramSnapshot::Since for histograms); sizes and settings are
// `after`'s. REQUIRES: `before` was taken first, from the same engine (a count is subtracted
// as is, so one that went backwards wraps around; ComputeStatInterval handles a restarted daemon).
CacheStats Minus(const CacheStats& after, const CacheStats& before);

}  // namespace ccfs

#endif  // CCFS_STATS_COUNTERS_H_
