// Memory mappings of data files (opened with direct_io): private mappings, and shared read-only
// mappings (LMDB readers, git packs, Python's mmap default), read the file's bytes and see writes
// made through the mount afterwards.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <tuple>

#include "fs/fs_test_util.h"
#include "testing/mount_fixture.h"

namespace ccfs::testing {
namespace {

class MmapMountTest : public MountTest {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(MountOrDie({"-o", "memory=2MiB,compressed_percent=50"}));
  }
};

// Maps the whole of `path` (opened with `open_flags`) and returns its bytes, or "errno N".
std::string MapAndCopy(const std::string& path, int open_flags, int map_flags) {
  int fd = open(path.c_str(), open_flags);
  if (fd < 0) return "open errno " + std::to_string(errno);
  off_t size = lseek(fd, 0, SEEK_END);
  void* p = mmap(nullptr, size, PROT_READ, map_flags, fd, 0);
  int err = errno;
  close(fd);
  if (p == MAP_FAILED) return "mmap errno " + std::to_string(err) + " (" + strerror(err) + ")";
  std::string out(static_cast<const char*>(p), size);
  munmap(p, size);
  return out;
}

TEST_F(MmapMountTest, SharedReadOnlyMappingReadsTheFile) {
  const std::string bytes = CompressibleBytes(300000, 5);
  WriteWholeFile(ds_.DataPath("f"), bytes);
  for (auto [open_flags, map_flags, what] :
       {std::tuple{O_RDONLY, MAP_PRIVATE, "private"}, std::tuple{O_RDONLY, MAP_SHARED, "shared"},
        std::tuple{O_RDWR, MAP_SHARED, "shared, file open O_RDWR"}}) {
    std::string got = MapAndCopy(ds_.MntPath("f"), open_flags, map_flags);
    EXPECT_TRUE(got == bytes) << what << ": " << got.substr(0, 80);
  }
}

// A shared mapping stays coherent with writes made through the mount (the kernel drops the
// mapped pages that a direct_io write covers).
TEST_F(MmapMountTest, SharedMappingSeesWritesThroughTheMount) {
  const std::string bytes = CompressibleBytes(100000, 6);
  WriteWholeFile(ds_.DataPath("f"), bytes);
  int fd = open(ds_.MntPath("f").c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  void* p = mmap(nullptr, bytes.size(), PROT_READ, MAP_SHARED, fd, 0);
  int err = errno;
  close(fd);  // the mapping keeps the file open
  ASSERT_NE(p, MAP_FAILED) << strerror(err);
  const char* m = static_cast<const char*>(p);
  EXPECT_TRUE(std::string(m, bytes.size()) == bytes);

  int wfd = open(ds_.MntPath("f").c_str(), O_WRONLY);
  ASSERT_GE(wfd, 0);
  const std::string patch = RandomBytes(9000, 7);
  ASSERT_EQ(pwrite(wfd, patch.data(), patch.size(), 5000), static_cast<ssize_t>(patch.size()));
  close(wfd);
  std::string expected = bytes;
  expected.replace(5000, patch.size(), patch);
  EXPECT_TRUE(std::string(m, bytes.size()) == expected) << "the mapping shows stale pages";
  munmap(p, bytes.size());
}

}  // namespace
}  // namespace ccfs::testing
