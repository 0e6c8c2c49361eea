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

// What happened between two snapshots of one engine: every count and latency histogram is
// `after` minus `before` (HistogramSnapshot::Since for histograms); sizes and settings are
// `after`'s. REQUIRES: `before` was taken first, from the same engine (a count is subtracted
// as is, so one that went backwards wraps around; ComputeStatInterval handles a restarted daemon).
CacheStats Minus(const CacheStats& after, const CacheStats& before);

}  // namespace ccfs

#endif  // CCFS_STATS_COUNTERS_H_
