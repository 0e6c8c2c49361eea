// Stats in Prometheus's text exposition format (version 0.0.4): what the daemon serves at
// GET /metrics when the `metrics` key is set (src/fuse/metrics_server.h).
//
// Every metric is named ccfs_* but three, with a HELP and a TYPE line, in base units (seconds,
// bytes); the three carry the names every Prometheus client's process collector uses:
//   process_resident_memory_bytes            gauge: the daemon's VmRSS
//   process_open_fds                         gauge: descriptors the daemon has open
//   process_start_time_seconds               gauge: when it started serving, Unix time
//   ccfs_build_info{version}                 gauge 1: the ccfs release serving the mount
//   ccfs_mount_info{dataset,mountpoint}      gauge 1: which mount this endpoint describes
//   ccfs_uptime_seconds                      gauge: since the daemon started serving
//   ccfs_reads_total{path}                   counter: page reads by outcome, path = "raw"
//                                            (raw_hits), "compressed" (compressed_hits) or
//                                            "miss" (misses); their sum is stats.json's reads
//   ccfs_read_seconds{path}                  histogram of the engine's time per page read, same
//                                            paths (_bucket{le}, _sum, _count)
//   ccfs_NAME_total                          counter: each Event row of the counter table
//                                            (ccfs_evictions_total, ccfs_compressions_total,
//                                            ccfs_rejects_total, ccfs_stalls_total, ...)
//   ccfs_NAME_seconds_total                  counter: each Event row counted in nanoseconds,
//                                            NAME_ns (ccfs_stall_seconds_total, ...)
//   ccfs_NAME                                gauge: each TierSize and Level row (ccfs_memory_bytes,
//                                            ccfs_raw_bytes, ccfs_compressed_bytes,
//                                            ccfs_raw_budget_bytes, ccfs_raw_pages, ...)
//   ccfs_compression_ratio                   gauge: logical bytes / bytes charged, compressed tier
//   ccfs_compressed_percent, ccfs_page_size_bytes, ccfs_compression_level   gauges: settings now
//   ccfs_compressor_info{compressor}         gauge 1: the codec now
// The counters come from the counter table (stats/counters.h), so a counter added to
// CCFS_CACHE_COUNTERS appears here with no code; its HELP is the table's help line. stats.json's
// since-start averages (hit_ratio, us_per_buffer) are not exported: Prometheus computes them over
// any window from ccfs_reads_total and ccfs_read_seconds (docs/OPERATING.md "Metrics" has the
// queries).
//
// Histogram buckets: the engine keeps a log-linear histogram with 128 buckets per power of two
// (ccfs/stats.h); it is exported with the fixed bounds of kReadSecondsBounds (250ns .. 10s, 1-2.5-5
// steps), so every scrape has the same series. A bound's count is that of the engine's buckets
// that end at or below it: it may leave out values within 1/128 below the bound.
//
// Pure functions; thread-safe.
#ifndef CCFS_STATS_PROMETHEUS_H_
#define CCFS_STATS_PROMETHEUS_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "ccfs/stats.h"
#include "stats/counters.h"
#include "stats/stats_json.h"

namespace ccfs {

// The Content-Type of RenderPrometheus's text.
inline constexpr char kPrometheusContentType[] = "text/plain; version=0.0.4; charset=utf-8";

// Upper bounds of ccfs_read_seconds' buckets, in nanoseconds, ascending (+Inf follows).
inline constexpr uint64_t kReadSecondsBounds[] = {
    250,        500,         1'000,       2'500,       5'000,         10'000,
    25'000,     50'000,      100'000,     250'000,     500'000,       1'000'000,
    2'500'000,  5'000'000,   10'000'000,  25'000'000,  50'000'000,    100'000'000,
    250'000'000, 500'000'000, 1'000'000'000, 2'500'000'000, 5'000'000'000, 10'000'000'000};

// The metric name of a counter table row other than an Outcome row (those are
// ccfs_reads_total{path}): ccfs_NAME_total, ccfs_NAME_seconds_total or ccfs_NAME as above.
std::string PrometheusName(const CounterInfo& counter);

// The whole exposition: every metric above, ending in a newline. `daemon` gives the mount_info
// labels and the uptime (its pid is not shown); `version` the build_info label. Label values are
// escaped as the format requires, and bytes that are not UTF-8 become U+FFFD.
std::string RenderPrometheus(const CacheStats& s, const DaemonIdentity& daemon,
                             std::string_view version);

}  // namespace ccfs

#endif  // CCFS_STATS_PROMETHEUS_H_
