// The Prometheus exposition: every counter of the table under its conventional name with HELP
// and TYPE, the read histograms cumulative with +Inf = _count and _sum in seconds, and label
// values escaped. (The mount test in tests/fs/metrics_test.cc checks the text with Prometheus's
// own parser; these tests check the values.)
#include "stats/prometheus.h"

#include <cmath>
#include <cstdint>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ccfs/codec.h"
#include "ccfs/stats.h"
#include "stats/counters.h"
#include "stats/request_stats.h"
#include "stats/stats_test_util.h"

namespace ccfs {
namespace {

using ::testing::HasSubstr;

// The exposition read back: samples by series ("name{labels}" as written) and, per family, its
// TYPE; a family with HELP or TYPE twice, or a sample before its family's TYPE, fails the test.
struct Exposition {
  std::map<std::string, std::string> samples;
  std::map<std::string, std::string> types;
  std::vector<std::string> series;  // in order
};

// The family a sample belongs to: histograms add _bucket, _sum, _count to the family's name.
std::string FamilyOf(const std::string& name, const std::map<std::string, std::string>& types) {
  for (const char* suffix : {"_bucket", "_sum", "_count"}) {
    std::string s(suffix);
    if (name.size() > s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0) {
      std::string base = name.substr(0, name.size() - s.size());
      auto it = types.find(base);
      if (it != types.end() && it->second == "histogram") return base;
    }
  }
  return name;
}

Exposition Read(const std::string& text) {
  Exposition e;
  std::set<std::string> helped;
  std::string current;  // the family of the last TYPE line
  std::stringstream in(text);
  EXPECT_EQ(text.back(), '\n');
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("# HELP ", 0) == 0) {
      std::string name = line.substr(7, line.find(' ', 7) - 7);
      EXPECT_TRUE(helped.insert(name).second) << "HELP twice: " << name;
      EXPECT_GT(line.size(), 7 + name.size() + 1) << "empty HELP: " << line;
      continue;
    }
    if (line.rfind("# TYPE ", 0) == 0) {
      std::istringstream words(line.substr(7));
      std::string name, type;
      words >> name >> type;
      EXPECT_EQ(e.types.count(name), 0u) << "TYPE twice: " << name;
      EXPECT_EQ(helped.count(name), 1u) << "TYPE without HELP before it: " << name;
      e.types[name] = type;
      current = name;
      continue;
    }
    size_t space = line.rfind(' ');
    std::string series = line.substr(0, space);
    std::string name = series.substr(0, series.find('{'));
    EXPECT_EQ(FamilyOf(name, e.types), current) << "sample outside its family: " << line;
    EXPECT_EQ(e.samples.count(series), 0u) << "series twice: " << series;
    e.samples[series] = line.substr(space + 1);
    e.series.push_back(series);
  }
  return e;
}

double Number(const Exposition& e, const std::string& series) {
  auto it = e.samples.find(series);
  if (it == e.samples.end()) {
    ADD_FAILURE() << "no sample " << series;
    return -1;
  }
  return std::stod(it->second);
}

DaemonIdentity Daemon() {
  DaemonIdentity d;
  d.pid = 42;
  d.dataset = "/srv/data";
  d.mountpoint = "/mnt/ccfs";
  d.uptime_s = 12.5;
  d.rss_bytes = 24 << 20;
  d.open_fds = 37;
  d.max_fds = 4096;
  d.start_time_s = 1.7e9;
  return d;
}

