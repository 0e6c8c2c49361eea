// Replay through a real mount: the daemon counts exactly the pages the client read, and a live
// sweep through .ccfs/control changes the split and puts it back.
#include <filesystem>

#include <gtest/gtest.h>

#include "datagen/mkdata.h"
#include "testing/mount_fixture.h"
#include "trace/replay.h"

namespace ccfs {
namespace {

class ReplayMountTest : public testing::MountTest {
 protected:
  void SetUp() override {
    std::filesystem::remove_all(ds_.data());
    MkdataOptions mk;
    mk.dir = ds_.data();
    mk.size = 16ull << 20;
    ASSERT_TRUE(ParseMix("text=50,db=50", &mk.mix).ok());
    std::vector<KindReport> report;
    Status s = MakeDataset(mk, &report);
    ASSERT_TRUE(s.ok()) << s.ToString();
    // raw_tier = daemon: the daemon counts every page the client reads.
    MountOrDie({"-o", "memory=4MiB,compressed_percent=0,raw_tier=daemon"});
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

}  // namespace
}  // namespace ccfs
