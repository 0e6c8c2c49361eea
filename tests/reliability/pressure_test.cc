// Memory pressure: with a budget of a few pages per thread every read still completes with the
// right bytes (stalls are counted, nothing deadlocks), and the daemon's resident memory stays
// within its budget plus a stated constant overhead, measured and printed.
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "fs/fs_test_util.h"
#include "reliability/reliability_util.h"
#include "testing/mount_fixture.h"
#include "util/sanitizers.h"

namespace ccfs::testing {
namespace {

// The daemon's anonymous memory beyond the cache budget that this suite accepts: index entries
// (~100 bytes per cached page), libfuse's and the transport's request buffers, compression
// scratch, the allocator's metadata and slack. Measured at 10-14 MiB over a 32 MiB budget on the
// development machine, either transport (printed by these tests). The file pages of the binary and
// its libraries (~11 MiB of VmRSS, 3 MiB of it libcrypto, which cpp-httplib links) are printed but
// not bounded: they are shared and do not grow. Sanitizer builds (shadow memory, quarantine, no
// jemalloc) only print the figures.
constexpr uint64_t kStatedOverhead = 20ull << 20;
#if defined(CCFS_SANITIZED)
constexpr bool kCheckRss = false;
#else
constexpr bool kCheckRss = true;
#endif

class PressureTest : public MountTest {
 protected:
  // Runs `threads` readers over the files for `seconds`, checking every byte; returns reads done.
  // The daemon's largest resident set and anonymous part seen so far.
  struct RssPeak {
    std::atomic<uint64_t> total{0}, anon{0};
    void Sample(pid_t pid) {
      total.store(std::max(total.load(), RssBytes(pid)));
      anon.store(std::max(anon.load(), AnonRssBytes(pid)));
    }
  };

