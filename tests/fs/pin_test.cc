// The `pin` key on a real mount (both raw tiers, by CCFS_TEST_RAW_TIER): a pinned file read before
// a scan of other files is read again after it without a miss; pins that do not exist, lie outside
// DATASET or hold more than pin_percent of memory are refused naming the key; a live change
// applies to files opened after it, and an empty value unpins.
#include <sys/stat.h>

#include <string>

#include "fs/fs_test_util.h"
#include "testing/mount_fixture.h"

namespace ccfs::testing {
namespace {

uint64_t Counter(const nlohmann::json& stats, const char* key) {
  return stats.contains(key) ? stats[key].get<uint64_t>() : 0;
}

class PinMountTest : public MountTest {
 protected:
  void MakeData() {
    mkdir(ds_.DataPath("hot").c_str(), 0755);
    mkdir(ds_.DataPath("cold").c_str(), 0755);
    WriteWholeFile(ds_.DataPath("hot/a"), CompressibleBytes(1 << 20, 1));
    for (int i = 0; i < 12; ++i) {
      WriteWholeFile(ds_.DataPath("cold/c" + std::to_string(i)), RandomBytes(2 << 20, 10 + i));
    }
  }
  // Reads hot/a, then every cold file; returns the daemon's misses of a second read of hot/a.
  uint64_t MissesOfHotAfterAScan() {
    std::string got;
    EXPECT_EQ(ReadPath(ds_.MntPath("hot/a"), &got), 0);
    for (int i = 0; i < 12; ++i) {
      EXPECT_EQ(ReadPath(ds_.MntPath("cold/c" + std::to_string(i)), &got), 0);
    }
    const uint64_t before = Counter(ds_.Stats(), "misses");
    EXPECT_EQ(ReadPath(ds_.MntPath("hot/a"), &got), 0);
    EXPECT_EQ(got, CompressibleBytes(1 << 20, 1));
    return Counter(ds_.Stats(), "misses") - before;
  }
};

TEST_F(PinMountTest, APinnedFileIsReadAgainAfterAScanWithoutAMiss) {
  MakeData();
  // raw_tier = daemon: under kernel the kernel's own share answers the second read either way.
  ASSERT_NO_FATAL_FAILURE(
      MountOrDie({"-o", "memory=8MiB,raw_tier=daemon,compressed_percent=0,pin=hot"}));
  EXPECT_EQ(MissesOfHotAfterAScan(), 0u);
  const nlohmann::json s = ds_.Stats();
  EXPECT_EQ(Counter(s, "pinned_pages"), (1u << 20) / 8192);
  EXPECT_GT(Counter(s, "pinned_bytes"), 0u);
}

TEST_F(PinMountTest, WithoutThePinTheScanPushesTheFileOut) {
  MakeData();
  ASSERT_NO_FATAL_FAILURE(MountOrDie({"-o", "memory=8MiB,raw_tier=daemon,compressed_percent=0"}));
  EXPECT_GT(MissesOfHotAfterAScan(), 0u) << "the test would pass without pins";
}

TEST_F(PinMountTest, PinsThatDoNotExistLeaveDatasetOrDoNotFitAreRefused) {
  MakeData();
  std::string error;
  EXPECT_FALSE(ds_.Mount({"-o", "memory=8MiB,pin=nothere"}, &error));
  EXPECT_NE(error.find("pin: nothere"), std::string::npos) << error;
  EXPECT_FALSE(ds_.Mount({"-o", "memory=8MiB,pin=../x"}, &error));
  EXPECT_NE(error.find("pin = ../x"), std::string::npos) << error;
  EXPECT_FALSE(ds_.Mount({"-o", "memory=8MiB,pin=cold"}, &error));
  EXPECT_NE(error.find("pin_percent"), std::string::npos) << error;
  ASSERT_NO_FATAL_FAILURE(MountOrDie({"-o", "memory=8MiB"}));
  CommandResult r = RunCcfs({"set", ds_.mnt(), "pin=cold"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.err.find("pin_percent"), std::string::npos) << r.err;
}

TEST_F(PinMountTest, ALiveChangeAppliesToFilesOpenedAfterItAndEmptyUnpins) {
  MakeData();
  ASSERT_NO_FATAL_FAILURE(MountOrDie({"-o", "memory=8MiB,raw_tier=daemon,compressed_percent=0"}));
  CommandResult r = RunCcfs({"set", ds_.mnt(), "pin=hot/a"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(MissesOfHotAfterAScan(), 0u);
  r = RunCcfs({"set", ds_.mnt(), "pin="});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(Counter(ds_.Stats(), "pinned_pages"), 0u);
}

}  // namespace
}  // namespace ccfs::testing
