// Paths and access: "..", absolute symlinks and symlink loops never make the daemon act on
// anything outside DATASET; permissions are enforced as on the backing directory; only the
// mounting user reaches the mount unless allow_other was asked for.
#include <fcntl.h>
#include <grp.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <string>

#include "reliability/reliability_util.h"
#include "testing/mount_fixture.h"

namespace ccfs::testing {
namespace {

constexpr uid_t kNobody = 65534;

// Runs `body` in a child as uid/gid `kNobody`; returns the errno body returns (0 = success).
template <typename F>
int AsNobody(F body) {
  pid_t pid = ForkChild([&] {
    if (setgroups(0, nullptr) != 0 || setgid(kNobody) != 0 || setuid(kNobody) != 0) return 250;
    return body();
  });
  return WaitChild(pid, 20);
}

class PathsTest : public MountTest {
 protected:
  void SetUp() override {
    outside_ = ds_.root() + "/outside";
    ASSERT_EQ(mkdir(outside_.c_str(), 0755), 0);
    WriteWholeFile(outside_ + "/secret", "outside DATASET");
    chmod((outside_ + "/secret").c_str(), 0644);
    struct timespec ts[2] = {{1000000000, 0}, {1000000000, 0}};
    utimensat(AT_FDCWD, (outside_ + "/secret").c_str(), ts, 0);
    stat((outside_ + "/secret").c_str(), &secret_before_);
  }
  void ExpectSecretUntouched() {
    struct stat st;
    ASSERT_EQ(stat((outside_ + "/secret").c_str(), &st), 0);
    EXPECT_EQ(ReadWholeFile(outside_ + "/secret"), "outside DATASET");
    EXPECT_EQ(st.st_mode, secret_before_.st_mode);
    EXPECT_EQ(st.st_mtim.tv_sec, secret_before_.st_mtim.tv_sec);
    EXPECT_EQ(st.st_atim.tv_sec, secret_before_.st_atim.tv_sec);
    EXPECT_EQ(st.st_uid, secret_before_.st_uid);
    EXPECT_EQ(st.st_size, secret_before_.st_size);
  }
  std::string outside_;
  struct stat secret_before_;
};

TEST_F(PathsTest, SymlinksAndDotDotNeverLetTheDaemonActOutsideDataset) {
  ASSERT_EQ(symlink((outside_ + "/secret").c_str(), ds_.DataPath("abs").c_str()), 0);
  ASSERT_EQ(symlink("../outside/secret", ds_.DataPath("rel").c_str()), 0);
  ASSERT_EQ(symlink("loop2", ds_.DataPath("loop1").c_str()), 0);
  ASSERT_EQ(symlink("loop1", ds_.DataPath("loop2").c_str()), 0);
  ASSERT_EQ(symlink(outside_.c_str(), ds_.DataPath("absdir").c_str()), 0);
  ASSERT_EQ(mkdir(ds_.DataPath("sub").c_str(), 0755), 0);
  MountOrDie({});

  // The link itself is served, unresolved, as on the backing directory.
  char buf[4096];
  ssize_t n = readlink(ds_.MntPath("abs").c_str(), buf, sizeof(buf));
  ASSERT_GT(n, 0);
  EXPECT_EQ(std::string(buf, n), outside_ + "/secret");
  struct stat st;
  ASSERT_EQ(lstat(ds_.MntPath("abs").c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  // Loops end in ELOOP, promptly.
  errno = 0;
  EXPECT_LT(open(ds_.MntPath("loop1").c_str(), O_RDONLY), 0);
  EXPECT_EQ(errno, ELOOP);
  errno = 0;
  EXPECT_NE(stat(ds_.MntPath("loop1/x").c_str(), &st), 0);
  EXPECT_EQ(errno, ELOOP);
  // O_NOFOLLOW opens nothing.
  errno = 0;
  EXPECT_LT(open(ds_.MntPath("abs").c_str(), O_RDONLY | O_NOFOLLOW), 0);
  EXPECT_EQ(errno, ELOOP);
  // Operations on the links, without following, change the links, not their targets.
  struct timespec ts[2] = {{1500000000, 0}, {1500000000, 0}};
  EXPECT_EQ(utimensat(AT_FDCWD, ds_.MntPath("abs").c_str(), ts, AT_SYMLINK_NOFOLLOW), 0);
  EXPECT_EQ(utimensat(AT_FDCWD, ds_.MntPath("rel").c_str(), ts, AT_SYMLINK_NOFOLLOW), 0);
  if (geteuid() == 0) {
    EXPECT_EQ(lchown(ds_.MntPath("abs").c_str(), kNobody, kNobody), 0);
  }
  EXPECT_NE(lsetxattr(ds_.MntPath("abs").c_str(), "user.x", "1", 1, 0), 0);  // EPERM on links
  EXPECT_EQ(truncate(ds_.MntPath("loop1").c_str(), 0), -1);
  EXPECT_EQ(rename(ds_.MntPath("abs").c_str(), ds_.MntPath("abs2").c_str()), 0);
  EXPECT_EQ(unlink(ds_.MntPath("abs2").c_str()), 0);
  EXPECT_EQ(unlink(ds_.MntPath("rel").c_str()), 0);
  EXPECT_EQ(link(ds_.MntPath("absdir").c_str(), ds_.MntPath("hard").c_str()), 0);
  EXPECT_EQ(unlink(ds_.MntPath("hard").c_str()), 0);
  ExpectSecretUntouched();
  // Creating through a symlinked directory is the kernel following the link in the caller's view
  // (the same as on DATASET); the daemon never sees a lookup below a symlink. ".." of the mount
  // root is the mount point's parent, not DATASET's.
  struct stat a, b;
  ASSERT_EQ(stat((ds_.mnt() + "/..").c_str(), &a), 0);
  ASSERT_EQ(stat(ds_.root().c_str(), &b), 0);
  EXPECT_EQ(a.st_ino, b.st_ino);
  ASSERT_EQ(stat(ds_.MntPath("sub/../..").c_str(), &a), 0);
  EXPECT_EQ(a.st_ino, b.st_ino);
  // Names with ".." components inside DATASET resolve within it.
  WriteWholeFile(ds_.DataPath("top"), "top");
  EXPECT_EQ(ReadWholeFile(ds_.MntPath("sub/../top")), "top");
  // Nothing appeared next to DATASET.
  EXPECT_FALSE(std::filesystem::exists(ds_.root() + "/abs2"));
  EXPECT_FALSE(std::filesystem::exists(ds_.root() + "/hard"));
}

TEST_F(PathsTest, OnlyTheMountingUserWithoutAllowOther) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to act as another user";
  ASSERT_EQ(chmod(ds_.root().c_str(), 0755), 0);
  WriteWholeFile(ds_.DataPath("public"), "everyone may read");
  chmod(ds_.DataPath("public").c_str(), 0644);
  MountOrDie({});
  // The backing directory itself lets nobody read the file...
  EXPECT_EQ(AsNobody([&] { return open(ds_.DataPath("public").c_str(), O_RDONLY) >= 0 ? 0 : errno; }), 0);
  // ... but the mount is the mounting user's alone.
  EXPECT_EQ(AsNobody([&] {
              struct stat st;
              return stat(ds_.MntPath("public").c_str(), &st) == 0 ? 0 : errno;
            }),
            EACCES);
  EXPECT_EQ(ReadWholeFile(ds_.MntPath("public")), "everyone may read");
}

TEST_F(PathsTest, AllowOtherEnforcesTheBackingPermissions) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to act as another user";
  ASSERT_EQ(chmod(ds_.root().c_str(), 0755), 0);
  WriteWholeFile(ds_.DataPath("public"), "everyone may read");
  WriteWholeFile(ds_.DataPath("private"), "root only");
  chmod(ds_.DataPath("public").c_str(), 0644);
  chmod(ds_.DataPath("private").c_str(), 0600);
  ASSERT_EQ(mkdir(ds_.DataPath("closed").c_str(), 0700), 0);
  WriteWholeFile(ds_.DataPath("closed/f"), "x");
  chmod(ds_.DataPath("closed/f").c_str(), 0644);
  MountOrDie({"-o", "allow_other"});
  for (const std::string& base : {ds_.data(), ds_.mnt()}) {
    SCOPED_TRACE(base);
    auto open_errno = [&](const std::string& rel, int flags) {
      return AsNobody([&] {
        int fd = open((base + "/" + rel).c_str(), flags);
        return fd >= 0 ? 0 : errno;
      });
    };
    EXPECT_EQ(open_errno("public", O_RDONLY), 0);
    EXPECT_EQ(open_errno("public", O_WRONLY), EACCES);
    EXPECT_EQ(open_errno("private", O_RDONLY), EACCES);
    EXPECT_EQ(open_errno("closed/f", O_RDONLY), EACCES);
    EXPECT_EQ(AsNobody([&] {
                int fd = open((base + "/newfile").c_str(), O_CREAT | O_WRONLY, 0644);
                return fd >= 0 ? 0 : errno;
              }),
              EACCES);
    EXPECT_EQ(AsNobody([&] { return unlink((base + "/public").c_str()) == 0 ? 0 : errno; }), EACCES);
    EXPECT_EQ(AsNobody([&] { return chmod((base + "/public").c_str(), 0666) == 0 ? 0 : errno; }), EPERM);
  }
  EXPECT_EQ(ReadWholeFile(ds_.DataPath("public")), "everyone may read");
  EXPECT_FALSE(std::filesystem::exists(ds_.DataPath("newfile")));
}

}  // namespace
}  // namespace ccfs::testing
