// Engine tests: bytes read equal bytes in the backing store, across both tiers and many threads;
// counters add up; the budget holds; hit ratio follows the effective-capacity model under uniform
// access; CLOCK keeps referenced pages; writes and invalidation never leave stale bytes; a run of
// missing pages is one backing read, and its pages are loaded once however many readers ask.
#include "ccfs/page_cache.h"

#include <fcntl.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "ccfs/backing_store.h"
#include "ccfs/options.h"
#include "cache/engine_files.h"

namespace ccfs {
namespace {

class EngineTest : public ::testing::Test {
 protected:
  void Open(const std::string& name, std::string data) {
    store_->Put(name, std::move(data));
    ASSERT_TRUE(store_->Open(name, O_RDWR, 0644, &file_).ok());
  }
  std::unique_ptr<PageCache> MakeCache(const Options& o) {
    std::unique_ptr<PageCache> cache;
    Status st = PageCache::Create(o, &cache);
    EXPECT_TRUE(st.ok()) << st.ToString();
    return cache;
  }
  static void ExpectCountersAddUp(const CacheStats& s) {
    EXPECT_EQ(s.reads, s.raw_hits + s.compressed_hits + s.misses);
    EXPECT_EQ(s.raw_hit_latency.count(), s.raw_hits);
    EXPECT_EQ(s.compressed_hit_latency.count(), s.compressed_hits);
    EXPECT_EQ(s.miss_latency.count(), s.misses);
  }

  std::unique_ptr<MemBackingStore> store_ = NewMemBackingStore();
  std::unique_ptr<BackingFile> file_;
};

Options SmallOptions(int compressed_percent, uint64_t memory = 2 << 20) {
  Options o;
  o.memory = memory;
  o.compressed_percent = compressed_percent;
  o.compress_threads = 2;
  return o;
}

TEST_F(EngineTest, RejectsInvalidOptions) {
  Options o = SmallOptions(96);
  std::unique_ptr<PageCache> cache;
  Status st = PageCache::Create(o, &cache);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("compressed_percent"), std::string::npos) << st.message();
  o = SmallOptions(10);
  o.page_size = 12288;
  st = PageCache::Create(o, &cache);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("page_size"), std::string::npos) << st.message();
}

// kernel_demote: the engine beneath the kernel's page cache.
Options DemoteOptions(const char* policy) {
  Options o = SmallOptions(50, 4 << 20);
  o.raw_tier = "kernel";
  o.kernel_demote = policy;
  return o;
}

// A page the kernel drops is compressed off the caller's thread and answers the next read as a
// compressed hit with the kernel's bytes; the hit hands it back to the kernel (it leaves the
// compressed tier), and a miss's page is never compressed (the kernel keeps it).
TEST_F(EngineTest, ADemotedPageIsACompressedHitOnceThenTheKernels) {
  const size_t ps = 8192;
  std::string data = MakeFile(8, ps, 100, /*tail=*/300);  // every page compressible
  Open("f", data);
  auto cache = MakeCache(DemoteOptions("exclusive"));
  // Pages 2 and 8 (the short last page) come from the kernel; nothing was read before.
  cache->Demote(1, 2, data.data() + 2 * ps, ps, cache->ChangeEpoch());
  cache->Demote(1, 8, data.data() + 8 * ps, 300, cache->ChangeEpoch());
  cache->Quiesce();
  CacheStats s = cache->Stats();
  EXPECT_EQ(s.demotions, 2u);
  EXPECT_EQ(s.compressed_pages, 2u);
  std::string buf(ps, 'x');
  size_t n = 0;
  ASSERT_TRUE(cache->Read(1, file_.get(), 2 * ps, ps, buf.data(), &n).ok());
  ASSERT_EQ(n, ps);
  EXPECT_TRUE(buf == data.substr(2 * ps, ps));
  ASSERT_TRUE(cache->Read(1, file_.get(), 8 * ps, ps, buf.data(), &n).ok());
  ASSERT_EQ(n, 300u);
  EXPECT_EQ(0, std::memcmp(buf.data(), data.data() + 8 * ps, 300));
  s = cache->Stats();
  EXPECT_EQ(s.compressed_hits, 2u);
  EXPECT_EQ(s.misses, 0u);
  EXPECT_EQ(s.compressed_pages, 0u) << "a compressed hit goes back to the kernel";
  // Every page read from the store: none of them is compressed, however the staging tier turns.
  for (int round = 0; round < 40; ++round) {
    for (uint64_t p = 0; p < 8; ++p) {
      ASSERT_TRUE(cache->Read(2, file_.get(), p * ps, ps, buf.data(), &n).ok());
    }
  }
  cache->Quiesce();
  s = cache->Stats();
  EXPECT_EQ(s.compressions, 2u) << "only the demoted pages were compressed";
  ExpectCountersAddUp(s);
}

