// A read-only mount in raw_tier = kernel mode opens its data files without OPEN and RELEASE
// (fuse/read_handles.h): every file reads its own bytes, the kernel sends one OPEN in all (the one
// answered ENOSYS) and no RELEASE, a change underneath is still seen within attr_timeout through
// a descriptor held open and by a new open, the read handles stay within their bound, and
// stats.json is still one whole snapshot per open.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "fs/fs_test_util.h"
#include "fs/metrics_test_util.h"
#include "testing/mount_fixture.h"

namespace ccfs::testing {
namespace {

class ReadOnlyMountTest : public MountTest {
 protected:
  void MountReadOnly(const std::string& options) {
    ASSERT_NO_FATAL_FAILURE(MountOrDie({"-o", "ro,raw_tier=kernel," + options}));
  }
  // File k's bytes: 1 B to ~100 KiB, compressible, each file's own.
  static std::string Content(int k) { return CompressibleBytes(1 + (k * 7919) % 100000, 50 + k); }
};

TEST_F(ReadOnlyMountTest, FilesReadRightWithOneOpenInAllAndNoRelease) {
  if (!HaveCurl()) GTEST_SKIP() << "curl not found: run scripts/setup.sh (Debian curl)";
  const int port = FreePort();
  ASSERT_GT(port, 0);
  constexpr int kFiles = 30;
  for (int k = 0; k < kFiles; ++k) WriteWholeFile(ds_.DataPath(fmt::format("f{}", k)), Content(k));
  ASSERT_NO_FATAL_FAILURE(
      MountReadOnly(fmt::format("memory=8MiB,metrics=127.0.0.1:{}", port)));
  for (int pass = 0; pass < 2; ++pass) {
    for (int k = 0; k < kFiles; ++k) {
      ASSERT_TRUE(ReadWholeFile(ds_.MntPath(fmt::format("f{}", k))) == Content(k))
          << "f" << k << " pass " << pass;
    }
  }
  // The warm-up's ioctl names no handle either: it opens the file's read handle itself.
  CommandResult warm = RunCcfs({"warmup", ds_.mnt(), "f3"});
  EXPECT_EQ(warm.exit_code, 0) << warm.output;
  CommandResult r = Curl(port);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_LE(Sample(r.out, "ccfs_fuse_requests_total{op=\"open\"}"), 1) << r.out;
  EXPECT_LE(Sample(r.out, "ccfs_fuse_requests_total{op=\"release\"}"), 0) << r.out;  // -1: none
  EXPECT_LE(Sample(r.out, "ccfs_fuse_requests_total{op=\"flush\"}"), 1) << r.out;
  EXPECT_GE(Sample(r.out, "ccfs_fuse_requests_total{op=\"read\"}"), kFiles) << r.out;
  // A read-only mount refuses writes, as any does.
  EXPECT_LT(open(ds_.MntPath("f0").c_str(), O_WRONLY), 0);
  EXPECT_EQ(errno, EROFS);
}

TEST_F(ReadOnlyMountTest, AChangeUnderneathIsSeenWithinAttrTimeoutByAnOpenFileAndANewOpen) {
  const std::string v1 = CompressibleBytes(200000, 3);
  const std::string v2 = CompressibleBytes(200000, 4);  // the same size: only mtime and ctime tell
  WriteWholeFile(ds_.DataPath("f"), v1);
  ASSERT_NO_FATAL_FAILURE(MountReadOnly("memory=8MiB,compressed_percent=50,attr_timeout=0.2"));
  int fd = open(ds_.MntPath("f").c_str(), O_RDONLY);
  ASSERT_GE(fd, 0) << strerror(errno);
  std::string got(v1.size(), '\0');
  ASSERT_EQ(pread(fd, got.data(), got.size(), 0), static_cast<ssize_t>(got.size()));
  ASSERT_TRUE(got == v1);
  WriteWholeFile(ds_.DataPath("f"), v2);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  ASSERT_EQ(pread(fd, got.data(), got.size(), 0), static_cast<ssize_t>(got.size()));
  EXPECT_TRUE(got == v2) << "stale bytes through an open file past attr_timeout";
  close(fd);
  // Grown underneath: a new open past the bound reads the whole new file.
  const std::string v3 = v2 + CompressibleBytes(30000, 5);
  WriteWholeFile(ds_.DataPath("f"), v3);
  std::this_thread::sleep_for(std::chrono::milliseconds(1300));  // entry_timeout 1 s, then 0.2 s
  EXPECT_TRUE(ReadWholeFile(ds_.MntPath("f")) == v3) << "stale bytes through a new open";
}

TEST_F(ReadOnlyMountTest, ReadHandlesStayWithinTheirBound) {
  constexpr int kFiles = 80;
  for (int k = 0; k < kFiles; ++k) WriteWholeFile(ds_.DataPath(fmt::format("f{}", k)), Content(k));
  // max_open_files = 16: at most 4 read handles, of two descriptors each. The reads are one after
  // another, so each sample follows the last read's reply.
  ASSERT_NO_FATAL_FAILURE(MountReadOnly("memory=8MiB,max_open_files=16"));
  size_t most = 0;
  for (int k = 0; k < kFiles; ++k) {
    ASSERT_TRUE(ReadWholeFile(ds_.MntPath(fmt::format("f{}", k))) == Content(k)) << "f" << k;
    most = std::max(most, OpenDataDescriptors(ds_.pid(), ds_.data()));
  }
  EXPECT_LE(most, 2u * 4) << "read handles beyond their bound";
  EXPECT_GE(most, 2u) << "no read handle seen: the daemon read the files some other way";
}

TEST_F(ReadOnlyMountTest, StatsJsonIsOneWholeSnapshotPerOpen) {
  WriteWholeFile(ds_.DataPath("f"), CompressibleBytes(300000, 9));
  ASSERT_NO_FATAL_FAILURE(MountReadOnly("memory=8MiB"));
  ASSERT_FALSE(ReadWholeFile(ds_.MntPath("f")).empty());  // the mount has stopped sending OPEN
  const std::string path = ds_.MntPath(".ccfs/stats.json");
  // Two opens at once, with reads of other snapshots between them: each reads its own, whole,
  // in small reads, and fstat gives its size.
  int a = open(path.c_str(), O_RDONLY);
  ASSERT_GE(a, 0) << strerror(errno);
  for (int k = 0; k < 5; ++k) EXPECT_FALSE(ds_.Stats().is_null());
  int b = open(path.c_str(), O_RDONLY);
  ASSERT_GE(b, 0) << strerror(errno);
  for (int fd : {a, b}) {
    struct stat st;
    ASSERT_EQ(fstat(fd, &st), 0);
    std::string text;
    char buf[1000];
    for (ssize_t n; (n = read(fd, buf, sizeof(buf))) > 0;) {
      text.append(buf, n);
      (void)ds_.Stats();  // a newer snapshot between every two reads
    }
    EXPECT_EQ(static_cast<off_t>(text.size()), st.st_size);
    nlohmann::json doc = nlohmann::json::parse(text, nullptr, false);
    ASSERT_FALSE(doc.is_discarded()) << text.substr(0, 200);
    EXPECT_EQ(doc["daemon"]["pid"].get<pid_t>(), ds_.pid());
    close(fd);
  }
}

}  // namespace
}  // namespace ccfs::testing
