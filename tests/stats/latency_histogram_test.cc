#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "ccfs/stats.h"

namespace ccfs {
namespace {

// Samples spread evenly in log space across 100 ns .. 10 s, the range page latencies span (a
// memcpy hit to a stalled device).
std::vector<uint64_t> LogUniformSamples(size_t n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> exp10(2.0, 10.0);
  std::vector<uint64_t> v(n);
  for (auto& x : v) x = static_cast<uint64_t>(std::pow(10.0, exp10(rng)));
  return v;
}

// Nearest-rank percentile of sorted samples, in µs.
double ExactPercentileUs(std::vector<uint64_t> sorted, double q) {
  std::sort(sorted.begin(), sorted.end());
  size_t rank = static_cast<size_t>(std::ceil(q * sorted.size()));
  rank = std::clamp<size_t>(rank, 1, sorted.size());
  return sorted[rank - 1] / 1000.0;
}

void ExpectPercentilesWithinOnePercent(const HistogramSnapshot& h,
                                       const std::vector<uint64_t>& samples) {
  for (double q : {0.0, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999, 0.9999, 1.0}) {
    double exact = ExactPercentileUs(samples, q);
    double got = h.PercentileUs(q);
    EXPECT_LE(std::abs(got - exact), 0.01 * exact) << "q=" << q << " exact=" << exact
                                                   << "us got=" << got << "us";
  }
}

TEST(LatencyHistogramTest, PercentilesAreWithinOnePercentAcross100nsTo10s) {
  LatencyHistogram h;
  std::vector<uint64_t> samples = LogUniformSamples(200000, 42);
  for (uint64_t s : samples) h.Record(s);
  HistogramSnapshot snap = h.Snapshot();
  ASSERT_EQ(snap.count(), samples.size());
  ExpectPercentilesWithinOnePercent(snap, samples);
  EXPECT_EQ(snap.min_ns(), *std::min_element(samples.begin(), samples.end()));
  EXPECT_EQ(snap.max_ns(), *std::max_element(samples.begin(), samples.end()));
  uint64_t sum = 0;
  for (uint64_t s : samples) sum += s;
  EXPECT_EQ(snap.sum_ns(), sum);
  EXPECT_DOUBLE_EQ(snap.mean_us(), static_cast<double>(sum) / samples.size() / 1000.0);
}

TEST(LatencyHistogramTest, EveryBucketHoldsItsValuesAndIsNarrowerThanOnePercent) {
  std::mt19937_64 rng(1);
  for (int i = 0; i < 100000; ++i) {
    uint64_t v = rng() >> (rng() % 64);
    int b = LatencyHistogram::BucketOf(v);
    ASSERT_GE(b, 0);
    ASSERT_LT(b, LatencyHistogram::kBuckets);
    uint64_t upper = LatencyHistogram::BucketUpper(b);
    ASSERT_GE(upper, v);
    uint64_t lower = b == 0 ? 0 : LatencyHistogram::BucketUpper(b - 1) + 1;
    ASSERT_LE(lower, v);
    ASSERT_LE(static_cast<double>(upper - lower), std::max(0.0, v / 100.0)) << v;
  }
  EXPECT_EQ(LatencyHistogram::BucketOf(UINT64_MAX), LatencyHistogram::kBuckets - 1);
  EXPECT_EQ(LatencyHistogram::BucketUpper(LatencyHistogram::kBuckets - 1), UINT64_MAX);
  EXPECT_EQ(LatencyHistogram::BucketOf(0), 0);
}

TEST(LatencyHistogramTest, EmptyHistogramReportsZeros) {
  LatencyHistogram h;
  HistogramSnapshot s = h.Snapshot();
  EXPECT_EQ(s.count(), 0u);
  EXPECT_EQ(s.min_ns(), 0u);
  EXPECT_EQ(s.max_ns(), 0u);
  EXPECT_EQ(s.PercentileUs(0.5), 0.0);
  EXPECT_EQ(s.mean_us(), 0.0);
  EXPECT_TRUE(s.Buckets().empty());
  EXPECT_EQ(HistogramSnapshot().PercentileUs(0.99), 0.0);
}

TEST(LatencyHistogramTest, SinceGivesThePercentilesOfTheInterval) {
  LatencyHistogram h;
  // A slow first phase (device reads) then a fast one (hits): the interval must show only hits.
  std::vector<uint64_t> slow = LogUniformSamples(5000, 2);
  for (uint64_t& s : slow) s += 1'000'000;
  for (uint64_t s : slow) h.Record(s);
  HistogramSnapshot before = h.Snapshot();
  std::vector<uint64_t> fast(5000);
  std::mt19937 rng(3);
  for (auto& f : fast) f = 2000 + rng() % 8000;
  for (uint64_t f : fast) h.Record(f);
  HistogramSnapshot interval = h.Snapshot().Since(before);
  ASSERT_EQ(interval.count(), fast.size());
  for (double q : {0.5, 0.9, 0.99}) {
    double exact = ExactPercentileUs(fast, q);
    EXPECT_NEAR(interval.PercentileUs(q), exact, 0.01 * exact) << q;
  }
  uint64_t sum = 0;
  for (uint64_t f : fast) sum += f;
  EXPECT_EQ(interval.sum_ns(), sum);
  // A "before" that is not an ancestor (daemon restarted) never yields wrapped-around counts.
  HistogramSnapshot nonsense = before.Since(h.Snapshot());
  EXPECT_EQ(nonsense.count(), 0u);
  EXPECT_EQ(nonsense.sum_ns(), 0u);
}

TEST(LatencyHistogramTest, MergeAddsCountsAndKeepsExtremes) {
  LatencyHistogram a, b;
  std::vector<uint64_t> sa = LogUniformSamples(3000, 4), sb = LogUniformSamples(7000, 5);
  for (uint64_t s : sa) a.Record(s);
  for (uint64_t s : sb) b.Record(s);
  HistogramSnapshot m;  // an empty snapshot merges like a zero
  m.Merge(a.Snapshot());
  m.Merge(b.Snapshot());
  std::vector<uint64_t> all = sa;
  all.insert(all.end(), sb.begin(), sb.end());
  EXPECT_EQ(m.count(), all.size());
  EXPECT_EQ(m.min_ns(), *std::min_element(all.begin(), all.end()));
  EXPECT_EQ(m.max_ns(), *std::max_element(all.begin(), all.end()));
  ExpectPercentilesWithinOnePercent(m, all);
}

TEST(LatencyHistogramTest, BucketsRoundTripThroughFromBuckets) {
  LatencyHistogram h;
  std::vector<uint64_t> samples = LogUniformSamples(10000, 6);
  for (uint64_t s : samples) h.Record(s);
  HistogramSnapshot s = h.Snapshot();
  HistogramSnapshot back =
      HistogramSnapshot::FromBuckets(s.sum_ns(), s.min_ns(), s.max_ns(), s.Buckets());
  EXPECT_EQ(back.count(), s.count());
  EXPECT_EQ(back.Buckets(), s.Buckets());
  for (double q : {0.5, 0.99, 0.999}) EXPECT_EQ(back.PercentileUs(q), s.PercentileUs(q));
}

TEST(LatencyHistogramTest, ConcurrentRecordersLoseNothing) {
  LatencyHistogram h;
  constexpr int kThreads = 4, kEach = 50000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&h, t] {
      for (int i = 0; i < kEach; ++i) h.Record(100 + t * 1000 + i % 997);
    });
  }
  // Snapshots taken meanwhile are self-consistent: the count matches the buckets.
  for (int i = 0; i < 20; ++i) {
    HistogramSnapshot s = h.Snapshot();
    uint64_t in_buckets = 0;
    for (const auto& [upper, n] : s.Buckets()) in_buckets += n;
    EXPECT_EQ(in_buckets, s.count());
  }
  for (auto& t : threads) t.join();
  HistogramSnapshot s = h.Snapshot();
  EXPECT_EQ(s.count(), static_cast<uint64_t>(kThreads) * kEach);
  EXPECT_EQ(s.min_ns(), 100u);
  EXPECT_EQ(s.max_ns(), 100u + 3 * 1000 + 996);
}