  uint64_t ReadLoad(const std::vector<std::string>& files, const std::vector<std::string>& contents,
                    int threads, double seconds, RssPeak* peak) {
    std::atomic<uint64_t> reads{0}, wrong{0};
    std::atomic<bool> stop{false};
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
      pool.emplace_back([&, t] {
        std::mt19937_64 rng(t);
        std::string buf(200000, '\0');
        while (!stop) {
          size_t f = rng() % files.size();
          const std::string& want = contents[f];
          size_t off = rng() % want.size();
          size_t len = std::min<size_t>(1 + rng() % 100000, want.size() - off);
          int fd = open(files[f].c_str(), O_RDONLY);
          ssize_t n = pread(fd, buf.data(), len, off);
          close(fd);
          if (n != static_cast<ssize_t>(len) || want.compare(off, len, buf.data(), len) != 0) ++wrong;
          ++reads;
        }
      });
    }
    auto start = std::chrono::steady_clock::now();
    uint64_t last = 0;
    auto last_progress = start;
    while (std::chrono::steady_clock::now() - start < std::chrono::duration<double>(seconds)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      peak->Sample(ds_.pid());
      if (reads.load() != last) {
        last = reads.load();
        last_progress = std::chrono::steady_clock::now();
      }
      if (std::chrono::steady_clock::now() - last_progress > std::chrono::seconds(10)) break;
    }
    bool stuck = std::chrono::steady_clock::now() - last_progress > std::chrono::seconds(10);
    stop = true;
    if (stuck) {
      // Unblock the readers so the test can report instead of hanging.
      RunCommand({"fusermount3", "-uz", ds_.mnt()}, 10);
    }
    for (auto& t : pool) t.join();
    EXPECT_FALSE(stuck) << "no read completed for 10 s: deadlock";
    EXPECT_EQ(wrong.load(), 0u) << "reads returned wrong bytes";
    return reads.load();
  }
};

TEST_F(PressureTest, TinyBudgetStillServesEveryReadAndCountsStalls) {
  std::vector<std::string> rels = MakeMixedDataset(ds_.data(), 24 << 20), files, contents;
  for (const auto& r : rels) {
    std::string c = ReadWholeFile(ds_.DataPath(r));
    if (c.empty()) continue;
    files.push_back(ds_.MntPath(r));
    contents.push_back(c);
  }
  // 1 MiB: 64 raw frames of 8 KiB (the minimum raw share is 16 pages) for 6 request threads'
  // worth of 100 KB reads: a few pages per thread.
  MountOrDie({"-o", "memory=1MiB,compressed_percent=50,request_threads=4,compress_threads=1"});
  const uint64_t idle = RssBytes(ds_.pid()), idle_anon = AnonRssBytes(ds_.pid());
  RssPeak peak;
  peak.Sample(ds_.pid());
  uint64_t reads = ReadLoad(files, contents, 6, 6 * ReliabilityScale(), &peak);
  nlohmann::json st = ds_.Stats();
  ASSERT_FALSE(st.is_null());
  printf("[pressure] budget 1 MiB, 24 MiB data, 6 reader threads, 4 request threads: %llu reads; "
         "stats: stalls=%s stall_ns=%s misses=%s; daemon RSS idle %.1f MiB (anonymous %.1f), "
         "max %.1f MiB (anonymous %.1f), stated bound of anonymous memory budget + %.0f MiB\n",
         (unsigned long long)reads, st.value("stalls", nlohmann::json()).dump().c_str(),
         st.value("stall_ns", nlohmann::json()).dump().c_str(),
         st.value("misses", nlohmann::json()).dump().c_str(), idle / 1048576.0,
         idle_anon / 1048576.0, peak.total.load() / 1048576.0, peak.anon.load() / 1048576.0,
         kStatedOverhead / 1048576.0);
  EXPECT_GT(reads, 100u);
  if (kCheckRss) {
    EXPECT_LE(peak.anon.load(), (1ull << 20) + kStatedOverhead);
  }
}

// raw_tier = kernel with a working set of twice `memory` (reads and writes at random, as fsx
// does): every miss passes through the daemon's small staging tier on its way to the compressed
// tier, and a staging tier whose eviction batch is a frame or two makes most misses wait for a
// compression. Stalls are counted, so the check is on the count, not on time.
TEST_F(PressureTest, KernelModeMissesDoNotWaitForTheStagingTier) {
  const size_t size = 8 << 20;
  std::string model = CompressibleBytes(size, 11);
  WriteWholeFile(ds_.DataPath("f"), model);
  MountOrDie({"-o", "memory=4MiB,raw_tier=kernel"});
  int fd = open(ds_.MntPath("f").c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  std::mt19937_64 rng(3);
  std::string buf(65536, '\0');
  const int ops = static_cast<int>(3000 * ReliabilityScale());
  for (int k = 0; k < ops; ++k) {
    const size_t len = 1 + rng() % buf.size();
    const size_t off = rng() % (size - len);
    if (k % 4 == 3) {
      std::string patch = RandomBytes(len, k);
      ASSERT_EQ(pwrite(fd, patch.data(), len, off), static_cast<ssize_t>(len));
      model.replace(off, len, patch);
    } else {
      ASSERT_EQ(pread(fd, buf.data(), len, off), static_cast<ssize_t>(len));
      ASSERT_EQ(model.compare(off, len, buf.data(), len), 0) << "op " << k;
    }
  }
  close(fd);
  nlohmann::json st = ds_.Stats();
  ASSERT_FALSE(st.is_null());
  const uint64_t misses = st.value("misses", 0ull), stalls = st.value("stalls", 0ull);
  printf("[pressure] raw_tier=kernel, memory 4 MiB, 8 MiB file, %d ops: misses=%llu stalls=%llu "
         "stall_ns=%s\n", ops, (unsigned long long)misses, (unsigned long long)stalls,
         st.value("stall_ns", nlohmann::json()).dump().c_str());
  EXPECT_GT(misses, 100u);
  EXPECT_LE(stalls, misses / 4) << "most misses waited for a free staging frame";
}

TEST_F(PressureTest, ResidentMemoryStaysWithinBudgetPlusOverhead) {
  // 32 MiB budget, 96 MiB of data read in full several times: the cache fills its budget; the
  // daemon must not grow past budget + overhead.
  std::vector<std::string> files, contents;
  for (int i = 0; i < 12; ++i) {
    std::string c = i % 2 ? RandomBytes(8 << 20, i) : CompressibleBytes(8 << 20, i);
    WriteWholeFile(ds_.DataPath("big" + std::to_string(i)), c);
    files.push_back(ds_.MntPath("big" + std::to_string(i)));
    contents.push_back(std::move(c));
  }
  const uint64_t budget = 32ull << 20;
  MountOrDie({"-o", "memory=32MiB,compressed_percent=40"});
  const uint64_t idle = RssBytes(ds_.pid()), idle_anon = AnonRssBytes(ds_.pid());
  RssPeak peak;
  peak.Sample(ds_.pid());
  for (int pass = 0; pass < 2; ++pass) {
    for (size_t f = 0; f < files.size(); ++f) {
      EXPECT_TRUE(ReadWholeFile(files[f]) == contents[f]);
      peak.Sample(ds_.pid());
    }
  }
  ReadLoad(files, contents, 4, 4 * ReliabilityScale(), &peak);
  nlohmann::json st = ds_.Stats();
  printf("[pressure] budget 32 MiB, 96 MiB data: daemon RSS idle %.1f MiB (anonymous %.1f), max "
         "%.1f MiB (anonymous %.1f: %.1f MiB over budget, stated bound %.0f MiB); raw_bytes=%s "
         "compressed_bytes=%s\n",
         idle / 1048576.0, idle_anon / 1048576.0, peak.total.load() / 1048576.0,
         peak.anon.load() / 1048576.0, (static_cast<double>(peak.anon.load()) - budget) / 1048576.0,
         kStatedOverhead / 1048576.0, st.value("raw_bytes", nlohmann::json()).dump().c_str(),
         st.value("compressed_bytes", nlohmann::json()).dump().c_str());
  if (kCheckRss) {
    EXPECT_LE(peak.anon.load(), budget + kStatedOverhead);
  }
}

}  // namespace
}  // namespace ccfs::testing
