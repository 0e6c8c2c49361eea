// StatInterval: what `ccfs stat` shows for one interval — the difference of two CacheStats read
// some seconds apart, as rates, shares of the interval's reads, interval percentiles and CPU time
// per read — and the two ways it is printed (a vmstat-style text line under a header, or one JSON
// object per line). Energy, where the machine has RAPL, is read by the command (stats/rapl.h) and
// set into the interval.
//
// Kept apart from the command so the arithmetic and the layout are tested without a mount.
// Pure functions; thread-safe.
#ifndef CCFS_STATS_STAT_INTERVAL_H_
#define CCFS_STATS_STAT_INTERVAL_H_

#include <cstdint>
#include <ctime>
#include <string>

#include "ccfs/stats.h"
#include "stats/counters.h"

namespace ccfs {

struct StatInterval {
  // The since-mount summary (ComputeSinceMount): the interval is the daemon's whole uptime, and
  // the text form shows "mount" in place of the time.
  bool since_mount = false;
  double seconds = 0;              // length of the interval
  uint64_t reads = 0;              // page reads in the interval
  double reads_per_s = 0;
  // Shares of the interval's reads, percent (0 when there were no reads).
  double hit_pct = 0;
  double raw_pct = 0;
  double compressed_pct = 0;
  double miss_pct = 0;
  // Microseconds per buffer over the interval's reads, all paths merged.
  double us_mean = 0;
  double us_p50 = 0;
  double us_p99 = 0;
  // CPU µs per buffer over the interval's reads: all paths, and each (CpuTimes's order and names).
  double cpu_us = 0;
  double cpu_path_us[CpuTimes::kPaths] = {};
  // Package energy over the interval in joules (stats/rapl.h: the whole machine's); < 0: unknown.
  double joules = -1;
  // Tier sizes and compression ratio at the end of the interval. raw_tier = kernel: raw_bytes is
  // the daemon's staging tier plus kernel_bytes, the bound on the kernel's pages of the mount.
  uint64_t raw_bytes = 0;
  uint64_t kernel_bytes = 0;
  uint64_t compressed_bytes = 0;
  double compression_ratio = 1.0;
  double evictions_per_s = 0;
  double compressions_per_s = 0;
  uint64_t stalls = 0;             // misses that waited for a frame during the interval
  // Read-ahead: pages read ahead, and of those asked for by a reader / evicted unread, per second.
  double readahead_per_s = 0;
  double readahead_hits_per_s = 0;
  double readahead_wasted_per_s = 0;
  // The split at the end of the interval ("25lz4", "a" before it when compressed_percent or
  // compressor is auto), the one the split estimator recommends ("-" until it has a prediction),
  // and its predicted µs per buffer at each (0: none).
  std::string split;
  std::string recommended;
  double predicted_us = 0;
  double recommended_us = 0;
};

// The interval from `before` to `after`, `seconds` apart. If reads went backwards (a new daemon
// was mounted between the two) the interval is everything `after` counted; any other counter that
// went backwards counts as zero rather than wrapping around.
StatInterval ComputeStatInterval(const CacheStats& before, const CacheStats& after, double seconds);

// Everything `now` counted since the daemon started, `uptime_s` ago: the first line `ccfs stat`
// prints, as vmstat's first line covers the time since boot. Rates are means over the uptime
// (0 when it is unknown), shares and percentiles those of every read since the mount.
StatInterval ComputeSinceMount(const CacheStats& now, double uptime_s);

// The column header of the text form (one line, ending in '\n'); `energy` adds a column of
// millijoules per buffer (where the machine has RAPL).
std::string StatHeader(bool energy);
// One text line (ending in '\n') under StatHeader(energy), stamped with the local time `now`
// ("mount" for the since-mount summary).
std::string FormatStatLine(const StatInterval& iv, std::time_t now, bool energy);
// One compact JSON object (ending in '\n') with the same figures and full precision;
// joules_per_buffer is null when iv.joules is unknown; since_mount tells the summary apart.
std::string FormatStatJson(const StatInterval& iv, std::time_t now);

// What keeps the split estimator from recommending a split, in words with its counts
// (CacheStats::split_waiting); "" when nothing does.
std::string SplitWaitingText(const CacheStats& s);

}  // namespace ccfs

#endif  // CCFS_STATS_STAT_INTERVAL_H_