// Bytes fetched from the kernel before a write (or an invalidation) may be older than the file:
// they are not kept, and the next read sees the written bytes.
TEST_F(EngineTest, ADemotionOlderThanAWriteIsNotKept) {
  const size_t ps = 8192;
  std::string data = MakeFile(4, ps, 1000);
  Open("f", data);
  auto cache = MakeCache(DemoteOptions("mix"));
  const uint64_t before_write = cache->ChangeEpoch();
  const std::string fresh = MakePage(1, ps, 500, 99);
  ASSERT_TRUE(cache->Write(1, file_.get(), ps, fresh.data(), ps).ok());
  cache->Demote(1, 1, data.data() + ps, ps, before_write);  // the kernel's old copy
  const uint64_t before_invalidation = cache->ChangeEpoch();
  cache->InvalidateFile(1);
  cache->Demote(1, 2, data.data() + 2 * ps, ps, before_invalidation);
  cache->Quiesce();
  CacheStats s = cache->Stats();
  EXPECT_EQ(s.demotions, 0u);
  EXPECT_EQ(s.demote_drops, 2u);
  std::string buf(ps, 'x');
  size_t n = 0;
  ASSERT_TRUE(cache->Read(1, file_.get(), ps, ps, buf.data(), &n).ok());
  EXPECT_TRUE(buf == fresh);
  EXPECT_EQ(cache->Stats().misses, 1u);
}

// Without kernel_demote (and in daemon mode) Demote keeps nothing.
TEST_F(EngineTest, DemoteIsANoOpUnlessTheKeyAsksForIt) {
  const size_t ps = 8192;
  std::string data = MakeFile(2, ps, 1000);
  for (const char* tier : {"daemon", "kernel"}) {
    Options o = SmallOptions(50, 4 << 20);
    o.raw_tier = tier;
    auto cache = MakeCache(o);
    cache->Demote(1, 0, data.data(), ps, cache->ChangeEpoch());
    cache->Quiesce();
    EXPECT_EQ(cache->Stats().compressed_pages, 0u) << tier;
    EXPECT_EQ(cache->Stats().demotions, 0u) << tier;
  }
}

TEST_F(EngineTest, ReadsAnyOffsetAndLengthIncludingShortLastPage) {
  const size_t ps = 8192;
  std::string data = MakeFile(10, ps, 2000, /*tail=*/777);
  Open("f", data);
  auto cache = MakeCache(SmallOptions(25));
  std::mt19937_64 rng(7);
  uint64_t bytes = 0;
  for (int i = 0; i < 2000; ++i) {
    uint64_t off = rng() % (data.size() + 100);
    size_t len = rng() % (3 * ps);
    std::string buf(len, 'x');
    size_t n = 0;
    ASSERT_TRUE(cache->Read(1, file_.get(), off, len, buf.data(), &n).ok());
    size_t expect = off >= data.size() ? 0 : std::min(len, data.size() - off);
    ASSERT_EQ(n, expect) << "off " << off << " len " << len;
    ASSERT_EQ(0, std::memcmp(buf.data(), data.data() + std::min<uint64_t>(off, data.size()), n));
    bytes += n;
  }
  const CacheStats s = cache->Stats();
  ExpectCountersAddUp(s);
  // Every byte returned is counted once, under the path of the page it came from.
  EXPECT_EQ(s.raw_hit_bytes + s.compressed_hit_bytes + s.miss_bytes, bytes);
}

// Many threads read random pages of several files through a budget far below the data, so pages
// move raw -> compressed -> raw and get dropped all the time.
void ConcurrentReadsMatch(EngineTest* t, std::unique_ptr<MemBackingStore>& store, Options o,
                          size_t random_bytes, uint64_t max_read_pages = 1) {
  const size_t ps = o.page_size;
  const int kFiles = 3;
  const uint64_t kPages = 600;  // 3 files * 600 * 8 KiB = 14 MiB against a 2 MiB budget
  std::vector<std::string> data;
  std::vector<std::unique_ptr<BackingFile>> files;
  for (int f = 0; f < kFiles; ++f) {
    data.push_back(MakeFile(kPages, ps, f == 2 ? ps : random_bytes, 100 * f, f));
    std::string name = "file" + std::to_string(f);
    store->Put(name, data.back());
    files.emplace_back();
    ASSERT_TRUE(store->Open(name, O_RDONLY, 0, &files.back()).ok());
  }
  std::unique_ptr<PageCache> cache;
  ASSERT_TRUE(PageCache::Create(o, &cache).ok());
  std::atomic<bool> over_budget{false};
  std::atomic<bool> done{false};
  const uint64_t batch_bytes =
      static_cast<uint64_t>(o.raw_budget() / ps * o.evict_batch_percent / 100 + 1) * ps;
  std::thread watcher([&] {
    while (!done.load()) {
      CacheStats s = cache->Stats();
      if (s.raw_bytes > s.raw_budget_bytes ||
          s.compressed_bytes > s.compressed_budget_bytes + batch_bytes) {
        over_budget = true;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  });
  const int kThreads = 6;
  const int kReadsPerThread = 4000;
  std::atomic<uint64_t> pages_read{0};
  std::atomic<uint64_t> bytes_read{0};
  std::atomic<int> mismatches{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937_64 rng(100 + t);
      std::string buf((max_read_pages + 1) * ps, '\0');
      for (int i = 0; i < kReadsPerThread; ++i) {
        int f = static_cast<int>(rng() % kFiles);
        // Skewed: half the reads go to the first 10% of pages, so there are hits in both tiers.
        uint64_t page = (rng() & 1) ? rng() % (kPages / 10) : rng() % kPages;
        uint64_t off = page * ps + (rng() % 4 == 0 ? rng() % ps : 0);
        size_t len = ps * (1 + rng() % max_read_pages);
        size_t n = 0;
        Status st = cache->Read(f, files[f].get(), off, len, buf.data(), &n);
        if (!st.ok() || n != std::min<uint64_t>(len, data[f].size() - off) ||
            std::memcmp(buf.data(), data[f].data() + off, n) != 0) {
          mismatches++;
        }
        if (n > 0) pages_read += (off + n - 1) / ps - off / ps + 1;  // the pages holding bytes
        bytes_read += n;
      }
    });
  }
  for (auto& th : threads) th.join();
  done = true;
  watcher.join();
  cache->Quiesce();
  CacheStats s = cache->Stats();
  EXPECT_EQ(mismatches.load(), 0);
  EXPECT_FALSE(over_budget.load());
  EXPECT_EQ(s.reads, pages_read.load());
  EXPECT_EQ(s.reads, s.raw_hits + s.compressed_hits + s.misses);
  EXPECT_EQ(s.raw_hit_bytes + s.compressed_hit_bytes + s.miss_bytes, bytes_read.load());
  EXPECT_GT(s.misses, 0u);
  EXPECT_GT(s.raw_hits, 0u);
  EXPECT_GT(s.evictions, 0u);
  if (o.compressed_percent > 0) {
    EXPECT_GT(s.compressed_hits, 0u);
    EXPECT_GT(s.compressed_hit_bytes, 0u);
    EXPECT_GT(s.compressions, 0u);
    EXPECT_GT(s.rejects, 0u);  // file 2 is incompressible
  } else {
    EXPECT_EQ(s.compressed_hits, 0u);
    EXPECT_EQ(s.compressions, 0u);
  }
}

