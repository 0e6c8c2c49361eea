// The counter table (stats/counters.h) and Minus: every CacheStats counter is in the table once,
// and the difference of two snapshots subtracts counts and keeps sizes.
#include "stats/counters.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "ccfs/stats.h"

namespace ccfs {
namespace {

TEST(CacheStatsTest, TableNamesEveryCounterOnceWithHelp) {
  std::set<std::string> names;
  CacheStats s;
  uint64_t v = 1;
  for (const CounterInfo& c : kCacheCounters) {
    EXPECT_TRUE(names.insert(c.name).second) << c.name << " listed twice";
    EXPECT_NE(std::string(c.help), "") << c.name;
    EXPECT_EQ(s.*c.field, 0u) << c.name << " starts at zero";
    s.*c.field = v++;  // distinct members: a row pointing at another's field would clash below
  }
  v = 1;
  for (const CounterInfo& c : kCacheCounters) EXPECT_EQ(s.*c.field, v++) << c.name;
  // Every uint64_t of the struct is a counter: 76 counters today.
  EXPECT_EQ(names.size(), 76u);
  EXPECT_TRUE(names.count("reads") && names.count("compressed_logical_bytes"));
}

TEST(CacheStatsTest, RequestCpuIsTheRequestThreadsLessTheReadPathsWhichNeverExceedThem) {
  CacheStats s;
  s.reads = 100;
  s.cpu_request_threads_ns = 10000;
  s.cpu_raw_hit_ns = 2000;
  s.cpu_decompress_ns = 3000;
  s.cpu_miss_ns = 1000;
  s.cpu_compress_ns = 7000;
  CpuTimes t = CpuTimesOf(s);
  EXPECT_EQ(t.ns[CpuTimes::kRequest], 4000u);
  EXPECT_EQ(t.total_ns(), 17000u) << "the request threads' time once, plus the workers'";
  EXPECT_DOUBLE_EQ(t.TotalUsPerBuffer(s.reads), 0.17);
  EXPECT_DOUBLE_EQ(t.UsPerBuffer(CpuTimes::kCompress, s.reads), 0.07);
  // The read paths are estimates: over a short interval they may exceed what the threads measured
  // (6000 against 3000 here). They then share the measured time in proportion, request none.
  s.cpu_request_threads_ns = 3000;
  t = CpuTimesOf(s);
  EXPECT_EQ(t.ns[CpuTimes::kRequest], 0u);
  EXPECT_EQ(t.ns[CpuTimes::kRawHit], 1000u);
  EXPECT_EQ(t.ns[CpuTimes::kDecompress], 1500u);
  EXPECT_EQ(t.ns[CpuTimes::kMiss], 500u);
  EXPECT_EQ(t.total_ns(), 3000u + 7000u) << "still the request threads' time, plus the workers'";
  // The engine alone has no request threads: the read paths' estimates are all there is.
  s.cpu_request_threads_ns = 0;
  t = CpuTimesOf(s);
  EXPECT_EQ(t.ns[CpuTimes::kRequest], 0u);
  EXPECT_EQ(t.ns[CpuTimes::kRawHit], 2000u);
  EXPECT_EQ(CpuTimes().TotalUsPerBuffer(0), 0.0);
}

TEST(CacheStatsTest, MinusSubtractsCountsAndKeepsSizesAndSettings) {
  CacheStats before, after;
  uint64_t i = 0;
  for (const CounterInfo& c : kCacheCounters) {
    before.*c.field = 1000 + i;
    after.*c.field = 5000 + 3 * i;
    ++i;
  }
  after.compressed_percent = 30;
  after.page_size = 8192;
  before.compressed_percent = 10;
  LatencyHistogram h;
  for (int k = 0; k < 10; ++k) h.Record(1000);
  before.miss_latency = h.Snapshot();
  for (int k = 0; k < 5; ++k) h.Record(90000);
  after.miss_latency = h.Snapshot();

  CacheStats d = Minus(after, before);
  i = 0;
  for (const CounterInfo& c : kCacheCounters) {
    if (IsCount(c.kind)) {
      EXPECT_EQ(d.*c.field, 4000 + 2 * i) << c.name;
    } else {
      EXPECT_EQ(d.*c.field, after.*c.field) << c.name << " is a size: the later value";
    }
    ++i;
  }
  EXPECT_EQ(d.compressed_percent, 30);
  EXPECT_EQ(d.page_size, 8192u);
  EXPECT_EQ(d.miss_latency.count(), 5u);
  EXPECT_NEAR(d.miss_latency.mean_us(), 90.0, 1.0);
  EXPECT_EQ(d.raw_hit_latency.count(), 0u);
  // The kinds as documented: the read outcomes and events are counts; tier sizes are not.
  EXPECT_EQ(d.misses, after.misses - before.misses);
  EXPECT_EQ(d.stall_ns, after.stall_ns - before.stall_ns);
  EXPECT_EQ(d.memory_bytes, after.memory_bytes);
  EXPECT_EQ(d.free_frames, after.free_frames);
}

}  // namespace
}  // namespace ccfs
