// A name's absence is kept by the kernel for negative_timeout (default 1 s, as entry_timeout):
// a program that looks for a name that is not there again and again (SQLite's journal and WAL at
// every transaction) asks the daemon once per timeout, not once per look; a name made through the
// mount is seen at once all the same (the kernel replaces the negative entry it made), and one
// made underneath within negative_timeout; with negative_timeout = 0, every look is a lookup.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include <fmt/format.h>

#include "fs/fs_test_util.h"
#include "fs/metrics_test_util.h"
#include "testing/mount_fixture.h"

namespace ccfs::testing {
namespace {

class NegativeEntryMountTest : public MountTest {
 protected:
  // Mounts with metrics on a free port, `options` added; the port in port_.
  void MountWithMetrics(const std::string& options) {
    port_ = FreePort();
    ASSERT_GT(port_, 0);
    ASSERT_NO_FATAL_FAILURE(MountOrDie(
        {"-o", fmt::format("memory=8MiB,metrics=127.0.0.1:{}{}{}", port_, options.empty() ? "" : ",",
                           options)}));
  }
  double Lookups() {
    CommandResult r = Curl(port_);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return Sample(r.out, "ccfs_fuse_requests_total{op=\"lookup\"}");
  }
  bool Exists(const std::string& name) {
    struct stat st;
    return stat(ds_.MntPath(name).c_str(), &st) == 0;
  }
  // Looks for `name` (absent) `times` times; the lookups the daemon answered meanwhile.
  double LookupsOfAbsentName(const std::string& name, int times) {
    const double before = Lookups();
    for (int i = 0; i < times; ++i) {
      EXPECT_FALSE(Exists(name));
      EXPECT_EQ(errno, ENOENT);
    }
    return Lookups() - before;
  }
  int port_ = 0;
};

TEST_F(NegativeEntryMountTest, AnAbsentNameLookedForAgainReachesTheDaemonOncePerTimeout) {
  if (!HaveCurl()) GTEST_SKIP() << "curl not found: run scripts/setup.sh (Debian curl)";
  WriteWholeFile(ds_.DataPath("db"), "x");
  ASSERT_NO_FATAL_FAILURE(MountWithMetrics("negative_timeout=30"));
  // 200 looks within 30 s: one lookup (two if the first raced the kernel's own revalidation).
  EXPECT_LE(LookupsOfAbsentName("db-journal", 200), 2);
}

TEST_F(NegativeEntryMountTest, TheDefaultKeepsAnAbsenceAsLongAsAName) {
  if (!HaveCurl()) GTEST_SKIP() << "curl not found: run scripts/setup.sh (Debian curl)";
  ASSERT_NO_FATAL_FAILURE(MountWithMetrics(""));
  CommandResult r = Curl(port_);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // A burst of looks well within the default's second is one lookup, or two across its edge.
  const auto start = std::chrono::steady_clock::now();
  const double lookups = LookupsOfAbsentName("db-wal", 100);
  if (std::chrono::steady_clock::now() - start < std::chrono::milliseconds(500)) {
    EXPECT_LE(lookups, 2);
  }
}

TEST_F(NegativeEntryMountTest, WithNoNegativeTimeoutEveryLookIsALookup) {
  if (!HaveCurl()) GTEST_SKIP() << "curl not found: run scripts/setup.sh (Debian curl)";
  ASSERT_NO_FATAL_FAILURE(MountWithMetrics("negative_timeout=0"));
  EXPECT_GE(LookupsOfAbsentName("db-journal", 50), 50);
}

TEST_F(NegativeEntryMountTest, ANameMadeThroughTheMountIsSeenAtOnce) {
  ASSERT_NO_FATAL_FAILURE(MountOrDie({"-o", "memory=8MiB,negative_timeout=30"}));
  // Each name is looked for first, so the kernel holds its absence when it is made.
  ASSERT_FALSE(Exists("created"));
  const int fd = open(ds_.MntPath("created").c_str(), O_CREAT | O_WRONLY, 0644);
  ASSERT_GE(fd, 0) << strerror(errno);
  ASSERT_EQ(write(fd, "abc", 3), 3);
  close(fd);
  EXPECT_TRUE(Exists("created"));
  EXPECT_EQ(ReadWholeFile(ds_.MntPath("created")), "abc");

  ASSERT_FALSE(Exists("dir"));
  ASSERT_EQ(mkdir(ds_.MntPath("dir").c_str(), 0755), 0) << strerror(errno);
  EXPECT_TRUE(Exists("dir"));

  ASSERT_FALSE(Exists("renamed"));
  ASSERT_EQ(rename(ds_.MntPath("created").c_str(), ds_.MntPath("renamed").c_str()), 0);
  EXPECT_TRUE(Exists("renamed"));
  EXPECT_FALSE(Exists("created"));

  ASSERT_FALSE(Exists("linked"));
  ASSERT_EQ(link(ds_.MntPath("renamed").c_str(), ds_.MntPath("linked").c_str()), 0);
  EXPECT_EQ(ReadWholeFile(ds_.MntPath("linked")), "abc");

  ASSERT_FALSE(Exists("symlinked"));
  ASSERT_EQ(symlink("renamed", ds_.MntPath("symlinked").c_str()), 0);
  EXPECT_EQ(ReadWholeFile(ds_.MntPath("symlinked")), "abc");
}

TEST_F(NegativeEntryMountTest, ANameMadeUnderneathIsSeenWithinTheTimeout) {
  ASSERT_NO_FATAL_FAILURE(MountOrDie({"-o", "memory=8MiB,negative_timeout=0.3"}));
  ASSERT_FALSE(Exists("late"));
  WriteWholeFile(ds_.DataPath("late"), "new");
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  EXPECT_TRUE(Exists("late")) << "a name made underneath still absent past negative_timeout";
  EXPECT_EQ(ReadWholeFile(ds_.MntPath("late")), "new");
}

}  // namespace
}  // namespace ccfs::testing
