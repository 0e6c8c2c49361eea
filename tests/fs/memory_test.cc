// The memory budget seen from a mount: a `memory` the machine or the daemon's memory cgroup cannot
// hold is refused before anything is mounted; a daemon moved into a cgroup afterwards keeps its
// splits within it; a large budget over a small data set costs about what a small one does; the
// daemon's resident memory is in its stats.
#include <gmock/gmock.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <memory>
#include <string>

#include "fs/fs_test_util.h"
#include "testing/mount_fixture.h"
#include "trace/memory_cgroup.h"
#include "util/proc_status.h"
#include "util/sanitizers.h"

namespace ccfs::testing {
namespace {

using ::testing::HasSubstr;

constexpr uint64_t kMiB = 1ull << 20;

std::string MiB(uint64_t bytes) { return std::to_string(bytes / kMiB) + "MiB"; }

class MountMemoryTest : public MountTest {
 protected:
  // Reads every byte of `rel` through the mount.
  void ReadThrough(const std::string& rel) {
    EXPECT_EQ(ReadWholeFile(ds_.MntPath(rel)), ReadWholeFile(ds_.DataPath(rel)));
  }

  // A fresh memory cgroup of 64 MiB, the equal-RAM rule's for memory=64MiB; null with *skip set
  // where the test cannot run: a sanitizer build's daemon (shadow memory, quarantine) does not
  // run within 64 MiB, or there is no cgroup v1 memory controller.
  static std::unique_ptr<MemoryCgroup> Cgroup64MiB(std::string* skip) {
#if defined(CCFS_SANITIZED)
    *skip = "sanitizer build: its daemon needs more than the 64 MiB cgroup";
    return nullptr;
#endif
    if (!std::filesystem::exists(std::string(MemoryCgroup::kRoot) + "/cgroup.procs")) {
      *skip = std::string("no cgroup v1 memory controller at ") + MemoryCgroup::kRoot;
      return nullptr;
    }
    std::unique_ptr<MemoryCgroup> cgroup;
    const Status s = MemoryCgroup::Create(64 * kMiB, &cgroup);
    if (!s.ok()) *skip = s.ToString();
    return cgroup;
  }
};

TEST_F(MountMemoryTest, MemoryAboveTheMachinesRamIsRefusedNamingTheKey) {
  const uint64_t ram = ProcMeminfoBytes("MemTotal:");
  ASSERT_GT(ram, 0u);
  for (const std::string& memory : {MiB(2 * ram), std::string("1000TiB")}) {
    CommandResult r = RunCcfs({"mount", "-o", "memory=" + memory, ds_.data(), ds_.mnt()}, 30);
    if (IsMounted(ds_.mnt())) RunCcfs({"umount", ds_.mnt()}, 30);
    EXPECT_NE(r.exit_code, 0) << memory;
    EXPECT_THAT(r.output, HasSubstr("memory = ")) << memory;
    EXPECT_THAT(r.output, HasSubstr("RAM")) << memory;
    EXPECT_FALSE(IsMounted(ds_.mnt())) << memory;
  }
}

// The budget's up-front cost (index, frame table, sketches) follows the pages cached: the same
// reads cost about the same resident memory under a 64 MiB and a 16 GiB budget.
TEST_F(MountMemoryTest, ALargeBudgetOverASmallDataSetCostsLittle) {
  const uint64_t ram = ProcMeminfoBytes("MemTotal:");
  const uint64_t large = std::min<uint64_t>(16ull << 30, ram / 2);
  ASSERT_GE(large, 1ull << 30) << "this machine has too little RAM for the test";
  WriteWholeFile(ds_.DataPath("f"), RandomBytes(4 * kMiB, 7));
  auto rss_with = [&](const std::string& memory) -> uint64_t {
    MountOrDie({"-o", "memory=" + memory});
    ReadThrough("f");
    ReadThrough("f");
    const uint64_t rss = ProcStatusBytes(ds_.pid(), "VmRSS:");
    // The daemon shows its own resident memory (stats.json daemon.rss_bytes).
    const nlohmann::json stats = ds_.Stats();
    EXPECT_TRUE(stats.contains("daemon") && stats["daemon"].contains("rss_bytes")) << stats.dump();
    if (stats.contains("daemon")) {
      const uint64_t shown = stats["daemon"].value("rss_bytes", uint64_t{0});
      EXPECT_GT(shown, rss / 2) << memory;
      EXPECT_LT(shown, rss * 2) << memory;
      // And its open descriptors and start time (process_open_fds, process_start_time_seconds).
      size_t fds = 0;
      for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(
               "/proc/" + std::to_string(ds_.pid()) + "/fd")) {
        ++fds;
      }
      const uint64_t shown_fds = stats["daemon"].value("open_fds", uint64_t{0});
      EXPECT_GT(shown_fds, 2u) << memory;
      EXPECT_LE(shown_fds, fds + 8) << memory;
      EXPECT_GE(shown_fds + 8, fds) << memory;
      const double start = stats["daemon"].value("start_time_s", 0.0);
      const double now = static_cast<double>(time(nullptr));
      EXPECT_GT(start, now - 600) << memory;
      EXPECT_LE(start, now + 1) << memory;
    }
    EXPECT_EQ(ds_.Unmount(), 0) << ds_.DaemonLog();
    return rss;
  };
  const uint64_t small_rss = rss_with("64MiB");
  const uint64_t large_rss = rss_with(MiB(large));
  EXPECT_LT(large_rss, small_rss + 16 * kMiB)
      << "memory=64MiB: " << MiB(small_rss) << " resident; memory=" << MiB(large) << ": "
      << MiB(large_rss);
}

// raw_tier = kernel with daemon and readers in one memory cgroup of `memory` (the equal-RAM
// rule): the compressed tier cannot be reclaimed, so a compressed_percent whose tier and the
// daemon's own memory overflow the cgroup would end in its OOM killer. Refused at mount; a
// smaller share mounts.
TEST_F(MountMemoryTest, KernelModeTiersThatOverflowTheDaemonsCgroupAreRefused) {
  std::string skip;
  const std::unique_ptr<MemoryCgroup> cgroup = Cgroup64MiB(&skip);
  if (!cgroup) GTEST_SKIP() << skip;
  auto mount_in_cgroup = [&](const std::string& options) {
    std::vector<std::string> argv = {"sh", "-c", "echo $$ > \"$0/cgroup.procs\" && exec \"$@\"",
                                     cgroup->path(), CCFS_BINARY};
    for (const std::string& a :
         WithTestMode({"mount", "-o", options, ds_.data(), ds_.mnt()})) {
      argv.push_back(a);
    }
    return RunCommand(argv, 30);
  };
  CommandResult r =
      mount_in_cgroup("raw_tier=kernel,memory=64MiB,compressed_percent=80,compressor=zstd");
  if (IsMounted(ds_.mnt())) RunCcfs({"umount", ds_.mnt()}, 30);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.output, HasSubstr("memory = 64MiB"));
  EXPECT_THAT(r.output, HasSubstr("compressed_percent = 80"));
  EXPECT_FALSE(IsMounted(ds_.mnt()));

