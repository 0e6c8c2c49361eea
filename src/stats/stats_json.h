// Stats as JSON: what the daemon serves at MOUNTPOINT/.ccfs/stats.json and what `ccfs stat` and
// trace replay read back.
//
// The document is one object. Top-level keys: hit_ratio, reads, raw_hits, compressed_hits,
// misses, us_per_buffer, cpu_us_per_buffer, compression_ratio, compressed_percent, raw_tier
// ("daemon" or "kernel": in kernel mode the counts are of the reads that reached the daemon, the
// kernel's own hits are not among them), memory_bytes, raw_bytes, compressed_bytes, every other
// CacheStats counter under its own field name, compressor ("lz4" or "zstd"), compression_level,
// page_size, "cpu_us" (CPU µs since start by path as stats/counters.h's CpuTimes names them, and
// "total"; cpu_us_per_buffer is total / reads), and "latency" with one object per path
// ("raw_hit", "compressed_hit", "miss", and "all" merged):
//   {count, sum_ns, min_ns, max_ns, mean_us, p50_us, p90_us, p99_us, p999_us, max_us,
//    buckets: [[upper_ns, count], ...]}
// The buckets make the histograms round-trip, so the difference of two documents read a few
// seconds apart (HistogramSnapshot::Since) gives the percentiles of that interval.
//
// Thread-safe; the renderers and the parser are pure. Reading the document from a mount is
// src/client/mount_client.h's.
#ifndef CCFS_STATS_STATS_JSON_H_
#define CCFS_STATS_STATS_JSON_H_

#include <chrono>
#include <cstdint>
#include <string>

#include "ccfs/stats.h"
#include "ccfs/status.h"

namespace ccfs {

// Pretty-printed JSON text ending in a newline.
std::string RenderStatsJson(const CacheStats& s);

// The daemon serving a mount, as stats.json's "daemon" object reports it.
struct DaemonIdentity {
  long pid = 0;
  std::string dataset;     // absolute path of the backing directory
  std::string mountpoint;  // absolute path of the mount
  double uptime_s = 0;     // since the daemon started serving
  // The process's resident memory (VmRSS): its tiers' pages, and what it holds beside them (code,
  // thread stacks, request buffers, the page index); 0 when unknown.
  uint64_t rss_bytes = 0;
  uint64_t open_fds = 0;       // descriptors the process has open; 0 when unknown
  // Its soft RLIMIT_NOFILE (0 when unlimited); exported to Prometheus only (process_max_fds).
  uint64_t max_fds = 0;
  double start_time_s = 0;     // when the daemon started serving, seconds since the Unix epoch

  // This process, serving `dataset` at `mountpoint` since `started`.
  static DaemonIdentity Now(const std::string& dataset, const std::string& mountpoint,
                            std::chrono::steady_clock::time_point started);
};

// The document MOUNTPOINT/.ccfs/stats.json serves: RenderStatsJson(s) with one more top-level key,
// last, "daemon": {pid, dataset, mountpoint, uptime_s (3 decimals), rss_bytes, open_fds,
// start_time_s}. Bytes of a path that are not
// UTF-8 are shown as U+FFFD (JSON text is UTF-8). ParseStatsJson ignores "daemon".
std::string RenderMountStatsJson(const CacheStats& s, const DaemonIdentity& daemon);

// Reads what RenderStatsJson wrote back into *s. Counters absent from `text` are left at zero (so
// documents from an older daemon still read); a value of the wrong type, an unknown compressor or
// text that is not JSON is InvalidArgument naming the key or the byte offset. On error *s is left
// unchanged.
Status ParseStatsJson(const std::string& text, CacheStats* s);

}  // namespace ccfs

#endif  // CCFS_STATS_STATS_JSON_H_
