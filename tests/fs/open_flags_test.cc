// Open flags the daemon passes on to DATASET keep their meaning for every descriptor it reads the
// file through (see src/fuse/open_flags.h).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "fs/fs_test_util.h"
#include "testing/mount_fixture.h"

namespace ccfs::testing {
namespace {

class OpenFlagsMountTest : public MountTest {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(MountOrDie({"-o", "memory=2MiB,compressed_percent=0"}));
  }
};

// A read through a descriptor opened O_NOATIME leaves DATASET's atime alone, as it would on
// DATASET itself, even though the daemon's page reads use a second descriptor of its own.
TEST_F(OpenFlagsMountTest, NoatimeReadsLeaveTheBackingAtimeAlone) {
  const std::string data = CompressibleBytes(100000, 3);
  WriteWholeFile(ds_.DataPath("f"), data);
  // An atime long before the mtime: relatime would update it on the next ordinary read.
  struct timespec times[2] = {{1000, 0}, {0, UTIME_OMIT}};
  ASSERT_EQ(utimensat(AT_FDCWD, ds_.DataPath("f").c_str(), times, 0), 0);

  int fd = open(ds_.MntPath("f").c_str(), O_RDONLY | O_NOATIME);
  ASSERT_GE(fd, 0) << strerror(errno);
  std::string got(data.size(), '\0');
  ssize_t n = pread(fd, got.data(), got.size(), 0);
  close(fd);
  ASSERT_EQ(n, static_cast<ssize_t>(data.size()));
  EXPECT_TRUE(got == data);
  struct stat st;
  ASSERT_EQ(stat(ds_.DataPath("f").c_str(), &st), 0);
  EXPECT_EQ(st.st_atim.tv_sec, 1000) << "the daemon's read updated the atime";

  // The same read of a twin file without O_NOATIME does update it (relatime): the check above can
  // fail.
  WriteWholeFile(ds_.DataPath("g"), data);
  ASSERT_EQ(utimensat(AT_FDCWD, ds_.DataPath("g").c_str(), times, 0), 0);
  EXPECT_TRUE(ReadWholeFile(ds_.MntPath("g")) == data);
  ASSERT_EQ(stat(ds_.DataPath("g").c_str(), &st), 0);
  EXPECT_NE(st.st_atim.tv_sec, 1000) << "relatime did not update the atime";
}

}  // namespace
}  // namespace ccfs::testing
