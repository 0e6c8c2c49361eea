// Writers that open their files with O_DIRECT (databases, fio --direct=1, dd oflag=direct): their
// writes succeed through the mount at any block size, are in DATASET and written back to its
// device when the call returns (nothing of the range left dirty in DATASET's page cache), and are
// never read back stale from either cache tier.
#include <fcntl.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include "fs/fs_test_util.h"
#include "testing/mount_fixture.h"

namespace ccfs::testing {
namespace {

class DirectIoMountTest : public MountTest {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(MountOrDie({"-o", "memory=4MiB,compressed_percent=50"}));
  }
};

bool HaveFio() { return access("/usr/bin/fio", X_OK) == 0; }

// Page-cache state of a byte range (cachestat(2), Linux 6.5+).
struct CacheStat {
  uint64_t cache = 0, dirty = 0, writeback = 0, evicted = 0, recently_evicted = 0;
};
#ifndef __NR_cachestat
#define __NR_cachestat 451
#endif
bool CacheStatOf(const std::string& path, uint64_t off, uint64_t len, CacheStat* cs) {
  struct {
    uint64_t off, len;
  } range{off, len};
  int fd = open(path.c_str(), O_RDONLY);
  if (fd < 0) return false;
  long rc = syscall(__NR_cachestat, fd, &range, cs, 0);
  close(fd);
  return rc == 0;
}

std::unique_ptr<char, decltype(&free)> AlignedCopy(const std::string& bytes) {
  void* p = nullptr;
  if (posix_memalign(&p, 4096, bytes.size() + 4096) != 0) p = nullptr;
  if (p != nullptr) memcpy(p, bytes.data(), bytes.size());
  return {static_cast<char*>(p), &free};
}

// fio writes with O_DIRECT at each block size over the same file, then reads every block back
// (O_DIRECT too) and checks its crc32c. Each pass rewrites blocks that the previous pass's verify
// read into the cache, so a stale page in either tier fails the verify.
TEST_F(DirectIoMountTest, FioDirectWritesVerifyAtEveryBlockSize) {
  if (!HaveFio()) GTEST_SKIP() << "fio is not installed";
  const std::string file = ds_.MntPath("fio.dat");
  int seed = 1;
  for (const char* bs : {"4k", "8k", "64k", "1M"}) {
    CommandResult r = RunCommand(
        {"fio", "--name=direct", "--filename=" + file, "--size=8M", "--bs=" + std::string(bs),
         "--direct=1", "--ioengine=psync", "--rw=randwrite", "--verify=crc32c",
         "--do_verify=1", "--verify_fatal=1", "--verify_state_save=0", "--randseed=" + std::to_string(seed++),
         "--output-format=terse"},
        180);
    ASSERT_EQ(r.exit_code, 0) << "bs=" << bs << "\n" << r.output;
  }
  // A second writer at a block size the kernel's page does not divide, at offsets it does not
  // align: FUSE passes such O_DIRECT writes on (ext4 would refuse them), and they must land.
  CommandResult r = RunCommand(
      {"fio", "--name=odd", "--filename=" + file, "--size=2M", "--bs=6000", "--offset=512",
       "--direct=1", "--ioengine=psync", "--rw=write", "--verify=crc32c", "--do_verify=1",
       "--verify_fatal=1", "--verify_state_save=0", "--output-format=terse"},
      180);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(ReadWholeFile(ds_.DataPath("fio.dat")) == ReadWholeFile(file))
      << "DATASET and the mount disagree after the O_DIRECT writes";
}

TEST_F(DirectIoMountTest, DdOflagDirectWritesAtEveryBlockSize) {
  for (const char* bs : {"4096", "65536", "1048576"}) {
    const std::string name = std::string("dd") + bs;
    CommandResult r = RunCommand({"dd", "if=/dev/urandom", "of=" + ds_.MntPath(name),
                                  "bs=" + std::string(bs), "count=2", "oflag=direct",
                                  "status=none"});
    ASSERT_EQ(r.exit_code, 0) << "bs=" << bs << ": " << r.output;
    std::string written = ReadWholeFile(ds_.DataPath(name));
    EXPECT_EQ(written.size(), 2 * std::stoul(bs));
    EXPECT_TRUE(ReadWholeFile(ds_.MntPath(name)) == written) << name;
  }
}

// The bytes of an O_DIRECT write are in DATASET and no longer dirty in its page cache when the
// write returns (O_DIRECT on DATASET would have written them to the device), and a read through
// the mount of pages cached before the write returns the new bytes.
TEST_F(DirectIoMountTest, DirectWriteIsOnTheBackingDeviceAndNeverStale) {
  const std::string original = CompressibleBytes(1 << 20, 7);
  WriteWholeFile(ds_.DataPath("f"), original);
  ASSERT_EQ(ReadWholeFile(ds_.MntPath("f")), original);  // every page cached now

  const std::string patch = RandomBytes(256 << 10, 8);
  auto buf = AlignedCopy(patch);
  ASSERT_NE(buf, nullptr);
  int fd = open(ds_.MntPath("f").c_str(), O_RDWR | O_DIRECT);
  ASSERT_GE(fd, 0) << strerror(errno);
  ssize_t n = pwrite(fd, buf.get(), patch.size(), 128 << 10);
  int err = errno;
  if (n != static_cast<ssize_t>(patch.size())) close(fd);
  ASSERT_EQ(n, static_cast<ssize_t>(patch.size())) << strerror(err);
  CacheStat cs;
  if (CacheStatOf(ds_.DataPath("f"), 128 << 10, patch.size(), &cs)) {
    EXPECT_EQ(cs.dirty + cs.writeback, 0u) << "the O_DIRECT write is still only in memory";
  }
  // Unaligned offset and length: FUSE lets O_DIRECT writes through at any offset.
  const std::string odd = RandomBytes(5000, 9);
  auto odd_buf = AlignedCopy(odd);
  n = pwrite(fd, odd_buf.get(), odd.size(), 1000);
  err = errno;
  ASSERT_EQ(close(fd), 0);
  ASSERT_EQ(n, static_cast<ssize_t>(odd.size())) << strerror(err);

  std::string expected = original;
  expected.replace(128 << 10, patch.size(), patch);
  expected.replace(1000, odd.size(), odd);
  EXPECT_TRUE(ReadWholeFile(ds_.DataPath("f")) == expected) << "DATASET";
  EXPECT_TRUE(ReadWholeFile(ds_.MntPath("f")) == expected) << "through the mount: a stale page";
}

}  // namespace
}  // namespace ccfs::testing
