// Warm-up (page_cache.h, section 5): pages loaded on purpose are loaded once and counted apart
// from reads, pass the admission filter a cold scan does not (so a file warmed into a full cache
// stays in the compressed tier), are compressed rather than dropped under kernel_demote (the
// kernel never had them), and a write during a warm-up leaves no stale page.
#include <fcntl.h>
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <thread>

#include "cache/engine_files.h"
#include "ccfs/backing_store.h"
#include "ccfs/options.h"
#include "ccfs/page_cache.h"

namespace ccfs {
namespace {

constexpr uint64_t kKiB = 1024;
constexpr uint64_t kMiB = 1024 * kKiB;
constexpr size_t kPs = 8192;

class WarmTest : public ::testing::Test {
 protected:
  void SetUp() override {
    data_ = MakeFile(kPages, kPs, 1000, /*tail=*/100);  // about 8x smaller with lz4
    store_->Put("f", data_);
    std::unique_ptr<BackingFile> f;
    ASSERT_TRUE(store_->Open("f", O_RDWR, 0644, &f).ok());
    file_ = std::make_shared<CountingFile>(std::move(f));
  }
  static Options Base(uint64_t memory) {
    Options o;
    o.memory = memory;
    o.compressed_percent = 75;
    o.compress_threads = 1;
    o.readahead = 0;
    return o;
  }
  static std::unique_ptr<PageCache> Make(const Options& o) {
    std::unique_ptr<PageCache> cache;
    EXPECT_TRUE(PageCache::Create(o, &cache).ok());
    return cache;
  }
  // Reads the whole file in 128 KiB requests, checking the bytes.
  void ReadAll(PageCache* cache) {
    std::string buf(128 * kKiB, 'x');
    for (uint64_t off = 0; off < data_.size(); off += buf.size()) {
      size_t n = 0;
      ASSERT_TRUE(cache->Read(1, file_.get(), off, buf.size(), buf.data(), &n).ok());
      ASSERT_EQ(n, std::min<size_t>(buf.size(), data_.size() - off));
      ASSERT_EQ(0, std::memcmp(buf.data(), data_.data() + off, n)) << "at " << off;
    }
  }
  PageCache::Residency Held(PageCache* cache) {
    return cache->ResidencyOf(1, 0, kPages + 1);
  }

