// Stats in Prometheus's text exposition format (version 0.0.4): what the daemon serves at
// GET /metrics when the `metrics` key is set (src/fuse/metrics_server.h).
//
// 1. Names. Every metric is named ccfs_* but four, with a HELP and a TYPE line, in base units
// (seconds, bytes); the four carry the names every Prometheus client's process collector uses:
//   process_resident_memory_bytes            gauge: the daemon's VmRSS
//   process_open_fds                         gauge: descriptors the daemon has open
//   process_max_fds                          gauge: its descriptor limit (soft RLIMIT_NOFILE)
//   process_start_time_seconds               gauge: when it started serving, Unix time
//   ccfs_build_info{version}                 gauge 1: the ccfs release serving the mount
//   ccfs_mount_info{dataset,mountpoint}      gauge 1: which mount this endpoint describes
//   ccfs_uptime_seconds                      gauge: since the daemon started serving
//   ccfs_reads_total{path}                   counter: page reads by outcome, path = "raw"
//                                            (raw_hits), "compressed" (compressed_hits) or
//                                            "miss" (misses); their sum is stats.json's reads
//   ccfs_read_seconds{path}                  histogram of the engine's time per page read, same
//                                            paths (_bucket{le}, _sum, _count)
//   ccfs_read_bytes_total{path}              counter: bytes those reads copied to readers, same
//                                            paths (raw_hit_bytes, compressed_hit_bytes,
//                                            miss_bytes); their sum is every byte served
//   ccfs_readahead_hit_bytes_total           counter: the part of those bytes that came from pages
//                                            read ahead (readahead_hit_bytes). Not a fourth path:
//                                            those bytes are also under path="raw" or "miss"
//                                            (ccfs/stats.h), and a label of one family must not
//                                            count a byte twice, or sum() over it would
//   ccfs_fuse_requests_total{op}             counter: FUSE requests the daemon answered, by op
//                                            (lookup, getattr, open, read, write, ...)
//   ccfs_fuse_request_seconds{op}            histogram of the daemon's time per request, from the
//                                            handler's entry to its reply (stats/request_stats.h):
//                                            the engine's time plus the handler's own (descriptor
//                                            checks, the reply's copy); not the kernel's queueing
//   ccfs_NAME_total                          counter: each other Event row of the counter table
//                                            (ccfs_evictions_total, ccfs_compressions_total,
//                                            ccfs_rejects_total, ccfs_stalls_total, ...)
//   ccfs_NAME_seconds_total                  counter: each Event row counted in nanoseconds,
//                                            NAME_ns (ccfs_stall_seconds_total, ...)
//   ccfs_NAME                                gauge: each TierSize and Level row (ccfs_memory_bytes,
//                                            ccfs_raw_bytes, ccfs_compressed_bytes,
//                                            ccfs_raw_budget_bytes, ccfs_raw_pages, ...)
//   ccfs_compression_ratio                   gauge: logical bytes / bytes charged, compressed tier
//   ccfs_compressed_share                    gauge: compressed_percent as a fraction, 0-1
//   ccfs_compressed_percent, ccfs_page_size_bytes, ccfs_compression_level   gauges: settings now
//   ccfs_compressor_info{compressor}         gauge 1: the codec now
// The counters come from the counter table (stats/counters.h), so a counter added to
// CCFS_CACHE_COUNTERS appears here with no code; its HELP is the table's help line. stats.json's
// since-start averages (hit_ratio, us_per_buffer) are not exported: Prometheus computes them over
// any window from ccfs_reads_total and ccfs_read_seconds (docs/OPERATING.md "Metrics" has the
// queries).
//
// 2. Fractions and ratios. A share of a whole is a fraction 0-1, as Prometheus's conventions ask
// (ccfs_compressed_share; the hit ratio is computed from ccfs_reads_total, already 0-1).
// ccfs_compressed_percent (0-100) is the same setting in the unit of the key; it stays for one
// release beside ccfs_compressed_share, its HELP saying so, so that dashboards and alerts built
// on it keep working through an upgrade, and goes in the release after. ccfs_compression_ratio
// is a ratio, not a share: logical bytes per byte charged, 1 and up, as codecs quote it.
//
// 3. Histogram buckets: the fixed bounds kLatencyBoundsNs (stats/request_stats.h; 250ns .. 10s,
// 1-2.5-5 steps), so every scrape has the same series. The engine keeps a log-linear histogram
// with 128 buckets per power of two (ccfs/stats.h): a bound's count is that of the engine's
// buckets that end at or below it, so it may leave out values within 1/128 below the bound. The
// request histograms are kept in those bounds, so they are exact.
//
// 4. Requests. The ccfs_fuse_* families exist only in the daemon (`requests` is empty for the
// engine alone) and show an op once it has been asked for: a series that appears stays, as a
// counter must, and a mount that never sees mknod or fsyncdir does not carry 27 empty series for
// each. They are not in stats.json: that document is the engine's CacheStats, which `ccfs stat`
// reads back and subtracts, and the daemon's requests are a property of the mount's traffic, read
// where Prometheus can compute rates and quantiles from them.
//
// Pure functions; thread-safe.
#ifndef CCFS_STATS_PROMETHEUS_H_
#define CCFS_STATS_PROMETHEUS_H_

#include <cstdint>
#include <string>
#include <string_view>

#include <vector>

#include "ccfs/stats.h"
#include "stats/counters.h"
#include "stats/request_stats.h"
#include "stats/stats_json.h"

namespace ccfs {

// The Content-Type of RenderPrometheus's text.
inline constexpr char kPrometheusContentType[] = "text/plain; version=0.0.4; charset=utf-8";

// The metric name of a counter table row other than an Outcome row (those are
// ccfs_reads_total{path}): ccfs_NAME_total, ccfs_NAME_seconds_total or ccfs_NAME as above.
std::string PrometheusName(const CounterInfo& counter);

// The whole exposition: every metric above, ending in a newline. `daemon` gives the mount_info
// labels and the uptime (its pid is not shown); `version` the build_info label; `requests` the
// FUSE layer's counts (RequestStats::Snapshot; empty: no ccfs_fuse_* families). Label values are
// escaped as the format requires, and bytes that are not UTF-8 become U+FFFD.
std::string RenderPrometheus(const CacheStats& s, const DaemonIdentity& daemon,
                             std::string_view version,
                             const std::vector<RequestStats::Kind>& requests = {});

}  // namespace ccfs

#endif  // CCFS_STATS_PROMETHEUS_H_
