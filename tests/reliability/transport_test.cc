// The transports (the `transport` key, src/fuse/uring_transport.h): what happens when the kernel
// refuses FUSE over io_uring, and that unmount, kill -9 of the daemon and a lazy unmount with reads
// in flight end cleanly on dev and on uring alike — never a hang.
//
// The uring cases need the kernel's switch on; as root they turn it on (testing/uring_switch.h,
// which turns it back off when the program ends if it was off). The refusal cases need it off and
// are skipped when something has turned it on.
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>

#include "reliability/reliability_util.h"
#include "testing/mount_fixture.h"
#include "testing/uring_switch.h"

namespace ccfs::testing {
namespace {

using ::testing::HasSubstr;

constexpr size_t kFileSize = 4 << 20;
constexpr size_t kReadSize = 8192;

// Counters shared with the reader children.
struct Shared {
  std::atomic<int> opened{0};  // readers that have the file open
  std::atomic<uint64_t> reads{0};
  std::atomic<int> stop{0};
};

// Reads `path` at random offsets until told to stop or a read fails. Exit 0 when stopped, 1 when
// a read failed (what a reader sees when the daemon dies), 2 if it could not open the file.
int ReadLoop(Shared* sh, const std::string& path, unsigned seed) {
  int fd = open(path.c_str(), O_RDONLY);
  if (fd < 0) return 2;
  sh->opened.fetch_add(1);
  std::vector<char> buf(kReadSize);
  uint64_t x = seed;
  while (sh->stop.load() == 0) {
    x = Mix(x);
    off_t off = static_cast<off_t>((x % (kFileSize / kReadSize)) * kReadSize);
    if (pread(fd, buf.data(), kReadSize, off) != static_cast<ssize_t>(kReadSize)) {
      close(fd);
      return 1;
    }
    sh->reads.fetch_add(1);
  }
  close(fd);
  return 0;
}

Shared* NewShared() {
  void* m = mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) return nullptr;
  return new (m) Shared();
}

bool WaitForReads(Shared* sh, uint64_t at_least) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (sh->reads.load() < at_least) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

void WriteDataFile(const MountedDataset& ds) {
  std::string data(kFileSize, '\0');
  for (size_t i = 0; i < kFileSize; ++i) data[i] = static_cast<char>('a' + (i * 7 + i / 4096) % 26);
  WriteWholeFile(ds.DataPath("f"), data);
}

// --- the kernel says no ------------------------------------------------------------------------

// The daemon checks before it mounts: nothing is mounted, not even for a moment (a daemon that
// mounted first and then gave up was seen mounted by a fast enough poll: Mount() returned true).
TEST(TransportRefusedTest, UringFailsTheMountSayingWhatIsMissingAndHowToTurnItOn) {
  UringSwitch state = UringSwitchState();
  if (state == UringSwitch::kOn) GTEST_SKIP() << "enable_uring is on: nothing to refuse";
  MountedDataset ds;
  std::string error;
  EXPECT_FALSE(ds.Mount({"-o", "transport=uring,memory=2MiB"}, &error));
  EXPECT_FALSE(IsMounted(ds.mnt()));
  if (state == UringSwitch::kOff) {
    EXPECT_THAT(error, HasSubstr("echo Y > /sys/module/fuse/parameters/enable_uring"));
  } else {
    EXPECT_THAT(error, HasSubstr("CONFIG_FUSE_IO_URING"));
  }
}

TEST(TransportRefusedTest, AutoFallsBackToDevAndSaysWhyOnce) {
  if (UringSwitchState() == UringSwitch::kOn) GTEST_SKIP() << "enable_uring is on: auto picks uring";
  MountedDataset ds;
  WriteWholeFile(ds.DataPath("g"), "served");
  std::string error;
  ASSERT_TRUE(ds.Mount({"-o", "transport=auto,memory=2MiB"}, &error)) << error;
  EXPECT_EQ(ReadWholeFile(ds.MntPath("g")), "served");
  EXPECT_EQ(ds.Unmount(), 0);
  std::string log = ds.DaemonLog();
  EXPECT_THAT(log, HasSubstr("transport=dev"));
  size_t first = log.find("transport = auto: serving /dev/fuse");
  ASSERT_NE(first, std::string::npos) << log;
  EXPECT_EQ(log.find("transport = auto", first + 1), std::string::npos) << "said once:\n" << log;
}

TEST(TransportRefusedTest, AnUnknownTransportNamesTheKey) {
  CommandResult r = RunCcfs({"mount", "-o", "transport=fast", "/nonexistent", "/nonexistent"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.output, HasSubstr("transport = fast: must be"));
}

// --- both transports end cleanly --------------------------------------------------------------

class TransportLifecycleTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (GetParam() == "uring") {
      std::string why;
      if (!EnsureUringEnabled(&why)) GTEST_SKIP() << why;
    }
    sh_ = NewShared();
    ASSERT_NE(sh_, nullptr);
    WriteDataFile(ds_);
    std::string error;
    ASSERT_TRUE(ds_.Mount({"-o", "transport=" + GetParam() + ",memory=2MiB"}, &error)) << error;
    // The mount shows in /proc/mounts before INIT and the rings are done; the log line follows.
    const std::string serving = "transport=" + GetParam() + ")";
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (ds_.DaemonLog().find(serving) == std::string::npos &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    ASSERT_THAT(ds_.DaemonLog(), HasSubstr(serving));
  }
  void TearDown() override {
    if (sh_ != nullptr) munmap(sh_, sizeof(Shared));
  }

  // Forks n readers and returns once each has the file open (a reader still starting when the
  // daemon dies or the mount is detached would fail its open, not a read in flight).
  std::vector<pid_t> StartReaders(int n) {
    std::vector<pid_t> pids;
    for (int i = 0; i < n; ++i) {
      pids.push_back(ForkChild([this, i] { return ReadLoop(sh_, ds_.MntPath("f"), 17 + i); }));
    }
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (sh_->opened.load() < n && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    EXPECT_EQ(sh_->opened.load(), n) << "readers did not open the file within 10 s";
    return pids;
  }

  MountedDataset ds_;
  Shared* sh_ = nullptr;
};

TEST_P(TransportLifecycleTest, ServesExactBytesAndUnmountsWithExitZero) {
  std::string expected = ReadWholeFile(ds_.DataPath("f"));
  EXPECT_TRUE(ReadWholeFile(ds_.MntPath("f")) == expected) << "bytes differ through the mount";
  WriteWholeFile(ds_.MntPath("w"), "written through " + GetParam());
  EXPECT_EQ(ReadWholeFile(ds_.DataPath("w")), "written through " + GetParam());
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(ds_.Unmount(), 0) << ds_.DaemonLog();
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 5.0);
  EXPECT_FALSE(IsMounted(ds_.mnt()));
}

TEST_P(TransportLifecycleTest, KillDashNineWithReadsInFlightEndsTheReaders) {
  std::vector<pid_t> readers = StartReaders(2);
  ASSERT_TRUE(WaitForReads(sh_, 200)) << "readers made no progress";
  ASSERT_EQ(kill(ds_.pid(), SIGKILL), 0);
  for (pid_t pid : readers) {
    EXPECT_EQ(WaitChild(pid, 10), 1) << "a reader neither failed nor ended after the daemon died";
  }
  EXPECT_EQ(ds_.Unmount(), 128 + SIGKILL);
  EXPECT_FALSE(IsMounted(ds_.mnt()));
}

TEST_P(TransportLifecycleTest, LazyUnmountWithReadsInFlightServesThemThenExitsZero) {
  std::vector<pid_t> readers = StartReaders(2);
  ASSERT_TRUE(WaitForReads(sh_, 200)) << "readers made no progress";
  ASSERT_EQ(RunCommand({"fusermount3", "-uz", ds_.mnt()}).exit_code, 0);
  EXPECT_FALSE(IsMounted(ds_.mnt()));
  uint64_t before = sh_->reads.load();
  EXPECT_TRUE(WaitForReads(sh_, before + 200)) << "detached, but reads stopped being served";
  EXPECT_EQ(kill(ds_.pid(), 0), 0) << "the daemon serves until the last file closes";
  sh_->stop.store(1);
  for (pid_t pid : readers) EXPECT_EQ(WaitChild(pid, 10), 0) << "a reader failed or hung";
  // The last file closed: the connection ends and the daemon with it.
  EXPECT_EQ(ds_.Unmount(), 0) << ds_.DaemonLog();
}

INSTANTIATE_TEST_SUITE_P(Transports, TransportLifecycleTest, ::testing::Values("dev", "uring"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace ccfs::testing
