// The frequency sketch and the raw tier's use counts (GCLOCK): a page read often lately comes
// back from a miss with credit and outlives pages read once.
#include "cache/frequency.h"

#include <fcntl.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ccfs/backing_store.h"
#include "ccfs/options.h"
#include "ccfs/page_cache.h"

namespace ccfs::cache {
namespace {

TEST(FrequencySketchTest, CountsSaturatesAndAges) {
  FrequencySketch f(4096, 1000);
  EXPECT_EQ(f.sample_size(), 10000u);
  for (int i = 0; i < 5; ++i) f.Increment(PageKey{1, 1});
  for (int i = 0; i < 40; ++i) f.Increment(PageKey{1, 2});
  EXPECT_EQ(f.Estimate(PageKey{1, 1}), 5u);
  EXPECT_EQ(f.Estimate(PageKey{1, 2}), 15u) << "saturates";
  EXPECT_EQ(f.Estimate(PageKey{1, 3}), 0u);
  f.Age();
  EXPECT_EQ(f.Estimate(PageKey{1, 1}), 2u);
  EXPECT_EQ(f.Estimate(PageKey{1, 2}), 7u);
  // Many distinct keys: estimates are never below the truth; one is over only if both of its
  // counters are shared, at most (1 − e^(−2000/4096))² ≈ 15% of keys (fewer with conservative
  // updates).
  FrequencySketch g(4096, 1000);
  for (uint64_t p = 0; p < 2000; ++p) g.Increment(PageKey{2, p});
  int over = 0;
  for (uint64_t p = 0; p < 2000; ++p) {
    ASSERT_GE(g.Estimate(PageKey{2, p}), 1u);
    over += g.Estimate(PageKey{2, p}) > 1;
  }
  EXPECT_LT(over, 300);
}

// An engine of 64 frames of 16 KiB, raw tier only, over a file of `pages` pages whose first byte
// is the page's number.
class FrequencyEngineTest : public ::testing::Test {
 protected:
  static constexpr size_t kPs = 16384;
  void Start(size_t pages) {
    std::string data(pages * kPs, 'x');
    for (size_t p = 0; p < pages; ++p) data[p * kPs] = static_cast<char>(p);
    store_->Put("f", data);
    ASSERT_TRUE(store_->Open("f", O_RDONLY, 0, &file_).ok());
    Options o;
    o.memory = 1 << 20;  // 64 frames
    o.page_size = kPs;
    o.compressed_percent = 0;
    ASSERT_TRUE(PageCache::Create(o, &cache_).ok());
  }
  // Reads one page, checks it is that page, and lets the evictor finish.
  void Read(uint64_t page) {
    size_t n = 0;
    ASSERT_TRUE(cache_->Read(1, file_.get(), page * kPs, kPs, buf_.data(), &n).ok());
    ASSERT_EQ(buf_[0], static_cast<char>(page));
    cache_->Quiesce();
  }

  std::unique_ptr<MemBackingStore> store_ = NewMemBackingStore();
  std::unique_ptr<BackingFile> file_;
  std::unique_ptr<PageCache> cache_;
  std::vector<char> buf_ = std::vector<char>(kPs);
};

TEST_F(FrequencyEngineTest, APageReadOftenComesBackWithCredit) {
  ASSERT_NO_FATAL_FAILURE(Start(800));
  for (int round = 0; round < 6; ++round) {
    for (uint64_t p = 0; p < 10; ++p) Read(p);  // pages 0..9: read six times
  }
  for (uint64_t p = 10; p < 20; ++p) Read(p);  // pages 10..19: once
  for (uint64_t p = 100; p < 700; ++p) {  // a long scan of pages read twice evicts them all
    Read(p);  // (pages read once would leave first: PagesReadOnceLeaveFirst)
    Read(p);
  }
  CacheStats s0 = cache_->Stats();
  for (uint64_t p = 0; p < 20; ++p) Read(p);
  CacheStats s1 = cache_->Stats();
  ASSERT_EQ(s1.misses - s0.misses, 20u) << "the scan should have evicted pages 0..19";
  for (uint64_t p = 700; p < 800; ++p) Read(p);  // 100 new pages, read once
  CacheStats s2 = cache_->Stats();
  for (uint64_t p = 0; p < 10; ++p) Read(p);
  CacheStats s3 = cache_->Stats();
  EXPECT_EQ(s3.raw_hits - s2.raw_hits, 10u) << "pages read often were evicted by a scan";
  for (uint64_t p = 10; p < 20; ++p) Read(p);
  CacheStats s4 = cache_->Stats();
  EXPECT_GE(s4.misses - s3.misses, 8u) << "pages read rarely outlived the scan";
}

// TinyLFU's doorkeeper on the raw tier: a page the sketch has not seen lately is evicted first
// (raw_tier.h, Probation), so a stream of pages read once does not push out a working set.
TEST_F(FrequencyEngineTest, PagesReadOnceLeaveFirst) {
  ASSERT_NO_FATAL_FAILURE(Start(400));
  for (int round = 0; round < 3; ++round) {
    for (uint64_t p = 0; p < 40; ++p) Read(p);  // the working set: 40 pages, read three times
  }
  for (uint64_t p = 100; p < 400; ++p) Read(p);  // 300 pages read once each
  CacheStats s0 = cache_->Stats();
  for (uint64_t p = 0; p < 40; ++p) Read(p);
  CacheStats s1 = cache_->Stats();
  EXPECT_GE(s1.raw_hits - s0.raw_hits, 36u) << "pages read once pushed out the working set";
}

}  // namespace
}  // namespace ccfs::cache
