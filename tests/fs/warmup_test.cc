// `ccfs warmup` against a real mount (in both raw tiers, by CCFS_TEST_RAW_TIER): the files it
// loads are then read without a miss; --check says what is cached and --evict drops it; a
// warm-up of more than fits stops and says what did not fit; bad paths are refused naming them;
// the ioctls answer ENOTTY where they do not apply and EPERM to another user's eviction.
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <regex>
#include <string>
#include <vector>

#include "ccfs/mount_protocol.h"
#include "fs/fs_test_util.h"
#include "testing/mount_fixture.h"

namespace ccfs::testing {
namespace {

uint64_t Counter(const nlohmann::json& stats, const char* key) {
  return stats.contains(key) ? stats[key].get<uint64_t>() : 0;
}

class WarmupMountTest : public MountTest {};

// Pages that compress: the compressed tier keeps no page that does not compress. Under
// raw_tier = kernel these files also fit in the kernel's share: once loaded the warm-up reads them
// through the mount (compressed hits), and the kernel answers the reads after it.
TEST_F(WarmupMountTest, WarmedFilesAreReadWithoutAMiss) {
  std::vector<std::string> files = {"empty", "page_minus_one", "zeros"};
  WriteWholeFile(ds_.DataPath("empty"), "");
  WriteWholeFile(ds_.DataPath("page_minus_one"), CompressibleBytes(8191, 1));
  WriteWholeFile(ds_.DataPath("zeros"), std::string(300000, '\0'));
  mkdir(ds_.DataPath("text").c_str(), 0755);
  for (int i = 0; i < 10; ++i) {
    files.push_back("text/words" + std::to_string(i));
    WriteWholeFile(ds_.DataPath(files.back()), CompressibleBytes(250000 + 37 * i, 200 + i));
  }
  ASSERT_NO_FATAL_FAILURE(MountOrDie({"-o", "memory=32MiB,compressed_percent=50"}));
  CommandResult r = RunCcfs({"warmup", ds_.mnt(), "."});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.out.find("warmed " + std::to_string(files.size()) + " of " +
                       std::to_string(files.size()) + " files"),
            std::string::npos)
      << r.out;
  const bool kernel = TestRawTierIsKernel();
  const nlohmann::json warmed = ds_.Stats();
  EXPECT_GT(Counter(warmed, "warm_pages"), 0u);
  EXPECT_EQ(Counter(warmed, "misses"), 0u);
  if (kernel) {
    EXPECT_GT(Counter(warmed, "reads"), 0u) << "the kernel's share is filled by reads";
  } else {
    EXPECT_EQ(Counter(warmed, "reads"), 0u) << "a warm-up is not a read";
  }
  for (const std::string& f : files) {
    std::string got, want;
    ASSERT_EQ(ReadPath(ds_.MntPath(f), &got), 0) << f;
    ASSERT_EQ(ReadPath(ds_.DataPath(f), &want), 0) << f;
    ASSERT_EQ(got, want) << f;
  }
  const nlohmann::json read = ds_.Stats();
  if (kernel) {
    EXPECT_EQ(Counter(read, "reads"), Counter(warmed, "reads")) << "the kernel answered them all";
  } else {
    EXPECT_GT(Counter(read, "reads"), 0u);
  }
  EXPECT_EQ(Counter(read, "misses"), 0u) << "every page read was warmed";
  EXPECT_EQ(Counter(read, "warm_pages"), Counter(warmed, "warm_pages"));
}

// Under raw_tier = kernel the raw tier is the kernel's page cache: a warm-up of more than its share
// fills the compressed tier, then reads the first files into the kernel's share through the mount.
TEST_F(WarmupMountTest, UnderTheKernelTierTheKernelsShareFillsToo) {
  mkdir(ds_.DataPath("text").c_str(), 0755);
  std::vector<std::string> files;
  for (int i = 0; i < 6; ++i) {
    files.push_back("text/words" + std::to_string(i));
    WriteWholeFile(ds_.DataPath(files.back()), CompressibleBytes(2 << 20, 300 + i));
  }
  ASSERT_NO_FATAL_FAILURE(
      MountOrDie({"-o", "memory=16MiB,compressed_percent=50,raw_tier=kernel,kernel_demote=off"}));
  CommandResult r = RunCcfs({"warmup", ds_.mnt(), "text"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const nlohmann::json warmed = ds_.Stats();
  EXPECT_GT(Counter(warmed, "warm_pages"), 0u);
  EXPECT_GT(Counter(warmed, "reads"), 0u) << "the kernel's share is filled by reads";
  // A few pages may have been dropped uncompressed while the pool was behind (a daemon under
  // TSan): at most 1/32 of the 1,536.
  constexpr uint64_t kMayDrop = 1536 / 32;
  EXPECT_LE(Counter(warmed, "misses"), kMayDrop) << "of pages the daemon had loaded";
  // The files' first pages, read through the mount, are in the kernel's share (cachestat).
  r = RunCcfs({"warmup", "--check", ds_.mnt(), "text"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.out.find("kernel's page cache "), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("kernel's page cache 0.0 MiB"), std::string::npos) << r.out;
  // All 12 MiB are cached, less the pages the bound above lets a daemon under TSan drop.
  std::smatch cached;
  ASSERT_TRUE(std::regex_search(r.out, cached, std::regex(R"(cached: ([0-9.]+) MiB of 12\.0 MiB)")))
      << r.out;
  EXPECT_GE(std::stod(cached[1].str()), 12.0 - kMayDrop * 8192.0 / (1 << 20)) << r.out;
  for (const std::string& f : files) {
    std::string got;
    ASSERT_EQ(ReadPath(ds_.MntPath(f), &got), 0) << f;
    ASSERT_EQ(got, CompressibleBytes(2 << 20, 300 + static_cast<int>(&f - files.data()))) << f;
  }
  EXPECT_LE(Counter(ds_.Stats(), "misses"), kMayDrop) << "every page read was warmed";
}

TEST_F(WarmupMountTest, CheckSaysWhatIsCachedAndEvictDropsIt) {
  WriteWholeFile(ds_.DataPath("a"), CompressibleBytes(1 << 20, 1));
  WriteWholeFile(ds_.DataPath("b"), CompressibleBytes(1 << 20, 2));
  ASSERT_NO_FATAL_FAILURE(MountOrDie({"-o", "memory=32MiB"}));
  CommandResult r = RunCcfs({"warmup", "--check", ds_.mnt(), "a", "b"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.out.find("cached: 0.0 MiB of 2.0 MiB in 2 files"), std::string::npos) << r.out;
  r = RunCcfs({"warmup", "-q", ds_.mnt(), ds_.MntPath("a")});  // an absolute path inside
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = RunCcfs({"warmup", "--check", ds_.mnt(), "a", "b"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.out.find("cached: 1.0 MiB of 2.0 MiB in 2 files"), std::string::npos) << r.out;
  r = RunCcfs({"warmup", "--evict", ds_.mnt(), "a"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.out.find("evicted: held 1.0 MiB of 1.0 MiB in 1 file"), std::string::npos) << r.out;
  r = RunCcfs({"warmup", "--check", ds_.mnt(), "a"});
  EXPECT_NE(r.out.find("cached: 0.0 MiB of 1.0 MiB"), std::string::npos) << r.out;
  const uint64_t misses = Counter(ds_.Stats(), "misses");
  std::string got;
  ASSERT_EQ(ReadPath(ds_.MntPath("a"), &got), 0);
  EXPECT_EQ(got, CompressibleBytes(1 << 20, 1));
  EXPECT_GT(Counter(ds_.Stats(), "misses"), misses) << "evicted pages come from the store again";
}

TEST_F(WarmupMountTest, MoreThanFitsStopsAndSaysWhatDidNotFit) {
  // 48 MiB of pages that do not compress, a cache of 8 MiB: at most a sixth fits.
  mkdir(ds_.DataPath("big").c_str(), 0755);
  for (int i = 0; i < 24; ++i) {
    WriteWholeFile(ds_.DataPath("big/r" + std::to_string(100 + i)), RandomBytes(2 << 20, i));
  }
  ASSERT_NO_FATAL_FAILURE(MountOrDie({"-o", "memory=8MiB,compressed_percent=50"}));
  CommandResult r = RunCcfs({"warmup", "-j", "2", ds_.mnt(), "big"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.out.find("not warmed: "), std::string::npos) << r.out;
  const nlohmann::json s = ds_.Stats();
  EXPECT_LT(Counter(s, "warm_pages") * 8192, 40ull << 20)
      << "it stopped well before the end\n" << r.out;
}

TEST_F(WarmupMountTest, PathsOutsideTheMountOrMissingAreRefusedNamingThem) {
  WriteWholeFile(ds_.DataPath("a"), "x");
  ASSERT_NO_FATAL_FAILURE(MountOrDie({}));
  CommandResult r = RunCcfs({"warmup", ds_.mnt(), "../data"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.err.find("../data: not inside the mount"), std::string::npos) << r.err;
  r = RunCcfs({"warmup", ds_.mnt(), "/etc"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  r = RunCcfs({"warmup", ds_.mnt(), "nothere"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.err.find("nothere: No such file"), std::string::npos) << r.err;
  r = RunCcfs({"warmup", ds_.data(), "a"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.err.find("not a ccfs mount"), std::string::npos) << r.err;
  r = RunCcfs({"warmup", "--check", "--evict", ds_.mnt(), "a"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
}

// The errno of warm-up ioctl `cmd` on `path`, run as `uid` (0: as the test).
int IoctlErrno(const std::string& path, unsigned long cmd, uid_t uid = 0) {
  pid_t child = fork();
  if (child == 0) {
    if (uid != 0 && (setresgid(uid, uid, uid) != 0 || setresuid(uid, uid, uid) != 0)) _exit(200);
    int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) _exit(201);
    WarmRange r{};
    _exit(ioctl(fd, cmd, &r) == 0 ? 0 : errno);
  }
  int status = 0;
  waitpid(child, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST_F(WarmupMountTest, TheIoctlsAnswerWhereTheyApplyAndEvictionIsTheOwners) {
  WriteWholeFile(ds_.DataPath("a"), CompressibleBytes(100000, 3));
  chmod(ds_.DataPath("a").c_str(), 0644);
  chmod(ds_.root().c_str(), 0755);  // another user reaches the mount point
  ASSERT_NO_FATAL_FAILURE(MountOrDie({"-o", "allow_other"}));
  EXPECT_EQ(IoctlErrno(ds_.MntPath("a"), kWarmIoctl), 0);
  EXPECT_EQ(IoctlErrno(ds_.MntPath("a"), kResidencyIoctl), 0);
  EXPECT_EQ(IoctlErrno(ds_.MntPath("a"), kWarmIoctl, 65534), 0) << "a reader may warm";
  EXPECT_EQ(IoctlErrno(ds_.MntPath("a"), kEvictIoctl, 65534), EPERM);
  EXPECT_EQ(IoctlErrno(ds_.MntPath("a"), kEvictIoctl), 0);
  EXPECT_EQ(IoctlErrno(ds_.MntPath(".ccfs/stats.json"), kWarmIoctl), ENOTTY);
  EXPECT_EQ(IoctlErrno(ds_.MntPath("a"), _IOWR('C', 0x99, WarmRange)), ENOTTY) << "not ours";
}

}  // namespace
}  // namespace ccfs::testing