TEST_F(EngineTest, ConcurrentReadsMatchBackingRawOnly) {
  ConcurrentReadsMatch(this, store_, SmallOptions(0), 2048);
}
TEST_F(EngineTest, ConcurrentReadsMatchBackingLz4) {
  ConcurrentReadsMatch(this, store_, SmallOptions(50), 2048);
}
TEST_F(EngineTest, ConcurrentReadsMatchBackingZstd) {
  Options o = SmallOptions(70);
  o.compressor = CodecKind::kZstd;
  o.compression_level = 3;
  ConcurrentReadsMatch(this, store_, o, 1024);
}
TEST_F(EngineTest, ConcurrentReadsMatchBacking4KPages) {
  Options o = SmallOptions(50);
  o.page_size = 4096;
  ConcurrentReadsMatch(this, store_, o, 1024);
}
// Reads of up to 32 pages (256 KiB) by six threads through 128 frames: runs compete for frames
// and for pages, and must neither deadlock nor lose bytes.
TEST_F(EngineTest, ConcurrentMultiPageReadsMatchBacking) {
  ConcurrentReadsMatch(this, store_, SmallOptions(50), 2048, /*max_read_pages=*/32);
}
TEST_F(EngineTest, ConcurrentMultiPageReadsMatchBackingRawOnly) {
  ConcurrentReadsMatch(this, store_, SmallOptions(0), 2048, /*max_read_pages=*/32);
}

// Uniform access over N pages: the hit ratio is the effective capacity fraction
// g(C) = (T(1-C) + T*C*R) / B / N, with R the compression ratio the tier achieved.
double UniformHitRatio(EngineTest* t, MemBackingStore* store, int compressed_percent,
                       double* model) {
  const size_t ps = 8192;
  const uint64_t n_pages = 3000;
  store->Put("u", MakeFile(n_pages, ps, 3072));
  std::unique_ptr<BackingFile> file;
  EXPECT_TRUE(store->Open("u", O_RDONLY, 0, &file).ok());
  Options o = SmallOptions(compressed_percent, 8 << 20);
  std::unique_ptr<PageCache> cache;
  EXPECT_TRUE(PageCache::Create(o, &cache).ok());
  std::mt19937_64 rng(42);
  std::vector<char> buf(ps);
  size_t n;
  auto run = [&](int reads) {
    for (int i = 0; i < reads; ++i) {
      uint64_t page = rng() % n_pages;
      EXPECT_TRUE(cache->Read(9, file.get(), page * ps, ps, buf.data(), &n).ok());
      if (i % 64 == 0) cache->Quiesce();  // let compression keep pace, as a real pool does
    }
  };
  run(4 * n_pages);  // warm up: fill both tiers
  cache->Quiesce();
  CacheStats before = cache->Stats();
  run(6 * n_pages);
  cache->Quiesce();
  CacheStats after = cache->Stats();
  double hits = static_cast<double>((after.raw_hits - before.raw_hits) +
                                    (after.compressed_hits - before.compressed_hits));
  double reads = static_cast<double>(after.reads - before.reads);
  double c = compressed_percent / 100.0;
  double r = after.compression_ratio();
  double t_bytes = static_cast<double>(o.memory);
  *model = std::min(1.0, (t_bytes * (1 - c) + t_bytes * c * r) / ps / n_pages);
  std::printf("uniform C=%d%%: hit ratio %.4f, model %.4f (R %.2f, free frames %llu, raw pages %llu, "
              "compressed pages %llu, evictions %llu)\n",
              compressed_percent, hits / reads, *model, r, (unsigned long long)after.free_frames,
              (unsigned long long)after.raw_pages, (unsigned long long)after.compressed_pages,
              (unsigned long long)after.evictions);
  return hits / reads;
}