  static constexpr uint64_t kPages = 1024;  // 8 MiB and a tail
  std::string data_;
  std::unique_ptr<MemBackingStore> store_ = NewMemBackingStore();
  std::shared_ptr<CountingFile> file_;
};

TEST_F(WarmTest, EveryPageIsLoadedOnceAndNoneIsCountedAsARead) {
  auto cache = Make(Base(64 * kMiB));
  uint64_t loaded = 0;
  ASSERT_TRUE(cache->Warm(1, file_.get(), 0, data_.size(), &loaded).ok());
  EXPECT_EQ(loaded, data_.size());
  cache->Quiesce();
  CacheStats s = cache->Stats();
  EXPECT_EQ(s.warm_pages, kPages + 1);
  EXPECT_EQ(s.reads, 0u);
  EXPECT_EQ(s.misses, 0u);
  EXPECT_EQ(Held(cache.get()).raw_pages, kPages + 1);
  // Warming again loads nothing; reading finds every page.
  ASSERT_TRUE(cache->Warm(1, file_.get(), 0, 0 + data_.size(), &loaded).ok());
  EXPECT_EQ(loaded, 0u);
  ASSERT_NO_FATAL_FAILURE(ReadAll(cache.get()));
  s = cache->Stats();
  EXPECT_EQ(s.misses, 0u);
  EXPECT_EQ(s.raw_hits, kPages + 1);
  for (const auto& [page, reads] : file_->page_reads()) {
    EXPECT_EQ(reads, 1) << "page " << page << " read from the store twice";
  }
  EXPECT_LT(file_->calls().size(), kPages / 8) << "runs of pages, not a read per page";
}

TEST_F(WarmTest, WithNoCompressedTierAFullRawTierIsWarmedInRunsToo) {
  // 2 MiB of memory, all raw: the file is four times that, so most of it is loaded while the raw
  // tier is full and each load waits for victims to be dropped.
  Options o = Base(2 * kMiB);
  o.compressed_percent = 0;
  auto cache = Make(o);
  uint64_t loaded = 0;
  ASSERT_TRUE(cache->Warm(1, file_.get(), 0, data_.size(), &loaded).ok());
  EXPECT_EQ(loaded, data_.size());
  EXPECT_LT(file_->calls().size(), kPages / 4) << "runs of pages, not a read per page";
  ASSERT_NO_FATAL_FAILURE(ReadAll(cache.get()));
}

TEST_F(WarmTest, ARangePastTheEndLoadsNothingAndARangeIsLoadedAlone) {
  auto cache = Make(Base(64 * kMiB));
  uint64_t loaded = 1;
  ASSERT_TRUE(cache->Warm(1, file_.get(), data_.size() + kPs, kMiB, &loaded).ok());
  EXPECT_EQ(loaded, 0u);
  ASSERT_TRUE(cache->Warm(1, file_.get(), 10 * kPs + 5, 3 * kPs, &loaded).ok());
  EXPECT_EQ(loaded, 4 * kPs) << "pages 10-13: the range's pages, whole";
  EXPECT_EQ(Held(cache.get()).raw_pages, 4u);
  const PageCache::Residency r = cache->ResidencyOf(1, 10, 4);
  EXPECT_EQ(r.raw_pages, 4u);
}

// The file is four times the raw share and fits whole in the compressed tier. Read once by a
// reader, its pages are read-once pages: once the compressed tier fills, the admission filter
// drops them. Warmed, every page is wanted: the whole file is kept.
TEST_F(WarmTest, AFileWarmedIntoAFullCacheStaysInTheCompressedTierWhereAScanDoesNot) {
  Options o = Base(8 * kMiB);  // 2 MiB raw, 6 MiB compressed: the file takes about 1 MiB there
  o.admission_filter = true;

  auto scanned = Make(o);
  // Fill the compressed tier first, so the filter is in force (a tier with room admits all):
  // pages that hardly compress, more than the tier holds. Read a page at a time, they are not a
  // stream's pages, which a tier with room may turn away (Evictor::Admit), so they fill it
  // whatever the store's and the pool's speeds.
  const std::string other = MakeFile(2 * kPages, kPs, 6000, 0, /*seed=*/9);
  store_->Put("g", other);
  std::unique_ptr<BackingFile> g;
  ASSERT_TRUE(store_->Open("g", O_RDONLY, 0, &g).ok());
  auto fill = [&](PageCache* cache) {
    std::string buf(kPs, 'x');
    for (uint64_t off = 0; off < other.size(); off += buf.size()) {
      size_t n = 0;
      ASSERT_TRUE(cache->Read(2, g.get(), off, buf.size(), buf.data(), &n).ok());
      // Each victim compressed, none dropped for want of time.
      if (off / kPs % 16 == 15) cache->Quiesce();
    }
    cache->Quiesce();
    ASSERT_GT(cache->Stats().admission_drops, 0u) << "the compressed tier is full";
    EXPECT_GT(cache->ResidencyOf(2, 0, 2 * kPages).compressed_bytes,
              cache->options().compressed_budget() * 9 / 10);
  };
  ASSERT_NO_FATAL_FAILURE(fill(scanned.get()));
  ASSERT_NO_FATAL_FAILURE(ReadAll(scanned.get()));
  scanned->Quiesce();
  const PageCache::Residency after_scan = Held(scanned.get());

  auto warmed = Make(o);
  ASSERT_NO_FATAL_FAILURE(fill(warmed.get()));
  uint64_t loaded = 0;
  ASSERT_TRUE(warmed->Warm(1, file_.get(), 0, data_.size(), &loaded).ok());
  warmed->Quiesce();
  const PageCache::Residency after_warm = Held(warmed.get());
  const CacheStats s = warmed->Stats();

  EXPECT_GE(after_warm.raw_pages + after_warm.compressed_pages, kPages + 1 - kPages / 50)
      << "nearly every page warmed is cached; pressure_drops " << s.pressure_drops;
  EXPECT_GT(after_warm.compressed_pages, kPages / 2) << "most of it compressed";
  EXPECT_LT(after_scan.raw_pages + after_scan.compressed_pages, (kPages + 1) / 2)
      << "a cold scan keeps its pages in the raw share at most";
}

TEST_F(WarmTest, UnderKernelDemoteAWarmedPageIsCompressedNotDropped) {
  Options o = Base(16 * kMiB);
  o.raw_tier = "kernel";
  o.kernel_demote = "exclusive";
  ASSERT_TRUE(o.demotes());
  // A reader's pages leave the staging tier uncompressed: the kernel holds them.
  auto read = Make(o);
  ASSERT_NO_FATAL_FAILURE(ReadAll(read.get()));
  read->Quiesce();
  EXPECT_EQ(Held(read.get()).compressed_pages, 0u);
  // Warmed pages were sent to no kernel: they move into the compressed tier.
  auto warmed = Make(o);
  uint64_t loaded = 0;
  ASSERT_TRUE(warmed->Warm(1, file_.get(), 0, data_.size(), &loaded).ok());
  warmed->Quiesce();
  const PageCache::Residency r = Held(warmed.get());
  const CacheStats s = warmed->Stats();
  EXPECT_GE(r.raw_pages + r.compressed_pages, kPages + 1 - kPages / 50)
      << "warm_pages " << s.warm_pages << " admission_drops " << s.admission_drops
      << " compressions " << s.compressions << " rejects " << s.rejects << " pressure_drops "
      << s.pressure_drops << " compressed_evictions " << s.compressed_evictions;
  EXPECT_GT(r.compressed_pages, kPages / 2) << "the staging tier holds 1/64 of memory at most";
  EXPECT_GT(r.compressed_bytes, 0u);
  EXPECT_LT(r.compressed_bytes, r.compressed_pages * kPs / 2);
}

TEST_F(WarmTest, AWriteDuringAWarmUpLeavesNoStalePage) {
  auto cache = Make(Base(64 * kMiB));
  file_->Hold(std::chrono::milliseconds(30));
  std::thread warm([&] {
    uint64_t loaded = 0;
    EXPECT_TRUE(cache->Warm(1, file_.get(), 0, 64 * kPs, &loaded).ok());
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  const std::string fresh(kPs, 'n');
  ASSERT_TRUE(cache->Write(1, file_.get(), 3 * kPs, fresh.data(), fresh.size()).ok());
  std::memcpy(data_.data() + 3 * kPs, fresh.data(), fresh.size());
  warm.join();
  file_->Hold(std::chrono::milliseconds(0));
  ASSERT_NO_FATAL_FAILURE(ReadAll(cache.get()));
}

}  // namespace
}  // namespace ccfs
