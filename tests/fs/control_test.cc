// The .ccfs/control protocol (src/fuse/control_dir.h): a refused write fails with EINVAL and a
// read from offset 0 on the same open file returns "error: <message>\n" naming the key and the
// reason, the daemon's own words; an accepted write reads back "ok\n"; each open file keeps its own.
#include <errno.h>
#include <fcntl.h>
#include <gmock/gmock.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "fs/fs_test_util.h"
#include "testing/mount_fixture.h"

namespace ccfs::testing {
namespace {

using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// An open .ccfs/control, closed on every way out so a failed assertion does not leave the mount
// busy.
class ControlFile {
 public:
  explicit ControlFile(const MountedDataset& ds)
      : fd_(open(ds.MntPath(".ccfs/control").c_str(), O_RDWR)) {}
  ~ControlFile() {
    if (fd_ >= 0) close(fd_);
  }
  bool ok() const { return fd_ >= 0; }

  // One write(2) of `text`; 0 or the errno.
  int Write(const std::string& text) {
    ssize_t n = write(fd_, text.data(), text.size());
    return n == static_cast<ssize_t>(text.size()) ? 0 : errno;
  }

  // What a read from offset 0 returns (the outcome of this file's last write).
  std::string Outcome() {
    char buf[4096];
    ssize_t n = pread(fd_, buf, sizeof(buf), 0);
    return n < 0 ? "read failed: " + std::string(strerror(errno)) : std::string(buf, n);
  }

 private:
  int fd_;
};

class ControlMountTest : public MountTest {};

TEST_F(ControlMountTest, RefusedWriteReadsBackTheKeyAndTheReasonFromTheSameFile) {
  ASSERT_NO_FATAL_FAILURE(MountOrDie({"-o", "memory=4MiB,compressed_percent=25"}));
  ControlFile ctl(ds_);
  ASSERT_TRUE(ctl.ok()) << strerror(errno);
  EXPECT_EQ(ctl.Outcome(), "") << "no write yet: nothing to report";

  EXPECT_EQ(ctl.Write("bogus_key=1\n"), EINVAL);
  std::string unknown = ctl.Outcome();
  EXPECT_EQ(unknown, "error: .ccfs/control:1: unknown key \"bogus_key\"\n");

  EXPECT_EQ(ctl.Write("compressed_percent=10\nmemory=1GiB\n"), EINVAL);
  std::string remount = ctl.Outcome();
  EXPECT_THAT(remount, StartsWith("error: .ccfs/control:2: memory"));
  EXPECT_THAT(remount, HasSubstr("needs a remount"));

  EXPECT_EQ(ctl.Write("compressed_percent=500\n"), EINVAL);
  std::string range = ctl.Outcome();
  EXPECT_THAT(range, StartsWith("error: "));
  EXPECT_THAT(range, HasSubstr("compressed_percent = 500"));

  for (const std::string& line : {unknown, remount, range}) {
    EXPECT_THAT(line, EndsWith("\n"));
    EXPECT_EQ(std::count(line.begin(), line.end(), '\n'), 1) << line;
    // The same text the daemon logs.
    std::string message = line.substr(strlen("error: "), line.size() - strlen("error: ") - 1);
    EXPECT_THAT(ds_.DaemonLog(), HasSubstr(message));
  }
  EXPECT_EQ(ds_.Stats()["compressed_percent"].get<int>(), 25) << "refused writes change nothing";

  EXPECT_EQ(ctl.Write("compressed_percent=50\n"), 0);
  EXPECT_EQ(ctl.Outcome(), "ok\n");
  EXPECT_EQ(ds_.Stats()["compressed_percent"].get<int>(), 50);
}

TEST_F(ControlMountTest, EachOpenFileKeepsItsOwnOutcome) {
  ASSERT_NO_FATAL_FAILURE(MountOrDie({"-o", "memory=4MiB"}));
  ControlFile good(ds_);
  ControlFile bad(ds_);
  ASSERT_TRUE(good.ok() && bad.ok()) << strerror(errno);
  EXPECT_EQ(good.Write("compressed_percent=30\n"), 0);
  EXPECT_EQ(bad.Write("compressed_percent=lots\n"), EINVAL);
  EXPECT_EQ(good.Outcome(), "ok\n");
  EXPECT_THAT(bad.Outcome(), StartsWith("error: .ccfs/control:1: "));
  EXPECT_THAT(bad.Outcome(), HasSubstr("compressed_percent"));
  ControlFile fresh(ds_);
  ASSERT_TRUE(fresh.ok()) << strerror(errno);
  EXPECT_EQ(fresh.Outcome(), "") << "a new open starts with no outcome";
}

TEST_F(ControlMountTest, StatsJsonNamesTheDaemonThatServesTheMount) {
  ASSERT_NO_FATAL_FAILURE(MountOrDie({"-o", "memory=4MiB"}));
  nlohmann::json stats = ds_.Stats();
  ASSERT_TRUE(stats.contains("daemon")) << stats.dump();
  const nlohmann::json& daemon = stats["daemon"];
  EXPECT_EQ(daemon["pid"].get<pid_t>(), ds_.pid());
  EXPECT_EQ(daemon["dataset"].get<std::string>(), ds_.data());
  EXPECT_EQ(daemon["mountpoint"].get<std::string>(), ds_.mnt());
  EXPECT_GE(daemon["uptime_s"].get<double>(), 0.0);
  EXPECT_EQ(stats["memory_bytes"].get<uint64_t>(), 4u << 20) << "the engine's counters are there too";
}

}  // namespace
}  // namespace ccfs::testing
