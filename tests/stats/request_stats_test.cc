// RequestStats: a value lands in the bucket of the first bound at or above it, and counts from
// many threads at once (on several shards) add up exactly.
#include "stats/request_stats.h"

#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace ccfs {
namespace {

TEST(RequestStatsTest, BucketIsTheFirstBoundAtOrAboveTheValue) {
  EXPECT_EQ(RequestStats::BucketOf(0), 0u);
  EXPECT_EQ(RequestStats::BucketOf(250), 0u);
  EXPECT_EQ(RequestStats::BucketOf(251), 1u);
  EXPECT_EQ(RequestStats::BucketOf(20'000), 6u);  // <= 25us
  EXPECT_EQ(RequestStats::BucketOf(10'000'000'000), kLatencyBuckets - 2);
  EXPECT_EQ(RequestStats::BucketOf(10'000'000'001), kLatencyBuckets - 1);
  EXPECT_EQ(RequestStats::BucketOf(UINT64_MAX), kLatencyBuckets - 1);
}

TEST(RequestStatsTest, CountsFromManyThreadsAddUpPerKind) {
  RequestStats requests({"lookup", "read"});
  std::vector<std::thread> threads;
  for (int t = 0; t < 12; ++t) {
    threads.emplace_back([&requests, t] {
      for (int i = 0; i < 1000; ++i) requests.Record(t % 2, 1'000 * (t % 2 + 1));
    });
  }
  for (std::thread& t : threads) t.join();
  const std::vector<RequestStats::Kind> kinds = requests.Snapshot();
  ASSERT_EQ(kinds.size(), 2u);
  EXPECT_EQ(kinds[0].name, "lookup");
  EXPECT_EQ(kinds[0].count(), 6'000u);
  EXPECT_EQ(kinds[0].sum_ns, 6'000'000u);
  EXPECT_EQ(kinds[0].buckets[RequestStats::BucketOf(1'000)], 6'000u);
  EXPECT_EQ(kinds[1].name, "read");
  EXPECT_EQ(kinds[1].count(), 6'000u);
  EXPECT_EQ(kinds[1].sum_ns, 12'000'000u);
  EXPECT_EQ(kinds[1].buckets[RequestStats::BucketOf(2'000)], 6'000u);
}

}  // namespace
}  // namespace ccfs
