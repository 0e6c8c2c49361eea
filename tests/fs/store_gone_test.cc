// ccfs over a store whose client dies and is mounted again at the same path. The store here is
// another ccfs mount (a FUSE file system like sshfs or GlusterFS's client), killed with -9: while it
// is dead every request that reaches it fails with EIO, never ENOTCONN (which from a mount says the
// mount itself is gone) and never with wrong bytes; once a new store is mounted at DATASET's path,
// new opens read right again without ccfs being remounted (InodeTable::RecoverRoot).
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "fs/fs_test_util.h"
#include "testing/mount_fixture.h"

namespace ccfs {
namespace {

using testing::ReadPath;

std::string Pattern(char tag, size_t size) {
  std::string s(size, '\0');
  for (size_t i = 0; i < size; ++i) s[i] = static_cast<char>(tag + (i * 7 + i / 4096) % 23);
  return s;
}

class StoreGoneMountTest : public testing::MountTest {
 protected:
  void SetUp() override {
    source_ = ds_.root() + "/source";
    ASSERT_EQ(mkdir(source_.c_str(), 0755), 0);
    testing::WriteWholeFile(source_ + "/a", Pattern('a', 96 * 1024));
    testing::WriteWholeFile(source_ + "/b", Pattern('b', 40 * 1024));
    ASSERT_NO_FATAL_FAILURE(MountStore());
    MountOrDie({"-o", "memory=4MiB,compressed_percent=50,attr_timeout=0.5"});
  }

  void TearDown() override {
    MountTest::TearDown();
    UnmountStore();
  }

  // The store: `ccfs mount -f SOURCE DATA`, in daemon mode whatever mode the test runs in.
  void MountStore() {
    int log = open((ds_.root() + "/store.log").c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC,
                   0644);
    store_pid_ = testing::Spawn({CCFS_BINARY, "mount", "-f", "-o", "memory=4MiB", source_,
                                 ds_.data()},
                                log, log);
    close(log);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!IsMounted(ds_.data()) && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    ASSERT_TRUE(IsMounted(ds_.data())) << testing::ReadWholeFile(ds_.root() + "/store.log");
  }

  // Kills the store's daemon: its mount stays, dead (ENOTCONN), until detached.
  void KillStore() {
    ASSERT_EQ(kill(store_pid_, SIGKILL), 0);
    testing::Reap(store_pid_, 10);
    store_pid_ = -1;
  }

  void UnmountStore() {
    // Lazily: the ccfs above may still hold descriptors of it.
    if (IsMounted(ds_.data())) testing::RunCommand({"fusermount3", "-uz", ds_.data()}, 10);
    if (store_pid_ > 0) testing::Reap(store_pid_, 10);
    store_pid_ = -1;
  }

  std::string source_;
  pid_t store_pid_ = -1;
};

TEST_F(StoreGoneMountTest, DeadStoreGivesEioAndANewStoreAtThePathIsPickedUp) {
  std::string got;
  ASSERT_EQ(ReadPath(ds_.MntPath("a"), &got), 0);
  ASSERT_EQ(got, Pattern('a', 96 * 1024));
  const int held = open(ds_.MntPath("a").c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(held, 0);

  ASSERT_NO_FATAL_FAILURE(KillStore());
  // Names ccfs never looked up, and a read past what it holds: EIO, not ENOTCONN.
  struct stat st;
  ASSERT_NE(stat(ds_.MntPath("absent").c_str(), &st), 0);
  EXPECT_EQ(errno, EIO) << "a lookup in a dead store";
  EXPECT_EQ(ReadPath(ds_.MntPath("b"), &got), EIO) << "an open in a dead store";
  char page[8192];
  ssize_t n = pread(held, page, sizeof(page), 200 * 1024);  // beyond the file: no page to hold
  EXPECT_TRUE(n == 0 || (n < 0 && errno == EIO)) << n << " " << errno;
  // The daemon is up and answers.
  EXPECT_FALSE(ds_.Stats().is_discarded());

  // The store comes back at the same path (the old mount detached, a new one mounted).
  testing::RunCommand({"fusermount3", "-uz", ds_.data()}, 10);
  ASSERT_NO_FATAL_FAILURE(MountStore());
  const auto t0 = std::chrono::steady_clock::now();
  int err = -1;
  while (std::chrono::steady_clock::now() - t0 < std::chrono::seconds(10)) {
    err = ReadPath(ds_.MntPath("b"), &got);
    if (err == 0) break;
    EXPECT_EQ(err, EIO) << "while ccfs has not yet picked the store up";
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  const double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_EQ(err, 0) << "not picked up within 10 s; daemon log:\n" << ds_.DaemonLog();
  EXPECT_EQ(got, Pattern('b', 40 * 1024));
  ASSERT_EQ(ReadPath(ds_.MntPath("a"), &got), 0);
  EXPECT_EQ(got, Pattern('a', 96 * 1024)) << "a file cached before: the new store's bytes";
  EXPECT_LT(took, 0.5 + 1.0 + 1.0) << "attr_timeout + the store's entry timeout, with slack";
  EXPECT_NE(ds_.DaemonLog().find("is back"), std::string::npos) << ds_.DaemonLog();
  // A descriptor opened before the store died belongs to the dead one: it fails, never answers
  // with other bytes.
  n = pread(held, page, sizeof(page), 0);
  if (n >= 0) {
    EXPECT_EQ(std::string(page, static_cast<size_t>(n)), Pattern('a', 96 * 1024).substr(0, n));
  } else {
    EXPECT_EQ(errno, EIO);
  }
  close(held);
  std::printf("[store gone] the new store read right %.2f s after it was mounted\n", took);
}

}  // namespace
}  // namespace ccfs
