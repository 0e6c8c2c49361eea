// Data integrity under load: writer and reader threads and processes on overlapping ranges of the
// same files through the mount, with a cache budget far below the working set (the compressed tier
// and eviction busy all the time). Every block carries its own header and deterministic contents;
// a seqlock per block in shared memory tells a reader which generation a block must hold when no
// write overlapped its read, so one stale or torn page served by the cache is caught. At the end
// every file read through the mount equals the expected blocks and its backing copy byte for byte.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "reliability/reliability_util.h"
#include "testing/mount_fixture.h"

namespace ccfs::testing {
namespace {

constexpr int kFiles = 3;
constexpr size_t kBlock = 3000;  // not a divisor of the page size: blocks straddle pages
constexpr size_t kBlocksPerFile = 2048;
constexpr size_t kFileBytes = kBlock * kBlocksPerFile;  // ~5.9 MiB; 17.6 MiB in all

struct Shared {
  // seq[f][b]: even = stable at generation seq/2; odd = a write is in flight. Writers take a block
  // by moving it from even to odd, and hand it back at +2 after pwrite returned.
  std::atomic<uint32_t> seq[kFiles][kBlocksPerFile];
  std::atomic<bool> stop;
  std::atomic<uint64_t> bytes_written, bytes_read, writes, reads, checked_blocks, errors;
  char first_error[512];
  std::atomic<bool> error_taken;
};

void Fail(Shared* sh, const std::string& what) {
  sh->errors.fetch_add(1);
  if (!sh->error_taken.exchange(true)) snprintf(sh->first_error, sizeof(sh->first_error), "%s", what.c_str());
}

std::string FilePath(const std::string& dir, int f) { return dir + "/load" + std::to_string(f); }

void Writer(Shared* sh, const std::string& dir, uint64_t seed) {
  int fds[kFiles];
  for (int f = 0; f < kFiles; ++f) fds[f] = open(FilePath(dir, f).c_str(), O_WRONLY);
  std::mt19937_64 rng(seed);
  std::vector<char> buf(kBlock * 6);
  uint32_t taken[6];
  while (!sh->stop.load(std::memory_order_relaxed)) {
    int f = rng() % kFiles;
    size_t k = 1 + rng() % 6;
    size_t first = rng() % (kBlocksPerFile - k + 1);
    size_t got = 0;
    for (; got < k; ++got) {
      uint32_t s = sh->seq[f][first + got].load(std::memory_order_acquire);
      if ((s & 1) || !sh->seq[f][first + got].compare_exchange_strong(s, s + 1)) break;
      taken[got] = s;
    }
    if (got < k) {  // someone else holds one: give back what we took, try elsewhere
      for (size_t i = 0; i < got; ++i) sh->seq[f][first + i].store(taken[i], std::memory_order_release);
      continue;
    }
    for (size_t i = 0; i < k; ++i) {
      FillBlock(buf.data() + i * kBlock, kBlock, f, first + i, taken[i] / 2 + 1);
    }
    ssize_t n = pwrite(fds[f], buf.data(), k * kBlock, first * kBlock);
    if (n != static_cast<ssize_t>(k * kBlock)) {
      Fail(sh, "pwrite returned " + std::to_string(n) + " errno " + std::to_string(errno));
      for (size_t i = 0; i < k; ++i) sh->seq[f][first + i].store(taken[i], std::memory_order_release);
      break;
    }
    if (rng() % 64 == 0) fdatasync(fds[f]);
    for (size_t i = 0; i < k; ++i) sh->seq[f][first + i].store(taken[i] + 2, std::memory_order_release);
    sh->bytes_written.fetch_add(n, std::memory_order_relaxed);
    sh->writes.fetch_add(1, std::memory_order_relaxed);
  }
  for (int fd : fds) close(fd);
}

void Reader(Shared* sh, const std::string& dir, uint64_t seed) {
  int fds[kFiles];
  for (int f = 0; f < kFiles; ++f) fds[f] = open(FilePath(dir, f).c_str(), O_RDONLY);
  std::mt19937_64 rng(seed);
  std::vector<char> got(70000), want(kBlock);
  std::vector<uint32_t> before(40);
  while (!sh->stop.load(std::memory_order_relaxed)) {
    int f = rng() % kFiles;
    size_t len = 1 + rng() % 65536;
    size_t off = rng() % kFileBytes;
    if (off + len > kFileBytes) len = kFileBytes - off;
    size_t b0 = off / kBlock, b1 = (off + len - 1) / kBlock;
    for (size_t b = b0; b <= b1; ++b) before[b - b0] = sh->seq[f][b].load(std::memory_order_acquire);
    ssize_t n = pread(fds[f], got.data(), len, off);
    if (n != static_cast<ssize_t>(len)) {
      Fail(sh, "pread returned " + std::to_string(n) + " for " + std::to_string(len) +
                   " errno " + std::to_string(errno));
      break;
    }
    for (size_t b = b0; b <= b1; ++b) {
      uint32_t s = before[b - b0];
      if ((s & 1) || sh->seq[f][b].load(std::memory_order_acquire) != s) continue;  // raced a write
      FillBlock(want.data(), kBlock, f, b, s / 2);
      size_t lo = std::max(off, b * kBlock), hi = std::min(off + len, (b + 1) * kBlock);
      if (memcmp(got.data() + (lo - off), want.data() + (lo - b * kBlock), hi - lo) != 0) {
        Fail(sh, "file " + std::to_string(f) + " block " + std::to_string(b) + " bytes [" +
                     std::to_string(lo) + "," + std::to_string(hi) + "): expected generation " +
                     std::to_string(s / 2) + ", read starts \"" +
                     std::string(got.data() + (b * kBlock >= off ? b * kBlock - off : 0), 28) + "\"");
      }
      sh->checked_blocks.fetch_add(1, std::memory_order_relaxed);
    }
    sh->bytes_read.fetch_add(n, std::memory_order_relaxed);
    sh->reads.fetch_add(1, std::memory_order_relaxed);
  }
  for (int fd : fds) close(fd);
}

class IntegrityTest : public MountTest {};

TEST_F(IntegrityTest, ConcurrentOverlappingWritersAndReadersNeverSeeAWrongByte) {
  const double seconds = 8 * ReliabilityScale();
  const int writer_threads = 2, reader_threads = 2, writer_procs = 1, reader_procs = 1;

  // Generation 0 of every block, written straight into DATASET.
  std::vector<char> file(kFileBytes);
  for (int f = 0; f < kFiles; ++f) {
    for (size_t b = 0; b < kBlocksPerFile; ++b) FillBlock(file.data() + b * kBlock, kBlock, f, b, 0);
    WriteWholeFile(FilePath(ds_.data(), f), std::string(file.data(), file.size()));
  }
  // 2 MiB budget (1 MiB raw, 1 MiB compressed) for 17.6 MiB of data.
  MountOrDie({"-o", "memory=2MiB,compressed_percent=50,request_threads=2,compress_threads=1"});

  auto* sh = static_cast<Shared*>(
      mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(sh, MAP_FAILED);
  new (sh) Shared();
  const std::string dir = ds_.mnt();

  // Processes first (fork before this process starts threads).
  std::vector<pid_t> children;
  for (int i = 0; i < writer_procs; ++i) {
    children.push_back(ForkChild([&] { Writer(sh, dir, 1000 + i); return 0; }));
  }
  for (int i = 0; i < reader_procs; ++i) {
    children.push_back(ForkChild([&] { Reader(sh, dir, 2000 + i); return 0; }));
  }
  std::vector<std::thread> threads;
  for (int i = 0; i < writer_threads; ++i) threads.emplace_back(Writer, sh, dir, 3000 + i);
  for (int i = 0; i < reader_threads; ++i) threads.emplace_back(Reader, sh, dir, 4000 + i);
  auto start = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - start < std::chrono::duration<double>(seconds) &&
         sh->errors.load() == 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  sh->stop = true;
  for (auto& t : threads) t.join();
  for (pid_t p : children) EXPECT_EQ(WaitChild(p, 60), 0);
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  EXPECT_EQ(sh->errors.load(), 0u) << "first error: " << sh->first_error;
  EXPECT_GT(sh->writes.load(), 0u);
  EXPECT_GT(sh->checked_blocks.load(), 0u);

  // Every file through the mount equals the expected blocks and its backing copy.
  std::vector<char> want(kBlock);
  for (int f = 0; f < kFiles; ++f) {
    std::string via = ReadWholeFile(FilePath(dir, f));
    std::string backing = ReadWholeFile(FilePath(ds_.data(), f));
    ASSERT_EQ(via.size(), kFileBytes);
    EXPECT_TRUE(via == backing) << "file " << f << " differs from its backing copy";
    size_t bad = 0;
    for (size_t b = 0; b < kBlocksPerFile; ++b) {
      uint32_t s = sh->seq[f][b].load();
      FillBlock(want.data(), kBlock, f, b, s / 2);
      if (memcmp(via.data() + b * kBlock, want.data(), kBlock) != 0) ++bad;
    }
    EXPECT_EQ(bad, 0u) << "file " << f << ": blocks not at their last acknowledged generation";
  }

  nlohmann::json st = ds_.Stats();
  printf("[integrity] %d writer + %d reader threads, %d writer + %d reader processes, %.1f s: "
         "%.1f MiB written in %llu writes, %.1f MiB read in %llu reads, %llu blocks verified; "
         "working set %.1f MiB, budget 2 MiB; cache: %s raw hits, %s compressed hits, %s misses, "
         "%s compressions, %s invalidations\n",
         writer_threads, reader_threads, writer_procs, reader_procs, elapsed,
         sh->bytes_written.load() / 1048576.0, (unsigned long long)sh->writes.load(),
         sh->bytes_read.load() / 1048576.0, (unsigned long long)sh->reads.load(),
         (unsigned long long)sh->checked_blocks.load(), kFiles * kFileBytes / 1048576.0,
         st.is_null() ? "?" : st.value("raw_hits", nlohmann::json()).dump().c_str(),
         st.is_null() ? "?" : st.value("compressed_hits", nlohmann::json()).dump().c_str(),
         st.is_null() ? "?" : st.value("misses", nlohmann::json()).dump().c_str(),
         st.is_null() ? "?" : st.value("compressions", nlohmann::json()).dump().c_str(),
         st.is_null() ? "?" : st.value("invalidations", nlohmann::json()).dump().c_str());
  munmap(sh, sizeof(Shared));
}

}  // namespace
}  // namespace ccfs::testing