TEST_F(EngineTest, UniformHitRatioFollowsModelRawOnly) {
  double model = 0;
  double measured = UniformHitRatio(this, store_.get(), 0, &model);
  EXPECT_NEAR(measured, model, 0.03) << "measured " << measured << " model " << model;
}

TEST_F(EngineTest, UniformHitRatioFollowsModelHalfCompressed) {
  double model = 0;
  double measured = UniformHitRatio(this, store_.get(), 50, &model);
  EXPECT_NEAR(measured, model, 0.03) << "measured " << measured << " model " << model;
  // Compression must have bought capacity here: the data compresses about 2x.
  EXPECT_GT(measured, 8.0 * (1 << 20) / 8192 / 3000 + 0.03);
}

TEST_F(EngineTest, ClockKeepsReferencedPagesAndTakesUnreferencedFirst) {
  const size_t ps = 16384;
  Open("c", MakeFile(200, ps, ps));
  Options o = SmallOptions(0, 1 << 20);  // 64 frames; watermark and batch: 1 frame
  o.page_size = ps;
  o.probation = false;  // the CLOCK hand alone (frequency_test.cc: PagesReadOnceLeaveFirst)
  auto cache = MakeCache(o);
  std::vector<char> buf(ps);
  size_t n;
  auto read = [&](uint64_t page) {
    ASSERT_TRUE(cache->Read(3, file_.get(), page * ps, ps, buf.data(), &n).ok());
  };
  for (uint64_t p = 0; p < 60; ++p) read(p);  // 60 of 64 frames: no eviction yet
  cache->Quiesce();
  ASSERT_EQ(cache->Stats().evictions, 0u);
  for (uint64_t p = 0; p < 30; ++p) read(p);  // reference the first half
  for (uint64_t p = 60; p < 90; ++p) {         // 30 new pages force evictions
    read(p);
    cache->Quiesce();
  }
  CacheStats before = cache->Stats();
  ASSERT_GT(before.evictions, 20u);
  for (uint64_t p = 0; p < 30; ++p) read(p);
  CacheStats after = cache->Stats();
  EXPECT_EQ(after.raw_hits - before.raw_hits, 30u) << "referenced pages were evicted";
  for (uint64_t p = 30; p < 60; ++p) read(p);
  EXPECT_GT(cache->Stats().misses - after.misses, 20u) << "unreferenced pages survived";
}

TEST_F(EngineTest, RejectsAndZeroPagesAreCounted) {
  const size_t ps = 8192;
  std::string data = MakeFile(200, ps, ps);  // incompressible
  data += std::string(200 * ps, '\0');       // all zero
  data += MakeFile(200, ps, 512, 0, 5);      // compressible
  Open("z", data);
  auto cache = MakeCache(SmallOptions(90));  // 205 raw frames
  std::vector<char> buf(ps);
  size_t n;
  for (int round = 0; round < 2; ++round) {
    for (uint64_t p = 0; p < 600; ++p) {
      // Let the pool keep up (misses from memory outrun compressions; on a loaded machine the
      // pressure valve would drop most victims uncompressed and there would be little to count).
      if (p % 4 == 0) cache->Quiesce();
      ASSERT_TRUE(cache->Read(4, file_.get(), p * ps, ps, buf.data(), &n).ok());
      ASSERT_EQ(0, std::memcmp(buf.data(), data.data() + p * ps, ps)) << "page " << p;
    }
    cache->Quiesce();
  }
  CacheStats s = cache->Stats();
  EXPECT_GT(s.rejects, 0u);
  EXPECT_GT(s.rejects + s.incompressible_skips, 100u);  // regions that keep failing are skipped
  EXPECT_GT(s.zero_pages, 100u);
  EXPECT_GT(s.compressed_stored, 100u);
  EXPECT_EQ(s.compressions, s.rejects + s.zero_pages + s.compressed_stored);
  EXPECT_EQ(s.evictions,
            s.compressions + s.incompressible_skips + s.admission_drops + s.pressure_drops);
  EXPECT_GT(s.compression_ratio(), 2.0);
}

TEST_F(EngineTest, WritesGoThroughAndNeverLeaveStaleBytes) {
  const size_t ps = 8192;
  std::string data = MakeFile(50, ps, 1000, 300);
  Open("w", data);
  auto cache = MakeCache(SmallOptions(50));
  std::vector<char> buf(3 * ps);
  size_t n;
  ASSERT_TRUE(cache->Read(5, file_.get(), 0, data.size(), std::vector<char>(data.size()).data(), &n).ok());
  std::string patch(ps + 100, 'W');
  ASSERT_TRUE(cache->Write(5, file_.get(), 3 * ps + 50, patch.data(), patch.size()).ok());
  data.replace(3 * ps + 50, patch.size(), patch);
  EXPECT_EQ(store_->Get("w"), data);  // through to the backing store before returning
  ASSERT_TRUE(cache->Read(5, file_.get(), 3 * ps, 3 * ps, buf.data(), &n).ok());
  EXPECT_EQ(0, std::memcmp(buf.data(), data.data() + 3 * ps, n));
  // Growing the file past a short last page: the cached last page must not end the file early.
  std::string tail(100, 'T');
  uint64_t at = data.size() + ps;
  ASSERT_TRUE(cache->Write(5, file_.get(), at, tail.data(), tail.size()).ok());
  data.resize(at, '\0');
  data += tail;
  std::vector<char> all(data.size() + 10);
  ASSERT_TRUE(cache->Read(5, file_.get(), 0, all.size(), all.data(), &n).ok());
  ASSERT_EQ(n, data.size());
  EXPECT_EQ(0, std::memcmp(all.data(), data.data(), n));
}

