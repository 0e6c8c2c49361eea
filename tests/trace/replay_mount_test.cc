// Replay through a real mount: the daemon counts exactly the pages the client read, writes leave
// the data set as it was, and the transport (the FUSE trip, the kernel's hits) is measured in the
// run and charged by the model as its raw-tier mode routes reads.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cache/model_facts.h"
#include "datagen/mkdata.h"
#include "model/cache_model.h"
#include "testing/command.h"
#include "testing/mount_fixture.h"
#include "trace/memory_cgroup.h"
#include "trace/replay.h"
#include "util/sanitizers.h"

namespace ccfs {
namespace {

class ReplayMountTest : public testing::MountTest {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(MakeData());
    // raw_tier = daemon: the daemon counts every page the client reads.
    MountOrDie({"-o", "memory=4MiB,compressed_percent=0,raw_tier=daemon"});
  }

  void MakeData(uint64_t size = 16ull << 20) {
    std::filesystem::remove_all(ds_.data());
    MkdataOptions mk;
    mk.dir = ds_.data();
    mk.size = size;
    ASSERT_TRUE(ParseMix("text=50,db=50", &mk.mix).ok());
    std::vector<KindReport> report;
    Status s = MakeDataset(mk, &report);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }

  ReplayOptions Options() {
    ReplayOptions options;
    options.mode = DetectReplayMode(ds_.mnt());
    options.target = ds_.mnt();
    options.dist.kind = DistSpec::Kind::kUniform;
    options.ops = 6000;
    options.warmup = 4000;
    options.threads = 2;
    return options;
  }
};

TEST_F(ReplayMountTest, DaemonCountsTheClientsPages) {
  ASSERT_EQ(DetectReplayMode(ds_.mnt()), ReplayMode::kMount);
  ReplayResult r;
  Status s = RunReplay(Options(), &r);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_TRUE(r.have_counters);
  EXPECT_EQ(r.mode, "mount");
  EXPECT_EQ(r.reads, 6000u);
  EXPECT_EQ(r.cache_reads, r.reads);
  EXPECT_EQ(r.raw_hits + r.compressed_hits + r.misses, r.cache_reads);
  EXPECT_EQ(r.memory_bytes, 4u << 20);
  EXPECT_NEAR(r.hit_ratio, r.model.hit_ratio, 0.05);
}

TEST_F(ReplayMountTest, WritesLeaveTheDataSetAsItWas) {
  std::string before = testing::ReadWholeFile(ds_.DataPath("db-000.db"));
  ReplayOptions options = Options();
  options.write_ratio = 0.3;
  ReplayResult r;
  Status s = RunReplay(options, &r);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_GT(r.writes, 1000u);
  EXPECT_EQ(testing::ReadWholeFile(ds_.DataPath("db-000.db")), before);
}

// raw_tier = daemon: every read crosses FUSE. The trip is the reader's mean less the daemon's, and
// the model charges it once per read on top of the thesis's sum.
TEST_F(ReplayMountTest, TheTripIsMeasuredAndChargedOnEveryRead) {
  ReplayOptions options = Options();
  options.threads = 1;
  ReplayResult r;
  Status s = RunReplay(options, &r);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_TRUE(r.have_counters);
  EXPECT_FALSE(r.kernel_raw_tier);
  EXPECT_GT(r.costs.trip_us, 0.5) << "a FUSE round trip is not free";
  EXPECT_NEAR(r.costs.trip_us, r.us_per_buffer - r.cache_us_per_buffer, 1e-6);
  // The same sums in another order (the trip times each path's share, or once): equal to within
  // rounding, relative to their size (an absolute 1e-9 failed once by 1.0005e-9 at 132 µs).
  auto close = [](double v) { return 1e-9 * std::max(1.0, std::abs(v)); };
  EXPECT_NEAR(r.model.trip_us_per_buffer, r.costs.trip_us, close(r.costs.trip_us));
  // The same inputs with no trip: the thesis's figure, exactly the trip less.
  ModelInputs in;
  in.memory_bytes = r.memory_bytes;
  in.page_size = r.page_size;
  in.dataset_pages = r.dataset_pages;
  in.compressed_fraction = 0;
  in.ratio = r.compression_ratio;
  in.dist = options.dist;
  in.cache_replacement = Replacement::kLru;  // as replay reads the daemon's tiers
  in.raw_replacement = Replacement::kGclock;
  in.clock = cache::EngineClockFacts();
  in.window.before = static_cast<double>(r.warmup_ops);
  in.window.measured = static_cast<double>(r.ops);
  in.costs = r.costs;
  in.costs.trip_us = 0;
  EXPECT_NEAR(r.model.us_per_buffer, EvaluateModel(in).us_per_buffer + r.costs.trip_us,
              close(r.model.us_per_buffer));
  nlohmann::json j = nlohmann::json::parse(ReplayResultJson(r));
  EXPECT_EQ(j["costs_us"]["trip"].get<double>(), r.costs.trip_us);
  EXPECT_TRUE(j["costs_us"]["kernel_hit"].is_null());
  EXPECT_TRUE(j["kernel_cached_bytes"].is_null()) << "raw_tier = daemon: no kernel raw level";
}

// raw_tier = kernel, through the ccfs binary (the reader joins a memory cgroup of the mount's
// size for the run, which this test process should not). The reads the kernel held are timed
// apart: they are the kernel's hits the daemon's counters imply, they cost less than a read that
// reaches the daemon, and the model charges them no trip.
// The cgroup must hold the daemon's own memory and its tiers beside the kernel's pages (the
// daemon's is anonymous and cannot be reclaimed), so the mount is given 24 MiB over 48 MiB of data.
class ReplayKernelMountTest : public ReplayMountTest {
 protected:
  // Removes the cgroup `ccfs replay` (pid) made, moving what is left in it to the root; true if
  // there was one.
  static bool RemoveReplayCgroup(pid_t pid) {
    const std::string dir =
        std::string(MemoryCgroup::kRoot) + "/ccfs-replay-" + std::to_string(pid);
    if (pid <= 0 || access(dir.c_str(), F_OK) != 0) return false;
    std::ifstream tasks(dir + "/cgroup.procs");
    for (std::string task; std::getline(tasks, task);) {
      std::ofstream(std::string(MemoryCgroup::kRoot) + "/cgroup.procs") << task << "\n";
    }
    // (The replay's guardian may have removed it meanwhile.)
    EXPECT_TRUE(rmdir(dir.c_str()) == 0 || errno == ENOENT) << dir << ": " << strerror(errno);
    return true;
  }

