// Counters and latency histograms of the page cache.
//
// LatencyHistogram is a log-linear histogram of nanoseconds (HdrHistogram's layout): values are
// grouped by power of two, and each power of two is cut into kSubBuckets linear buckets, so a
// reported percentile is within 1/kSubBuckets (< 1%) of the true value. Record() is wait-free
// (relaxed atomic adds) and may be called from any thread; Snapshot() may run concurrently and sees
// each counter at some recent value.
//
// CacheStats is a plain snapshot of everything the engine counts. Counters add up: every page read
// is exactly one of raw_hits, compressed_hits, misses.
#ifndef CCFS_STATS_H_
#define CCFS_STATS_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
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

struct CacheStats {
  // Page reads, by outcome. reads == raw_hits + compressed_hits + misses.
  uint64_t reads = 0;
  uint64_t raw_hits = 0;
  uint64_t compressed_hits = 0;
  uint64_t misses = 0;
  uint64_t read_errors = 0;        // misses whose backing read failed (not in `misses`)
  uint64_t buffered_misses = 0;    // misses served by a file that refused O_DIRECT
  uint64_t page_writes = 0;        // pages touched by writes through the engine
  uint64_t invalidations = 0;      // cached pages dropped by writes, truncates, changes underneath

  // Eviction and compression.
  uint64_t evictions = 0;          // raw pages taken by the raw CLOCK
  uint64_t evict_sweeps = 0;       // bulk sweeps (each takes up to one batch)
  uint64_t compressions = 0;       // victims compressed (kept or not)
  uint64_t compressed_stored = 0;  // victims that entered the compressed tier with a blob
  uint64_t rejects = 0;            // victims that did not save min_savings_percent: dropped
  uint64_t zero_pages = 0;         // victims that were all zero: kept with no blob
  uint64_t admission_drops = 0;    // victims dropped uncompressed: no sign of reuse (admission_filter)
  uint64_t incompressible_skips = 0;  // victims dropped uncompressed: their region keeps being rejected
  uint64_t pressure_drops = 0;     // victims dropped uncompressed: free frames ran out, pool busy
  uint64_t compressed_evictions = 0;  // compressed pages dropped by the compressed CLOCK
  uint64_t promotions = 0;         // compressed hits moved back into a raw frame
  uint64_t wasted_compressions = 0;   // compressed pages dropped before any hit
  uint64_t stalls = 0;             // misses that found no free frame and waited
  uint64_t stall_ns = 0;           // total time those misses waited
  uint64_t compress_ns = 0;        // CPU time spent compressing victims (pool threads)
  uint64_t decompress_ns = 0;      // time spent decompressing on compressed hits

  // Tier sizes now.
  uint64_t memory_bytes = 0;       // the whole budget
  uint64_t raw_budget_bytes = 0;
  uint64_t compressed_budget_bytes = 0;
  uint64_t raw_pages = 0;          // frames holding a page (including ones being compressed)
  uint64_t raw_bytes = 0;          // raw_pages * page_size
  uint64_t free_frames = 0;
  uint64_t compressed_pages = 0;   // pages in the compressed tier (zero pages included)
  uint64_t compressed_bytes = 0;   // allocator bytes charged for blobs
  uint64_t compressed_logical_bytes = 0;  // bytes those pages hold once decompressed
  int compressed_percent = 0;
  uint32_t page_size = 0;
  int compressor = 0;              // CodecKind
  int compression_level = 0;

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
  // All paths merged.
  HistogramSnapshot all_latency() const;
};

}  // namespace ccfs

#endif  // CCFS_STATS_H_