  r = mount_in_cgroup("raw_tier=kernel,memory=64MiB,compressed_percent=20,compressor=zstd");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  if (IsMounted(ds_.mnt())) {
    WriteWholeFile(ds_.DataPath("g"), RandomBytes(1 * kMiB, 3));
    ReadThrough("g");
    EXPECT_EQ(RunCcfs({"umount", ds_.mnt()}, 30).exit_code, 0);
  }
  EXPECT_FALSE(IsMounted(ds_.mnt()));
  // The daemon has exited (umount waits for it): the cgroup is empty and goes with `cgroup`.
}

// A kernel-mode daemon moved into a memory cgroup after its mount, as ccfs replay moves it beside
// its reader: the mount's check saw no cgroup, so the splits are checked against the one it is in
// now. Auto leaves a split in force that no longer fits it at its next step, without waiting for a
// window of reads; `ccfs set` refuses a split whose tiers would overflow it; the mount stays up.
TEST_F(MountMemoryTest, KernelModeSplitsFitTheCgroupTheDaemonIsMovedInto) {
  // As ccfs replay makes it: the size of `memory`, the daemon moved in after the mount.
  std::string skip;
  const std::unique_ptr<MemoryCgroup> cgroup = Cgroup64MiB(&skip);
  if (!cgroup) GTEST_SKIP() << skip;
  WriteWholeFile(ds_.DataPath("g"), RandomBytes(1 * kMiB, 5));
  MountOrDie({"-o", "raw_tier=kernel,memory=64MiB,compressed_percent=auto,compressor=zstd,"
                    "auto_interval=0.2"});
  ASSERT_TRUE(cgroup->AddProcess(ds_.pid()).ok());
  const int started = ds_.Stats()["compressed_percent"].get<int>();
  ASSERT_GE(started, 30) << "auto's first split, which fits the cgroup beside a small reader";

  // A reader in the cgroup takes 28 MiB of anonymous memory: the split in force no longer fits.
  const pid_t reader = fork();
  if (reader == 0) {
    setpgid(0, 0);
    execl("/bin/sh", "sh", "-c",
          "echo $$ > \"$0/cgroup.procs\" && dd if=/dev/zero bs=28M count=1 status=none | sleep 60",
          cgroup->path().c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  ASSERT_GT(reader, 0);
  int now = started;
  for (int i = 0; i < 100 && now >= started; ++i) {
    struct timespec pause = {0, 100 * 1000 * 1000};
    nanosleep(&pause, nullptr);
    now = ds_.Stats()["compressed_percent"].get<int>();
  }
  kill(-reader, SIGKILL);
  waitpid(reader, nullptr, 0);
  EXPECT_LT(now, started);

  // 80% of 64 MiB compressed, with the daemon's own memory, cannot fit 64 MiB.
  CommandResult r = RunCcfs({"set", ds_.mnt(), "compressed_percent=80"}, 30);
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("compressed_percent = 80"));
  EXPECT_THAT(r.output, HasSubstr("memory cgroup"));
  EXPECT_TRUE(ds_.Stats()["compressed_percent_auto"].get<bool>()) << "nothing was changed";
  r = RunCcfs({"set", ds_.mnt(), "compressed_percent=20"}, 30);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(ds_.Stats()["compressed_percent"].get<int>(), 20);

  ReadThrough("g");
  EXPECT_EQ(ds_.Unmount(), 0) << "the daemon ran to its end in the cgroup";
}

}  // namespace
}  // namespace ccfs::testing
