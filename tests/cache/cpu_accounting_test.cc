// The engine's CPU time by path (the cpu_*_ns counters): compression shows where victims are
// compressed and not where every read is a raw hit, and the paths together never claim more CPU
// than the process spent.
#include <fcntl.h>
#include <gtest/gtest.h>

#include <cstring>
#include <chrono>
#include <random>
#include <string>
#include <thread>

#include "ccfs/backing_store.h"
#include "ccfs/options.h"
#include "ccfs/page_cache.h"
#include "stats/counters.h"
#include "util/thread_cpu.h"

namespace ccfs {
namespace {

constexpr size_t kPage = 8192;

// `pages` distinct pages, each half noise and half text: they compress about 2:1, so a compressed
// tier holds only a part of the file.
std::string HalfTextFile(uint64_t pages) {
  static const char kText[] = "a page of text that compresses, as database pages do; ";
  std::string data(pages * kPage, '\0');
  std::mt19937_64 rng(5);
  for (size_t i = 0; i < data.size(); ++i) {
    data[i] = i % kPage < kPage / 2 ? static_cast<char>(rng())
                                    : kText[(i + i / kPage) % (sizeof(kText) - 1)];
  }
  for (uint64_t p = 0; p < pages; ++p) std::memcpy(&data[p * kPage], &p, sizeof(p));
  return data;
}

class CpuAccountingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_->Put("f", HalfTextFile(kPages));
    ASSERT_TRUE(store_->Open("f", O_RDONLY, 0, &file_).ok());
  }

  // Reads pages [0, pages) in order, `passes` times, checking each page's first bytes, with
  // `pause` before every fourth read.
  void Scan(PageCache* cache, uint64_t pages, int passes,
            std::chrono::microseconds pause = std::chrono::microseconds(0)) {
    char buf[kPage];
    for (int pass = 0; pass < passes; ++pass) {
      for (uint64_t p = 0; p < pages; ++p) {
        if (pause.count() > 0 && p % 4 == 0) std::this_thread::sleep_for(pause);
        size_t n = 0;
        ASSERT_TRUE(cache->Read(1, file_.get(), p * kPage, kPage, buf, &n).ok());
        ASSERT_EQ(n, kPage);
        uint64_t id;
        std::memcpy(&id, buf, sizeof(id));
        ASSERT_EQ(id, p);
      }
    }
  }

  static constexpr uint64_t kPages = 2048;  // 16 MiB
  std::unique_ptr<MemBackingStore> store_ = NewMemBackingStore();
  std::unique_ptr<BackingFile> file_;
};

TEST_F(CpuAccountingTest, CompressionShowsAndThePathsStayWithinTheProcessCpuTime) {
  Options o;
  // 4 MiB against 16 MiB that compresses 2:1: every read of a scan in order is a miss.
  o.memory = 4 << 20;
  o.compressed_percent = 50;
  o.compressor = CodecKind::kZstd;
  o.compress_threads = 1;
  std::unique_ptr<PageCache> cache;
  ASSERT_TRUE(PageCache::Create(o, &cache).ok());

  const uint64_t process_before = ProcessCpuNs();
  const CacheStats before = cache->Stats();
  // Paced so that the worker keeps up: misses then never wait for a frame, and every miss costs
  // about the same CPU, so the one in 64 timed stands well for the rest.
  Scan(cache.get(), kPages, 2, std::chrono::microseconds(50));
  cache->Quiesce();  // the victims of the last sweep are compressed too
  const CacheStats after = cache->Stats();
  const uint64_t process_ns = ProcessCpuNs() - process_before;

  const CacheStats d = Minus(after, before);
  ASSERT_GT(d.compressions, kPages / 4);
  ASSERT_GT(d.misses, kPages);
  const CpuTimes cpu = CpuTimesOf(d);
  EXPECT_GT(d.cpu_compress_ns, 0u);
  EXPECT_GT(d.cpu_miss_ns, 0u);
  EXPECT_EQ(cpu.ns[CpuTimes::kRequest], 0u) << "no request threads in the engine alone";
  // The read paths' times are scaled up from about 64 sampled reads (util/thread_cpu.h), so their
  // sum carries a sampling error of a few percent. The miss path is most of the total here, so
  // counting it twice would still fail; a smaller path counted twice need not.
  EXPECT_LE(cpu.total_ns(), process_ns + process_ns / 10)
      << "compress " << d.cpu_compress_ns << " evictor " << d.cpu_evictor_ns << " miss "
      << d.cpu_miss_ns << " raw_hit " << d.cpu_raw_hit_ns << " decompress "
      << d.cpu_decompress_ns;
  EXPECT_DOUBLE_EQ(d.cpu_us_per_buffer(), cpu.TotalUsPerBuffer(d.reads));
}

TEST_F(CpuAccountingTest, RawHitsAloneSpendNoCompressionCpu) {
  Options o;
  o.memory = 24 << 20;  // the whole file fits raw
  o.compressed_percent = 50;
  o.compress_threads = 1;
  std::unique_ptr<PageCache> cache;
  ASSERT_TRUE(PageCache::Create(o, &cache).ok());
  Scan(cache.get(), 1024, 1);  // misses: the first 8 MiB, all of it kept raw
  cache->Quiesce();

  const CacheStats before = cache->Stats();
  Scan(cache.get(), 1024, 20);
  const CacheStats d = Minus(cache->Stats(), before);
  ASSERT_EQ(d.raw_hits, 20u * 1024);
  EXPECT_EQ(d.compressions, 0u);
  EXPECT_GT(d.cpu_raw_hit_ns, 0u);  // about 320 reads were timed
  EXPECT_EQ(d.cpu_miss_ns, 0u);
  EXPECT_EQ(d.cpu_decompress_ns, 0u);
  // The workers slept: nothing queued, nothing woke them.
  EXPECT_LT(d.cpu_compress_ns, d.cpu_raw_hit_ns / 100 + 100000)
      << "raw hits " << d.cpu_raw_hit_ns;
}

}  // namespace
}  // namespace ccfs
