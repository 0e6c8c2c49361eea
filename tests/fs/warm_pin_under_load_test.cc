// Warm-up, pins and eviction on a mount that readers are reading meanwhile (both raw tiers, by
// CCFS_TEST_RAW_TIER): whatever the commands do to the tiers (load wanted pages, pass pinned ones
// over, drop a directory's pages, unpin), every read returns the file's bytes and none fails.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "fs/fs_test_util.h"
#include "testing/mount_fixture.h"

namespace ccfs::testing {
namespace {

class WarmPinUnderLoadMountTest : public MountTest {};

TEST_F(WarmPinUnderLoadMountTest, ReadersGetTheRightBytesWhileWarmupPinAndEvictRun) {
  constexpr int kFiles = 8;
  constexpr size_t kFileBytes = 3 << 20;  // 24 MiB in all, three times `memory`
  mkdir(ds_.DataPath("hot").c_str(), 0755);
  mkdir(ds_.DataPath("cold").c_str(), 0755);
  std::vector<std::string> names, contents;
  for (int i = 0; i < kFiles; ++i) {
    names.push_back((i < kFiles / 2 ? "hot/f" : "cold/f") + std::to_string(i));
    // Half compress, half do not: both tiers take part.
    contents.push_back(i % 2 ? RandomBytes(kFileBytes, 50 + i)
                             : CompressibleBytes(kFileBytes, 50 + i));
    WriteWholeFile(ds_.DataPath(names.back()), contents.back());
  }
  ASSERT_NO_FATAL_FAILURE(MountOrDie({"-o", "memory=8MiB,compressed_percent=50"}));

  std::atomic<bool> stop{false};
  std::atomic<uint64_t> reads{0}, wrong{0}, failed{0};
  auto reader = [&](int seed) {
    std::mt19937_64 rng(seed);
    std::vector<int> fds;
    for (const std::string& n : names) fds.push_back(open(ds_.MntPath(n).c_str(), O_RDONLY));
    std::string buf(64 << 10, '\0');
    while (!stop.load()) {
      const int f = static_cast<int>(rng() % kFiles);
      const size_t len = 1 + rng() % buf.size();
      const size_t off = rng() % kFileBytes;
      const ssize_t n = pread(fds[f], buf.data(), len, static_cast<off_t>(off));
      const size_t want = std::min(len, kFileBytes - off);
      if (n < 0 || static_cast<size_t>(n) != want) {
        failed.fetch_add(1);
      } else if (buf.compare(0, want, contents[f], off, want) != 0) {
        wrong.fetch_add(1);
      }
      reads.fetch_add(1);
    }
    for (int fd : fds) close(fd);
  };
  std::vector<std::thread> readers;
  for (int i = 0; i < 3; ++i) readers.emplace_back(reader, i + 1);

  for (int round = 0; round < 3; ++round) {
    CommandResult r = RunCcfs({"set", ds_.mnt(), "pin=hot/f0"});
    EXPECT_EQ(r.exit_code, 0) << r.output;
    r = RunCcfs({"warmup", "-q", ds_.mnt(), "hot"});
    // Exit 0, or 1 when the cache was full before every file was loaded: both are answers.
    EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.output;
    r = RunCcfs({"warmup", "--evict", ds_.mnt(), "cold"});
    EXPECT_EQ(r.exit_code, 0) << r.output;
    r = RunCcfs({"warmup", "--check", ds_.mnt(), "."});
    EXPECT_EQ(r.exit_code, 0) << r.output;
    r = RunCcfs({"set", ds_.mnt(), "pin="});
    EXPECT_EQ(r.exit_code, 0) << r.output;
  }
  stop.store(true);
  for (std::thread& t : readers) t.join();
  EXPECT_GT(reads.load(), 100u) << "the readers read beside the commands";
  EXPECT_EQ(failed.load(), 0u);
  EXPECT_EQ(wrong.load(), 0u);
  const nlohmann::json s = ds_.Stats();
  EXPECT_GT(s["warm_pages"].get<uint64_t>(), 0u);
}

}  // namespace
}  // namespace ccfs::testing
