// passthrough = true (raw_tier = kernel; fuse/passthrough.h): a file the tiers hold none of is read
// by the kernel from the store's file, with no READ reaching the daemon, and its next open is
// served by the tiers; while one open of a file is passed through every other one is too, so a
// writable open made meanwhile works and its writes show to every reader and to the opens after;
// a mapping of a passed-through file reads its bytes. A kernel without passthrough (before 6.9) or
// a daemon without CAP_SYS_ADMIN skips the tests.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>

#include "fs/fs_test_util.h"
#include "testing/mount_fixture.h"

namespace ccfs::testing {
namespace {

// Whether this kernel can pass files through (6.9+) for a daemon that can register them (root).
bool KernelPassesThrough(std::string* why) {
  struct utsname u;
  int major = 0, minor = 0;
  if (uname(&u) != 0 || std::sscanf(u.release, "%d.%d", &major, &minor) != 2) {
    *why = "cannot read the kernel's version";
    return false;
  }
  if (major < 6 || (major == 6 && minor < 9)) {
    *why = std::string("FUSE passthrough needs Linux 6.9+, this is ") + u.release;
    return false;
  }
  if (geteuid() != 0) {
    *why = "registering a passthrough file needs CAP_SYS_ADMIN: run as root";
    return false;
  }
  return true;
}

class PassthroughMountTest : public MountTest {
 protected:
  void SetUp() override {
    std::string why;
    if (!KernelPassesThrough(&why)) GTEST_SKIP() << why;
  }
  void MountPassthrough() {
    ASSERT_NO_FATAL_FAILURE(
        MountOrDie({"-o", "raw_tier=kernel,passthrough=true,memory=32MiB,compressed_percent=50"}));
  }
  uint64_t Stat(const char* name) { return ds_.Stats()[name].get<uint64_t>(); }
  // Gives the kernel's RELEASEs of the files just closed time to reach the daemon: it sends them
  // after close(2) returns, and an open's mode lasts until the daemon has it.
  static void AwaitReleases() { std::this_thread::sleep_for(std::chrono::milliseconds(500)); }
};

TEST_F(PassthroughMountTest, AFileTheTiersHoldNoneOfIsReadByTheKernelThenByTheTiers) {
  const std::string bytes = CompressibleBytes(3 << 20, 7);
  WriteWholeFile(ds_.DataPath("f"), bytes);
  ASSERT_NO_FATAL_FAILURE(MountPassthrough());
  EXPECT_EQ(ReadWholeFile(ds_.MntPath("f")), bytes);
  EXPECT_EQ(Stat("reads"), 0u) << "a passed-through open's reads reached the daemon";
  EXPECT_EQ(Stat("passthrough_opens"), 1u);
  AwaitReleases();
  EXPECT_EQ(ReadWholeFile(ds_.MntPath("f")), bytes);
  EXPECT_GT(Stat("reads"), 0u) << "the file's next open was passed through too";
  EXPECT_EQ(Stat("passthrough_opens"), 1u);
  AwaitReleases();
  EXPECT_EQ(ReadWholeFile(ds_.MntPath("f")), bytes);
  EXPECT_EQ(Stat("passthrough_opens"), 1u);
}

TEST_F(PassthroughMountTest, AWritableOpenBesideAPassedThroughOneIsToo) {
  const std::string bytes = CompressibleBytes(1 << 20, 11);
  WriteWholeFile(ds_.DataPath("f"), bytes);
  ASSERT_NO_FATAL_FAILURE(MountPassthrough());
  const int r = open(ds_.MntPath("f").c_str(), O_RDONLY);
  ASSERT_GE(r, 0) << strerror(errno);
  const int w = open(ds_.MntPath("f").c_str(), O_RDWR);
  ASSERT_GE(w, 0) << strerror(errno) << ": a writable open beside a passed-through one";
  EXPECT_EQ(Stat("passthrough_opens"), 2u);
  const std::string x(20000, 'x');
  ASSERT_EQ(pwrite(w, x.data(), x.size(), 5000), static_cast<ssize_t>(x.size()));
  std::string got(x.size(), '\0');
  ASSERT_EQ(pread(r, got.data(), got.size(), 5000), static_cast<ssize_t>(got.size()));
  EXPECT_EQ(got, x) << "the passed-through reader does not see the write";
  // A mapping of the passed-through file reads the store's bytes.
  void* m = mmap(nullptr, bytes.size(), PROT_READ, MAP_SHARED, r, 0);
  ASSERT_NE(m, MAP_FAILED) << strerror(errno);
  EXPECT_EQ(std::memcmp(static_cast<char*>(m) + 5000, x.data(), x.size()), 0);
  EXPECT_EQ(std::memcmp(static_cast<char*>(m) + 30000, bytes.data() + 30000, 4096), 0);
  munmap(m, bytes.size());
  ASSERT_EQ(close(w), 0);
  ASSERT_EQ(close(r), 0);
  AwaitReleases();
  std::string want = bytes;
  want.replace(5000, x.size(), x);
  EXPECT_EQ(ReadWholeFile(ds_.DataPath("f")), want) << "the store's file";
  // The next opens are served by the daemon, and see the write too.
  EXPECT_EQ(ReadWholeFile(ds_.MntPath("f")), want);
  EXPECT_GT(Stat("reads"), 0u);
  // And a write through such an open shows to the next reader.
  const int w2 = open(ds_.MntPath("f").c_str(), O_WRONLY);
  ASSERT_GE(w2, 0) << strerror(errno);
  ASSERT_EQ(pwrite(w2, "yyyy", 4, 0), 4);
  ASSERT_EQ(close(w2), 0);
  want.replace(0, 4, "yyyy");
  EXPECT_EQ(ReadWholeFile(ds_.MntPath("f")), want);
  EXPECT_EQ(Stat("passthrough_opens"), 2u);
}

TEST_F(PassthroughMountTest, OpensBesideACachedOneAreCachedAndNoneFails) {
  const std::string bytes = CompressibleBytes(256 << 10, 13);
  WriteWholeFile(ds_.DataPath("f"), bytes);
  ASSERT_NO_FATAL_FAILURE(MountPassthrough());
  // A new file, created through the mount, is open cached: opens of it meanwhile are too.
  const int c = open(ds_.MntPath("g").c_str(), O_RDWR | O_CREAT | O_EXCL, 0644);
  ASSERT_GE(c, 0) << strerror(errno);
  ASSERT_EQ(pwrite(c, bytes.data(), bytes.size(), 0), static_cast<ssize_t>(bytes.size()));
  EXPECT_EQ(ReadWholeFile(ds_.MntPath("g")), bytes) << "a read-only open beside a created one";
  ASSERT_EQ(close(c), 0);
  EXPECT_EQ(Stat("passthrough_opens"), 0u);
  // Opens of `f` from two threads at once, read-only and writable: none fails, all read it.
  auto opener = [this, &bytes](int flags, int* failures) {
    for (int k = 0; k < 50; ++k) {
      const int fd = open(ds_.MntPath("f").c_str(), flags);
      if (fd < 0) {
        ++*failures;
        continue;
      }
      std::string got(4096, '\0');
      if (pread(fd, got.data(), got.size(), 8192) != 4096 || got != bytes.substr(8192, 4096)) {
        ++*failures;
      }
      close(fd);
    }
  };
  auto both = [&opener] {
    int read_failures = 0, write_failures = 0;
    std::thread a(opener, O_RDONLY, &read_failures);
    std::thread b(opener, O_RDWR, &write_failures);
    a.join();
    b.join();
    EXPECT_EQ(read_failures, 0);
    EXPECT_EQ(write_failures, 0);
  };
  // While one open of `f` is passed through, every one is.
  const int held = open(ds_.MntPath("f").c_str(), O_RDONLY);
  ASSERT_GE(held, 0) << strerror(errno);
  ASSERT_EQ(Stat("passthrough_opens"), 1u);
  both();
  EXPECT_EQ(Stat("passthrough_opens"), 101u);
  ASSERT_EQ(close(held), 0);
  AwaitReleases();
  // Afterwards none is: the file was passed through once.
  both();
  EXPECT_EQ(Stat("passthrough_opens"), 101u);
  EXPECT_GT(Stat("reads"), 0u);
}

}  // namespace
}  // namespace ccfs::testing
