#include "stats/stat_interval.h"

#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "ccfs/codec.h"
#include "ccfs/stats.h"

namespace ccfs {
namespace {

// Stats after `raw`, `comp`, `miss` reads taking 2, 20 and 100 µs, on top of `base`.
CacheStats After(const CacheStats& base, LatencyHistogram* rh, LatencyHistogram* ch,
                 LatencyHistogram* mh, int raw, int comp, int miss) {
  CacheStats s = base;
  for (int i = 0; i < raw; ++i) rh->Record(2000);
  for (int i = 0; i < comp; ++i) ch->Record(20000);
  for (int i = 0; i < miss; ++i) mh->Record(100000);
  s.raw_hits += raw;
  s.compressed_hits += comp;
  s.misses += miss;
  s.reads += raw + comp + miss;
  s.raw_hit_latency = rh->Snapshot();
  s.compressed_hit_latency = ch->Snapshot();
  s.miss_latency = mh->Snapshot();
  return s;
}

TEST(StatIntervalTest, FiguresDescribeOnlyTheInterval) {
  LatencyHistogram rh, ch, mh;
  CacheStats start;
  // Before the interval: a cold cache, all misses.
  CacheStats before = After(start, &rh, &ch, &mh, 0, 0, 1000);
  before.evictions = 500;
  before.compressions = 400;
  before.stalls = 7;
  before.readahead_pages = 100;
  before.readahead_hits = 50;
  // The interval: 2 s with 700 raw hits, 200 compressed hits, 100 misses.
  CacheStats after = After(before, &rh, &ch, &mh, 700, 200, 100);
  after.evictions = 700;
  after.compressions = 500;
  after.stalls = 9;
  after.readahead_pages = 500;
  after.readahead_hits = 350;
  after.readahead_wasted = 20;
  after.raw_bytes = 3 << 20;
  after.compressed_bytes = 1 << 20;
  after.compressed_logical_bytes = 2 << 20;

  StatInterval iv = ComputeStatInterval(before, after, 2.0);
  EXPECT_EQ(iv.reads, 1000u);
  EXPECT_DOUBLE_EQ(iv.reads_per_s, 500.0);
  EXPECT_DOUBLE_EQ(iv.hit_pct, 90.0);
  EXPECT_DOUBLE_EQ(iv.raw_pct, 70.0);
  EXPECT_DOUBLE_EQ(iv.compressed_pct, 20.0);
  EXPECT_DOUBLE_EQ(iv.miss_pct, 10.0);
  EXPECT_DOUBLE_EQ(iv.us_mean, (700 * 2.0 + 200 * 20.0 + 100 * 100.0) / 1000);
  EXPECT_NEAR(iv.us_p50, 2.0, 0.02);
  EXPECT_NEAR(iv.us_p99, 100.0, 1.0);  // the cold misses before the interval do not count twice
  EXPECT_DOUBLE_EQ(iv.evictions_per_s, 100.0);
  EXPECT_DOUBLE_EQ(iv.compressions_per_s, 50.0);
  EXPECT_EQ(iv.stalls, 2u);
  EXPECT_DOUBLE_EQ(iv.readahead_per_s, 200.0);
  EXPECT_DOUBLE_EQ(iv.readahead_hits_per_s, 150.0);
  EXPECT_DOUBLE_EQ(iv.readahead_wasted_per_s, 10.0);
  EXPECT_EQ(iv.raw_bytes, 3u << 20);
  EXPECT_DOUBLE_EQ(iv.compression_ratio, 2.0);

  std::string line = FormatStatLine(iv, 0, false);
  EXPECT_NE(line.find(" 500.0 "), std::string::npos) << line;
  EXPECT_NE(line.find(" 90.0 "), std::string::npos) << line;
  EXPECT_NE(line.find(" 3.00MiB "), std::string::npos) << line;
  EXPECT_NE(line.find(" 2.00 "), std::string::npos) << line;
  EXPECT_EQ(line.back(), '\n');
  EXPECT_EQ(line.size(), StatHeader(false).size()) << "columns line up under the header\n"
                                              << StatHeader(false) << line;

  auto j = nlohmann::json::parse(FormatStatJson(iv, 1700000000));
  EXPECT_EQ(j["reads"], 1000);
  EXPECT_DOUBLE_EQ(j["hit_pct"].get<double>(), 90.0);
  EXPECT_DOUBLE_EQ(j["miss_pct"].get<double>(), 10.0);
  EXPECT_EQ(j["stalls"], 2);
  EXPECT_DOUBLE_EQ(j["readahead_per_s"].get<double>(), 200.0);
  EXPECT_EQ(j["unix_time"], 1700000000);
  EXPECT_NEAR(j["p99_us"].get<double>(), 100.0, 1.0);
}

TEST(StatIntervalTest, IdleIntervalShowsDashesNotNaN) {
  CacheStats s;
  s.reads = s.misses = 10;
  StatInterval iv = ComputeStatInterval(s, s, 1.0);
  EXPECT_EQ(iv.reads, 0u);
  EXPECT_EQ(iv.hit_pct, 0.0);
  std::string line = FormatStatLine(iv, 0, false);
  EXPECT_EQ(line.find("nan"), std::string::npos) << line;
  EXPECT_NE(line.find(" - "), std::string::npos) << line;
  EXPECT_EQ(line.size(), StatHeader(false).size());
}

TEST(StatIntervalTest, RestartedDaemonDoesNotShowWrappedCounters) {
  CacheStats big, small;
  big.reads = big.raw_hits = 1000000;
  big.evictions = 5000;
  small.reads = small.misses = 10;
  StatInterval iv = ComputeStatInterval(big, small, 1.0);
  EXPECT_EQ(iv.reads, 10u);
  EXPECT_DOUBLE_EQ(iv.miss_pct, 100.0);
  EXPECT_EQ(iv.evictions_per_s, 0.0);
}

TEST(StatIntervalTest, BigFiguresKeepTheirColumns) {
  StatInterval iv;
  iv.reads = 1;
  iv.reads_per_s = 123456789.0;
  iv.us_mean = iv.us_p50 = 2.5e6;
  iv.us_p99 = 12345.0;
  iv.raw_bytes = 3ull << 40;
  iv.compressed_bytes = 1023;
  iv.evictions_per_s = 99999.0;
  iv.stalls = 123456;
  iv.hit_pct = 100.0;
  std::string line = FormatStatLine(iv, 0, false);
  EXPECT_EQ(line.size(), StatHeader(false).size()) << StatHeader(false) << line;
  EXPECT_NE(line.find("123.5M"), std::string::npos) << line;
  EXPECT_NE(line.find(" 3.00TiB "), std::string::npos) << line;
  EXPECT_NE(line.find(" 1023B "), std::string::npos) << line;
  EXPECT_NE(line.find("2.50s"), std::string::npos) << line;
}

// The split in force (a for auto), the estimator's recommendation and the prediction at each.
TEST(StatIntervalTest, ShowsTheSplitAndTheRecommendedOne) {
  CacheStats before, after;
  after.reads = 100;
  after.raw_hits = 100;
  after.compressed_percent = 25;
  after.compressed_percent_auto = true;
  after.compressor = static_cast<int>(CodecKind::kLz4);
  after.predicted_us_per_buffer = 31.0;
  after.recommended_percent = 40;
  after.recommended_codec = static_cast<int>(CodecKind::kZstd);
  after.predicted = {{25, static_cast<int>(CodecKind::kLz4), 0.5, 31.0},
                     {40, static_cast<int>(CodecKind::kLz4), 0.6, 29.0},
                     {40, static_cast<int>(CodecKind::kZstd), 0.7, 22.0}};
  StatInterval iv = ComputeStatInterval(before, after, 1.0);
  EXPECT_EQ(iv.split, "a25lz4");
  EXPECT_EQ(iv.recommended, "40zstd");
  EXPECT_DOUBLE_EQ(iv.recommended_us, 22.0);
  const std::string line = FormatStatLine(iv, 0, false);
  EXPECT_EQ(line.size(), StatHeader(false).size()) << StatHeader(false) << line;
  EXPECT_NE(line.find("a25lz4"), std::string::npos) << line;
  EXPECT_NE(line.find("40zstd"), std::string::npos) << line;
  // No prediction yet: dashes.
  after.recommended_percent = -1;
  after.predicted_us_per_buffer = 0;
  after.compressed_percent_auto = false;
  iv = ComputeStatInterval(before, after, 1.0);
  EXPECT_EQ(iv.split, "25lz4");
  EXPECT_EQ(iv.recommended, "");
  EXPECT_EQ(FormatStatLine(iv, 0, false).size(), StatHeader(false).size());
}

}  // namespace
}  // namespace ccfs
