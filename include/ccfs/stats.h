// Counters and latency histograms of the page cache.
//
// LatencyHistogram is a log-linear histogram of nanoseconds (HdrHistogram's layout): values are
// grouped by power of two, and each power of two is cut into kSubBuckets linear buckets, so a
// reported percentile is within 1/kSubBuckets (< 1%) of the true value. Record() is wait-free
// (relaxed atomic adds) and may be called from any thread; Snapshot() may run concurrently and sees
// each counter at some recent value.
//
// CacheStats is a plain snapshot of everything the engine counts. Counters add up: every page read
// is exactly one of raw_hits, compressed_hits, misses, and the bytes it copied to the reader are in
// the matching one of raw_hit_bytes, compressed_hit_bytes, miss_bytes (their sum is every byte the
// engine's reads returned). readahead_hit_bytes is not a fourth path: it is the bytes of the reads
// that first asked for a page read ahead (readahead_hits), counted under their own path as well
// (raw, or miss when the reader waited for the read-ahead's load), so the share of the bytes
// served that read-ahead brought in is readahead_hit_bytes / (raw_hit_bytes + miss_bytes).
//
// CPU time (the cpu_*_ns counters) says what a buffer costs in CPU, by path, beside what it costs
// in time. The compression workers and the evictor are measured whole, from their threads' CPU
// clocks. Raw hits, compressed hits and misses run on the reading threads and are estimated: about
// one page read in 64 is timed on the reader's thread CPU clock and counted 64 times
// (util/thread_cpu.h: that clock is a system call, too dear to read twice on every page). In the
// daemon the FUSE request threads are measured whole too (cpu_request_threads_ns); what they
// spend outside the cache's read paths is the "request" path (stats/counters.h, CpuTimesOf). Not
// counted: liburcu's reclamation thread, the metrics server, the kernel-mode notifier thread.
#ifndef CCFS_STATS_H_
#define CCFS_STATS_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace ccfs {

class HistogramSnapshot {
 public:
  uint64_t count() const { return count_; }
  uint64_t sum_ns() const { return sum_ns_; }
  uint64_t min_ns() const { return count_ ? min_ns_ : 0; }
  uint64_t max_ns() const { return max_ns_; }
  double mean_us() const { return count_ ? static_cast<double>(sum_ns_) / count_ / 1000.0 : 0.0; }
  // Value at quantile q in [0, 1], in microseconds (0 when empty).
  double PercentileUs(double q) const;
  // Adds `other` into this snapshot.
  void Merge(const HistogramSnapshot& other);
  // This minus `before` (counts since `before` was taken); min/max are kept from this snapshot.
  HistogramSnapshot Since(const HistogramSnapshot& before) const;
  // Non-empty buckets as (upper bound in ns, count) pairs, ascending.
  std::vector<std::pair<uint64_t, uint64_t>> Buckets() const;
  // Rebuilds a snapshot from what Buckets() and the accessors above report (stats JSON read back
  // by `ccfs stat`); count is the sum of the bucket counts. Each upper bound is mapped to its
  // bucket with LatencyHistogram::BucketOf, so bounds from another layout land in the nearest one.
  static HistogramSnapshot FromBuckets(uint64_t sum_ns, uint64_t min_ns, uint64_t max_ns,
                                       const std::vector<std::pair<uint64_t, uint64_t>>& buckets);

 private:
  friend class LatencyHistogram;
  uint64_t count_ = 0;
  uint64_t sum_ns_ = 0;
  uint64_t min_ns_ = 0;
  uint64_t max_ns_ = 0;
  std::vector<uint64_t> buckets_;  // indexed like LatencyHistogram's
};

class LatencyHistogram {
 public:
  static constexpr int kSubBucketBits = 7;  // 128 linear buckets per power of two: < 0.8% error
  static constexpr int kSubBuckets = 1 << kSubBucketBits;
  static constexpr int kBuckets = (64 - kSubBucketBits + 1) * kSubBuckets;

  LatencyHistogram();
  void Record(uint64_t ns);
  HistogramSnapshot Snapshot() const;

  // Bucket index of a value, and the largest value that bucket holds (exposed for tests).
  static int BucketOf(uint64_t ns);
  static uint64_t BucketUpper(int index);

