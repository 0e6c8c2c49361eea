// The client side of the mount protocol against a fake mount (a directory laid out as the daemon
// serves .ccfs), and the reading of the control file's replies.
#include "client/mount_client.h"

#include <unistd.h>

#include <chrono>
#include <string>

#include <gtest/gtest.h>

#include "cli/fake_mount.h"

namespace ccfs {
namespace {

using testing::FakeMount;

TEST(MountClientTest, RefusalCarriesTheDaemonsMessage) {
  Status s = ControlRefusal("compressed_percent=120\n",
                            "error: compressed_percent: 120 must be between 0 and 95\n");
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(s.message(), "compressed_percent: 120 must be between 0 and 95");
}

TEST(MountClientTest, RefusalWithoutAMessageNamesTheLinesSent) {
  for (const char* reply : {"", "ok\n", "error: \n", "0\n"}) {
    Status s = ControlRefusal("compressor=lz4\ncompressed_percent=120\n", reply);
    EXPECT_EQ(s.code(), Status::Code::kInvalidArgument) << reply;
    EXPECT_EQ(s.message(),
              "refused by the daemon (EINVAL): compressor=lz4, compressed_percent=120")
        << reply;
  }
}

TEST(MountClientTest, TellsAMountFromAPlainDirectory) {
  FakeMount mount;
  mount.SetStats(CacheStats());
  EXPECT_TRUE(IsCcfsMount(mount.path()));
  EXPECT_TRUE(CheckMount(mount.path()).ok());
  const std::string plain = ::testing::TempDir();
  EXPECT_FALSE(IsCcfsMount(plain));
  Status s = CheckMount(plain);
  EXPECT_EQ(s.code(), Status::Code::kNotFound);
  EXPECT_NE(s.message().find("not a ccfs mount"), std::string::npos) << s.message();
  EXPECT_FALSE(CheckMount("/nonexistent/mount/point").ok());
}

TEST(MountClientTest, ReadsStatsAndTheDaemonPid) {
  FakeMount mount;
  CacheStats stats;
  stats.reads = 7;
  stats.compressed_percent = 30;
  mount.SetStats(stats);
  CacheStats read;
  ASSERT_TRUE(ReadMountStats(mount.path(), &read).ok());
  EXPECT_EQ(read.reads, 7u);
  EXPECT_EQ(read.compressed_percent, 30);
  EXPECT_EQ(ReadDaemonPid(mount.path(), std::chrono::seconds(2)), 0) << "no daemon object";
  testing::WriteWholeFile(mount.stats(), "{\"reads\": 1, \"daemon\": {\"pid\": 4242}}");
  EXPECT_EQ(ReadDaemonPid(mount.path(), std::chrono::seconds(2)), 4242);
}

TEST(MountClientTest, AcceptedSettingsAreOneWriteOfKeyValueLines) {
  FakeMount mount;
  mount.SetStats(CacheStats());
  Status s = ApplyLiveSettings(mount.path(), {{"compressed_percent", "10"}, {"compressor", "zstd"}});
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(testing::ReadWholeFile(mount.control()), "compressed_percent=10\ncompressor=zstd\n");
}

}  // namespace
}  // namespace ccfs
