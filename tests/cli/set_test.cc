// `ccfs set` against a fake mount (a directory with a hand-made .ccfs/stats.json whose
// .ccfs/control is a plain file that accepts anything, or a file that refuses with EINVAL and
// gives no reason, as an older daemon does), and against a real mount, whose daemon names the key
// and the reason of a refusal.
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ccfs/options.h"
#include "ccfs/stats.h"
#include "cli/fake_mount.h"
#include "testing/mount_fixture.h"

namespace ccfs {
namespace {

using testing::FakeMount;
using testing::RunCcfs;

CacheStats Current() {
  CacheStats s;
  s.compressed_percent = 30;
  s.compressor = static_cast<int>(CodecKind::kZstd);
  s.compression_level = 3;
  s.page_size = 8192;
  s.memory_bytes = 256ull << 20;
  return s;
}

TEST(SetCommandTest, WritesAllPairsInOneWriteAndShowsTheMountsSettings) {
  FakeMount mount;
  mount.SetStats(Current());
  auto r = RunCcfs({"set", mount.path(), "compressed_percent=30", "compressor=zstd",
                    "compression_level=3"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(testing::ReadWholeFile(mount.control()),
            "compressed_percent=30\ncompressor=zstd\ncompression_level=3\n");
  EXPECT_NE(r.out.find("now: compressed_percent=30 compressor=zstd compression_level=3"),
            std::string::npos)
      << r.out;
}

TEST(SetCommandTest, KeysNotInStatsAreConfirmedWithoutReadBack) {
  FakeMount mount;
  mount.SetStats(Current());
  auto r = RunCcfs({"set", mount.path(), "min_savings_percent=20"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(testing::ReadWholeFile(mount.control()), "min_savings_percent=20\n");
  EXPECT_NE(r.out.find("min_savings_percent = 20"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("now:"), std::string::npos) << r.out;
}

TEST(SetCommandTest, MalformedPairsAreRefusedBeforeAnythingIsWritten) {
  FakeMount mount;
  mount.SetStats(Current());
  for (const char* bad : {"compressed_percent", "=5", "Compressor=lz4", "compressor="}) {
    auto r = RunCcfs({"set", mount.path(), "compressed_percent=10", bad});
    EXPECT_EQ(r.exit_code, 2) << bad;
    EXPECT_NE(r.err.find(bad), std::string::npos) << r.err;
  }
  EXPECT_EQ(testing::ReadWholeFile(mount.control()), "") << "nothing may be written when one pair is bad";
}

TEST(SetCommandTest, NotAMountIsAClearError) {
  std::string dir = ::testing::TempDir();
  auto r = RunCcfs({"set", dir, "compressed_percent=10"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("not a ccfs mount"), std::string::npos) << r.err;
}

TEST(SetCommandTest, UnwritableControlFileNamesThePath) {
  FakeMount mount;
  mount.SetStats(Current());
  unlink(mount.control().c_str());
  ASSERT_EQ(mkdir(mount.control().c_str(), 0755), 0);
  auto r = RunCcfs({"set", mount.path(), "compressed_percent=10"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(mount.control()), std::string::npos) << r.err;
  rmdir(mount.control().c_str());
}

// A control file that refuses every write with EINVAL and reads back no "error: " line (a link
// to a /proc file that takes only a number) stands in for a daemon that gives no reason.
TEST(SetCommandTest, RefusalWithoutAReasonNamesTheLinesSent) {
  FakeMount mount;
  mount.SetStats(Current());
  unlink(mount.control().c_str());
  ASSERT_EQ(symlink("/proc/self/oom_score_adj", mount.control().c_str()), 0);
  auto r = RunCcfs({"set", mount.path(), "compressed_percent=20", "compressor=lz4"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("refused by the daemon (EINVAL)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("compressed_percent=20, compressor=lz4"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("nothing was changed"), std::string::npos) << r.err;
}

// A real mount: the daemon reads back why it refused, and the command shows it.
class RejectingMount : public testing::MountTest {
 protected:
  void SetUp() override { MountOrDie({"-o", "memory=4MiB,compressed_percent=25"}); }
  testing::CommandResult Set(std::vector<std::string> pairs) {
    pairs.insert(pairs.begin(), {"set", ds_.mnt()});
    return RunCcfs(pairs);
  }
  int CompressedPercent() { return ds_.Stats().value("compressed_percent", -1); }
};

TEST_F(RejectingMount, AcceptedChangeIsAppliedAndShown) {
  auto r = Set({"compressed_percent=40"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("now: compressed_percent=40"), std::string::npos) << r.out;
  EXPECT_EQ(CompressedPercent(), 40);
}

TEST_F(RejectingMount, OutOfRangeValueIsNamedWithItsKeyAndTheRange) {
  auto r = Set({"compressor=lz4", "compressed_percent=120"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("compressed_percent"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("120"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("95"), std::string::npos) << "the reason: the allowed range\n" << r.err;
  EXPECT_NE(r.err.find("nothing was changed"), std::string::npos) << r.err;
  EXPECT_EQ(CompressedPercent(), 25);
}

TEST_F(RejectingMount, UnknownKeyIsNamed) {
  auto r = Set({"compresed_percent=20"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("compresed_percent"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("unknown"), std::string::npos) << r.err;
}

TEST_F(RejectingMount, KeyThatNeedsARemountSaysSo) {
  auto r = Set({"memory=1GiB"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("memory"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("remount"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace ccfs
