// A file removed through the mount gives its space back by the time the removal returns, unless a
// reader still has it open (then at the last close); a removal that leaves another link keeps it.
// The daemon must hold no descriptor of a removed file that nobody has open: a full disk would
// otherwise refuse a write right after `rm`.
#include <dirent.h>
#include <fcntl.h>
#include <gmock/gmock.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "fs/fs_test_util.h"
#include "testing/mount_fixture.h"

namespace ccfs::testing {
namespace {

constexpr size_t kBigFile = 64u << 20;

// What the daemon's descriptors name (readlink of /proc/PID/fd/*).
std::vector<std::string> DescriptorTargets(pid_t pid) {
  std::vector<std::string> targets;
  const std::string dir = "/proc/" + std::to_string(pid) + "/fd";
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return targets;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] == '.') continue;
    char buf[4096];
    ssize_t n = readlink((dir + "/" + e->d_name).c_str(), buf, sizeof(buf));
    if (n > 0) targets.emplace_back(buf, n);
  }
  closedir(d);
  return targets;
}

// How many of the daemon's descriptors name the backing file `path` (removed or not).
int Holders(pid_t pid, const std::string& path) {
  int n = 0;
  for (const std::string& t : DescriptorTargets(pid)) {
    if (t == path || t == path + " (deleted)") ++n;
  }
  return n;
}

bool DaemonHolds(pid_t pid, const std::string& path) { return Holders(pid, path) > 0; }

// Waits (at most 5 s) until the daemon holds at most `n` descriptors of `path`: RELEASE follows
// close(2) asynchronously, so a handle closed a moment ago may still be open in the daemon.
void WaitForHolders(pid_t pid, const std::string& path, int n) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (Holders(pid, path) > n && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

uint64_t FreeBytes(const std::string& dir) {
  struct statvfs sv;
  if (statvfs(dir.c_str(), &sv) != 0) return 0;
  return static_cast<uint64_t>(sv.f_bfree) * sv.f_frsize;
}

// Writes a big file through the mount and reads it back, so the daemon knows its inode and (in
// kernel mode) the kernel holds its pages.
void MakeBigFile(const MountedDataset& ds, const std::string& name) {
  const std::string bytes = RandomBytes(kBigFile, 7);
  WriteWholeFile(ds.MntPath(name), bytes);
  ASSERT_EQ(ReadWholeFile(ds.MntPath(name)).size(), bytes.size());
  int fd = open(ds.DataPath(name).c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  fsync(fd);  // the blocks are allocated, so their release shows in statvfs
  close(fd);
}

class UnlinkMountTest : public MountTest {
 protected:
  void SetUp() override { ASSERT_NO_FATAL_FAILURE(MountOrDie({"-o", "memory=8MiB"})); }
};

TEST_F(UnlinkMountTest, RemovedFileGivesItsSpaceBackBeforeRmReturns) {
  ASSERT_NO_FATAL_FAILURE(MakeBigFile(ds_, "big"));
  // Nobody has it open: the daemon holds the descriptor that pins what it looked up and, in kernel
  // mode, the read-only open's descriptor it keeps for the next (fuse/read_handles.h).
  const int kept = TestRawTierIsKernel() ? 1 : 0;
  WaitForHolders(ds_.pid(), ds_.DataPath("big"), 1 + kept);
  ASSERT_EQ(Holders(ds_.pid(), ds_.DataPath("big")), 1 + kept);
  const uint64_t before = FreeBytes(ds_.data());
  CommandResult rm = RunCommand({"rm", ds_.MntPath("big")});
  ASSERT_EQ(rm.exit_code, 0) << rm.output;
  const uint64_t after = FreeBytes(ds_.data());
  EXPECT_FALSE(DaemonHolds(ds_.pid(), ds_.DataPath("big")))
      << "the daemon still holds the removed file";
  // Other writers share the disk: ask for most of the file back, not all of it.
  EXPECT_GE(after, before + kBigFile / 2) << "freed " << (after - std::min(after, before));
}

TEST_F(UnlinkMountTest, OpenFileKeepsWorkingAfterRemovalAndGoesAtItsClose) {
  ASSERT_NO_FATAL_FAILURE(MakeBigFile(ds_, "big"));
  int fd = open(ds_.MntPath("big").c_str(), O_RDONLY);
  ASSERT_GE(fd, 0) << strerror(errno);
  ASSERT_EQ(unlink(ds_.MntPath("big").c_str()), 0) << strerror(errno);
  struct stat st;
  EXPECT_EQ(fstat(fd, &st), 0) << strerror(errno);
  EXPECT_EQ(static_cast<size_t>(st.st_size), kBigFile);
  char buf[4096];
  EXPECT_EQ(pread(fd, buf, sizeof(buf), kBigFile - sizeof(buf)), static_cast<ssize_t>(sizeof(buf)))
      << strerror(errno);
  close(fd);
  WaitForHolders(ds_.pid(), ds_.DataPath("big"), 0);
  EXPECT_FALSE(DaemonHolds(ds_.pid(), ds_.DataPath("big"))) << "not let go after the last close";
}

TEST_F(UnlinkMountTest, RemovingOneOfTwoLinksKeepsTheFile) {
  const std::string bytes = CompressibleBytes(300000, 9);
  WriteWholeFile(ds_.MntPath("a"), bytes);
  ASSERT_EQ(link(ds_.MntPath("a").c_str(), ds_.MntPath("b").c_str()), 0) << strerror(errno);
  ASSERT_EQ(ReadWholeFile(ds_.MntPath("b")), bytes);
  ASSERT_EQ(unlink(ds_.MntPath("a").c_str()), 0) << strerror(errno);
  struct stat st;
  ASSERT_EQ(stat(ds_.MntPath("b").c_str(), &st), 0) << strerror(errno);
  EXPECT_EQ(st.st_nlink, 1u);
  EXPECT_EQ(ReadWholeFile(ds_.MntPath("b")), bytes);
  ASSERT_EQ(link(ds_.MntPath("b").c_str(), ds_.MntPath("c").c_str()), 0) << strerror(errno);
  EXPECT_EQ(ReadWholeFile(ds_.MntPath("c")), bytes);
  ASSERT_EQ(unlink(ds_.MntPath("b").c_str()), 0);
  EXPECT_EQ(ReadWholeFile(ds_.MntPath("c")), bytes);
  WaitForHolders(ds_.pid(), ds_.DataPath("a"), 1);  // the reads' handles closed
  ASSERT_EQ(unlink(ds_.MntPath("c").c_str()), 0);
  EXPECT_FALSE(DaemonHolds(ds_.pid(), ds_.DataPath("a")));
  EXPECT_FALSE(DaemonHolds(ds_.pid(), ds_.DataPath("b")));
  EXPECT_FALSE(DaemonHolds(ds_.pid(), ds_.DataPath("c")));
}

TEST_F(UnlinkMountTest, RenameOverAFileGivesTheVictimsSpaceBack) {
  ASSERT_NO_FATAL_FAILURE(MakeBigFile(ds_, "big"));
  WriteWholeFile(ds_.MntPath("small"), "small");
  WaitForHolders(ds_.pid(), ds_.DataPath("big"), 1);
  ASSERT_EQ(rename(ds_.MntPath("small").c_str(), ds_.MntPath("big").c_str()), 0);
  for (const std::string& t : DescriptorTargets(ds_.pid())) {
    EXPECT_NE(t, ds_.DataPath("big") + " (deleted)") << "the replaced file is still held";
  }
  EXPECT_EQ(ReadWholeFile(ds_.MntPath("big")), "small");
}

}  // namespace
}  // namespace ccfs::testing