 private:
  std::atomic<uint64_t> count_{0};
  std::atomic<uint64_t> sum_ns_{0};
  std::atomic<uint64_t> min_ns_{UINT64_MAX};
  std::atomic<uint64_t> max_ns_{0};
  std::unique_ptr<std::atomic<uint64_t>[]> buckets_;
};

// Every uint64_t counter of CacheStats, listed once, in declaration order, as
//   X(field, kind, help)
// with `kind` one of
//   Outcome   page reads by outcome (the headline: first in stats.json)
//   Event     other events: counts since the engine started
//   TierSize  the three sizes stats.json shows next to the headline
//   Level     other sizes now
// Outcome and Event fields are counts (the difference of two snapshots is what happened in
// between); TierSize and Level are values now. The struct below, the engine's counters and
// snapshot (src/cache), stats JSON both ways, and the table and Minus() of src/stats/counters.h all
// expand this list, so a new counter is one line here, plus the code that counts it.
#define CCFS_CACHE_COUNTERS(X)                                                                     \
  X(reads, Outcome, "page reads; reads == raw_hits + compressed_hits + misses")                    \
  X(raw_hits, Outcome, "page reads served from a raw frame")                                       \
  X(compressed_hits, Outcome, "page reads served by decompressing from the compressed tier")       \
  X(misses, Outcome, "page reads served from the backing file")                                    \
  X(raw_hit_bytes, Event, "bytes copied to readers from raw hits")                                 \
  X(compressed_hit_bytes, Event, "bytes copied to readers from compressed hits")                   \
  X(miss_bytes, Event, "bytes copied to readers from misses")                                      \
  X(read_errors, Event, "misses whose backing read failed (not in misses)")                        \
  X(buffered_misses, Event, "misses served by a file that refused O_DIRECT")                       \
  X(backing_reads, Event,                                                                          \
    "reads of the backing files: one per run of consecutive missing pages (misses / run length)")  \
  X(readahead_pages, Event, "pages read ahead of a sequential reader (not counted in reads)")     \
  X(readahead_hits, Event, "pages read ahead that a reader then asked for")                       \
  X(readahead_wasted, Event, "pages read ahead and evicted before any reader asked for them")     \
  X(readahead_hit_bytes, Event,                                                                    \
    "bytes of readahead_hits copied to readers (also in raw_hit_bytes or miss_bytes)")             \
  X(warm_pages, Event, "pages loaded by a warm-up (ccfs warmup; not counted in reads)")           \
  X(persist_pages_written, Event, "pages written to cache files that were completed (persist)")   \
  X(persist_pages_restored, Event,                                                                 \
    "pages restored from the cache file at mount into the compressed tier (persist)")              \
  X(persist_pages_dropped_stale, Event,                                                            \
    "pages of the cache file not restored: their file changed or went since it was written")       \
  X(persist_errors, Event,                                                                         \
    "cache files not written (an error, a full disk) or not used (damaged, foreign)")              \
  X(page_writes, Event, "pages touched by writes through the engine")                              \
  X(invalidations, Event, "cached pages dropped by writes, truncates, changes underneath")         \
  X(evictions, Event, "raw pages taken by the raw CLOCK")                                          \
  X(evict_sweeps, Event, "bulk sweeps (each takes up to one batch)")                               \
  X(compressions, Event, "victims compressed (kept or not)")                                       \
  X(compressed_stored, Event, "victims that entered the compressed tier with a blob")              \
  X(rejects, Event, "victims that did not save min_savings_percent: dropped")                      \
  X(zero_pages, Event, "victims that were all zero: kept with no blob")                            \
  X(admission_drops, Event,                                                                        \
    "victims dropped uncompressed: no sign of reuse (admission_filter), not demoted")              \
  X(incompressible_skips, Event,                                                                   \
    "victims dropped uncompressed: their region keeps being rejected")                             \
  X(pressure_drops, Event, "victims dropped uncompressed: free frames ran out, pool busy")         \
  X(pass_through_pages, Event,                                                                     \
    "raw_tier = kernel: missing pages of a request read past a full staging tier, not kept")       \
  X(sftp_reads, Event, "sftp: reads of the store over SFTP (one per run of missing pages)")       \
  X(sftp_read_bytes, Event, "sftp: bytes those reads brought")                                     \
  X(sftp_fallbacks, Event,                                                                         \
    "sftp: reads sent through the store's mount instead (SFTP failed, or refused the file)")       \
  X(sftp_connects, Event, "sftp: SSH connections made (the first ones included)")                  \
  X(compressed_evictions, Event, "compressed pages dropped by the compressed CLOCK")               \
  X(promotions, Event, "compressed hits moved back into a raw frame")                              \
  X(wasted_compressions, Event, "compressed pages dropped before any hit")                         \
  X(stalls, Event, "misses that found no free frame and waited")                                   \
  X(stall_ns, Event, "total time those misses waited")                                             \
  X(compress_ns, Event, "time spent compressing victims (pool threads, wall clock)")              \
  X(decompress_ns, Event, "time spent decompressing on compressed hits")                           \
  X(cpu_request_threads_ns, Event,                                                                 \
    "CPU time of the FUSE request threads, the cache's read paths on them included (daemon)")      \
  X(cpu_raw_hit_ns, Event, "CPU time of raw hits (estimated from one read in 64)")                \
  X(cpu_decompress_ns, Event, "CPU time of compressed hits (estimated from one read in 64)")       \
  X(cpu_miss_ns, Event,                                                                            \
    "CPU time of misses: backing read and admission (estimated from one read in 64)")             \
  X(cpu_compress_ns, Event, "CPU time of the compression pool's workers")                         \
  X(cpu_evictor_ns, Event, "CPU time of the evictor thread")                                       \
  X(memory_bytes, TierSize, "the whole budget")                                                    \
  X(raw_budget_bytes, Level, "the raw tier's share of memory_bytes")                               \
  X(compressed_budget_bytes, Level, "the compressed tier's share of memory_bytes")                 \
  X(raw_pages, Level, "frames holding a page (including ones being compressed)")                   \
  X(raw_bytes, TierSize, "raw_pages * page_size")                                                  \
  X(free_frames, Level, "raw frames free now")                                                     \
  X(compressed_pages, Level, "pages in the compressed tier (zero pages included)")                 \
  X(compressed_bytes, TierSize, "allocator bytes charged for blobs")                               \
  X(compressed_logical_bytes, Level, "bytes the compressed pages hold once decompressed")          \
  X(pinned_pages, Level, "pages of pinned files cached now (pin), raw and compressed")              \
  X(pinned_bytes, Level,                                                                           \
    "what pinned files' pages take now: raw pages whole, compressed ones at their charge")         \
  X(kernel_budget_bytes, Level,                                                                    \
    "raw_tier = kernel: what the kernel's page cache may hold of the mount's files")               \
  X(kernel_held_bytes, Level,                                                                      \
    "raw_tier = kernel: bytes sent to the kernel and not dropped since (an upper bound)")          \
  X(kernel_rerequests, Event,                                                                      \
    "raw_tier = kernel: pages the kernel asked for again after it dropped them itself")            \
  X(kernel_evictions, Event,                                                                       \
    "raw_tier = kernel: pages the daemon told the kernel to drop to hold its budget")              \
  X(kernel_kept_out, Event,                                                                        \
    "raw_tier = kernel under auto: pages served, then dropped from the kernel (the curve's sample)") \
  X(kernel_retrieved, Event,                                                                       \
    "kernel_demote: pages fetched back from the kernel before it was told to drop them")          \
  X(kernel_watch_passes, Event,                                                                    \
    "raw_tier = kernel: passes over the open files looking for changes underneath")               \
  X(kernel_watch_checks, Event,                                                                    \
    "raw_tier = kernel: checks of open files for a change underneath (each once per attr_timeout)") \
  X(kernel_watch_changes, Event,                                                                   \
    "raw_tier = kernel: open files those checks found changed underneath (their pages dropped)")   \
  X(kernel_watch_ns, Event, "raw_tier = kernel: time spent in those passes")                      \
  X(attr_answers, Event,                                                                           \
    "attribute refreshes and read-only opens answered from attributes read less than "            \
    "attr_timeout ago: no trip to the store")                                                      \
  X(passthrough_opens, Event,                                                                      \
    "passthrough: opens the kernel served itself, reading the store's file (fuse/passthrough.h)")  \
  X(demotions, Event, "kernel_demote: pages from the kernel kept in the compressed tier")         \
  X(demote_drops, Event,                                                                           \
    "kernel_demote: pages from the kernel not kept (changed, cached, incompressible, pool busy)") \
  X(mrc_samples, Event, "page reads sampled into the miss-ratio curve (cache/mrc.h)")              \
  X(mrc_drops, Event, "sampled page reads the miss-ratio curve dropped: its buffer was full")      \
  X(split_changes, Event, "changes of compressed_percent or compressor made by auto")

