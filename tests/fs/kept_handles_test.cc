// A read-write mount in raw_tier = kernel mode keeps a read-only open's descriptor of the store's
// file past RELEASE (fuse/read_handles.h): the next read-only open of the file uses it again and
// opens nothing on the store (seen by inotify on the data set, as the store's own open events),
// nor does one of a file whose pages are held when none is kept of it, unless the file changed
// underneath, which opens it anew; a file removed through the mount keeps no descriptor (its space
// comes back), and a descriptor read through after the file changed reads the new bytes.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include <fmt/format.h>

#include "fs/fs_test_util.h"
#include "testing/mount_fixture.h"

namespace ccfs::testing {
namespace {

class KeptHandlesMountTest : public MountTest {
 protected:
  void MountKernelMode() {
    ASSERT_NO_FATAL_FAILURE(
        MountOrDie({"-o", "raw_tier=kernel,memory=8MiB,compressed_percent=50,attr_timeout=0.2"}));
  }
};

TEST_F(KeptHandlesMountTest, AReadOnlyOpenAgainOpensNothingOnTheStore) {
  const std::string v1 = CompressibleBytes(200000, 11);
  WriteWholeFile(ds_.DataPath("f"), v1);
  ASSERT_NO_FATAL_FAILURE(MountKernelMode());
  ASSERT_TRUE(ReadWholeFile(ds_.MntPath("f")) == v1);
  EXPECT_EQ(OpenDataDescriptors(ds_.pid(), ds_.data()), 1u)
      << "the read-only open's descriptor of the store's file was not kept past its close";
  OpenEvents opens(ds_.data());
  for (int k = 0; k < 3; ++k) ASSERT_TRUE(ReadWholeFile(ds_.MntPath("f")) == v1);
  EXPECT_EQ(opens.Of("f"), 0) << "a read-only open opened the store's file again";
  EXPECT_EQ(OpenDataDescriptors(ds_.pid(), ds_.data()), 1u);
  // A write open is the caller's own, as before: opened on the store, closed at its release.
  int fd = open(ds_.MntPath("f").c_str(), O_WRONLY);
  ASSERT_GE(fd, 0) << strerror(errno);
  ASSERT_EQ(pwrite(fd, "x", 1, 0), 1);
  close(fd);
  EXPECT_EQ(opens.Of("f"), 1);
  std::string v2 = v1;
  v2[0] = 'x';
  EXPECT_TRUE(ReadWholeFile(ds_.MntPath("f")) == v2) << "a kept handle read past a write";
}

// More files than the bound keeps read handles of, read again in the same order: the least
// recently used handle is always the one pushed out, so no file finds its own at its next open.
// An open still opens nothing on the store when the tiers hold the file's pages (over a network
// store each open and close is a round trip); one of a file they do not hold opens it at OPEN.
TEST_F(KeptHandlesMountTest, AReadOnlyOpenOpensNothingOnTheStoreWhenNoHandleIsKept) {
  constexpr int kFiles = 12;  // max_open_files = 16: at most 4 read handles
  for (int k = 0; k < kFiles; ++k) {
    WriteWholeFile(ds_.DataPath(fmt::format("f{}", k)), CompressibleBytes(20000, 40 + k));
  }
  ASSERT_NO_FATAL_FAILURE(MountOrDie(
      {"-o", "raw_tier=kernel,memory=8MiB,compressed_percent=50,max_open_files=16"}));
  for (int k = 0; k < kFiles; ++k) {
    ASSERT_TRUE(ReadWholeFile(ds_.MntPath(fmt::format("f{}", k))) ==
                CompressibleBytes(20000, 40 + k));
  }
  OpenEvents opens(ds_.data());
  for (int k = 0; k < kFiles; ++k) {
    const std::string name = fmt::format("f{}", k);
    ASSERT_TRUE(ReadWholeFile(ds_.MntPath(name)) == CompressibleBytes(20000, 40 + k)) << name;
    EXPECT_EQ(opens.Of(name), 0) << name << ": a read-only open of a held file opened the store's";
  }
  EXPECT_LE(OpenDataDescriptors(ds_.pid(), ds_.data()), 2u * 4) << "read handles past the bound";
  // A file the tiers do not hold (larger than them) is opened on the store at OPEN, as before.
  const std::string big = CompressibleBytes(12 << 20, 39);
  WriteWholeFile(ds_.DataPath("big"), big);
  ASSERT_TRUE(ReadWholeFile(ds_.MntPath("big")) == big);
  for (int k = 0; k < 5; ++k) {  // files read the first time: their read handles push big's out
    const std::string name = fmt::format("new{}", k);
    WriteWholeFile(ds_.DataPath(name), CompressibleBytes(20000, 60 + k));
    ASSERT_FALSE(ReadWholeFile(ds_.MntPath(name)).empty());
  }
  (void)opens.Of("big");
  int big_fd = open(ds_.MntPath("big").c_str(), O_RDONLY);
  ASSERT_GE(big_fd, 0) << strerror(errno);
  EXPECT_EQ(opens.Of("big"), 1) << "a read-only open of a file the tiers do not hold";
  close(big_fd);
  // fsync through such an open reaches the store's file (`sync FILE` opens it read-only).
  int fd = open(ds_.MntPath("f0").c_str(), O_RDONLY);
  ASSERT_GE(fd, 0) << strerror(errno);
  EXPECT_EQ(fsync(fd), 0) << strerror(errno);
  EXPECT_EQ(fchmod(fd, 0600), 0) << strerror(errno);
  close(fd);
  struct stat st;
  ASSERT_EQ(stat(ds_.DataPath("f0").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST_F(KeptHandlesMountTest, AFileChangedUnderneathIsOpenedAnew) {
  const std::string v1 = CompressibleBytes(200000, 12);
  const std::string v2 = CompressibleBytes(200000, 13);  // the same size: only the times tell
  WriteWholeFile(ds_.DataPath("f"), v1);
  ASSERT_NO_FATAL_FAILURE(MountKernelMode());
  ASSERT_TRUE(ReadWholeFile(ds_.MntPath("f")) == v1);
  WriteWholeFile(ds_.DataPath("f"), v2);
  std::this_thread::sleep_for(std::chrono::milliseconds(1300));  // entry_timeout 1 s, then 0.2 s
  OpenEvents opens(ds_.data());
  EXPECT_TRUE(ReadWholeFile(ds_.MntPath("f")) == v2) << "stale bytes past the bound";
  EXPECT_GE(opens.Of("f"), 1) << "the file found changed at OPEN was read through the kept handle";
  EXPECT_EQ(OpenDataDescriptors(ds_.pid(), ds_.data()), 1u);
}

TEST_F(KeptHandlesMountTest, AFileRemovedThroughTheMountKeepsNoDescriptor) {
  for (const char* name : {"a", "b", "victim"}) {
    WriteWholeFile(ds_.DataPath(name), CompressibleBytes(100000, name[0]));
  }
  ASSERT_NO_FATAL_FAILURE(MountKernelMode());
  for (const char* name : {"a", "b", "victim"}) ASSERT_FALSE(ReadWholeFile(ds_.MntPath(name)).empty());
  ASSERT_EQ(OpenDataDescriptors(ds_.pid(), ds_.data()), 3u);
  ASSERT_EQ(unlink(ds_.MntPath("a").c_str()), 0) << strerror(errno);
  ASSERT_EQ(rename(ds_.MntPath("b").c_str(), ds_.MntPath("victim").c_str()), 0) << strerror(errno);
  // Both removed files' space is back: the daemon holds only b's, now named victim.
  EXPECT_EQ(OpenDataDescriptors(ds_.pid(), ds_.data()), 1u)
      << "a kept descriptor holds a removed file's space on the store";
}

}  // namespace
}  // namespace ccfs::testing