TEST(PrometheusTest, EveryCounterUnderItsNameWithHelpAndType) {
  const CacheStats s = DistinctStats();
  const Exposition e = Read(RenderPrometheus(s, Daemon(), "1.2.3"));
  for (const CounterInfo& c : kCacheCounters) {
    SCOPED_TRACE(c.name);
    if (c.kind == CounterKind::kOutcome) continue;
    if (c.field == &CacheStats::raw_hit_bytes || c.field == &CacheStats::compressed_hit_bytes ||
        c.field == &CacheStats::miss_bytes) {
      continue;  // the paths of ccfs_read_bytes_total (ConventionalNames)
    }
    const std::string name = PrometheusName(c);
    ASSERT_EQ(e.types.count(name), 1u) << name;
    EXPECT_EQ(e.types.at(name), IsCount(c.kind) ? "counter" : "gauge");
    if (IsCount(c.kind)) {
      EXPECT_THAT(name, ::testing::EndsWith("_total"));
    }
    const double want = std::string(c.name).ends_with("_ns") ? (s.*c.field) / 1e9
                                                              : static_cast<double>(s.*c.field);
    EXPECT_DOUBLE_EQ(Number(e, name), want);
  }
  // The Outcome rows other than reads (their sum) are the paths of ccfs_reads_total.
  EXPECT_EQ(e.types.at("ccfs_reads_total"), "counter");
  double paths = 0;
  for (const CounterInfo& c : kCacheCounters) {
    if (c.kind != CounterKind::kOutcome || std::string(c.name) == "reads") continue;
    bool found = false;
    for (const auto& [series, value] : e.samples) {
      if (series.rfind("ccfs_reads_total{", 0) == 0 && std::stod(value) == s.*c.field) found = true;
    }
    EXPECT_TRUE(found) << c.name << " is not a path of ccfs_reads_total";
    paths += 1;
  }
  EXPECT_EQ(paths, 3);
}

TEST(PrometheusTest, ConventionalNames) {
  CacheStats s = DistinctStats();
  s.raw_hits = 7;
  s.compressed_hits = 5;
  s.misses = 3;
  s.stall_ns = 1'500'000'000;
  s.compressed_bytes = 1000;
  s.compressed_logical_bytes = 2500;
  const Exposition e = Read(RenderPrometheus(s, Daemon(), "1.2.3"));
  EXPECT_EQ(Number(e, "ccfs_reads_total{path=\"raw\"}"), 7);
  EXPECT_EQ(Number(e, "ccfs_reads_total{path=\"compressed\"}"), 5);
  EXPECT_EQ(Number(e, "ccfs_reads_total{path=\"miss\"}"), 3);
  // Bytes by the same paths, one family; the read-ahead share of them apart, not a fourth path.
  EXPECT_EQ(e.types.at("ccfs_read_bytes_total"), "counter");
  EXPECT_EQ(Number(e, "ccfs_read_bytes_total{path=\"raw\"}"), s.raw_hit_bytes);
  EXPECT_EQ(Number(e, "ccfs_read_bytes_total{path=\"compressed\"}"), s.compressed_hit_bytes);
  EXPECT_EQ(Number(e, "ccfs_read_bytes_total{path=\"miss\"}"), s.miss_bytes);
  EXPECT_EQ(Number(e, "ccfs_readahead_hit_bytes_total"), s.readahead_hit_bytes);
  EXPECT_EQ(e.types.count("ccfs_raw_hit_bytes_total"), 0u);
  EXPECT_EQ(Number(e, "ccfs_stall_seconds_total"), 1.5);
  EXPECT_EQ(e.types.at("ccfs_stalls_total"), "counter");
  EXPECT_EQ(Number(e, "ccfs_evictions_total"), s.evictions);
  EXPECT_EQ(Number(e, "ccfs_compressions_total"), s.compressions);
  EXPECT_EQ(Number(e, "ccfs_rejects_total"), s.rejects);
  EXPECT_EQ(Number(e, "ccfs_compress_seconds_total"), s.compress_ns / 1e9);
  EXPECT_EQ(e.types.at("ccfs_memory_bytes"), "gauge");
  EXPECT_EQ(Number(e, "ccfs_memory_bytes"), s.memory_bytes);
  EXPECT_EQ(Number(e, "ccfs_raw_budget_bytes"), s.raw_budget_bytes);
  EXPECT_EQ(Number(e, "ccfs_compressed_budget_bytes"), s.compressed_budget_bytes);
  EXPECT_EQ(Number(e, "ccfs_raw_pages"), s.raw_pages);
  EXPECT_EQ(Number(e, "ccfs_compressed_pages"), s.compressed_pages);
  EXPECT_EQ(Number(e, "ccfs_compression_ratio"), 2.5);
  EXPECT_EQ(Number(e, "ccfs_compressed_percent"), 40);
  EXPECT_DOUBLE_EQ(Number(e, "ccfs_compressed_share"), 0.4);
  EXPECT_EQ(Number(e, "ccfs_page_size_bytes"), 16384);
  EXPECT_EQ(Number(e, "ccfs_compression_level"), -3);
  EXPECT_EQ(Number(e, "ccfs_compressor_info{compressor=\"zstd\"}"), 1);
  EXPECT_EQ(Number(e, "ccfs_build_info{version=\"1.2.3\"}"), 1);
  EXPECT_EQ(Number(e, "ccfs_mount_info{dataset=\"/srv/data\",mountpoint=\"/mnt/ccfs\"}"), 1);
  EXPECT_EQ(Number(e, "ccfs_uptime_seconds"), 12.5);
  EXPECT_EQ(e.types.at("process_resident_memory_bytes"), "gauge");
  EXPECT_EQ(Number(e, "process_resident_memory_bytes"), 24 << 20);
  EXPECT_EQ(e.types.at("process_open_fds"), "gauge");
  EXPECT_EQ(Number(e, "process_open_fds"), 37);
  EXPECT_EQ(e.types.at("process_max_fds"), "gauge");
  EXPECT_EQ(Number(e, "process_max_fds"), 4096);
  EXPECT_EQ(Number(e, "process_start_time_seconds"), 1.7e9);
  // The names the table would spell in nanoseconds are exported in seconds only.
  for (const auto& [name, type] : e.types) {
    EXPECT_THAT(name, ::testing::Not(HasSubstr("_ns"))) << name;
    if (name.rfind("process_", 0) == 0) continue;  // the process collector's names
    EXPECT_THAT(name, ::testing::StartsWith("ccfs_"));
  }
}