TEST(CacheStatsTest, UsPerBufferIsTotalLatencyOfAllPathsOverReads) {
  LatencyHistogram raw, comp, miss;
  for (int i = 0; i < 80; ++i) raw.Record(2000);     // 2 µs hits
  for (int i = 0; i < 15; ++i) comp.Record(10000);   // 10 µs decompressions
  for (int i = 0; i < 5; ++i) miss.Record(100000);   // 100 µs device reads
  CacheStats s;
  s.reads = 100;
  s.raw_hits = 80;
  s.compressed_hits = 15;
  s.misses = 5;
  s.raw_hit_latency = raw.Snapshot();
  s.compressed_hit_latency = comp.Snapshot();
  s.miss_latency = miss.Snapshot();
  EXPECT_DOUBLE_EQ(s.us_per_buffer(), (80 * 2.0 + 15 * 10.0 + 5 * 100.0) / 100);
  EXPECT_DOUBLE_EQ(s.hit_ratio(), 0.95);
  HistogramSnapshot all = s.all_latency();
  EXPECT_EQ(all.count(), 100u);
  EXPECT_NEAR(all.PercentileUs(0.5), 2.0, 0.02);
  EXPECT_NEAR(all.PercentileUs(0.9), 10.0, 0.1);
  EXPECT_NEAR(all.PercentileUs(0.99), 100.0, 1.0);
  EXPECT_EQ(CacheStats().us_per_buffer(), 0.0);
}

}  // namespace
}  // namespace ccfs