TEST_F(EngineTest, InvalidateFileDropsPagesChangedUnderneath) {
  const size_t ps = 8192;
  std::string v1 = MakeFile(40, ps, 1000, 0, 1);
  Open("i", v1);
  auto cache = MakeCache(SmallOptions(50));
  std::vector<char> buf(v1.size());
  size_t n;
  ASSERT_TRUE(cache->Read(6, file_.get(), 0, v1.size(), buf.data(), &n).ok());
  std::string v2 = MakeFile(20, ps, 1000, 10, 2);  // rewritten and shorter
  store_->Put("i", v2);
  cache->InvalidateFile(6, 0);
  ASSERT_TRUE(cache->Read(6, file_.get(), 0, v1.size(), buf.data(), &n).ok());
  ASSERT_EQ(n, v2.size());
  EXPECT_EQ(0, std::memcmp(buf.data(), v2.data(), n));
  // Truncation: pages past the new end are dropped, pages before it kept.
  std::string v3 = v2.substr(0, 5 * ps + 10);
  store_->Put("i", v3);
  CacheStats before = cache->Stats();
  cache->InvalidateFile(6, v3.size());
  ASSERT_TRUE(cache->Read(6, file_.get(), 0, v2.size(), buf.data(), &n).ok());
  ASSERT_EQ(n, v3.size());
  EXPECT_EQ(0, std::memcmp(buf.data(), v3.data(), n));
  EXPECT_EQ(cache->Stats().raw_hits - before.raw_hits, 5u);
}

// Readers never see a page older than the last write that returned before their read started,
// and never a torn page, while writers rewrite whole pages and the evictor runs.
TEST_F(EngineTest, ConcurrentWritersAndReadersSeeNoStalePages) {
  const size_t ps = 8192;
  const uint64_t kPages = 400;
  auto page_bytes = [&](uint64_t page, uint64_t version) {
    std::string p(ps, '\0');
    for (size_t i = 0; i < ps; i += 16) {
      std::memcpy(&p[i], &page, 8);
      std::memcpy(&p[i + 8], &version, 8);
    }
    return p;
  };
  std::string data;
  for (uint64_t p = 0; p < kPages; ++p) data += page_bytes(p, 0);
  Open("cw", data);
  auto cache = MakeCache(SmallOptions(40));
  std::vector<std::atomic<uint64_t>> committed(kPages);
  for (auto& c : committed) c = 0;
  std::atomic<int> errors{0};
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  for (int w = 0; w < 2; ++w) {
    threads.emplace_back([&, w] {
      std::mt19937_64 rng(w);
      for (int i = 0; i < 1500; ++i) {
        // Each writer owns the pages of its parity, so versions per page only grow.
        uint64_t page = (rng() % (kPages / 2)) * 2 + w;
        uint64_t v = committed[page].load() + 1;
        std::string p = page_bytes(page, v);
        if (!cache->Write(7, file_.get(), page * ps, p.data(), ps).ok()) errors++;
        committed[page].store(v);
      }
    });
  }
  for (int r = 0; r < 4; ++r) {
    threads.emplace_back([&, r] {
      std::mt19937_64 rng(50 + r);
      std::vector<char> buf(ps);
      size_t n;
      while (!stop.load()) {
        uint64_t page = rng() % kPages;
        uint64_t floor_v = committed[page].load();
        if (!cache->Read(7, file_.get(), page * ps, ps, buf.data(), &n).ok() || n != ps) {
          errors++;
          continue;
        }
        uint64_t got_page, got_v;
        std::memcpy(&got_page, buf.data(), 8);
        std::memcpy(&got_v, buf.data() + 8, 8);
        if (got_page != page || got_v < floor_v ||
            std::memcmp(buf.data(), page_bytes(page, got_v).data(), ps) != 0) {
          errors++;
        }
      }
    });
  }
  threads[0].join();
  threads[1].join();
  stop = true;
  for (size_t i = 2; i < threads.size(); ++i) threads[i].join();
  EXPECT_EQ(errors.load(), 0);
  ExpectCountersAddUp(cache->Stats());
}

TEST_F(EngineTest, ReconfigureMovesTheSplitLive) {
  const size_t ps = 8192;
  std::string data = MakeFile(1000, ps, 1024);
  Open("r", data);
  auto cache = MakeCache(SmallOptions(0, 4 << 20));
  std::vector<char> buf(ps);
  size_t n;
  auto sweep = [&] {
    for (uint64_t p = 0; p < 1000; ++p) {
      ASSERT_TRUE(cache->Read(8, file_.get(), p * ps, ps, buf.data(), &n).ok());
      ASSERT_EQ(0, std::memcmp(buf.data(), data.data() + p * ps, ps));
    }
    cache->Quiesce();
  };
  sweep();
  EXPECT_EQ(cache->Stats().compressed_pages, 0u);
  Options o = cache->options();
  o.compressed_percent = 60;
  ASSERT_TRUE(cache->Reconfigure(o).ok());
  sweep();
  CacheStats s = cache->Stats();
  EXPECT_EQ(s.compressed_percent, 60);
  EXPECT_GT(s.compressed_pages, 100u);
  EXPECT_LE(s.raw_bytes, s.raw_budget_bytes);
  o.compressed_percent = 0;
  ASSERT_TRUE(cache->Reconfigure(o).ok());
  s = cache->Stats();
  EXPECT_EQ(s.compressed_pages, 0u);
  EXPECT_EQ(s.compressed_bytes, 0u);
  o.memory = 8 << 20;
  Status st = cache->Reconfigure(o);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("memory"), std::string::npos);
  EXPECT_NE(st.message().find("remount"), std::string::npos);
}

