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

TEST(FrequencyEngineTest, APageReadOftenComesBackWithCredit) {
  const size_t ps = 16384;
  std::string data(800 * ps, 'x');
  for (size_t p = 0; p < 800; ++p) data[p * ps] = static_cast<char>(p);
  auto store = NewMemBackingStore();
  store->Put("f", data);
  std::unique_ptr<BackingFile> file;
  ASSERT_TRUE(store->Open("f", O_RDONLY, 0, &file).ok());
  Options o;
  o.memory = 1 << 20;  // 64 frames
  o.page_size = ps;
  o.compressed_percent = 0;
  std::unique_ptr<PageCache> cache;
  ASSERT_TRUE(PageCache::Create(o, &cache).ok());
  std::vector<char> buf(ps);
  auto read = [&](uint64_t page) {
    size_t n = 0;
    ASSERT_TRUE(cache->Read(1, file.get(), page * ps, ps, buf.data(), &n).ok());
    ASSERT_EQ(buf[0], static_cast<char>(page));
    cache->Quiesce();
  };
  for (int round = 0; round < 6; ++round) {
    for (uint64_t p = 0; p < 10; ++p) read(p);  // pages 0..9: read six times
  }
  for (uint64_t p = 10; p < 20; ++p) read(p);  // pages 10..19: once
  for (uint64_t p = 100; p < 700; ++p) {  // a long scan of pages read twice evicts them all
    read(p);  // (pages read once would leave first: PagesReadOnceLeaveFirst)
    read(p);
  }
  CacheStats s0 = cache->Stats();
  for (uint64_t p = 0; p < 20; ++p) read(p);
  CacheStats s1 = cache->Stats();
  ASSERT_EQ(s1.misses - s0.misses, 20u) << "the scan should have evicted pages 0..19";
  for (uint64_t p = 700; p < 800; ++p) read(p);  // 100 new pages, read once
  CacheStats s2 = cache->Stats();
  for (uint64_t p = 0; p < 10; ++p) read(p);
  CacheStats s3 = cache->Stats();
  EXPECT_EQ(s3.raw_hits - s2.raw_hits, 10u) << "pages read often were evicted by a scan";
  for (uint64_t p = 10; p < 20; ++p) read(p);
  CacheStats s4 = cache->Stats();
  EXPECT_GE(s4.misses - s3.misses, 8u) << "pages read rarely outlived the scan";
}

// TinyLFU's doorkeeper on the raw tier: a page the sketch has not seen lately is evicted first
// (raw_tier.h, Probation), so a stream of pages read once does not push out a working set.
TEST(FrequencyEngineTest, PagesReadOnceLeaveFirst) {
  const size_t ps = 16384;
  std::string data(400 * ps, 'x');
  for (size_t p = 0; p < 400; ++p) data[p * ps] = static_cast<char>(p);
  auto store = NewMemBackingStore();
  store->Put("f", data);
  std::unique_ptr<BackingFile> file;
  ASSERT_TRUE(store->Open("f", O_RDONLY, 0, &file).ok());
  Options o;
  o.memory = 1 << 20;  // 64 frames
  o.page_size = ps;
  o.compressed_percent = 0;
  std::unique_ptr<PageCache> cache;
  ASSERT_TRUE(PageCache::Create(o, &cache).ok());
  std::vector<char> buf(ps);
  auto read = [&](uint64_t page) {
    size_t n = 0;
    ASSERT_TRUE(cache->Read(1, file.get(), page * ps, ps, buf.data(), &n).ok());
    ASSERT_EQ(buf[0], static_cast<char>(page));
    cache->Quiesce();
  };
  for (int round = 0; round < 3; ++round) {
    for (uint64_t p = 0; p < 40; ++p) read(p);  // the working set: 40 pages, read three times
  }
  for (uint64_t p = 100; p < 400; ++p) read(p);  // 300 pages read once each
  CacheStats s0 = cache->Stats();
  for (uint64_t p = 0; p < 40; ++p) read(p);
  CacheStats s1 = cache->Stats();
  EXPECT_GE(s1.raw_hits - s0.raw_hits, 36u) << "pages read once pushed out the working set";
}

}  // namespace
}  // namespace ccfs::cache
