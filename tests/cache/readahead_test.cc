// Read-ahead: the window a Stream keeps ahead of its reader (grows while the reader follows,
// ends at a jump or at the end of the file), and the engine's read-ahead: a sequential reader
// finds its pages read ahead (each page read from the store once, the bytes right) in windows
// held to a share of the raw tier, a random reader causes none, pages read ahead and never asked
// for are counted when evicted, and a write during a read-ahead leaves no stale page.
#include <fcntl.h>
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <random>
#include <string>

#include "cache/engine_files.h"
#include "cache/readahead.h"
#include "ccfs/backing_store.h"
#include "ccfs/options.h"
#include "ccfs/page_cache.h"

namespace ccfs {
namespace {

constexpr uint64_t kKiB = 1024;
constexpr uint64_t kMiB = 1024 * kKiB;

struct Ahead {
  uint64_t offset = 0;
  uint64_t len = 0;
};

Ahead Next(PageCache::Stream* s, uint64_t off, uint64_t n, uint64_t max = kMiB,
           bool at_end = false) {
  Ahead a;
  a.len = s->Next(off, n, at_end, max, &a.offset);
  return a;
}

TEST(StreamTest, ARunFromTheStartReadsAheadFourReadsThenDoubles) {
  PageCache::Stream s;
  Ahead a = Next(&s, 0, 128 * kKiB);
  EXPECT_EQ(a.offset, 128 * kKiB);
  EXPECT_EQ(a.len, 512 * kKiB);
  // Plenty is read ahead until the reader is half way through the window.
  EXPECT_EQ(Next(&s, 128 * kKiB, 128 * kKiB).len, 0u);
  EXPECT_EQ(Next(&s, 256 * kKiB, 128 * kKiB).len, 0u);
  a = Next(&s, 384 * kKiB, 128 * kKiB);  // stream at 512K, read ahead to 640K
  EXPECT_EQ(a.offset, 640 * kKiB);
  EXPECT_EQ(a.offset + a.len, 512 * kKiB + kMiB) << "the window doubled to the largest";
  uint64_t issued = a.offset + a.len;
  // From there on, whole windows of the largest size, each where the last one ended.
  for (uint64_t off = 512 * kKiB; off < 8 * kMiB; off += 128 * kKiB) {
    a = Next(&s, off, 128 * kKiB);
    if (a.len == 0) continue;
    EXPECT_EQ(a.offset, issued);
    EXPECT_LE(a.offset + a.len, off + 128 * kKiB + kMiB);
    issued = a.offset + a.len;
  }
  EXPECT_GE(issued, 8 * kMiB);
}

TEST(StreamTest, ASmallFirstReadWaitsForASecondThatFollows) {
  PageCache::Stream s;
  EXPECT_EQ(Next(&s, 0, 4 * kKiB).len, 0u) << "a small file read whole costs no read past its end";
  Ahead a = Next(&s, 4 * kKiB, 4 * kKiB);
  EXPECT_EQ(a.offset, 8 * kKiB);
  EXPECT_EQ(a.len, cache::kMinWindow);
}

TEST(StreamTest, AJumpOrTheEndOfTheFileEndsTheStream) {
  PageCache::Stream s;
  ASSERT_GT(Next(&s, 0, 128 * kKiB).len, 0u);
  EXPECT_EQ(Next(&s, 50 * kMiB, 128 * kKiB).len, 0u) << "a jump";
  EXPECT_GT(Next(&s, 50 * kMiB + 128 * kKiB, 128 * kKiB).len, 0u) << "a new stream from there";
  EXPECT_EQ(Next(&s, 50 * kMiB + 256 * kKiB, 100, kMiB, /*at_end=*/true).len, 0u);
  EXPECT_EQ(Next(&s, 50 * kMiB + 256 * kKiB + 100, 0).len, 0u) << "ended at the end of the file";
}

TEST(StreamTest, ReadsOutOfOrderWithinTheWindowKeepTheStream) {
  PageCache::Stream s;
  ASSERT_GT(Next(&s, 0, 128 * kKiB).len, 0u);
  // Two request threads: 256K served before 128K.
  Next(&s, 256 * kKiB, 128 * kKiB);
  Next(&s, 128 * kKiB, 128 * kKiB);
  uint64_t total = 0;
  for (uint64_t off = 384 * kKiB; off < 4 * kMiB; off += 128 * kKiB) {
    total += Next(&s, off, 128 * kKiB).len;
  }
  EXPECT_GE(total, 3 * kMiB) << "still one stream";
}

TEST(StreamTest, APieceDroppedIsAskedForAgain) {
  PageCache::Stream s;
  Ahead a = Next(&s, 0, 128 * kKiB);
  ASSERT_EQ(a.offset + a.len, 640 * kKiB);
  s.Dropped(384 * kKiB);  // the queue took [128K, 384K) and was full for the rest
  a = Next(&s, 128 * kKiB, 128 * kKiB);
  EXPECT_EQ(a.offset, 384 * kKiB) << "the next window starts where the dropped piece began";
  EXPECT_GT(a.len, 0u);
}

TEST(StreamTest, OffReadsNothingAhead) {
  PageCache::Stream s;
  for (uint64_t off = 0; off < 4 * kMiB; off += 128 * kKiB) {
    EXPECT_EQ(Next(&s, off, 128 * kKiB, /*max=*/0).len, 0u);
  }
}

class ReadaheadEngineTest : public ::testing::Test {
 protected:
  static constexpr size_t kPs = 8192;
  void SetUp() override {
    data_ = MakeFile(kPages, kPs, 1000);
    store_->Put("f", data_);
    std::unique_ptr<BackingFile> f;
    ASSERT_TRUE(store_->Open("f", O_RDWR, 0644, &f).ok());
    counting_ = std::make_shared<CountingFile>(std::move(f));
  }
  std::unique_ptr<PageCache> MakeCache(uint64_t memory, uint64_t readahead = kMiB) {
    Options o;
    o.memory = memory;
    o.compressed_percent = 50;
    o.compress_threads = 1;
    o.readahead = readahead;
    std::unique_ptr<PageCache> cache;
    EXPECT_TRUE(PageCache::Create(o, &cache).ok());
    return cache;
  }
  // Reads [off, off + len) as a reader of `stream` would (then tells the engine), checking bytes.
  void Read(PageCache* cache, PageCache::Stream* stream, uint64_t off, size_t len) {
    std::string buf(len, 'x');
    size_t n = 0;
    ASSERT_TRUE(cache->Read(1, counting_.get(), off, len, buf.data(), &n).ok());
    const size_t expect = off >= data_.size() ? 0 : std::min<size_t>(len, data_.size() - off);
    ASSERT_EQ(n, expect) << "at " << off;
    ASSERT_EQ(0, std::memcmp(buf.data(), data_.data() + off, n)) << "at " << off;
    cache->ReadAhead(stream, 1, counting_, off, n, n < len);
  }

