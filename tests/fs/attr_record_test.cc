// Attributes read from the store less than attr_timeout ago answer the kernel's attribute refresh
// and, in kernel mode, stand for the check at a read-only open (fuse/change_detector.h, attribute
// records): stats.json attr_answers counts them. They are the file's as the store gave them; a
// change through the mount shows at once (it voids every record read before it ended); one made
// underneath shows to the next open (close_to_open), or within attr_timeout without it; with
// attr_timeout = 0 nothing is answered from a record.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include "fs/fs_test_util.h"
#include "testing/mount_fixture.h"

namespace ccfs::testing {
namespace {

class AttrRecordMountTest : public MountTest {
 protected:
  void SetUp() override { WriteWholeFile(ds_.DataPath("f"), std::string(65536, 'a')); }
  uint64_t Answers() { return ds_.Stats()["attr_answers"].get<uint64_t>(); }
  // Opens the mount's `f`, reads it whole (a READ answered by the daemon has the kernel refresh
  // the file's attributes at the next stat) and returns its fstat.
  struct stat ReadAndStat(const std::string& rel = "f") {
    struct stat st {};
    const int fd = open(ds_.MntPath(rel).c_str(), O_RDONLY);
    EXPECT_GE(fd, 0) << strerror(errno);
    if (fd < 0) return st;
    char buf[65536];
    while (read(fd, buf, sizeof(buf)) > 0) {
    }
    EXPECT_EQ(fstat(fd, &st), 0) << strerror(errno);
    close(fd);
    return st;
  }
};

TEST_F(AttrRecordMountTest, AnAttributeRefreshWithinAttrTimeoutIsTheStoresAttributes) {
  ASSERT_NO_FATAL_FAILURE(MountOrDie({"-o", "memory=8MiB,attr_timeout=60,entry_timeout=60"}));
  const uint64_t before = Answers();
  struct stat got {};
  for (int k = 0; k < 3; ++k) got = ReadAndStat();
  EXPECT_GT(Answers(), before) << "no refresh or open was answered from the attributes read";
  struct stat want {};
  ASSERT_EQ(stat(ds_.DataPath("f").c_str(), &want), 0);
  EXPECT_EQ(got.st_size, want.st_size);
  EXPECT_EQ(got.st_mode, want.st_mode);
  EXPECT_EQ(got.st_nlink, want.st_nlink);
  EXPECT_EQ(got.st_uid, want.st_uid);
  EXPECT_EQ(got.st_mtim.tv_sec, want.st_mtim.tv_sec);
  EXPECT_EQ(got.st_mtim.tv_nsec, want.st_mtim.tv_nsec);
  EXPECT_EQ(got.st_ctim.tv_sec, want.st_ctim.tv_sec);
}

TEST_F(AttrRecordMountTest, AChangeThroughTheMountShowsAtOnce) {
  ASSERT_NO_FATAL_FAILURE(MountOrDie({"-o", "memory=8MiB,attr_timeout=60,entry_timeout=60"}));
  ASSERT_EQ(ReadAndStat().st_size, 65536);
  ASSERT_EQ(ReadAndStat().st_size, 65536);  // recorded, and answered from the record
  // An append through another open.
  const int w = open(ds_.MntPath("f").c_str(), O_WRONLY | O_APPEND);
  ASSERT_GE(w, 0) << strerror(errno);
  ASSERT_EQ(write(w, "bbbb", 4), 4);
  ASSERT_EQ(close(w), 0);
  EXPECT_EQ(ReadAndStat().st_size, 65540) << "an append through the mount";
  ASSERT_EQ(chmod(ds_.MntPath("f").c_str(), 0600), 0) << strerror(errno);
  EXPECT_EQ(ReadAndStat().st_mode & 07777, 0600u) << "a chmod through the mount";
  ASSERT_EQ(link(ds_.MntPath("f").c_str(), ds_.MntPath("g").c_str()), 0) << strerror(errno);
  EXPECT_EQ(ReadAndStat().st_nlink, 2u) << "a link through the mount";
  ASSERT_EQ(unlink(ds_.MntPath("g").c_str()), 0) << strerror(errno);
  EXPECT_EQ(ReadAndStat().st_nlink, 1u) << "an unlink through the mount";
  ASSERT_EQ(truncate(ds_.MntPath("f").c_str(), 100), 0) << strerror(errno);
  EXPECT_EQ(ReadAndStat().st_size, 100) << "a truncate through the mount";
  const int t = open(ds_.MntPath("f").c_str(), O_WRONLY | O_TRUNC);
  ASSERT_GE(t, 0) << strerror(errno);
  ASSERT_EQ(close(t), 0);
  EXPECT_EQ(ReadAndStat().st_size, 0) << "an open with O_TRUNC through the mount";
}

TEST_F(AttrRecordMountTest, TheNextOpenSeesAChangeUnderneathWithCloseToOpen) {
  ASSERT_NO_FATAL_FAILURE(MountOrDie({"-o", "memory=8MiB,attr_timeout=60,entry_timeout=60"}));
  ASSERT_EQ(ReadWholeFile(ds_.MntPath("f")), std::string(65536, 'a'));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // a ctime of its own
  WriteWholeFile(ds_.DataPath("f"), std::string(65536, 'b'));
  EXPECT_EQ(ReadWholeFile(ds_.MntPath("f")), std::string(65536, 'b'))
      << "an open after a change underneath read the old bytes (close_to_open = true)";
}

TEST_F(AttrRecordMountTest, WithoutCloseToOpenAChangeUnderneathShowsWithinAttrTimeout) {
  ASSERT_NO_FATAL_FAILURE(
      MountOrDie({"-o", "memory=8MiB,attr_timeout=1,entry_timeout=1,close_to_open=false"}));
  ASSERT_EQ(ReadWholeFile(ds_.MntPath("f")), std::string(65536, 'a'));
  const uint64_t before = Answers();
  ASSERT_EQ(ReadWholeFile(ds_.MntPath("f")), std::string(65536, 'a'));
  if (TestRawTierIsKernel()) {  // daemon mode checks before every read, whatever the key
    EXPECT_GT(Answers(), before) << "a second open within attr_timeout checked the store";
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  WriteWholeFile(ds_.DataPath("f"), std::string(65536, 'b'));
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  EXPECT_EQ(ReadWholeFile(ds_.MntPath("f")), std::string(65536, 'b'))
      << "old bytes past attr_timeout after a change underneath";
}

TEST_F(AttrRecordMountTest, WithAttrTimeoutZeroNothingIsAnsweredFromARecord) {
  ASSERT_NO_FATAL_FAILURE(MountOrDie({"-o", "memory=8MiB,attr_timeout=0"}));
  for (int k = 0; k < 3; ++k) ReadAndStat();
  WriteWholeFile(ds_.DataPath("f"), std::string(100, 'c'));
  EXPECT_EQ(ReadAndStat().st_size, 100) << "attr_timeout = 0 gave a size read before a change";
  EXPECT_EQ(Answers(), 0u);
}

}  // namespace
}  // namespace ccfs::testing
