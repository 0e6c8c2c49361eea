// LatencyHistogram, HistogramSnapshot and the derived figures of CacheStats.
//
// Bucket layout (log-linear, as HdrHistogram): values below 2 * kSubBuckets (256 ns) have one
// bucket each, so they are exact. Above that, a value whose highest set bit is m (m >= 8) falls in
// group e = m - kSubBucketBits (1..56); the group spans [2^m, 2^(m+1)) and is cut into kSubBuckets
// equal buckets of width 2^e, so index = e * kSubBuckets + (v >> e), where v >> e lies in
// [kSubBuckets, 2 * kSubBuckets). A bucket's width is at most 1/kSubBuckets of its lower bound,
// and percentiles report the bucket's midpoint, so they are within 1/(2 * kSubBuckets) (0.4%) of
// the recorded value. The last index is 56 * 128 + 255 = kBuckets - 1.
//
// Why a histogram rather than a sample reservoir: Record() is on every page read, so it must cost
// a few relaxed atomic adds and no allocation; and two histograms subtract exactly, which is what
// gives `ccfs stat` true percentiles of each interval rather than of the whole run.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>

#include "ccfs/stats.h"
#include "stats/counters.h"

namespace ccfs {
namespace {

constexpr int kLinearLimit = 2 * LatencyHistogram::kSubBuckets;  // values below are exact

uint64_t BucketLower(int index) {
  if (index < kLinearLimit) return static_cast<uint64_t>(index);
  int e = (index >> LatencyHistogram::kSubBucketBits) - 1;
  uint64_t sub = static_cast<uint64_t>(index & (LatencyHistogram::kSubBuckets - 1)) +
                 LatencyHistogram::kSubBuckets;
  return sub << e;
}

uint64_t SaturatingSub(uint64_t a, uint64_t b) { return a > b ? a - b : 0; }

}  // namespace

// ---- LatencyHistogram ---------------------------------------------------------------------------

LatencyHistogram::LatencyHistogram() : buckets_(new std::atomic<uint64_t>[kBuckets]) {
  for (int i = 0; i < kBuckets; ++i) buckets_[i].store(0, std::memory_order_relaxed);
}

int LatencyHistogram::BucketOf(uint64_t ns) {
  if (ns < static_cast<uint64_t>(kLinearLimit)) return static_cast<int>(ns);
  int m = 63 - std::countl_zero(ns);
  int e = m - kSubBucketBits;
  return e * kSubBuckets + static_cast<int>(ns >> e);
}

uint64_t LatencyHistogram::BucketUpper(int index) {
  if (index < kLinearLimit) return static_cast<uint64_t>(index);
  int e = (index >> kSubBucketBits) - 1;
  uint64_t sub = static_cast<uint64_t>(index & (kSubBuckets - 1)) + kSubBuckets;
  // For the very last bucket (sub + 1) << e wraps to 0 and the bound becomes UINT64_MAX, as it
  // should: unsigned arithmetic is modular.
  return ((sub + 1) << e) - 1;
}

void LatencyHistogram::Record(uint64_t ns) {
  buckets_[BucketOf(ns)].fetch_add(1, std::memory_order_relaxed);
  sum_ns_.fetch_add(ns, std::memory_order_relaxed);
  count_.fetch_add(1, std::memory_order_relaxed);
  // min/max change rarely once warm, so the common case is one relaxed load each and no write.
  uint64_t cur = min_ns_.load(std::memory_order_relaxed);
  while (ns < cur && !min_ns_.compare_exchange_weak(cur, ns, std::memory_order_relaxed)) {
  }
  cur = max_ns_.load(std::memory_order_relaxed);
  while (ns > cur && !max_ns_.compare_exchange_weak(cur, ns, std::memory_order_relaxed)) {
  }
}

HistogramSnapshot LatencyHistogram::Snapshot() const {
  HistogramSnapshot s;
  s.buckets_.resize(kBuckets);
  uint64_t total = 0;
  for (int i = 0; i < kBuckets; ++i) {
    s.buckets_[i] = buckets_[i].load(std::memory_order_relaxed);
    total += s.buckets_[i];
  }
  // The count is the sum of the buckets read, not count_, so that percentiles of a snapshot taken
  // while others record always find their rank inside the buckets.
  s.count_ = total;
  s.sum_ns_ = sum_ns_.load(std::memory_order_relaxed);
  uint64_t mn = min_ns_.load(std::memory_order_relaxed);
  s.min_ns_ = mn == UINT64_MAX ? 0 : mn;
  s.max_ns_ = max_ns_.load(std::memory_order_relaxed);
  return s;
}

// ---- HistogramSnapshot --------------------------------------------------------------------------

double HistogramSnapshot::PercentileUs(double q) const {
  if (count_ == 0 || buckets_.empty()) return 0.0;
  q = std::clamp(q, 0.0, 1.0);
  // Nearest-rank: the smallest value with at least q of the samples at or below it.
  uint64_t rank = static_cast<uint64_t>(std::ceil(q * static_cast<double>(count_)));
  rank = std::clamp<uint64_t>(rank, 1, count_);
  uint64_t seen = 0;
  for (size_t i = 0; i < buckets_.size(); ++i) {
    seen += buckets_[i];
    if (seen >= rank) {
      int idx = static_cast<int>(i);
      uint64_t lo = BucketLower(idx);
      uint64_t hi = LatencyHistogram::BucketUpper(idx);
      double mid = static_cast<double>(lo) + (static_cast<double>(hi - lo) / 2.0);
      // The true extremes are known exactly; never report beyond them.
      if (max_ns_ != 0) mid = std::min(mid, static_cast<double>(max_ns_));
      mid = std::max(mid, static_cast<double>(min_ns_));
      return mid / 1000.0;
    }
  }
  return static_cast<double>(max_ns_) / 1000.0;
}

void HistogramSnapshot::Merge(const HistogramSnapshot& other) {
  if (other.count_ == 0) return;
  if (buckets_.size() < other.buckets_.size()) buckets_.resize(other.buckets_.size(), 0);
  for (size_t i = 0; i < other.buckets_.size(); ++i) buckets_[i] += other.buckets_[i];
  min_ns_ = count_ == 0 ? other.min_ns_ : std::min(min_ns_, other.min_ns_);
  max_ns_ = std::max(max_ns_, other.max_ns_);
  count_ += other.count_;
  sum_ns_ += other.sum_ns_;
}

HistogramSnapshot HistogramSnapshot::Since(const HistogramSnapshot& before) const {
  HistogramSnapshot d;
  d.buckets_ = buckets_;
  uint64_t total = 0;
  // Saturating: if `before` is not an ancestor of this snapshot (the daemon restarted between the
  // two), the interval is what can be told apart, never a wrapped-around huge number.
  for (size_t i = 0; i < d.buckets_.size(); ++i) {
    uint64_t b = i < before.buckets_.size() ? before.buckets_[i] : 0;
    d.buckets_[i] = SaturatingSub(d.buckets_[i], b);
    total += d.buckets_[i];
  }
  d.count_ = total;
  d.sum_ns_ = SaturatingSub(sum_ns_, before.sum_ns_);
  d.min_ns_ = min_ns_;
  d.max_ns_ = max_ns_;
  return d;
}

std::vector<std::pair<uint64_t, uint64_t>> HistogramSnapshot::Buckets() const {
  std::vector<std::pair<uint64_t, uint64_t>> out;
  for (size_t i = 0; i < buckets_.size(); ++i) {
    if (buckets_[i] != 0) {
      out.emplace_back(LatencyHistogram::BucketUpper(static_cast<int>(i)), buckets_[i]);
    }
  }
  return out;
}

HistogramSnapshot HistogramSnapshot::FromBuckets(
    uint64_t sum_ns, uint64_t min_ns, uint64_t max_ns,
    const std::vector<std::pair<uint64_t, uint64_t>>& buckets) {
  HistogramSnapshot s;
  s.buckets_.assign(LatencyHistogram::kBuckets, 0);
  for (const auto& [upper, n] : buckets) {
    s.buckets_[LatencyHistogram::BucketOf(upper)] += n;
    s.count_ += n;
  }
  if (s.count_ == 0) s.buckets_.clear();
  s.sum_ns_ = sum_ns;
  s.min_ns_ = min_ns;
  s.max_ns_ = max_ns;
  return s;
}

// ---- CacheStats ---------------------------------------------------------------------------------

double CacheStats::us_per_buffer() const {
  if (reads == 0) return 0.0;
  uint64_t ns = raw_hit_latency.sum_ns() + compressed_hit_latency.sum_ns() + miss_latency.sum_ns();
  return static_cast<double>(ns) / static_cast<double>(reads) / 1000.0;
}

double CacheStats::cpu_us_per_buffer() const { return CpuTimesOf(*this).TotalUsPerBuffer(reads); }

HistogramSnapshot CacheStats::all_latency() const {
  HistogramSnapshot all = raw_hit_latency;
  all.Merge(compressed_hit_latency);
  all.Merge(miss_latency);
  return all;
}

}  // namespace ccfs
