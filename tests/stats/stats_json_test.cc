#include "stats/stats_json.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "ccfs/options.h"
#include "ccfs/stats.h"
#include "stats/counters.h"
#include "stats/stats_test_util.h"

namespace ccfs {
namespace {

void ExpectSameHistogram(const HistogramSnapshot& a, const HistogramSnapshot& b) {
  EXPECT_EQ(a.count(), b.count());
  EXPECT_EQ(a.sum_ns(), b.sum_ns());
  EXPECT_EQ(a.min_ns(), b.min_ns());
  EXPECT_EQ(a.max_ns(), b.max_ns());
  EXPECT_EQ(a.Buckets(), b.Buckets());
}

TEST(StatsJsonTest, RoundTripsEveryCounterAndHistogram) {
  CacheStats s = DistinctStats();
  std::string text = RenderStatsJson(s);
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text.back(), '\n');
  CacheStats back;
  Status st = ParseStatsJson(text, &back);
  ASSERT_TRUE(st.ok()) << st.ToString();
  // Rendering what was parsed gives the same document: nothing was lost either way.
  EXPECT_EQ(RenderStatsJson(back), text);
  EXPECT_EQ(back.stall_ns, s.stall_ns);
  EXPECT_EQ(back.compressed_logical_bytes, s.compressed_logical_bytes);
  EXPECT_EQ(back.compressor, s.compressor);
  EXPECT_EQ(back.compression_level, -3);
  EXPECT_EQ(back.page_size, 16384u);
  ExpectSameHistogram(back.raw_hit_latency, s.raw_hit_latency);
  ExpectSameHistogram(back.compressed_hit_latency, s.compressed_hit_latency);
  ExpectSameHistogram(back.miss_latency, s.miss_latency);
  EXPECT_DOUBLE_EQ(back.us_per_buffer(), s.us_per_buffer());
}

TEST(StatsJsonTest, DocumentHasTheHeadlineKeysAUserReads) {
  CacheStats s = DistinctStats();
  auto j = nlohmann::json::parse(RenderStatsJson(s));
  for (const char* key : {"hit_ratio", "reads", "raw_hits", "compressed_hits", "misses",
                          "us_per_buffer", "compression_ratio", "compressed_percent",
                          "memory_bytes", "raw_bytes", "compressed_bytes", "evictions",
                          "stalls", "compressor", "compression_level", "page_size"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  EXPECT_DOUBLE_EQ(j["hit_ratio"].get<double>(), 0.9);
  EXPECT_EQ(j["compressor"], "zstd");
  EXPECT_NEAR(j["us_per_buffer"].get<double>(), s.us_per_buffer(), 0.001);
  EXPECT_NEAR(j["compression_ratio"].get<double>(), s.compression_ratio(), 0.001);
  for (const char* path : {"raw_hit", "compressed_hit", "miss", "all"}) {
    const auto& h = j["latency"][path];
    for (const char* key : {"count", "mean_us", "p50_us", "p90_us", "p99_us", "p999_us",
                            "max_us", "buckets"}) {
      EXPECT_TRUE(h.contains(key)) << path << "." << key;
    }
  }
  EXPECT_EQ(j["latency"]["all"]["count"], 1000);
  EXPECT_EQ(j["latency"]["miss"]["count"], 100);
  EXPECT_NEAR(j["latency"]["miss"]["p50_us"].get<double>(),
              s.miss_latency.PercentileUs(0.5), 0.001);
}

// Scripts and bench/bench_report.py read these keys; the order is what `cat stats.json` shows.
TEST(StatsJsonTest, TopLevelKeysAndTheirOrderAreStable) {
  auto j = nlohmann::ordered_json::parse(RenderStatsJson(DistinctStats()));
  std::vector<std::string> keys;
  for (const auto& item : j.items()) keys.push_back(item.key());
  const std::vector<std::string> expected = {
      "hit_ratio", "reads", "raw_hits", "compressed_hits", "misses", "us_per_buffer",
      "cpu_us_per_buffer", "compression_ratio", "compressed_percent", "raw_tier", "kernel_evict",
      "memory_bytes", "raw_bytes", "compressed_bytes",
      "raw_hit_bytes", "compressed_hit_bytes", "miss_bytes",
      "read_errors", "buffered_misses", "backing_reads", "readahead_pages", "readahead_hits",
      "readahead_wasted", "readahead_hit_bytes", "warm_pages", "persist_pages_written",
      "persist_pages_restored", "persist_pages_dropped_stale", "persist_errors", "page_writes",
      "invalidations",
      "evictions", "evict_sweeps", "compressions", "compressed_stored", "rejects", "zero_pages",
      "admission_drops", "incompressible_skips", "pressure_drops", "pass_through_pages",
      "sftp_reads", "sftp_read_bytes", "sftp_fallbacks", "sftp_connects", "compressed_evictions",
      "promotions", "wasted_compressions", "stalls", "stall_ns", "compress_ns", "decompress_ns",
      "cpu_request_threads_ns", "cpu_raw_hit_ns", "cpu_decompress_ns", "cpu_miss_ns",
      "cpu_compress_ns", "cpu_evictor_ns",
      "kernel_rerequests", "kernel_evictions", "kernel_kept_out", "kernel_retrieved", "kernel_watch_passes",
      "kernel_watch_checks", "kernel_watch_changes", "kernel_watch_ns", "attr_answers",
      "passthrough_opens",
      "demotions", "demote_drops",
      "mrc_samples", "mrc_drops", "split_changes",
      "raw_budget_bytes",
      "compressed_budget_bytes", "raw_pages", "free_frames", "compressed_pages",
      "compressed_logical_bytes", "pinned_pages", "pinned_bytes",
      "kernel_budget_bytes", "kernel_held_bytes", "compressor", "compression_level",
      "page_size", "compressed_percent_auto", "compressor_auto", "split_estimate", "cpu_us",
      "latency"};
  EXPECT_EQ(keys, expected);
  // Each counter is written under its own name with its own value.
  CacheStats s = DistinctStats();
  for (const CounterInfo& c : kCacheCounters) EXPECT_EQ(j[c.name], s.*c.field) << c.name;
}

TEST(StatsJsonTest, CpuTimeIsShownByPathAndPerBuffer) {
  CacheStats s;
  s.reads = 1000;
  s.cpu_request_threads_ns = 9000000;  // 9 ms on the request threads, 4 ms of it in the cache
  s.cpu_raw_hit_ns = 1000000;
  s.cpu_decompress_ns = 1000000;
  s.cpu_miss_ns = 2000000;
  s.cpu_compress_ns = 6000000;
  s.cpu_evictor_ns = 500000;
  auto j = nlohmann::json::parse(RenderStatsJson(s));
  EXPECT_DOUBLE_EQ(j["cpu_us"]["request"].get<double>(), 5000.0);
  EXPECT_DOUBLE_EQ(j["cpu_us"]["raw_hit"].get<double>(), 1000.0);
  EXPECT_DOUBLE_EQ(j["cpu_us"]["decompress"].get<double>(), 1000.0);
  EXPECT_DOUBLE_EQ(j["cpu_us"]["miss"].get<double>(), 2000.0);
  EXPECT_DOUBLE_EQ(j["cpu_us"]["compress"].get<double>(), 6000.0);
  EXPECT_DOUBLE_EQ(j["cpu_us"]["evictor"].get<double>(), 500.0);
  EXPECT_DOUBLE_EQ(j["cpu_us"]["total"].get<double>(), 15500.0);
  EXPECT_DOUBLE_EQ(j["cpu_us_per_buffer"].get<double>(), 15.5);

  // In the engine alone there are no request threads: no request path, nothing taken off.
  s.cpu_request_threads_ns = 0;
  j = nlohmann::json::parse(RenderStatsJson(s));
  EXPECT_DOUBLE_EQ(j["cpu_us"]["request"].get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(j["cpu_us"]["total"].get<double>(), 10500.0);
}

TEST(StatsJsonTest, TwoDocumentsGiveThePercentilesOfTheIntervalBetweenThem) {
  LatencyHistogram miss;
  for (int i = 0; i < 1000; ++i) miss.Record(500000);  // 500 µs early on
  CacheStats first;
  first.miss_latency = miss.Snapshot();
  std::string doc1 = RenderStatsJson(first);
  for (int i = 0; i < 1000; ++i) miss.Record(70000);  // 70 µs later
  CacheStats second;
  second.miss_latency = miss.Snapshot();
  std::string doc2 = RenderStatsJson(second);

  CacheStats a, b;
  ASSERT_TRUE(ParseStatsJson(doc1, &a).ok());
  ASSERT_TRUE(ParseStatsJson(doc2, &b).ok());
  HistogramSnapshot interval = b.miss_latency.Since(a.miss_latency);
  EXPECT_EQ(interval.count(), 1000u);
  EXPECT_NEAR(interval.PercentileUs(0.99), 70.0, 0.7);
  EXPECT_NEAR(interval.mean_us(), 70.0, 1e-9);
}

TEST(StatsJsonTest, BadDocumentsAreErrorsNamingTheKey) {
  CacheStats untouched;
  untouched.reads = 77;
  auto expect_error = [&](const std::string& text, const std::string& needle) {
    CacheStats s = untouched;
    Status st = ParseStatsJson(text, &s);
    EXPECT_EQ(st.code(), Status::Code::kInvalidArgument) << text;
    EXPECT_NE(st.message().find(needle), std::string::npos) << st.message();
    EXPECT_EQ(s.reads, 77u) << "a failed parse must leave the output alone";
  };
  expect_error("{\"reads\": 1,", "byte");
  expect_error("", "not valid JSON");
  expect_error("[1, 2]", "object");
  expect_error("{\"reads\": \"many\"}", "reads");
  expect_error("{\"misses\": -4}", "misses");
  expect_error("{\"compressor\": \"gzip\"}", "compressor");
  expect_error("{\"compression_level\": 1.5}", "compression_level");
  expect_error("{\"compression_level\": 18446744073709551615}", "compression_level");
  expect_error("{\"latency\": {\"miss\": {\"buckets\": [[1, 2, 3]]}}}", "latency.miss.buckets[0]");
  expect_error("{\"latency\": {\"raw_hit\": {\"sum_ns\": \"x\"}}}", "latency.raw_hit.sum_ns");
  expect_error("{\"latency\": 5}", "latency");
  expect_error("{\"compressor_auto\": 1}", "compressor_auto");
  expect_error("{\"split_estimate\": []}", "split_estimate");
  expect_error("{\"split_estimate\": {\"recommended_compressor\": \"gzip\"}}",
               "split_estimate.recommended_compressor");
  expect_error("{\"split_estimate\": {\"predicted\": [{\"compressed_percent\": 10}]}}",
               "split_estimate.predicted[0]");
}

// The split estimator's prediction goes out and comes back whole (ccfs stat reads it).
TEST(StatsJsonTest, SplitEstimateRoundTrips) {
  CacheStats s = DistinctStats();
  s.compressed_percent_auto = true;
  s.recommended_percent = 40;
  s.recommended_codec = static_cast<int>(CodecKind::kZstd);
  s.predicted_us_per_buffer = 12.5;
  s.predicted_trip_us = 87.25;
  s.predicted = {{0, 0, 0.5, 50.0}, {40, static_cast<int>(CodecKind::kZstd), 0.75, 30.25}};
  const std::string text = RenderStatsJson(s);
  CacheStats back;
  ASSERT_TRUE(ParseStatsJson(text, &back).ok());
  EXPECT_TRUE(back.compressed_percent_auto);
  EXPECT_FALSE(back.compressor_auto);
  EXPECT_EQ(back.recommended_percent, 40);
  EXPECT_EQ(back.recommended_codec, static_cast<int>(CodecKind::kZstd));
  EXPECT_DOUBLE_EQ(back.predicted_trip_us, 87.25);
  ASSERT_EQ(back.predicted.size(), 2u);
  EXPECT_EQ(back.predicted[1].percent, 40);
  EXPECT_DOUBLE_EQ(back.predicted[1].us_per_buffer, 30.25);
  EXPECT_EQ(RenderStatsJson(back), text);
}

TEST(StatsJsonTest, MissingCountersReadAsZero) {
  CacheStats s;
  s.stalls = 5;
  ASSERT_TRUE(ParseStatsJson("{\"reads\": 10, \"misses\": 10}", &s).ok());
  EXPECT_EQ(s.reads, 10u);
  EXPECT_EQ(s.misses, 10u);
  EXPECT_EQ(s.stalls, 0u);
  EXPECT_EQ(s.miss_latency.count(), 0u);
}

}  // namespace
}  // namespace ccfs