  // Whether process `pid` is in a cgroup `ccfs replay` made.
  static bool InAReplayCgroup(pid_t pid) {
    std::string text = testing::ReadWholeFile("/proc/" + std::to_string(pid) + "/cgroup");
    return text.find("ccfs-replay-") != std::string::npos;
  }

  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(MakeData(48ull << 20));
    MountOrDie({"-o", "memory=24MiB,compressed_percent=50,raw_tier=kernel"});
  }
};

// A memory too small for the daemon is refused before anything joins the cgroup, naming the key:
// the cgroup's OOM killer would otherwise end the daemon, and the mount with it.
class ReplayKernelTinyMountTest : public ReplayMountTest {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(MakeData());
    MountOrDie({"-o", "memory=4MiB,compressed_percent=75,raw_tier=kernel"});
  }
};

TEST_F(ReplayKernelTinyMountTest, MemoryTheDaemonCannotFitInIsRefused) {
  testing::CommandResult run = testing::RunCcfs(
      {"replay", ds_.mnt(), "--dist", "pareto", "--ops", "2000", "--json", "--no-progress"}, 60);
  EXPECT_NE(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("memory = 4 MiB is too small"), std::string::npos) << run.output;
  // The daemon is untouched: still serving, and still in no cgroup of replay's making.
  EXPECT_FALSE(ds_.Stats().is_discarded());
  std::ifstream cgroups("/proc/" + std::to_string(ds_.pid()) + "/cgroup");
  std::string text((std::istreambuf_iterator<char>(cgroups)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text.find("ccfs-replay-"), std::string::npos) << text;
}

TEST_F(ReplayKernelMountTest, KernelHitsAreTimedApartAndPayNoTrip) {
#if defined(CCFS_SANITIZED)
  // The run holds reader and daemon to the mount's 8 MiB in a memory cgroup; a sanitizer build's
  // daemon alone is ~128 MiB resident, so the cgroup's OOM killer would end it, not the test.
  GTEST_SKIP() << "memory cgroup of 8 MiB: too small for a sanitizer build's daemon";
#endif
  testing::CommandResult run = testing::RunCcfs(
      {"replay", ds_.mnt(), "--dist", "pareto", "--ops", "6000", "--warmup", "6000", "--json",
       "--no-progress"},
      120);
  // A replay killed (the timeout, or the OOM killer of its own cgroup) leaves its cgroup, with the
  // daemon inside: take the daemon out and remove it, whatever the run's outcome.
  const bool left = RemoveReplayCgroup(run.pid);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_FALSE(left) << "a replay that ended cleanly removes its own cgroup";
  nlohmann::json j = nlohmann::json::parse(run.out);
  ASSERT_EQ(j["raw_tier"], "kernel");
  const uint64_t kernel_hits = j["kernel_hits"].get<uint64_t>();
  ASSERT_GT(kernel_hits, 600u) << run.out;
  ASSERT_FALSE(j["costs_us"]["kernel_hit"].is_null())
      << "cachestat(2) refused (Linux < 6.5?): " << run.out;
  const double kernel_hit = j["costs_us"]["kernel_hit"].get<double>();
  const double trip = j["costs_us"]["trip"].get<double>();
  const double daemon_us = j["cache_us_per_buffer"].get<double>();
  EXPECT_GT(kernel_hit, 0.0);
  EXPECT_GT(trip, 0.5);
  EXPECT_LT(kernel_hit, trip + daemon_us) << "a kernel hit costs less than a trip to the daemon";
  // The reader's mean is the kernel's hits and the daemon's reads (trip included), weighted.
  const double reads = j["reads"].get<double>();
  const double reached = reads - static_cast<double>(kernel_hits);
  const double seen_mean = (kernel_hits * kernel_hit + reached * (trip + daemon_us)) / reads;
  EXPECT_NEAR(seen_mean, j["us_per_buffer"].get<double>(), 0.1 * j["us_per_buffer"].get<double>());
  // The kernel's pages of the data set were counted: some, within the cgroup of the mount's memory.
  ASSERT_TRUE(j["kernel_cached_bytes"].is_number()) << run.out;
  EXPECT_GT(j["kernel_cached_bytes"].get<double>(), 0.0);
  EXPECT_LE(j["kernel_cached_bytes"].get<double>(), 24.0 * 1024 * 1024);
}

// A replay ended by a signal runs no destructor: its cgroup's guardian takes the daemon back out
// and removes the cgroup, and the next replay removes cgroups left by replays whose guardian died
// with them. Without both, the mount's daemon stayed held to the replay's limit until someone
// removed the cgroup by hand.
TEST_F(ReplayKernelMountTest, AReplayKilledLeavesNoCgroupAndNoDaemonInIt) {
#if defined(CCFS_SANITIZED)
  GTEST_SKIP() << "memory cgroup of 24 MiB: too small for a sanitizer build's daemon";
#endif
  // Left by a replay that no longer runs (the pid of a process reaped here) with its guardian.
  const pid_t gone = testing::Spawn({"true"}, -1, -1);
  ASSERT_GT(gone, 0);
  ASSERT_EQ(testing::Reap(gone, 10), 0);
  const std::string left =
      std::string(MemoryCgroup::kRoot) + "/ccfs-replay-" + std::to_string(gone);
  ASSERT_EQ(mkdir(left.c_str(), 0755), 0) << left << ": " << strerror(errno);

  std::vector<std::string> argv = {CCFS_BINARY, "replay", ds_.mnt(), "--dist", "uniform",
                                   "--ops", "100000000", "--no-progress"};
  const pid_t replay = testing::Spawn(argv, -1, -1);
  ASSERT_GT(replay, 0);
  const std::string mine =
      std::string(MemoryCgroup::kRoot) + "/ccfs-replay-" + std::to_string(replay);
  bool joined = false;
  for (int i = 0; i < 200 && !joined; ++i) {
    joined = InAReplayCgroup(ds_.pid());
    if (!joined) usleep(50 * 1000);
  }
  EXPECT_TRUE(joined) << "the replay never moved the daemon into its cgroup";
  EXPECT_NE(access(left.c_str(), F_OK), 0) << left << ": the replay did not remove it";
  usleep(300 * 1000);  // reading, the daemon in the cgroup
  ASSERT_EQ(kill(replay, SIGKILL), 0);
  EXPECT_EQ(testing::Reap(replay, 10), 128 + SIGKILL);

  bool removed = false;
  for (int i = 0; i < 100 && !removed; ++i) {
    removed = access(mine.c_str(), F_OK) != 0;
    if (!removed) usleep(50 * 1000);
  }
  if (!removed) RemoveReplayCgroup(replay);
  rmdir(left.c_str());
  EXPECT_TRUE(removed) << mine << " is still there 5 s after its replay was killed";
  EXPECT_FALSE(InAReplayCgroup(ds_.pid())) << "the daemon is still held in the replay's cgroup";
  EXPECT_FALSE(ds_.Stats().is_discarded()) << "the mount still serves";
}

}  // namespace
}  // namespace ccfs