TEST_F(EngineTest, BackingReadErrorsAreReportedAndNotCached) {
  const size_t ps = 8192;
  std::string data = MakeFile(10, ps, 1000);
  Open("e", data);
  auto cache = MakeCache(SmallOptions(25));
  std::vector<char> buf(ps);
  size_t n;
  store_->FailReads(true);
  Status st = cache->Read(9, file_.get(), 0, ps, buf.data(), &n);
  EXPECT_FALSE(st.ok());
  EXPECT_EQ(st.ToErrno(), EIO);
  store_->FailReads(false);
  ASSERT_TRUE(cache->Read(9, file_.get(), 0, ps, buf.data(), &n).ok());
  EXPECT_EQ(0, std::memcmp(buf.data(), data.data(), ps));
  CacheStats s = cache->Stats();
  EXPECT_EQ(s.read_errors, 1u);
  EXPECT_EQ(s.misses, 1u);
  ExpectCountersAddUp(s);
}


// ---- runs of missing pages ----------------------------------------------------------------------

class EngineRunTest : public EngineTest {
 protected:
  static constexpr size_t kPs = 8192;
  // A file of `pages` pages (and `tail` bytes more) behind a CountingFile.
  void OpenCounting(uint64_t pages, size_t tail = 0) {
    data_ = MakeFile(pages, kPs, 1000, tail);
    Open("run", data_);
    counting_ = std::make_unique<CountingFile>(std::move(file_));
  }
  // Reads [off, off + len) and checks the bytes against the file.
  void ReadAndCheck(PageCache* cache, uint64_t off, size_t len) {
    std::string buf(len, 'x');
    size_t n = 0;
    Status st = cache->Read(1, counting_.get(), off, len, buf.data(), &n);
    ASSERT_TRUE(st.ok()) << st.ToString();
    const size_t expect = off >= data_.size() ? 0 : std::min<size_t>(len, data_.size() - off);
    ASSERT_EQ(n, expect) << "at " << off;
    ASSERT_EQ(0, std::memcmp(buf.data(), data_.data() + off, n)) << "at " << off;
  }

  std::string data_;
  std::unique_ptr<CountingFile> counting_;
};

TEST_F(EngineRunTest, AReadOfMissingPagesIsOneBackingRead) {
  OpenCounting(64);
  auto cache = MakeCache(SmallOptions(50, 4 << 20));
  ASSERT_NO_FATAL_FAILURE(ReadAndCheck(cache.get(), 0, 32 * kPs));
  // Unaligned at both ends: pages 40 (from its middle) to 50 (part of it).
  ASSERT_NO_FATAL_FAILURE(ReadAndCheck(cache.get(), 40 * kPs + 100, 10 * kPs + 5));
  const auto calls = counting_->calls();
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0].first_page, 0u);
  EXPECT_EQ(calls[0].pages, 32u);
  EXPECT_EQ(calls[1].first_page, 40u);
  EXPECT_EQ(calls[1].pages, 11u);
  CacheStats s = cache->Stats();
  EXPECT_EQ(s.misses, 43u);
  EXPECT_EQ(s.backing_reads, 2u);
  ExpectCountersAddUp(s);
  // Read again: every page is a hit, and the store is not asked.
  ASSERT_NO_FATAL_FAILURE(ReadAndCheck(cache.get(), 0, 32 * kPs));
  EXPECT_EQ(counting_->calls().size(), 2u);
  EXPECT_EQ(cache->Stats().raw_hits, 32u);
}

TEST_F(EngineRunTest, ARunIsSplitAtCachedPages) {
  OpenCounting(16);
  auto cache = MakeCache(SmallOptions(50, 4 << 20));
  ASSERT_NO_FATAL_FAILURE(ReadAndCheck(cache.get(), 5 * kPs, kPs));
  ASSERT_NO_FATAL_FAILURE(ReadAndCheck(cache.get(), 10 * kPs, kPs));
  ASSERT_NO_FATAL_FAILURE(ReadAndCheck(cache.get(), 0, 16 * kPs));
  const auto calls = counting_->calls();
  ASSERT_EQ(calls.size(), 5u);
  // Pages 5 and 10, then the runs between them: 0-4, 6-9, 11-15.
  EXPECT_EQ(calls[2].first_page, 0u);
  EXPECT_EQ(calls[2].pages, 5u);
  EXPECT_EQ(calls[3].first_page, 6u);
  EXPECT_EQ(calls[3].pages, 4u);
  EXPECT_EQ(calls[4].first_page, 11u);
  EXPECT_EQ(calls[4].pages, 5u);
  for (const auto& [page, reads] : counting_->page_reads()) EXPECT_EQ(reads, 1) << page;
  CacheStats s = cache->Stats();
  EXPECT_EQ(s.raw_hits, 2u);
  EXPECT_EQ(s.misses, 16u);
  EXPECT_EQ(s.backing_reads, 5u);
  ExpectCountersAddUp(s);
}

