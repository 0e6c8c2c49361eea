// Replay's CPU and energy per buffer: the engine's CPU time by path over the measured phase, this
// process's CPU time, and joules per buffer where a powercap tree has RAPL (a fake one here),
// or the reason there are none.
#include <filesystem>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "datagen/mkdata.h"
#include "stats/fake_powercap.h"
#include "trace/replay.h"

namespace ccfs {
namespace {

namespace fs = std::filesystem;

class ReplayCpuTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string((fs::path(::testing::TempDir()) / "ccfs_replay_cpu_test_data").string());
    fs::remove_all(*dir_);
    MkdataOptions mk;
    mk.dir = *dir_;
    mk.size = 16ull << 20;  // 2048 pages of 8 KiB
    ASSERT_TRUE(ParseMix("text=50,db=50", &mk.mix).ok());
    std::vector<KindReport> report;
    Status s = MakeDataset(mk, &report);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  static void TearDownTestSuite() {
    fs::remove_all(*dir_);
    delete dir_;
  }

  ReplayOptions Uniform(int compressed_percent) {
    ReplayOptions options;
    options.mode = ReplayMode::kEngine;
    options.target = *dir_;
    options.engine.memory = 4ull << 20;  // a quarter of the data set, before compression
    options.engine.compressed_percent = compressed_percent;
    options.engine.compress_threads = 1;
    options.dist.kind = DistSpec::Kind::kUniform;
    options.ops = 8000;
    options.warmup = 4000;
    options.seed = 3;
    return options;
  }

  static std::string* dir_;
};
std::string* ReplayCpuTest::dir_ = nullptr;

TEST_F(ReplayCpuTest, ReportsTheCacheCpuByPathAndThisProcessCpu) {
  ReplayOptions options = Uniform(50);
  options.powercap_root = *dir_ + "/no-powercap";
  ReplayResult r;
  Status s = RunReplay(options, &r);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_TRUE(r.have_counters);
  ASSERT_GT(r.delta.compressions, 0u);
  EXPECT_GT(r.cpu.ns[4], 0u) << "compress";
  EXPECT_GT(r.cpu.ns[3], 0u) << "miss";
  EXPECT_EQ(r.cpu.ns[0], 0u) << "no request threads in the engine";
  EXPECT_DOUBLE_EQ(r.cpu_us_per_buffer, r.cpu.TotalUsPerBuffer(r.ops));
  EXPECT_GT(r.process_cpu_us_per_buffer, 0.0);
  EXPECT_EQ(r.joules_per_buffer, -1);
  EXPECT_EQ(r.energy_note, "no RAPL: CPU time only");

  auto j = nlohmann::json::parse(ReplayResultJson(r));
  EXPECT_DOUBLE_EQ(j["cpu_us_per_buffer"].get<double>(), r.cpu_us_per_buffer);
  double sum = 0;
  for (const char* path : CpuTimes::kNames) {
    sum += j["cpu_us_per_buffer_by_path"][path].get<double>();
  }
  EXPECT_NEAR(sum, r.cpu_us_per_buffer, 1e-9);
  EXPECT_TRUE(j["joules_per_buffer"].is_null());
  EXPECT_EQ(j["energy"], "no RAPL: CPU time only");
  EXPECT_GT(j["process_cpu_us_per_buffer"].get<double>(), 0.0);
}

TEST_F(ReplayCpuTest, JoulesPerBufferWhereThereIsRapl) {
  testing::FakePowercap powercap;
  powercap.Zone("intel-rapl:0", "package-0", 1000);
  ReplayOptions options = Uniform(0);
  options.duration_s = 0.3;
  options.powercap_root = powercap.root();
  // The fake counter moves by 1 J at each progress report, as a real one moves with time.
  uint64_t uj = 1000;
  options.progress_interval_s = 0.01;
  options.on_progress = [&](const ReplayProgress&) {
    uj += 1000000;
    powercap.SetEnergy("intel-rapl:0", uj);
  };
  ReplayResult r;
  Status s = RunReplay(options, &r);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(r.energy_note, "RAPL package-0");
  ASSERT_GE(r.joules_per_buffer, 0.0);
  // Every joule the counter moved during the run, over the run's page operations.
  EXPECT_DOUBLE_EQ(r.joules_per_buffer, static_cast<double>(uj - 1000) / 1e6 / r.ops);
  auto j = nlohmann::json::parse(ReplayResultJson(r));
  EXPECT_DOUBLE_EQ(j["joules_per_buffer"].get<double>(), r.joules_per_buffer);
}

}  // namespace
}  // namespace ccfs