// The split estimator's prediction for one split and codec (estimate_splits; cache/split_tuner.h).
struct SplitPrediction {
  int percent = 0;     // compressed_percent
  int codec = 0;       // CodecKind (at percent 0: the codec in force; there is no compressed tier)
  double hit_ratio = 0;
  double us_per_buffer = 0;  // the engine's, as us_per_buffer() measures it
};

// CacheStats::split_waiting: what keeps the split estimator from deciding.
namespace split_waiting {
inline constexpr char kWindow[] = "window";            // a window of reads to measure over
inline constexpr char kReuses[] = "reuses";            // reuses in the hit-ratio curve
inline constexpr char kTrip[] = "trip";                // raw_tier = kernel: the FUSE trip's time
inline constexpr char kAfterChange[] = "after_change"; // the window after a change is skipped
inline constexpr char kCodecs[] = "codecs";            // a sample of evicted pages to profile
inline constexpr char kFit[] = "fit";                  // no split fits the memory the daemon has
inline constexpr char kCurveSpan[] = "curve_span";     // the curve's reads, to span the caches
inline constexpr char kAutoKeys[] = "auto_keys";       // raw_tier = kernel with both keys fixed
inline constexpr char kOff[] = "estimate_splits";      // estimate_splits = false
}  // namespace split_waiting