// A run that reaches past end of file: one read, the short last page kept, nothing after it.
TEST_F(EngineRunTest, ARunPastEndOfFileStopsThere) {
  OpenCounting(10, /*tail=*/300);
  auto cache = MakeCache(SmallOptions(50, 4 << 20));
  ASSERT_NO_FATAL_FAILURE(ReadAndCheck(cache.get(), 2 * kPs, 16 * kPs));
  ASSERT_EQ(counting_->calls().size(), 1u);
  CacheStats s = cache->Stats();
  EXPECT_EQ(s.misses, 9u) << "pages 2-9 and the short page 10";
  EXPECT_EQ(s.raw_pages, 9u) << "the pages past the end are not kept";
  ExpectCountersAddUp(s);
  ASSERT_NO_FATAL_FAILURE(ReadAndCheck(cache.get(), 10 * kPs, kPs));
  EXPECT_EQ(cache->Stats().raw_hits, 1u);
}

// Readers of overlapping runs, all arriving while the first runs are being read: every page is
// read from the store once, and every reader gets the file's bytes.
TEST_F(EngineRunTest, ConcurrentReadersOfOverlappingRunsNeverReadAPageTwice) {
  OpenCounting(256);
  auto cache = MakeCache(SmallOptions(0, 8 << 20));  // holds the file: nothing is evicted
  counting_->Hold(std::chrono::milliseconds(5));
  const int kThreads = 6;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937_64 rng(t);
      std::string buf(48 * kPs, '\0');
      for (int i = 0; i < 40; ++i) {
        const uint64_t off = (rng() % 240) * kPs + (rng() % 2 ? rng() % kPs : 0);
        const size_t len = 1 + rng() % (buf.size() - 1);
        size_t n = 0;
        if (!cache->Read(1, counting_.get(), off, len, buf.data(), &n).ok() ||
            n != std::min<size_t>(len, data_.size() - off) ||
            std::memcmp(buf.data(), data_.data() + off, n) != 0) {
          failures++;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  // Pages past the end (256 on) are asked again by every read that reaches them: nothing there
  // to keep.
  size_t pages = 0;
  for (const auto& [page, reads] : counting_->page_reads()) {
    if (page >= 256) continue;
    EXPECT_EQ(reads, 1) << page;
    ++pages;
  }
  EXPECT_EQ(pages, 256u);
  CacheStats s = cache->Stats();
  EXPECT_GE(s.misses, 256u) << "a page waited for counts as a miss too";
  EXPECT_LT(s.backing_reads, 256u / 4) << "runs were read whole";
  EXPECT_EQ(s.backing_reads, counting_->calls().size());
  ExpectCountersAddUp(s);
}

// The run's read fails: the reader gets the error, every page claimed for the run is released
// (none left loading: a reader waiting for one of them gets an answer), and nothing is cached.
TEST_F(EngineRunTest, ABackingErrorMidRunLeavesNoPageLoading) {
  OpenCounting(32);
  auto cache = MakeCache(SmallOptions(50, 4 << 20));
  const uint32_t frames = cache->Stats().free_frames;
  counting_->FailReadsOfPage(7);
  counting_->Hold(std::chrono::milliseconds(50));
  std::string buf(32 * kPs, '\0');
  size_t n = 0;
  auto run = std::async(std::launch::async, [&] {
    return cache->Read(1, counting_.get(), 0, 16 * kPs, buf.data(), &n);
  });
  // A second reader of page 10, while the run holds it (or after: either way it must return).
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  std::string one(kPs, '\0');
  size_t one_n = 0;
  auto waiter = std::async(std::launch::async, [&] {
    return cache->Read(1, counting_.get(), 10 * kPs, kPs, one.data(), &one_n);
  });
  ASSERT_EQ(run.wait_for(std::chrono::seconds(20)), std::future_status::ready);
  ASSERT_EQ(waiter.wait_for(std::chrono::seconds(20)), std::future_status::ready)
      << "a page of the failed run was left loading";
  Status st = run.get();
  EXPECT_FALSE(st.ok());
  EXPECT_EQ(st.ToErrno(), EIO);
  (void)waiter.get();  // failed too (its own read covered page 7), or read page 10 alone
  CacheStats s = cache->Stats();
  EXPECT_EQ(s.raw_pages + s.free_frames, frames);
  EXPECT_LE(s.raw_pages, 1u) << "only page 10, if the second reader read it alone";
  EXPECT_GE(s.read_errors, 16u) << "each page of the failed run";
  // Nothing of the failed run was kept, and every page reads right once the store is well.
  counting_->Hold(std::chrono::milliseconds(0));
  counting_->FailReadsOfPage(UINT64_MAX);
  const uint64_t misses_before = s.misses;
  ASSERT_NO_FATAL_FAILURE(ReadAndCheck(cache.get(), 0, 32 * kPs));
  s = cache->Stats();
  EXPECT_GE(s.misses - misses_before, 31u);
  ExpectCountersAddUp(s);
}

// A request larger than the free frames: runs end where frames run out (only a run's first page
// waits for one, while the evictor frees a batch), the bytes are right, and the store still sees
// fewer reads than pages.
TEST_F(EngineRunTest, ARequestLargerThanTheRawTierIsReadInRuns) {
  OpenCounting(512);  // 4 MiB against 1 MiB of frames
  auto cache = MakeCache(SmallOptions(0, 1 << 20));
  ASSERT_NO_FATAL_FAILURE(ReadAndCheck(cache.get(), 0, 512 * kPs));
  CacheStats s = cache->Stats();
  EXPECT_EQ(s.misses, 512u);
  EXPECT_LE(s.backing_reads, 512u / 2);
  EXPECT_EQ(s.pass_through_pages, 0u);  // daemon mode keeps every page it reads
  ExpectCountersAddUp(s);
}

// raw_tier = kernel: a request larger than the staging tier's free frames is still one backing
// read; the pages past the free frames reach the reader without being kept, read straight into an
// aligned buffer (the FUSE layer's), or through a small scratch into any other.
TEST_F(EngineRunTest, KernelModeReadsARequestPastAFullStagingTierInOneBackingRead) {
  OpenCounting(512);
  Options o = SmallOptions(50, 4 << 20);  // staging: 64 frames
  o.raw_tier = "kernel";
  auto cache = MakeCache(o);
  ASSERT_LT(cache->Stats().free_frames, 128u);
  std::unique_ptr<char, decltype(&std::free)> buf(
      static_cast<char*>(std::aligned_alloc(kIoAlignment, 128 * kPs)), &std::free);
  for (uint64_t at = 0; at < 384; at += 128) {
    size_t n = 0;
    ASSERT_TRUE(cache->Read(1, counting_.get(), at * kPs, 128 * kPs, buf.get(), &n).ok());
    ASSERT_EQ(n, 128 * kPs);
    ASSERT_EQ(0, std::memcmp(buf.get(), data_.data() + at * kPs, n)) << "at page " << at;
  }
  CacheStats s = cache->Stats();
  EXPECT_EQ(s.misses, 384u);
  EXPECT_EQ(s.backing_reads, 3u);
  EXPECT_GE(s.pass_through_pages, 3u * 64);
  ExpectCountersAddUp(s);
  // An unaligned buffer, from the middle of a page to the middle of another: the bytes are right.
  ASSERT_NO_FATAL_FAILURE(ReadAndCheck(cache.get(), 384 * kPs + 100, 127 * kPs));
  // A passed page was not kept: read again, it is a miss, and the bytes are right.
  cache->Quiesce();
  const uint64_t misses = cache->Stats().misses;
  ASSERT_NO_FATAL_FAILURE(ReadAndCheck(cache.get(), 127 * kPs, kPs));
  EXPECT_EQ(cache->Stats().misses, misses + 1);
}

// raw_tier = kernel over a store that streams faster than the pool compresses (this one, in
// memory): a page a stream loads is dropped at its first eviction and remembered, and a page a
// request read past a full staging tier is remembered too (Evictor::NotePassed). A second pass
// over the file, in requests the staging tier holds, then keeps the pages it loads; had the passed
// pages been forgotten, it would drop them again.
TEST_F(EngineRunTest, KernelModePagesPassedThroughAreKeptWhenTheyComeBack) {
  constexpr uint64_t kPages = 256;  // 2 MiB of pages that compress: the compressed tier holds all
  OpenCounting(kPages);
  Options o = SmallOptions(50, 4 << 20);  // staging: 64 frames
  o.raw_tier = "kernel";
  o.compressor = CodecKind::kZstd;
  o.compression_level = 19;  // slow, so that this store surely streams faster than it compresses
  auto cache = MakeCache(o);
  IoBuffer buf = NewIoBuffer(128 * kPs);
  // Both rates measured first: a stream of another file (id 2) whose first victims are compressed.
  for (uint64_t at = 0; at < 64; at += 16) {
    size_t n = 0;
    ASSERT_TRUE(cache->Read(2, counting_.get(), at * kPs, 16 * kPs, buf.get(), &n).ok());
    cache->Quiesce();
  }
  ASSERT_GT(cache->Stats().compressions, 0u);
  for (uint64_t at = 0; at < kPages; at += 128) {
    size_t n = 0;
    ASSERT_TRUE(cache->Read(1, counting_.get(), at * kPs, 128 * kPs, buf.get(), &n).ok());
    ASSERT_EQ(n, 128 * kPs);
  }
  cache->Quiesce();
  CacheStats s = cache->Stats();
  const uint64_t passed = s.pass_through_pages;  // file 2's requests fit the free frames
  ASSERT_GE(passed, 64u);
  const PageCache::Residency first = cache->ResidencyOf(1, 0, kPages);
  EXPECT_LE(first.compressed_pages + first.raw_pages, kPages - passed) << "passed pages: not kept";
  // The second pass: a stream again, in requests the staging tier's free frames hold.
  for (uint64_t at = 0; at < kPages; at += 16) {
    ASSERT_NO_FATAL_FAILURE(ReadAndCheck(cache.get(), at * kPs, 16 * kPs));
    if (at % 64 == 48) cache->Quiesce();
  }
  cache->Quiesce();
  // A page the stream ghost set forgot is dropped again: it is a table of fingerprints (4096 slots
  // here), where some of the pages collide.
  const uint64_t dropped_again = cache->Stats().admission_drops - s.admission_drops;
  EXPECT_LE(dropped_again, passed / 2) << "passed " << passed;
  ExpectCountersAddUp(cache->Stats());
}

}  // namespace
}  // namespace ccfs
