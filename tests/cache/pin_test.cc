// Pins (page_cache.h, section 6): pages of a pinned file outlive a scan of other files in both
// tiers, give way when nothing else is left (eviction never stalls on them), are counted, and lose
// their mark when everything is unpinned.
#include <fcntl.h>
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "cache/engine_files.h"
#include "ccfs/backing_store.h"
#include "ccfs/options.h"
#include "ccfs/page_cache.h"

namespace ccfs {
namespace {

constexpr uint64_t kKiB = 1024;
constexpr uint64_t kMiB = 1024 * kKiB;
constexpr size_t kPs = 8192;

class PinTest : public ::testing::Test {
 protected:
  void SetUp() override {
    hot_ = MakeFile(kHotPages, kPs, 1000, 0, /*seed=*/1);  // compresses about 8x
    cold_ = MakeFile(kColdPages, kPs, 1000, 0, /*seed=*/2);
    store_->Put("hot", hot_);
    store_->Put("cold", cold_);
    ASSERT_TRUE(store_->Open("hot", O_RDONLY, 0, &hot_file_).ok());
    ASSERT_TRUE(store_->Open("cold", O_RDONLY, 0, &cold_file_).ok());
  }
  static std::unique_ptr<PageCache> Make(uint64_t memory, int compressed_percent) {
    Options o;
    o.memory = memory;
    o.compressed_percent = compressed_percent;
    o.compress_threads = 1;
    o.readahead = 0;
    std::unique_ptr<PageCache> cache;
    EXPECT_TRUE(PageCache::Create(o, &cache).ok());
    return cache;
  }
  // Reads file `id` whole in 128 KiB requests, checking the bytes.
  void ReadAll(PageCache* cache, uint64_t id) {
    const std::string& data = id == 1 ? hot_ : cold_;
    BackingFile* file = id == 1 ? hot_file_.get() : cold_file_.get();
    std::string buf(128 * kKiB, 'x');
    for (uint64_t off = 0; off < data.size(); off += buf.size()) {
      size_t n = 0;
      ASSERT_TRUE(cache->Read(id, file, off, buf.size(), buf.data(), &n).ok());
      ASSERT_EQ(n, std::min<size_t>(buf.size(), data.size() - off));
      ASSERT_EQ(0, std::memcmp(buf.data(), data.data() + off, n)) << "at " << off;
    }
    cache->Quiesce();
  }
  uint64_t Held(PageCache* cache) {
    const PageCache::Residency r = cache->ResidencyOf(1, 0, kHotPages);
    return r.raw_pages + r.compressed_pages;
  }

  static constexpr uint64_t kHotPages = 256;    // 2 MiB
  static constexpr uint64_t kColdPages = 4096;  // 32 MiB
  std::string hot_, cold_;
  std::unique_ptr<MemBackingStore> store_ = NewMemBackingStore();
  std::unique_ptr<BackingFile> hot_file_, cold_file_;
};

TEST_F(PinTest, APinnedFileOutlivesAScanWhereAnUnpinnedOneDoesNot) {
  // Raw pages only: a scan pushes an unpinned file out (with a compressed tier the hot file, which
  // compresses 8x, could stay there unpinned).
  auto plain = Make(8 * kMiB, 0);
  ASSERT_NO_FATAL_FAILURE(ReadAll(plain.get(), 1));
  for (int pass = 0; pass < 2; ++pass) ASSERT_NO_FATAL_FAILURE(ReadAll(plain.get(), 2));
  EXPECT_LT(Held(plain.get()), kHotPages / 2) << "the scan pushed most of it out";
  for (int compressed_percent : {0, 50}) {
    SCOPED_TRACE(compressed_percent);
    auto pinned = Make(8 * kMiB, compressed_percent);
    pinned->Pin(1);
    ASSERT_NO_FATAL_FAILURE(ReadAll(pinned.get(), 1));
    for (int pass = 0; pass < 2; ++pass) ASSERT_NO_FATAL_FAILURE(ReadAll(pinned.get(), 2));
    EXPECT_EQ(Held(pinned.get()), kHotPages) << "every pinned page is still cached";
    const CacheStats s = pinned->Stats();
    EXPECT_EQ(s.pinned_pages, kHotPages);
    EXPECT_GT(s.pinned_bytes, 0u);
    EXPECT_LE(s.pinned_bytes, kHotPages * kPs);
    const uint64_t misses = s.misses;
    ASSERT_NO_FATAL_FAILURE(ReadAll(pinned.get(), 1));
    EXPECT_EQ(pinned->Stats().misses, misses) << "read again without a miss";
  }
}

TEST_F(PinTest, PinnedPagesGiveWayWhenNothingElseIsLeft) {
  // Everything is pinned and the file is four times the cache: eviction must go on.
  auto cache = Make(8 * kMiB, 0);
  cache->Pin(2);
  for (int pass = 0; pass < 2; ++pass) ASSERT_NO_FATAL_FAILURE(ReadAll(cache.get(), 2));
  const CacheStats s = cache->Stats();
  EXPECT_GT(s.evictions, kColdPages);
  EXPECT_LE(s.pinned_pages, 8 * kMiB / kPs);
}

TEST_F(PinTest, UnpinningDropsTheMarksInBothTiers) {
  auto cache = Make(4 * kMiB, 50);  // 2 MiB raw: the hot file ends up partly compressed
  cache->Pin(1);
  cache->Pin(2);
  ASSERT_NO_FATAL_FAILURE(ReadAll(cache.get(), 1));
  ASSERT_NO_FATAL_FAILURE(ReadAll(cache.get(), 2));
  CacheStats s = cache->Stats();
  ASSERT_GT(s.pinned_pages, 0u);
  ASSERT_GT(s.compressed_pages, 0u);
  cache->UnpinAll();
  s = cache->Stats();
  EXPECT_EQ(s.pinned_pages, 0u);
  EXPECT_EQ(s.pinned_bytes, 0u);
  // Pages loaded from now on are not pinned either.
  cache->InvalidateFile(1);
  ASSERT_NO_FATAL_FAILURE(ReadAll(cache.get(), 1));
  EXPECT_EQ(cache->Stats().pinned_pages, 0u);
}

}  // namespace
}  // namespace ccfs
