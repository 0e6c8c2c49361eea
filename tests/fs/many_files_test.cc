// A tree of many more files than the daemon's descriptor limit, walked (nftw), stat'ed and read
// whole with the daemon started under a limit of 1024 (soft and hard), in the raw tier under test
// (CCFS_TEST_RAW_TIER): no error, every file's own bytes, and the daemon's descriptors never above
// its bound (half the limit) and the reserve beside it. Files replaced underneath during the walk
// read as the one version or the other, never as another file; the walk after a kill -9 and a
// remount is as clean.
#include <fcntl.h>
#include <fmt/format.h>
#include <ftw.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "fuse/descriptor_limit.h"
#include "fs/fs_test_util.h"
#include "testing/mount_fixture.h"
#include "util/sanitizers.h"

namespace ccfs::testing {
namespace {

// The walk of the big tree (CCFS_MANY_FILES overrides it: scripts/test.sh's many-files stage walks
// 50,000 files in each raw tier, scripts/reliability.sh a million),
// and the trees of the tests that change it underneath or kill the daemon. Each is 1.5 times
// the limit of 1024 or more, so a daemon holding a descriptor per file or inode runs out before the
// walk ends; the long walks are the reliability script's, as this suite runs in five stages (both
// raw tiers, uring, both sanitizers). A sanitized daemon serves ~10x slower.
#if defined(CCFS_SANITIZED)
constexpr size_t kBigTreeDefault = 3'000;
constexpr size_t kTree = 1'500;
#else
constexpr size_t kBigTreeDefault = 8'000;
constexpr size_t kTree = 3'000;
#endif

size_t BigTree() {
  const char* env = getenv("CCFS_MANY_FILES");
  return env != nullptr && atol(env) > 0 ? static_cast<size_t>(atol(env)) : kBigTreeDefault;
}
constexpr rlim_t kLimit = 1024;
// In kernel mode the daemon keeps read handles (fuse/read_handles.h): at most a quarter of the
// table's bound (half the limit), two descriptors each.
constexpr size_t kReadHandles = 2 * (kLimit / 2 / 4);

std::string RelPath(size_t k) { return fmt::format("d{}/e{}/f{}", k % 50, (k / 50) % 20, k); }

// File k's bytes in version v: 100 B to 16 KiB, naming the file and the version throughout.
std::string Content(size_t k, int v) {
  const size_t size = 100 + (k * 2654435761u) % (16384 - 100);
  const std::string line = fmt::format("file {} version {}\n", k, v);
  std::string s;
  s.reserve(size + line.size());
  while (s.size() < size) s += line;
  s.resize(size);
  return s;
}

size_t DescriptorsOf(pid_t pid) {
  std::error_code ec;
  size_t n = 0;
  for (auto it = std::filesystem::directory_iterator(fmt::format("/proc/{}/fd", pid), ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    ++n;
  }
  return n;
}

// This process's descriptor limit set to `n` (soft and hard) for the scope: the daemon a mount
// starts inherits it. Raising the hard limit back needs CAP_SYS_RESOURCE (root, as the mount tests).
class ScopedDescriptorLimit {
 public:
  explicit ScopedDescriptorLimit(rlim_t n) {
    getrlimit(RLIMIT_NOFILE, &saved_);
    struct rlimit lim = {n, n};
    ok_ = setrlimit(RLIMIT_NOFILE, &lim) == 0;
  }
  ~ScopedDescriptorLimit() { setrlimit(RLIMIT_NOFILE, &saved_); }
  bool ok() const { return ok_; }

 private:
  struct rlimit saved_;
  bool ok_ = false;
};

std::vector<std::string>* g_walked = nullptr;
int CollectFile(const char* path, const struct stat* st, int type, struct FTW*) {
  if (type == FTW_F && S_ISREG(st->st_mode)) g_walked->push_back(path);
  return 0;
}

class ManyFilesMountTest : public MountTest {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "sets the daemon's hard descriptor limit: needs root";
  }

  void MakeTree(size_t files) {
    files_ = files;
    for (size_t k = 0; k < files; ++k) {
      const std::string path = ds_.DataPath(RelPath(k));
      if (k < 1000) std::filesystem::create_directories(std::filesystem::path(path).parent_path());
      WriteWholeFile(path, Content(k, 0));
    }
  }

  void MountLimited(const std::vector<std::string>& args = {}) {
    ScopedDescriptorLimit limit(kLimit);
    ASSERT_TRUE(limit.ok()) << std::strerror(errno);
    MountOrDie(args);
  }

  // Walks, stats and reads every file through the mount; `versions` says which versions of file
  // k may be read (1 = only 0; 2 = 0 or 1). Counts errors and wrong bytes; samples the daemon's
  // descriptors, which must stay within `bound` (0: half the limit and the reserve, and in kernel
  // mode the read handles kept past the files' closes, fuse/read_handles.h).
  void WalkAndRead(int versions, size_t bound = 0) {
    std::vector<std::string> walked;
    g_walked = &walked;
    ASSERT_EQ(nftw(ds_.mnt().c_str(), CollectFile, 16, FTW_PHYS), 0) << std::strerror(errno);
    g_walked = nullptr;
    // The control directory's files are not the dataset's, nor the replacer's files in the making.
    std::erase_if(walked, [&](const std::string& p) {
      return p.find("/.ccfs/") != p.npos || p.ends_with(".new");
    });
    ASSERT_EQ(walked.size(), files_);
    if (bound == 0) {
      bound = kLimit / 2 + (TestRawTierIsKernel() ? kReadHandles : 0) + kDescriptorReserve;
    }
    size_t errors = 0, wrong = 0, most_fds = 0;
    std::map<int, size_t> errnos;
    for (size_t k = 0; k < files_; ++k) {
      const std::string path = ds_.MntPath(RelPath(k));
      struct stat st;
      std::string got;
      int err = stat(path.c_str(), &st) != 0 ? errno : ReadPath(path, &got);
      if (err != 0) {
        ++errors;
        ++errnos[err];
        continue;
      }
      bool right = got == Content(k, 0) || (versions > 1 && got == Content(k, 1));
      if (!right && wrong++ < 3) {
        ADD_FAILURE() << RelPath(k) << ": " << got.size() << " bytes starting \""
                      << got.substr(0, 24) << "\"";
      }
      if (k % 2000 == 0) most_fds = std::max(most_fds, DescriptorsOf(ds_.pid()));
    }
    std::string why;
    for (auto [err, n] : errnos) why += fmt::format(" {}: {}", std::strerror(err), n);
    EXPECT_EQ(errors, 0u) << why << "\ndaemon log:\n" << ds_.DaemonLog().substr(0, 4000);
    EXPECT_EQ(wrong, 0u);
    EXPECT_LE(most_fds, bound) << "the daemon's descriptors went above its bound";
    EXPECT_GT(most_fds, 0u);
  }

  size_t files_ = 0;
};

TEST_F(ManyFilesMountTest, WalkedStatAndReadUnderALimitOf1024) {
  MakeTree(BigTree());
  MountLimited();
  WalkAndRead(1);
  EXPECT_NE(ds_.DaemonLog().find("descriptors: limit 1024"), std::string::npos) << ds_.DaemonLog();
}

// Read-only in kernel mode, files open without OPEN: the daemon keeps read handles of its own.
TEST_F(ManyFilesMountTest, ReadOnlyInKernelModeWalkedStatAndReadUnderALimitOf1024) {
  MakeTree(kTree);
  MountLimited({"-o", "ro,raw_tier=kernel"});
  WalkAndRead(1, kLimit / 2 + kReadHandles + kDescriptorReserve);
}

TEST_F(ManyFilesMountTest, FilesReplacedUnderneathDuringTheWalkReadAsOneVersion) {
  MakeTree(kTree);
  MountLimited();
  std::atomic<bool> stop{false};
  std::thread replacer([&] {
    // Every 7th file gets version 1 by a write to a new file and a rename over the old name: a
    // new inode under the old name (its number may be one the store just freed).
    for (size_t k = 0; k < files_ && !stop.load(); k += 7) {
      const std::string path = ds_.DataPath(RelPath(k));
      WriteWholeFile(path + ".new", Content(k, 1));
      std::filesystem::rename(path + ".new", path);
    }
  });
  WalkAndRead(2);
  stop = true;
  replacer.join();
}

TEST_F(ManyFilesMountTest, WalkAfterKill9AndRemountIsClean) {
  MakeTree(kTree);
  MountLimited();
  std::thread killer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    kill(ds_.pid(), SIGKILL);
  });
  // The walk the kill cuts short fails; only the one after the remount is checked.
  std::vector<std::string> walked;
  g_walked = &walked;
  nftw(ds_.mnt().c_str(), CollectFile, 16, FTW_PHYS);
  g_walked = nullptr;
  killer.join();
  EXPECT_EQ(ds_.Unmount(), 128 + SIGKILL);  // clears the dead mount and reaps the daemon
  MountLimited();
  WalkAndRead(1);
}

}  // namespace
}  // namespace ccfs::testing
