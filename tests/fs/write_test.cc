// Changes made through the mount reach DATASET at once; changes made in DATASET are seen through
// the mount; whole-tree tools round-trip; failing ops give the backing file system's errno.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <functional>

#include "fs/fs_test_util.h"
#include "testing/mount_fixture.h"

namespace ccfs::testing {
namespace {

class WriteThroughMountTest : public MountTest {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(MountOrDie({"-o", "memory=2MiB,compressed_percent=25"}));
  }
};

void PwriteAll(const std::string& path, const std::string& bytes, off_t off, int flags = 0) {
  int fd = open(path.c_str(), O_WRONLY | flags);
  ASSERT_GE(fd, 0) << path << ": " << strerror(errno);
  ASSERT_EQ(pwrite(fd, bytes.data(), bytes.size(), off), static_cast<ssize_t>(bytes.size()));
  ASSERT_EQ(close(fd), 0);
}

TEST_F(WriteThroughMountTest, OverwriteOfCachedPagesIsVisibleBothSides) {
  std::string original = CompressibleBytes(100000, 1);
  WriteWholeFile(ds_.DataPath("f"), original);
  ASSERT_EQ(ReadWholeFile(ds_.MntPath("f")), original);  // now cached

  std::string patch = RandomBytes(20000, 2);
  ASSERT_NO_FATAL_FAILURE(PwriteAll(ds_.MntPath("f"), patch, 12345));
  std::string expected = original;
  expected.replace(12345, patch.size(), patch);
  EXPECT_EQ(ReadWholeFile(ds_.DataPath("f")), expected) << "the write reached DATASET";
  EXPECT_EQ(ReadWholeFile(ds_.MntPath("f")), expected) << "no stale cached page";
}

TEST_F(WriteThroughMountTest, AppendLandsAtTheEnd) {
  std::string original = CompressibleBytes(10000, 3);
  WriteWholeFile(ds_.DataPath("log"), original);
  ASSERT_EQ(ReadWholeFile(ds_.MntPath("log")), original);
  ASSERT_NO_FATAL_FAILURE(PwriteAll(ds_.MntPath("log"), "appended", 0, O_APPEND));
  EXPECT_EQ(ReadWholeFile(ds_.DataPath("log")), original + "appended");
  EXPECT_EQ(ReadWholeFile(ds_.MntPath("log")), original + "appended");
}

TEST_F(WriteThroughMountTest, CreateRenameTruncateUnlinkAreVisibleInDataset) {
  WriteWholeFile(ds_.MntPath("new"), "fresh bytes");
  EXPECT_EQ(ReadWholeFile(ds_.DataPath("new")), "fresh bytes");

  ASSERT_EQ(rename(ds_.MntPath("new").c_str(), ds_.MntPath("renamed").c_str()), 0);
  EXPECT_FALSE(std::filesystem::exists(ds_.DataPath("new")));
  EXPECT_EQ(ReadWholeFile(ds_.DataPath("renamed")), "fresh bytes");

  // Shrink a cached file, then grow it: the bytes past the old end must read as zeros.
  std::string big = CompressibleBytes(50000, 4);
  WriteWholeFile(ds_.DataPath("t"), big);
  ASSERT_EQ(ReadWholeFile(ds_.MntPath("t")), big);
  ASSERT_EQ(truncate(ds_.MntPath("t").c_str(), 9000), 0);
  EXPECT_EQ(std::filesystem::file_size(ds_.DataPath("t")), 9000u);
  ASSERT_EQ(truncate(ds_.MntPath("t").c_str(), 20000), 0);
  std::string expected = big.substr(0, 9000) + std::string(11000, '\0');
  EXPECT_EQ(ReadWholeFile(ds_.MntPath("t")), expected);
  EXPECT_EQ(ReadWholeFile(ds_.DataPath("t")), expected);

  // O_TRUNC on open of a cached file.
  WriteWholeFile(ds_.MntPath("t"), "short");
  EXPECT_EQ(ReadWholeFile(ds_.MntPath("t")), "short");
  EXPECT_EQ(ReadWholeFile(ds_.DataPath("t")), "short");

  ASSERT_EQ(unlink(ds_.MntPath("renamed").c_str()), 0);
  EXPECT_FALSE(std::filesystem::exists(ds_.DataPath("renamed")));

  ASSERT_EQ(mkdir(ds_.MntPath("dir").c_str(), 0750), 0);
  struct stat st;
  ASSERT_EQ(stat(ds_.DataPath("dir").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0750u);
  ASSERT_EQ(symlink("../t", ds_.MntPath("dir/link").c_str()), 0);
  EXPECT_EQ(std::filesystem::read_symlink(ds_.DataPath("dir/link")), "../t");
  EXPECT_EQ(ReadWholeFile(ds_.MntPath("dir/link")), "short");
  ASSERT_EQ(link(ds_.MntPath("t").c_str(), ds_.MntPath("dir/hard").c_str()), 0);
  ASSERT_EQ(stat(ds_.DataPath("t").c_str(), &st), 0);
  EXPECT_EQ(st.st_nlink, 2u);
  ASSERT_EQ(chmod(ds_.MntPath("t").c_str(), 0600), 0);
  ASSERT_EQ(stat(ds_.DataPath("t").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  ASSERT_EQ(unlink(ds_.MntPath("dir/link").c_str()), 0);
  ASSERT_EQ(unlink(ds_.MntPath("dir/hard").c_str()), 0);
  ASSERT_EQ(rmdir(ds_.MntPath("dir").c_str()), 0);
  EXPECT_FALSE(std::filesystem::exists(ds_.DataPath("dir")));
}

TEST_F(WriteThroughMountTest, ChangeMadeInDatasetIsSeenThroughMount) {
  std::string v1 = CompressibleBytes(64 * 1024, 10);
  WriteWholeFile(ds_.DataPath("f"), v1);
  int fd = open(ds_.MntPath("f").c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  std::string got(v1.size(), '\0');
  ASSERT_EQ(pread(fd, got.data(), got.size(), 0), static_cast<ssize_t>(got.size()));
  ASSERT_EQ(got, v1);  // cached now

  // Same size, different bytes, written behind the mount's back while the mount keeps it open.
  std::string v2 = RandomBytes(v1.size(), 11);
  ASSERT_NO_FATAL_FAILURE(PwriteAll(ds_.DataPath("f"), v2, 0));
  AwaitChangeUnderneath(1.0);  // the mount's attr_timeout (raw_tier = kernel's bound)
  ASSERT_EQ(pread(fd, got.data(), got.size(), 0), static_cast<ssize_t>(got.size()));
  EXPECT_EQ(got, v2) << "a stale cached page was served";
  close(fd);

  // Grown behind the mount's back: a read to EOF sees the new tail.
  std::string tail = CompressibleBytes(30000, 12);
  ASSERT_NO_FATAL_FAILURE(PwriteAll(ds_.DataPath("f"), tail, static_cast<off_t>(v2.size())));
  AwaitChangeUnderneath(1.0);
  EXPECT_EQ(ReadWholeFile(ds_.MntPath("f")), v2 + tail);

  // A new file in DATASET appears at once.
  WriteWholeFile(ds_.DataPath("g"), "new file");
  EXPECT_EQ(ReadWholeFile(ds_.MntPath("g")), "new file");
}

TEST_F(WriteThroughMountTest, TarAndCpRoundTripATree) {
  MakeMixedDataset(ds_.DataPath(""), 1 << 20);
  symlink("text", ds_.DataPath("link_to_text").c_str());
  // tar out of the mount into the mount, then cp -a within it; compare with DATASET.
  CommandResult tar = RunCommand(
      {"sh", "-c", "mkdir " + ds_.MntPath("copy") + " && tar -C " + ds_.mnt() +
                       " --exclude=./copy -cf - text bin link_to_text zeros | tar -C " +
                       ds_.MntPath("copy") + " -xpf -"});
  ASSERT_EQ(tar.exit_code, 0) << tar.output;
  CommandResult cp = RunCommand({"cp", "-a", ds_.MntPath("copy"), ds_.MntPath("copy2")});
  ASSERT_EQ(cp.exit_code, 0) << cp.output;
  for (const char* copy : {"copy", "copy2"}) {
    CommandResult diff = RunCommand({"sh", "-c", "cd " + ds_.data() + " && diff -r --no-dereference text " +
                                                     std::string(copy) + "/text && diff -r bin " +
                                                     copy + "/bin && cmp zeros " + copy + "/zeros"});
    EXPECT_EQ(diff.exit_code, 0) << copy << ": " << diff.output;
    EXPECT_EQ(std::filesystem::read_symlink(ds_.DataPath(std::string(copy) + "/link_to_text")), "text");
  }
}

// Runs `op` on the path under DATASET and under the mount; both must fail with the same errno.
void ExpectSameErrno(const MountedDataset& ds, const std::string& what,
                     const std::function<int(const std::string& base)>& op) {
  errno = 0;
  int direct = op(ds.data());
  int direct_errno = errno;
  errno = 0;
  int mounted = op(ds.mnt());
  int mounted_errno = errno;
  EXPECT_EQ(direct, -1) << what;
  EXPECT_EQ(mounted, -1) << what;
  EXPECT_EQ(mounted_errno, direct_errno)
      << what << ": mount gave " << strerror(mounted_errno) << ", DATASET gave "
      << strerror(direct_errno);
}

TEST_F(WriteThroughMountTest, FailingOpsReturnTheBackingErrno) {
  mkdir(ds_.DataPath("full").c_str(), 0755);
  WriteWholeFile(ds_.DataPath("full/x"), "x");
  mkdir(ds_.DataPath("empty_dir").c_str(), 0755);
  ExpectSameErrno(ds_, "open missing", [](const std::string& b) {
    return open((b + "/missing").c_str(), O_RDONLY);
  });
  ExpectSameErrno(ds_, "mkdir existing", [](const std::string& b) {
    return mkdir((b + "/full").c_str(), 0755);
  });
  ExpectSameErrno(ds_, "rmdir non-empty", [](const std::string& b) {
    return rmdir((b + "/full").c_str());
  });
  ExpectSameErrno(ds_, "rename dir over non-empty dir", [](const std::string& b) {
    return rename((b + "/empty_dir").c_str(), (b + "/full").c_str());
  });
  ExpectSameErrno(ds_, "unlink a directory", [](const std::string& b) {
    return unlink((b + "/full").c_str());
  });
  ExpectSameErrno(ds_, "create exclusive existing", [](const std::string& b) {
    return open((b + "/full/x").c_str(), O_CREAT | O_EXCL | O_WRONLY, 0644);
  });
  ExpectSameErrno(ds_, "rmdir a file", [](const std::string& b) {
    return rmdir((b + "/full/x").c_str());
  });
  ExpectSameErrno(ds_, "open a file as a directory", [](const std::string& b) {
    return open((b + "/full/x/y").c_str(), O_RDONLY);
  });
}

TEST_F(WriteThroughMountTest, NothingOutsideTheDatasetIsReachable) {
  // ".." from the mount root leaves the mount in the caller's namespace, never the dataset's
  // parent through the daemon; and the daemon never follows an absolute symlink.
  symlink("/etc/hostname", ds_.DataPath("abs").c_str());
  struct stat st;
  ASSERT_EQ(lstat(ds_.MntPath("abs").c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  EXPECT_EQ(std::filesystem::read_symlink(ds_.MntPath("abs")), "/etc/hostname");
  EXPECT_FALSE(std::filesystem::exists(ds_.MntPath("daemon.log")));
  EXPECT_FALSE(std::filesystem::exists(ds_.MntPath("data")));
}

}  // namespace
}  // namespace ccfs::testing