TEST(PrometheusTest, ReadHistogramIsCumulativeWithInfEqualToCount) {
  CacheStats s;
  LatencyHistogram raw, miss;
  // Exact below 256ns; 800ns and 3us fall in buckets that end well inside their bounds.
  for (uint64_t ns :
       std::vector<uint64_t>{100, 100, 100, 800, 800, 3'000, 2'000'000'000, 20'000'000'000}) {
    raw.Record(ns);
  }
  miss.Record(60'000);
  s.raw_hit_latency = raw.Snapshot();
  s.miss_latency = miss.Snapshot();
  const Exposition e = Read(RenderPrometheus(s, Daemon(), "v"));
  ASSERT_EQ(e.types.at("ccfs_read_seconds"), "histogram");
  auto bucket = [&](const std::string& path, const std::string& le) {
    return Number(e, "ccfs_read_seconds_bucket{path=\"" + path + "\",le=\"" + le + "\"}");
  };
  EXPECT_EQ(bucket("raw", "2.5e-07"), 3);
  EXPECT_EQ(bucket("raw", "5e-07"), 3);
  EXPECT_EQ(bucket("raw", "1e-06"), 5);
  EXPECT_EQ(bucket("raw", "2.5e-06"), 5);
  EXPECT_EQ(bucket("raw", "5e-06"), 6);
  EXPECT_EQ(bucket("raw", "1"), 6);
  EXPECT_EQ(bucket("raw", "2.5"), 7);
  EXPECT_EQ(bucket("raw", "10"), 7);
  EXPECT_EQ(bucket("raw", "+Inf"), 8);
  EXPECT_EQ(Number(e, "ccfs_read_seconds_count{path=\"raw\"}"), 8);
  EXPECT_DOUBLE_EQ(Number(e, "ccfs_read_seconds_sum{path=\"raw\"}"),
                   (300 + 1600 + 3000 + 2e9 + 2e10) / 1e9);
  EXPECT_EQ(bucket("miss", "5e-05"), 0);
  EXPECT_EQ(bucket("miss", "0.0001"), 1);
  EXPECT_EQ(bucket("compressed", "+Inf"), 0);
  EXPECT_EQ(Number(e, "ccfs_read_seconds_sum{path=\"compressed\"}"), 0);

  // Every path: one bucket per bound plus +Inf, in ascending order, never decreasing.
  for (const std::string path : {"raw", "compressed", "miss"}) {
    SCOPED_TRACE(path);
    std::vector<double> les, counts;
    const std::string prefix = "ccfs_read_seconds_bucket{path=\"" + path + "\",le=\"";
    for (const std::string& series : e.series) {
      if (series.rfind(prefix, 0) != 0) continue;
      std::string le = series.substr(prefix.size(), series.size() - prefix.size() - 2);
      les.push_back(le == "+Inf" ? INFINITY : std::stod(le));
      counts.push_back(Number(e, series));
    }
    ASSERT_EQ(les.size(), std::size(kLatencyBoundsNs) + 1);
    for (size_t i = 0; i < std::size(kLatencyBoundsNs); ++i) {
      EXPECT_DOUBLE_EQ(les[i], kLatencyBoundsNs[i] / 1e9);
    }
    for (size_t i = 1; i < les.size(); ++i) {
      EXPECT_LT(les[i - 1], les[i]);
      EXPECT_LE(counts[i - 1], counts[i]);
    }
    EXPECT_EQ(counts.back(), Number(e, "ccfs_read_seconds_count{path=\"" + path + "\"}"));
  }
}

TEST(PrometheusTest, RequestsByOpAreCountedAndCumulativeAndOnlyOpsAskedFor) {
  RequestStats requests({"lookup", "read", "mknod"});
  requests.Record(1, 250);             // on a bound: counted at it
  requests.Record(1, 251);             // just above: the next bound
  requests.Record(1, 20'000);          // 25us
  requests.Record(1, 20'000'000'000);  // above the last bound: +Inf only
  requests.Record(0, 3'000);
  const Exposition e = Read(RenderPrometheus(CacheStats{}, Daemon(), "v", requests.Snapshot()));
  EXPECT_EQ(e.types.at("ccfs_fuse_requests_total"), "counter");
  EXPECT_EQ(e.types.at("ccfs_fuse_request_seconds"), "histogram");
  EXPECT_EQ(Number(e, "ccfs_fuse_requests_total{op=\"read\"}"), 4);
  EXPECT_EQ(Number(e, "ccfs_fuse_requests_total{op=\"lookup\"}"), 1);
  EXPECT_EQ(e.samples.count("ccfs_fuse_requests_total{op=\"mknod\"}"), 0u)
      << "an op never asked for has no series";
  auto bucket = [&](const std::string& op, const std::string& le) {
    return Number(e, "ccfs_fuse_request_seconds_bucket{op=\"" + op + "\",le=\"" + le + "\"}");
  };
  EXPECT_EQ(bucket("read", "2.5e-07"), 1);
  EXPECT_EQ(bucket("read", "5e-07"), 2);
  EXPECT_EQ(bucket("read", "1e-05"), 2);
  EXPECT_EQ(bucket("read", "2.5e-05"), 3);
  EXPECT_EQ(bucket("read", "10"), 3);
  EXPECT_EQ(bucket("read", "+Inf"), 4);
  EXPECT_EQ(bucket("lookup", "2.5e-06"), 0);
  EXPECT_EQ(bucket("lookup", "5e-06"), 1);
  EXPECT_EQ(Number(e, "ccfs_fuse_request_seconds_count{op=\"read\"}"), 4);
  EXPECT_DOUBLE_EQ(Number(e, "ccfs_fuse_request_seconds_sum{op=\"read\"}"),
                   (250 + 251 + 20'000 + 20e9) / 1e9);

  // The engine alone (no requests): no ccfs_fuse_* families at all.
  const Exposition engine = Read(RenderPrometheus(CacheStats{}, Daemon(), "v"));
  EXPECT_EQ(engine.types.count("ccfs_fuse_requests_total"), 0u);
  EXPECT_EQ(engine.types.count("ccfs_fuse_request_seconds"), 0u);
}

TEST(PrometheusTest, LabelValuesAreEscapedAndUtf8) {
  DaemonIdentity d = Daemon();
  d.dataset = "/srv/a \"quoted\" \\ back\nslash";
  d.mountpoint = std::string("/mnt/bad\xff") + "byte";
  const Exposition e = Read(RenderPrometheus(CacheStats{}, d, "v"));
  EXPECT_EQ(Number(e, "ccfs_mount_info{dataset=\"/srv/a \\\"quoted\\\" \\\\ back\\nslash\","
                      "mountpoint=\"/mnt/bad\xEF\xBF\xBD" "byte\"}"),
            1);
}

TEST(PrometheusTest, EmptyStatsRender) {
  const Exposition e = Read(RenderPrometheus(CacheStats{}, DaemonIdentity{}, ""));
  EXPECT_EQ(Number(e, "ccfs_compression_ratio"), 1);
  EXPECT_EQ(Number(e, "ccfs_read_seconds_bucket{path=\"miss\",le=\"+Inf\"}"), 0);
  EXPECT_EQ(Number(e, "ccfs_build_info{version=\"\"}"), 1);
}

}  // namespace
}  // namespace ccfs