  static constexpr uint64_t kPages = 1024;  // 8 MiB
  std::string data_;
  std::unique_ptr<MemBackingStore> store_ = NewMemBackingStore();
  std::shared_ptr<CountingFile> counting_;
};

TEST_F(ReadaheadEngineTest, ASequentialReaderFindsItsPagesReadAhead) {
  auto cache = MakeCache(32 * kMiB);
  PageCache::Stream stream;
  counting_->Hold(std::chrono::milliseconds(1));  // a store slower than the reader
  for (uint64_t off = 0; off < data_.size(); off += 128 * kKiB) {
    ASSERT_NO_FATAL_FAILURE(Read(cache.get(), &stream, off, 128 * kKiB));
  }
  ASSERT_NO_FATAL_FAILURE(Read(cache.get(), &stream, data_.size(), 128 * kKiB));
  cache->Quiesce();
  const CacheStats s = cache->Stats();
  EXPECT_EQ(s.reads, kPages);
  EXPECT_EQ(s.reads, s.raw_hits + s.compressed_hits + s.misses);
  EXPECT_GT(s.readahead_pages, kPages / 2);
  EXPECT_LE(s.readahead_pages, kPages);
  EXPECT_GT(s.readahead_hits, kPages / 2);
  EXPECT_LE(s.readahead_hits, s.readahead_pages);
  // Whole pages, each read once: the bytes of the pages read ahead, also under raw or miss.
  EXPECT_EQ(s.raw_hit_bytes + s.compressed_hit_bytes + s.miss_bytes, data_.size());
  EXPECT_EQ(s.readahead_hit_bytes, s.readahead_hits * 8 * kKiB);
  EXPECT_LE(s.readahead_hit_bytes, s.raw_hit_bytes + s.miss_bytes);
  EXPECT_EQ(s.readahead_wasted, 0u) << "nothing was evicted";
  for (const auto& [page, reads] : counting_->page_reads()) {
    EXPECT_EQ(reads, 1) << "page " << page << " read from the store twice";
  }
  EXPECT_LT(s.backing_reads, kPages * kPs / (128 * kKiB)) << "windows larger than the reads";
}

TEST_F(ReadaheadEngineTest, ARandomReaderCausesNoReadAhead) {
  auto cache = MakeCache(32 * kMiB);
  PageCache::Stream stream;
  std::mt19937_64 rng(7);
  for (int i = 0; i < 2000; ++i) {
    const uint64_t page = rng() % kPages;
    ASSERT_NO_FATAL_FAILURE(Read(cache.get(), &stream, page * kPs, kPs));
  }
  cache->Quiesce();
  // A random page number may by chance follow the one before: rare, and each one small.
  EXPECT_LE(cache->Stats().readahead_pages, 2 * cache::kMinWindow / kPs);
}

TEST_F(ReadaheadEngineTest, OffReadsNothingAheadAndTurnsOnLive) {
  auto cache = MakeCache(32 * kMiB, /*readahead=*/0);
  PageCache::Stream stream;
  for (uint64_t off = 0; off < 2 * kMiB; off += 128 * kKiB) {
    ASSERT_NO_FATAL_FAILURE(Read(cache.get(), &stream, off, 128 * kKiB));
  }
  cache->Quiesce();
  EXPECT_EQ(cache->Stats().readahead_pages, 0u);
  Options o = cache->options();
  o.readahead = 256 * kKiB;
  ASSERT_TRUE(cache->Reconfigure(o).ok());
  for (uint64_t off = 2 * kMiB; off < 4 * kMiB; off += 128 * kKiB) {
    ASSERT_NO_FATAL_FAILURE(Read(cache.get(), &stream, off, 128 * kKiB));
  }
  cache->Quiesce();
  EXPECT_GT(cache->Stats().readahead_pages, 0u);
}

TEST_F(ReadaheadEngineTest, AWindowIsHeldToAnEighthOfTheRawTier) {
  auto cache = MakeCache(2 * kMiB);  // 1 MiB of raw frames: windows of at most 128 KiB
  PageCache::Stream stream;
  for (uint64_t off = 0; off < 4 * kMiB; off += 64 * kKiB) {
    ASSERT_NO_FATAL_FAILURE(Read(cache.get(), &stream, off, 64 * kKiB));
    cache->Quiesce();
    const std::map<uint64_t, int> reads = counting_->page_reads();
    ASSERT_FALSE(reads.empty());
    EXPECT_LE((reads.rbegin()->first + 1) * kPs, off + 64 * kKiB + 128 * kKiB)
        << "read ahead further than 1/8 of the raw tier, at " << off;
  }
  EXPECT_GT(cache->Stats().readahead_hits, 0u) << "it still reads ahead";
}

TEST_F(ReadaheadEngineTest, PagesReadAheadAndEvictedUnreadAreCountedWasted) {
  auto cache = MakeCache(2 * kMiB);  // 1 MiB of raw frames
  PageCache::Stream stream;
  // Start a stream near the start of the file, then read elsewhere enough to evict its window.
  ASSERT_NO_FATAL_FAILURE(Read(cache.get(), &stream, 0, 128 * kKiB));
  cache->Quiesce();
  ASSERT_GT(cache->Stats().readahead_pages, 0u);
  PageCache::Stream other;
  for (uint64_t off = 4 * kMiB; off < 8 * kMiB; off += 128 * kKiB) {
    ASSERT_NO_FATAL_FAILURE(Read(cache.get(), &other, off, 128 * kKiB));
    cache->Quiesce();
  }
  const CacheStats s = cache->Stats();
  EXPECT_GT(s.readahead_wasted, 0u);
  EXPECT_LE(s.readahead_wasted + s.readahead_hits, s.readahead_pages);
}

// Read's load_to: a reader's run of misses goes on past its request, in the same backing read,
// through the missing pages up to load_to; those are read-ahead pages, not reads, and the reader's
// next requests find them.
TEST_F(ReadaheadEngineTest, ARunGoesOnToLoadToInOneBackingReadAsReadAhead) {
  auto cache = MakeCache(32 * kMiB);
  const uint64_t load_to = 5 * kPs + 100;  // into the sixth page
  std::string buf(load_to, 'x');
  size_t n = 0;
  ASSERT_TRUE(cache->Read(1, counting_.get(), 0, 2000, buf.data(), &n, load_to).ok());
  ASSERT_EQ(n, 2000u);
  CacheStats s = cache->Stats();
  EXPECT_EQ(s.backing_reads, 1u);
  EXPECT_EQ(s.reads, 1u);
  EXPECT_EQ(s.misses, 1u);
  EXPECT_EQ(s.miss_bytes, 2000u);
  EXPECT_EQ(s.readahead_pages, 5u);
  ASSERT_TRUE(cache->Read(1, counting_.get(), 2000, load_to - 2000, buf.data() + 2000, &n).ok());
  ASSERT_EQ(n, load_to - 2000);
  EXPECT_EQ(0, std::memcmp(buf.data(), data_.data(), load_to));
  s = cache->Stats();
  EXPECT_EQ(s.backing_reads, 1u) << "the rest was loaded with the first read";
  EXPECT_EQ(s.readahead_hits, 5u);
  EXPECT_EQ(s.raw_hits, 6u) << "page 0 again, and the five read ahead";
  for (const auto& [page, reads] : counting_->page_reads()) EXPECT_EQ(reads, 1) << page;
}

TEST_F(ReadaheadEngineTest, ARunToLoadToStopsAtAPageCachedAlready) {
  auto cache = MakeCache(32 * kMiB);
  std::string buf(8 * kPs, 'x');
  size_t n = 0;
  ASSERT_TRUE(cache->Read(1, counting_.get(), 3 * kPs, kPs, buf.data(), &n).ok());
  ASSERT_TRUE(cache->Read(1, counting_.get(), 0, kPs, buf.data(), &n, 8 * kPs).ok());
  const CacheStats s = cache->Stats();
  EXPECT_EQ(s.backing_reads, 2u);
  EXPECT_EQ(s.readahead_pages, 2u) << "pages 1 and 2; the run ends at page 3, which is cached";
  const std::map<uint64_t, int> reads = counting_->page_reads();
  EXPECT_EQ(reads.count(4), 0u) << "nothing past the cached page";
  EXPECT_EQ(reads.at(3), 1);
}

TEST_F(ReadaheadEngineTest, AWriteDuringReadAheadLeavesNoStalePage) {
  auto cache = MakeCache(32 * kMiB);
  PageCache::Stream stream;
  counting_->Hold(std::chrono::milliseconds(30));
  ASSERT_NO_FATAL_FAILURE(Read(cache.get(), &stream, 0, 128 * kKiB));  // its window is loading
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  const std::string fresh(kPs, 'n');
  ASSERT_TRUE(cache->Write(1, counting_.get(), 20 * kPs, fresh.data(), fresh.size()).ok());
  std::memcpy(data_.data() + 20 * kPs, fresh.data(), fresh.size());
  counting_->Hold(std::chrono::milliseconds(0));
  cache->Quiesce();
  PageCache::Stream again;
  ASSERT_NO_FATAL_FAILURE(Read(cache.get(), &again, 16 * kPs, 8 * kPs));
}

}  // namespace
}  // namespace ccfs