struct CacheStats {
  // The counters (see CCFS_CACHE_COUNTERS for what each means).
#define CCFS_CACHE_STATS_FIELD(field, kind, help) uint64_t field = 0;
  CCFS_CACHE_COUNTERS(CCFS_CACHE_STATS_FIELD)
#undef CCFS_CACHE_STATS_FIELD

  // Settings now.
  bool kernel_raw_tier = false;    // raw_tier = kernel: the kernel's hits are not in these counts
  bool kernel_evict = false;       // raw_tier = kernel and the daemon drops the kernel's pages in
                                   // the order it sent them (kernel_evict = true): a FIFO level
  int compressed_percent = 0;
  uint32_t page_size = 0;
  int compressor = 0;              // CodecKind
  int compression_level = 0;
  bool compressed_percent_auto = false;  // compressed_percent = auto
  bool compressor_auto = false;          // compressor = auto

  // The split estimator (empty / -1 until it has seen a window of reads, and with
  // estimate_splits = false): every split's prediction, the split it recommends, and its
  // prediction for the split in force.
  std::vector<SplitPrediction> predicted;
  int recommended_percent = -1;
  int recommended_codec = 0;
  double predicted_us_per_buffer = 0;
  // raw_tier = kernel under auto: the FUSE round trip the prediction took, measured (0 in daemon
  // mode, where the trip is the same at every split and the prediction leaves it out).
  double predicted_trip_us = 0;
  // What the estimator's latest step waited for instead of deciding (one of split_waiting::*),
  // with how far it had got and what it needs (0 and 0 where no count applies). Empty once a step
  // has decided: a recommendation then stands until the next decision, and a wait for the next
  // window between decisions is the normal cadence.
  std::string split_waiting;
  uint64_t split_waiting_have = 0;
  uint64_t split_waiting_need = 0;

  // Latency per path, measured inside the engine around each page.
  HistogramSnapshot raw_hit_latency;
  HistogramSnapshot compressed_hit_latency;
  HistogramSnapshot miss_latency;

  double hit_ratio() const { return reads ? static_cast<double>(raw_hits + compressed_hits) / reads : 0.0; }
  // Logical bytes held compressed / bytes charged for them (1.0 when empty).
  double compression_ratio() const {
    return compressed_bytes ? static_cast<double>(compressed_logical_bytes) / compressed_bytes : 1.0;
  }
  // Mean microseconds per page served, over all three paths.
  double us_per_buffer() const;
  // CPU microseconds per page read, all paths (stats/counters.h CpuTimesOf says which).
  double cpu_us_per_buffer() const;
  // All paths merged.
  HistogramSnapshot all_latency() const;
};

}  // namespace ccfs

#endif  // CCFS_STATS_H_
