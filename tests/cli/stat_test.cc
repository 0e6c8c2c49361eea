// `ccfs stat` against a fake mount (a directory with a hand-made .ccfs/stats.json).
#include <sys/inotify.h>
#include <poll.h>

#include <chrono>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "ccfs/options.h"
#include "ccfs/stats.h"
#include "cli/fake_mount.h"
#include "stats/fake_powercap.h"

namespace ccfs {
namespace {

using testing::CcfsProcess;
using testing::FakeMount;
using testing::FakePowercap;
using testing::RunCcfs;
using testing::Lines;

CacheStats Steady() {
  CacheStats s;
  s.reads = 1000;
  s.raw_hits = 800;
  s.compressed_hits = 150;
  s.misses = 50;
  s.raw_bytes = 192ull << 20;
  s.compressed_bytes = 64ull << 20;
  s.compressed_logical_bytes = 128ull << 20;
  s.compressor = static_cast<int>(CodecKind::kZstd);
  s.compressed_percent = 25;
  s.page_size = 8192;
  return s;
}

// --splits prints the estimator's whole prediction once, marking the split in force and the
// recommended one; without a prediction, or without a recommendation beside it, it says what the
// estimator waits for (through stats.json, as a mount publishes it).
TEST(StatCommandTest, SplitsPrintsThePredictionOnce) {
  FakeMount mount;
  CacheStats s = Steady();
  s.compressed_percent_auto = true;
  s.split_waiting = split_waiting::kReuses;
  s.split_waiting_have = 100;
  s.split_waiting_need = 256;
  mount.SetStats(s);
  auto r = RunCcfs({"stat", mount.path(), "--splits"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("compressed_percent = auto, now 25"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("no prediction yet: waiting for the hit-ratio curve to see pages read "
                       "again (100 of 256 reuses sampled)"),
            std::string::npos)
      << r.out;

  // Predictions, held back from a recommendation while the curve is young.
  s.split_waiting = split_waiting::kCurveSpan;
  s.split_waiting_have = 5000;
  s.split_waiting_need = 20000;
  s.predicted = {{0, static_cast<int>(CodecKind::kZstd), 0.5, 50.0},
                 {25, static_cast<int>(CodecKind::kZstd), 0.6, 40.0}};
  mount.SetStats(s);
  r = RunCcfs({"stat", mount.path(), "--splits"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find("<- recommended"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("no recommendation yet: waiting for the hit-ratio curve to span the "
                       "largest candidate cache twice over (5000 of 20000 reads)"),
            std::string::npos)
      << r.out;

  s.split_waiting.clear();
  s.recommended_percent = 40;
  s.recommended_codec = static_cast<int>(CodecKind::kZstd);
  s.predicted = {{0, static_cast<int>(CodecKind::kZstd), 0.5, 50.0},
                 {25, static_cast<int>(CodecKind::kZstd), 0.6, 40.0},
                 {40, static_cast<int>(CodecKind::kZstd), 0.7, 30.0}};
  mount.SetStats(s);
  r = RunCcfs({"stat", mount.path(), "--splits"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 5u) << r.out;
  EXPECT_NE(lines[3].find("in force"), std::string::npos) << r.out;
  EXPECT_NE(lines[4].find("40  zstd    70.0     30.00  <- recommended"), std::string::npos) << r.out;
}

TEST(StatCommandTest, PrintsOneLinePerIntervalUnderAHeaderEveryTwentyLines) {
  FakeMount mount;
  mount.SetStats(Steady());
  auto r = RunCcfs({"stat", mount.path(), "--interval", "0.01", "--count", "21", "--powercap",
                    mount.path() + "/no-powercap"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 24u) << r.out;
  EXPECT_EQ(lines[0], "no RAPL: CPU time only");
  EXPECT_NE(lines[1].find("hit%"), std::string::npos) << lines[1];
  EXPECT_NE(lines[1].find("us/buf cpu/buf"), std::string::npos) << lines[1];
  EXPECT_EQ(lines[1].find("mJ/buf"), std::string::npos) << "no energy column without RAPL";
  EXPECT_EQ(lines[22], lines[1]) << "the header repeats after 20 lines";
  EXPECT_EQ(lines[2].rfind("   mount ", 0), 0u) << "the since-mount line first\n" << r.out;
  for (size_t i = 3; i < lines.size(); ++i) {
    EXPECT_EQ(lines[i].find("no RAPL"), std::string::npos) << "the note comes once, line " << i;
    EXPECT_EQ(lines[i].find("mount "), std::string::npos) << "one since-mount line, line " << i;
  }
  // Nothing was read during these intervals; the tier sizes are those of the mount.
  EXPECT_NE(lines[3].find(" 192MiB "), std::string::npos) << lines[3];
  EXPECT_NE(lines[3].find(" 64.0MiB "), std::string::npos) << lines[3];
  EXPECT_NE(lines[3].find("2.00"), std::string::npos) << lines[3];
  EXPECT_NE(lines[3].find("   -     -     -     -"), std::string::npos) << "no reads: no shares";
}

// The first line sums up the mount since it started, at once (vmstat's first line), so
// `--count 1` answers "how has this mount done" without waiting an interval.
// Pinned files' pages get a line of their own when there are any, and none when there are not.
TEST(StatCommandTest, PinnedPagesGetALineWhenThereAreAny) {
  FakeMount mount;
  CacheStats s = Steady();
  mount.SetStats(s);
  const std::vector<std::string> args = {"stat", mount.path(), "--count", "1", "--powercap",
                                         mount.path() + "/no-powercap"};
  auto r = RunCcfs(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find("pin:"), std::string::npos) << r.out;
  s.pinned_pages = 128;
  s.pinned_bytes = 1ull << 20;
  mount.SetStats(s);
  r = RunCcfs(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("pin: 128 pages of pinned files cached, taking 1MiB"), std::string::npos)
      << r.out;
}

TEST(StatCommandTest, FirstLineSummarizesTheMountSinceItStarted) {
  FakeMount mount;
  mount.SetStats(Steady(), /*uptime_s=*/100);
  const auto start = std::chrono::steady_clock::now();
  auto r = RunCcfs({"stat", mount.path(), "--interval", "60", "--count", "1", "--powercap",
                    mount.path() + "/no-powercap"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30))
      << "the since-mount line does not wait for an interval";
  auto lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 3u) << r.out;
  EXPECT_EQ(lines[0], "no RAPL: CPU time only");
  // 1000 reads over 100 s; 800 raw hits, 150 compressed, 50 misses.
  EXPECT_EQ(lines[2].rfind("   mount    10.0  95.0  80.0  15.0   5.0 ", 0), 0u)
      << lines[1] << "\n" << lines[2];

  r = RunCcfs({"stat", mount.path(), "--count", "1", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 1u) << r.out;
  auto j = nlohmann::json::parse(lines[0]);
  EXPECT_EQ(j["since_mount"], true);
  EXPECT_EQ(j["reads"], 1000);
  EXPECT_DOUBLE_EQ(j["interval_s"].get<double>(), 100.0);
  EXPECT_DOUBLE_EQ(j["reads_per_s"].get<double>(), 10.0);
  EXPECT_DOUBLE_EQ(j["hit_pct"].get<double>(), 95.0);
}

TEST(StatCommandTest, WithRaplTheLinesShowMillijoulesPerBuffer) {
  FakeMount mount;
  mount.SetStats(Steady());
  FakePowercap powercap;
  powercap.Zone("intel-rapl:0", "package-0", 1000);
  auto r = RunCcfs({"stat", mount.path(), "--interval", "0.01", "--count", "2", "--powercap",
                    powercap.root()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 4u) << r.out;
  EXPECT_EQ(lines[0].rfind("energy: RAPL package-0, the whole machine's", 0), 0u) << lines[0];
  EXPECT_NE(lines[1].find("us/buf cpu/buf  mJ/buf"), std::string::npos) << lines[1];
  EXPECT_EQ(lines[2].size(), lines[1].size()) << "columns line up under the header\n" << r.out;
  EXPECT_EQ(lines[3].size(), lines[1].size()) << "columns line up under the header\n" << r.out;
}

// Waits until the ccfs process has opened and closed stats.json (its first read).
bool WaitForStatsRead(int inotify_fd) {
  pollfd p{inotify_fd, POLLIN, 0};
  if (poll(&p, 1, 10000) != 1) return false;
  alignas(inotify_event) char buf[4096];
  return read(inotify_fd, buf, sizeof(buf)) > 0;
}

TEST(StatCommandTest, JsonLinesDescribeTheIntervalBetweenTwoReads) {
  FakeMount mount;
  LatencyHistogram raw, miss;
  for (int i = 0; i < 1000; ++i) miss.Record(500000);  // a slow cold start: 500 µs misses
  CacheStats before = Steady();
  before.reads = 1000;
  before.raw_hits = before.compressed_hits = 0;
  before.misses = 1000;
  before.miss_latency = miss.Snapshot();
  mount.SetStats(before, /*uptime_s=*/10);

  FakePowercap powercap;
  powercap.Zone("intel-rapl:0", "package-0", 5000000);

  int in = inotify_init1(IN_CLOEXEC);
  ASSERT_GE(in, 0);
  ASSERT_GE(inotify_add_watch(in, (mount.path() + "/.ccfs").c_str(), IN_CLOSE_NOWRITE), 0);
  CcfsProcess stat({"stat", mount.path(), "--interval", "1", "--count", "2", "--json",
                    "--powercap", powercap.root()});
  ASSERT_TRUE(WaitForStatsRead(in)) << "ccfs stat never read stats.json";
  close(in);

  // During the interval: 900 raw hits at 3 µs, 100 misses at 80 µs.
  CacheStats after = before;
  for (int i = 0; i < 900; ++i) raw.Record(3000);
  for (int i = 0; i < 100; ++i) miss.Record(80000);
  after.reads += 1000;
  after.raw_hits += 900;
  after.misses += 100;
  after.stalls = 4;
  after.raw_hit_latency = raw.Snapshot();
  after.miss_latency = miss.Snapshot();
  // 5 ms of CPU on the request threads (1 ms of it in raw hits, 2 ms in misses); 3 ms compressing.
  after.cpu_request_threads_ns = before.cpu_request_threads_ns + 5000000;
  after.cpu_raw_hit_ns = 1000000;
  after.cpu_miss_ns = 2000000;
  after.cpu_compress_ns = 3000000;
  mount.SetStats(after);
  powercap.SetEnergy("intel-rapl:0", 7000000);  // 2 J in the interval

  auto r = stat.Wait();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 2u) << r.out;
  // First the mount so far: the cold start alone.
  auto mount_line = nlohmann::json::parse(lines[0]);
  EXPECT_EQ(mount_line["since_mount"], true);
  EXPECT_EQ(mount_line["reads"], 1000);
  EXPECT_DOUBLE_EQ(mount_line["miss_pct"].get<double>(), 100.0);
  EXPECT_DOUBLE_EQ(mount_line["interval_s"].get<double>(), 10.0);
  EXPECT_TRUE(mount_line["joules"].is_null()) << "no energy reading covers the whole mount";
  auto j = nlohmann::json::parse(lines[1]);
  EXPECT_EQ(j["since_mount"], false);
  EXPECT_EQ(j["reads"], 1000);
  EXPECT_DOUBLE_EQ(j["hit_pct"].get<double>(), 90.0);
  EXPECT_DOUBLE_EQ(j["raw_pct"].get<double>(), 90.0);
  EXPECT_DOUBLE_EQ(j["miss_pct"].get<double>(), 10.0);
  EXPECT_NEAR(j["us_per_buffer"].get<double>(), (900 * 3.0 + 100 * 80.0) / 1000, 1e-6);
  EXPECT_NEAR(j["p50_us"].get<double>(), 3.0, 0.03);
  EXPECT_NEAR(j["p99_us"].get<double>(), 80.0, 0.8) << "the cold misses are not in this interval";
  EXPECT_EQ(j["stalls"], 4);
  EXPECT_NEAR(j["reads_per_s"].get<double>(), 1000.0 / j["interval_s"].get<double>(), 1e-6);
  EXPECT_GT(j["interval_s"].get<double>(), 0.5);
  EXPECT_NEAR(j["cpu_us_per_buffer"].get<double>(), 8.0, 1e-9);  // 8 ms over 1000 reads
  EXPECT_NEAR(j["cpu_us_per_buffer_by_path"]["request"].get<double>(), 2.0, 1e-9);
  EXPECT_NEAR(j["cpu_us_per_buffer_by_path"]["raw_hit"].get<double>(), 1.0, 1e-9);
  EXPECT_NEAR(j["cpu_us_per_buffer_by_path"]["miss"].get<double>(), 2.0, 1e-9);
  EXPECT_NEAR(j["cpu_us_per_buffer_by_path"]["compress"].get<double>(), 3.0, 1e-9);
  EXPECT_NEAR(j["joules"].get<double>(), 2.0, 1e-9);
  EXPECT_NEAR(j["joules_per_buffer"].get<double>(), 0.002, 1e-12);
}

TEST(StatCommandTest, CtrlCEndsTheViewWithExitZero) {
  FakeMount mount;
  mount.SetStats(Steady());
  CcfsProcess stat({"stat", mount.path(), "--interval", "0.05"});
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  // The energy note, the header, the since-mount line.
  while (Lines(stat.out()).size() < 3 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_GE(Lines(stat.out()).size(), 3u) << "no line printed";
  stat.Signal(SIGINT);
  auto r = stat.Wait(std::chrono::seconds(5));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.err.empty()) << r.err;
}

TEST(StatCommandTest, DirectoryThatIsNotAMountIsAClearErrorWithExitOne) {
  std::string dir = ::testing::TempDir();
  auto r = RunCcfs({"stat", dir, "--count", "1"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("not a ccfs mount"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(dir), std::string::npos) << r.err;

  r = RunCcfs({"stat", "/nonexistent/mount/point"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("/nonexistent/mount/point"), std::string::npos) << r.err;
}

TEST(StatCommandTest, GarbledStatsFileIsAnErrorNamingTheFile) {
  FakeMount mount;
  testing::WriteWholeFile(mount.stats(), "{\"reads\": \"lots\"}");
  auto r = RunCcfs({"stat", mount.path(), "--count", "1"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(mount.stats()), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("reads"), std::string::npos) << r.err;
}

TEST(StatCommandTest, BadArgumentsAreRefused) {
  FakeMount mount;
  mount.SetStats(Steady());
  for (const char* bad : {"0", "-1", "abc"}) {
    auto r = RunCcfs({"stat", mount.path(), "--interval", bad});
    EXPECT_NE(r.exit_code, 0) << bad;
    EXPECT_NE(r.err.find("interval"), std::string::npos) << r.err;
  }
  auto r = RunCcfs({"stat", mount.path(), "--count", "-2"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("count"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace ccfs
