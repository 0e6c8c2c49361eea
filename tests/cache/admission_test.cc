// Admission of raw victims to compression: the ghost set, the memory of incompressible regions,
// and the engine using both (victims read once are dropped uncompressed once the compressed tier
// is full; victims that come back, or were read again, are compressed; regions that keep failing
// are skipped with periodic probes).
#include "cache/admission.h"

#include <fcntl.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "ccfs/backing_store.h"
#include "ccfs/options.h"
#include "ccfs/page_cache.h"

namespace ccfs::cache {
namespace {

TEST(GhostSetTest, RemembersUntilOverwrittenAndResizeClears) {
  GhostSet ghost(1 << 12);
  EXPECT_EQ(ghost.slots(), 4096u);
  for (uint64_t p = 0; p < 100; ++p) EXPECT_FALSE(ghost.Contains(PageKey{1, p}));
  for (uint64_t p = 0; p < 100; ++p) ghost.Remember(PageKey{1, p});
  int found = 0;
  for (uint64_t p = 0; p < 100; ++p) found += ghost.Contains(PageKey{1, p});
  EXPECT_GE(found, 97) << "100 keys in 4096 slots: few collisions";
  int strangers = 0;
  for (uint64_t p = 0; p < 100000; ++p) strangers += ghost.Contains(PageKey{2, p});
  EXPECT_LE(strangers, 2) << "a 32-bit fingerprint makes false positives rare";
  ghost.Resize(1000);
  EXPECT_EQ(ghost.slots(), 1024u);
  for (uint64_t p = 0; p < 100; ++p) EXPECT_FALSE(ghost.Contains(PageKey{1, p}));
  ghost.Resize(1 << 20);
  EXPECT_EQ(ghost.slots(), 4096u) << "capped at the size it was made with";
}

TEST(RejectMemoryTest, SkipsARegionThatKeepsFailingButProbesIt) {
  RejectMemory mem(8192);
  const PageKey key{7, 3};
  for (int i = 0; i < RejectMemory::kSkipAfter - 1; ++i) mem.Record(key, true);
  EXPECT_FALSE(mem.ShouldSkip(key));
  mem.Record(key, true);
  // The same 512 KiB region (64 pages of 8 KiB) is skipped; one in kProbeEvery is let through.
  int skipped = 0, probes = 0;
  for (int i = 0; i < 160; ++i) (mem.ShouldSkip(PageKey{7, 60}) ? skipped : probes)++;
  EXPECT_EQ(probes, 160 / static_cast<int>(RejectMemory::kProbeEvery));
  EXPECT_EQ(skipped, 160 - probes);
  EXPECT_FALSE(mem.ShouldSkip(PageKey{7, 64})) << "the next region has its own record";
  mem.Record(PageKey{7, 0}, false);  // a probe that compressed well
  EXPECT_FALSE(mem.ShouldSkip(key));
}

// Page `i`: distinct; incompressible, or half random bytes and half text (~1.9:1 with lz4, so
// that the 512 KiB compressed tier holds ~100 pages and fills early).
std::string Page(uint64_t i, size_t ps, bool random) {
  std::string p(ps, '\0');
  std::mt19937_64 rng(i);
  size_t random_bytes = random ? ps : ps / 2;
  for (size_t j = 0; j + 8 <= random_bytes; j += 8) {
    uint64_t w = rng();
    std::memcpy(&p[j], &w, 8);
  }
  for (size_t j = random_bytes; j < ps; ++j) p[j] = "admission filter text "[(j + i) % 22];
  std::memcpy(&p[0], &i, sizeof(i));
  return p;
}

class AdmissionEngineTest : public ::testing::Test {
 protected:
  void Open(const std::string& data) {
    store_->Put("f", data);
    ASSERT_TRUE(store_->Open("f", O_RDONLY, 0, &file_).ok());
  }
  std::unique_ptr<PageCache> Make(bool filter) {
    Options o;
    o.memory = 2 << 20;  // 256 pages of 8 KiB
    o.compressed_percent = 25;
    o.compress_threads = 2;
    o.admission_filter = filter;
    // The reads below push pages out with pages read once; with probation those would leave
    // first and push out nothing (frequency_test.cc tests probation).
    o.probation = false;
    o.low_watermark_percent = 10;  // slack, so that the pool keeps up (see ReadPages)
    std::unique_ptr<PageCache> cache;
    EXPECT_TRUE(PageCache::Create(o, &cache).ok());
    return cache;
  }
  // Misses from memory are far faster than compressions: to test admission rather than the
  // pressure valve (a miss finding no free frame drops victims uncompressed), let the pool catch
  // up every few pages.
  void ReadPages(PageCache* cache, uint64_t from, uint64_t to, const std::string& data) {
    std::vector<char> buf(kPs);
    for (uint64_t p = from; p < to; ++p) {
      if (p % 4 == 0) cache->Quiesce();
      size_t n = 0;
      ASSERT_TRUE(cache->Read(1, file_.get(), p * kPs, kPs, buf.data(), &n).ok());
      ASSERT_EQ(n, kPs);
      ASSERT_EQ(0, std::memcmp(buf.data(), data.data() + p * kPs, kPs)) << "page " << p;
    }
    cache->Quiesce();
    EXPECT_EQ(cache->Stats().pressure_drops, 0u);
  }
  static constexpr size_t kPs = 8192;
  std::unique_ptr<MemBackingStore> store_ = NewMemBackingStore();
  std::unique_ptr<BackingFile> file_;
};

TEST_F(AdmissionEngineTest, AScanOfPagesReadOnceIsNotCompressedOnceTheTierIsFull) {
  std::string data;
  for (uint64_t i = 0; i < 4000; ++i) data += Page(i, kPs, false);
  Open(data);
  for (bool filter : {false, true}) {
    SCOPED_TRACE(filter ? "filter on" : "filter off");
    auto cache = Make(filter);
    ReadPages(cache.get(), 0, 4000, data);
    CacheStats s = cache->Stats();
    EXPECT_GT(s.evictions, 3000u);
    if (!filter) {
      EXPECT_EQ(s.admission_drops, 0u);
      EXPECT_EQ(s.compressions + s.pressure_drops, s.evictions);
    } else {
      // The tier (25% of 2 MiB) fills with the first hundred or so victims; after that the
      // scan's pages show no reuse and are dropped uncompressed.
      EXPECT_GT(s.admission_drops, 2000u);
      EXPECT_LT(s.compressions, 1500u);
      EXPECT_EQ(s.compressions + s.admission_drops + s.pressure_drops, s.evictions);
      EXPECT_GT(s.compressed_pages, 50u) << "the tier was still filled";
    }
  }
}

TEST_F(AdmissionEngineTest, PagesThatComeBackOrAreReadAgainAreCompressed) {
  std::string data;
  for (uint64_t i = 0; i < 3000; ++i) data += Page(i, kPs, false);
  Open(data);
  auto cache = Make(true);
  ReadPages(cache.get(), 0, 3000, data);  // fills the tier, then drops into the ghost set
  CacheStats first = cache->Stats();
  ASSERT_GT(first.admission_drops, 1000u);
  // Pages 2500..2750 were among the last dropped (remembered: the ghost set has 1024 slots); read
  // them again: as they are evicted again they are compressed, not dropped.
  ReadPages(cache.get(), 2500, 2750, data);
  ReadPages(cache.get(), 0, 300, data);  // pushes them out
  CacheStats second = cache->Stats();
  uint64_t compressed = second.compressions - first.compressions;
  EXPECT_GT(compressed, 120u) << "victims that came back after an eviction were dropped";
  // And a page read twice while raw is compressed on its first eviction.
  auto fresh = Make(true);
  ReadPages(fresh.get(), 0, 3000, data);
  CacheStats before = fresh->Stats();
  ReadPages(fresh.get(), 1000, 1100, data);  // new misses (pages long gone)...
  ReadPages(fresh.get(), 1000, 1100, data);  // ...read again while raw
  ReadPages(fresh.get(), 0, 400, data);      // evict them
  CacheStats after = fresh->Stats();
  // (A few may be evicted between their two reads when the machine is slow: allow 5.)
  EXPECT_GE(after.compressions - before.compressions, 95u);
}

TEST_F(AdmissionEngineTest, AScanLoopLargerThanTheCacheKeepsAShareInTheCompressedTier) {
  // 600 pages read in order, in 128 KiB requests (a stream: page_entry.h, Q), again and again:
  // more than the 192 raw frames and the ~100 pages the compressed tier holds together. Were each
  // victim that comes back let in, it would displace the page the next pass reads first, and no
  // pass would find a compressed page; kept out once the tier is full (a tie with what it would
  // displace), the tier serves its share every pass.
  constexpr uint64_t kLoop = 600, kRun = 16;
  std::string data;
  for (uint64_t i = 0; i < kLoop; ++i) data += Page(i, kPs, false);
  Open(data);
  auto cache = Make(true);
  std::vector<char> buf(kRun * kPs);
  auto pass = [&] {
    for (uint64_t p = 0; p < kLoop; p += kRun) {
      cache->Quiesce();  // the pool keeps up (see ReadPages)
      size_t n = 0;
      ASSERT_TRUE(cache->Read(1, file_.get(), p * kPs, buf.size(), buf.data(), &n).ok());
      ASSERT_EQ(n, std::min<size_t>(buf.size(), data.size() - p * kPs));
      ASSERT_EQ(0, std::memcmp(buf.data(), data.data() + p * kPs, n)) << "at page " << p;
    }
  };
  for (int i = 0; i < 3; ++i) ASSERT_NO_FATAL_FAILURE(pass());
  CacheStats before = cache->Stats();
  ASSERT_NO_FATAL_FAILURE(pass());
  CacheStats after = cache->Stats();
  const uint64_t held = after.compressed_pages;
  ASSERT_GT(held, 50u);
  EXPECT_GE(after.compressed_hits - before.compressed_hits, held * 8 / 10)
      << "the compressed tier held " << held << " pages";
}

TEST_F(AdmissionEngineTest, RandomReadersVictimsAreLetInAsBefore) {
  // The same loop read a page at a time (no stream): victims that come back are let in, each
  // displacing the tier's next page, and the tier serves next to nothing of a pass. This is the
  // admission random readers keep (Evictor::Admit).
  std::string data;
  for (uint64_t i = 0; i < 600; ++i) data += Page(i, kPs, false);
  Open(data);
  auto cache = Make(true);
  for (int pass = 0; pass < 3; ++pass) ReadPages(cache.get(), 0, 600, data);
  CacheStats before = cache->Stats();
  ReadPages(cache.get(), 0, 600, data);
  CacheStats after = cache->Stats();
  EXPECT_GT(after.compressions - before.compressions, 200u);
  EXPECT_LT(after.compressed_hits - before.compressed_hits, 20u);
}

TEST_F(AdmissionEngineTest, IncompressibleRegionsAreSkippedAfterAFewRejects) {
  std::string data;
  for (uint64_t i = 0; i < 3000; ++i) data += Page(i, kPs, true);
  Open(data);
  auto cache = Make(false);  // every victim would be compressed
  ReadPages(cache.get(), 0, 3000, data);
  CacheStats s = cache->Stats();
  EXPECT_GT(s.incompressible_skips, 2000u);
  EXPECT_LT(s.rejects, 800u) << "a few rejects per region, then a probe now and then";
  EXPECT_EQ(s.compressions, s.rejects + s.zero_pages + s.compressed_stored);
  EXPECT_EQ(s.compressions + s.incompressible_skips + s.pressure_drops, s.evictions);
}

TEST_F(AdmissionEngineTest, WhenThePoolFallsBehindMissesDropVictimsInsteadOfWaiting) {
  std::string data;
  for (uint64_t i = 0; i < 2000; ++i) data += Page(i, kPs, false);
  Open(data);
  Options o;
  o.memory = 2 << 20;
  o.compressed_percent = 50;
  o.compress_threads = 1;
  o.compressor = CodecKind::kZstd;
  // The slowest level: several times slower per page than a miss from memory, also under TSan,
  // which slows the misses down but not the codec (a system library, not instrumented).
  o.compression_level = 22;
  // Every victim is offered to the pool: with the admission filter, most pages of a one-pass
  // stream are turned away before they reach it (admission_drops), and the few left could be
  // compressed in time on a slow run; probation likewise sends pages read once out uncompressed.
  o.admission_filter = false;
  o.probation = false;
  std::unique_ptr<PageCache> cache;
  ASSERT_TRUE(PageCache::Create(o, &cache).ok());
  std::vector<char> buf(kPs);
  for (uint64_t p = 0; p < 2000; ++p) {
    size_t n = 0;
    ASSERT_TRUE(cache->Read(1, file_.get(), p * kPs, kPs, buf.data(), &n).ok());
    ASSERT_EQ(0, std::memcmp(buf.data(), data.data() + p * kPs, kPs)) << "page " << p;
  }
  cache->Quiesce();
  CacheStats s = cache->Stats();
  printf("[admission] pool behind: %llu evictions, %llu compressions, %llu pressure drops\n",
         (unsigned long long)s.evictions, (unsigned long long)s.compressions,
         (unsigned long long)s.pressure_drops);
  // Relative, not absolute: under a sanitizer on a loaded machine the misses themselves slow down
  // and fewer victims pile up, but compressing at level 19 stays far slower than a miss, so most
  // victims must still be dropped rather than waited for.
  EXPECT_GT(s.pressure_drops, 100u);
  EXPECT_GT(s.pressure_drops, s.compressions) << s.evictions << " evictions";
  EXPECT_EQ(s.evictions,
            s.compressions + s.admission_drops + s.incompressible_skips + s.pressure_drops);
  // Each stall lasts until the evictor drops a few victims, not until a compression finishes.
  ASSERT_GT(s.stalls, 0u);
  EXPECT_LT(s.stall_ns / s.stalls, 2'000'000u) << s.stalls << " stalls";
}

}  // namespace
}  // namespace ccfs::cache
