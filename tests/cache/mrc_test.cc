// The miss-ratio curve (SHARDS): exact on hand-made traces at rate 1, close to exact LRU
// when sampled, safe and never waiting under many threads, and wired into the engine.
#include "cache/mrc.h"

#include <fcntl.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <future>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "cache/page_entry.h"
#include "ccfs/backing_store.h"
#include "ccfs/options.h"
#include "ccfs/page_cache.h"

namespace ccfs::cache {
namespace {

// Every read sampled, no bound on pages tracked: the estimate is the exact LRU curve.
MissRatioCurve::Config EveryRead() {
  MissRatioCurve::Config c;
  c.max_keys = 0;
  c.initial_rate = 1.0;
  return c;
}

uint64_t H(uint64_t key) { return HashPageKey(PageKey{1, key}); }

// The 80/20 law over `pages` keys (rank = floor(pages * u^E), scattered by a hash), as the replay
// draws it.
std::vector<uint64_t> ParetoTrace(uint64_t pages, uint64_t reads, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const double e = std::log(0.2) / std::log(0.8);
  std::vector<uint64_t> trace;
  for (uint64_t i = 0; i < reads; ++i) {
    const auto rank = static_cast<uint64_t>(static_cast<double>(pages) * std::pow(u(rng), e));
    trace.push_back(H(rank));
  }
  return trace;
}

TEST(MissRatioCurveTest, HandMadeTraceGivesExactDistances) {
  // a a b a c b a: a cold, a at distance 0, b cold, a at 1 (b), c cold, b at 2 (a, c), a at 2.
  MissRatioCurve mrc(EveryRead());
  for (uint64_t k : {1, 1, 2, 1, 3, 2, 1}) mrc.Record(H(k));
  const std::vector<double> hit = mrc.HitRatios({0, 1, 2, 3, 4, 100});
  EXPECT_DOUBLE_EQ(hit[0], 0.0);
  EXPECT_DOUBLE_EQ(hit[1], 1.0 / 7);
  EXPECT_DOUBLE_EQ(hit[2], 2.0 / 7);
  EXPECT_DOUBLE_EQ(hit[3], 4.0 / 7);
  EXPECT_DOUBLE_EQ(hit[4], 4.0 / 7);
  EXPECT_DOUBLE_EQ(hit[5], 4.0 / 7) << "three cold misses at any size";
  EXPECT_EQ(mrc.counts().reads, 7u);
  EXPECT_EQ(mrc.counts().samples, 7u);
  EXPECT_EQ(mrc.counts().keys, 3u);
}

TEST(MissRatioCurveTest, CyclicScanHitsOnlyOnceItFits) {
  // A cyclic scan of n pages: LRU misses every read below n pages and hits every one from n on.
  for (uint64_t n : {100u, 3000u}) {
    MissRatioCurve mrc(EveryRead());
    for (uint64_t k = 0; k < n; ++k) mrc.Record(H(k));
    mrc.ResetCounts();  // the first pass (cold) is the warm-up
    for (int round = 0; round < 20; ++round) {
      for (uint64_t k = 0; k < n; ++k) mrc.Record(H(k));
    }
    const std::vector<double> hit = mrc.HitRatios({n / 2, n - 1, n, n + n / 64, 2 * n});
    EXPECT_DOUBLE_EQ(hit[0], 0.0) << n;
    EXPECT_DOUBLE_EQ(hit[3], 1.0) << n;
    EXPECT_DOUBLE_EQ(hit[4], 1.0) << n;
    if (n < 256) {
      EXPECT_DOUBLE_EQ(hit[1], 0.0) << n;
      EXPECT_DOUBLE_EQ(hit[2], 1.0) << n;
    } else {
      // Above 256 pages a bin spans 1/128 of the size and is interpolated: around n the curve
      // climbs from 0 to 1 within one bin.
      EXPECT_LT(hit[1], 1.0) << n;
      EXPECT_GT(hit[2], 0.0) << n;
    }
  }
  // Without the reset the first pass counts: 1 cold read in 21 per page.
  MissRatioCurve mrc(EveryRead());
  for (int round = 0; round < 21; ++round) {
    for (uint64_t k = 0; k < 100; ++k) mrc.Record(H(k));
  }
  EXPECT_NEAR(mrc.HitRatios({100})[0], 20.0 / 21, 1e-12);
}

TEST(MissRatioCurveTest, RateOneIsExactLru) {
  const std::vector<uint64_t> trace = ParetoTrace(5000, 100000, 7);
  MissRatioCurve mrc(EveryRead());
  ExactLruCurve exact(trace.size());
  for (uint64_t h : trace) {
    mrc.Record(h);
    exact.Record(h);
  }
  // Exact below 256 pages; above, one bin spans 1/128 of the size and is interpolated.
  const std::vector<uint64_t> exact_sizes = {1, 2, 10, 100, 255};
  const std::vector<uint64_t> binned_sizes = {300, 1000, 2500, 4999, 10000};
  std::vector<double> want = exact.HitRatios(exact_sizes);
  std::vector<double> got = mrc.HitRatios(exact_sizes);
  for (size_t i = 0; i < want.size(); ++i) EXPECT_DOUBLE_EQ(got[i], want[i]) << exact_sizes[i];
  want = exact.HitRatios(binned_sizes);
  got = mrc.HitRatios(binned_sizes);
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 0.002) << binned_sizes[i];
  EXPECT_GT(want[0], 0.3);  // the sizes cover the curve, not only its flat ends
  EXPECT_LT(want[0], want[2]);
}

// Fixed-size SHARDS on an 80/20 trace of 50 Ki pages: the rate falls to about 2048 / 50 Ki and
// the curve stays within 3 points of exact LRU from 1/16 to 4x a cache of 4 Ki pages (the
// engine's target); plain SHARDS (no correction by the true read count) is far off, as the hottest
// page alone takes a fifth of the reads.
TEST(MissRatioCurveTest, SampledEstimateIsWithinThreePointsOfExact) {
  const uint64_t pages = 50000;
  const std::vector<uint64_t> trace = ParetoTrace(pages, 600000, 11);
  MissRatioCurve::Config config;
  config.max_keys = 2048;
  MissRatioCurve mrc(config);
  config.normalize_by_samples = true;
  MissRatioCurve plain(config);
  ExactLruCurve exact(trace.size());
  for (uint64_t h : trace) {
    mrc.Record(h);
    plain.Record(h);
    exact.Record(h);
  }
  std::vector<uint64_t> sizes;
  for (int i = -16; i <= 8; ++i) sizes.push_back(std::llround(4096 * std::exp2(i / 4.0)));
  const std::vector<double> want = exact.HitRatios(sizes);
  const std::vector<double> got = mrc.HitRatios(sizes);
  const std::vector<double> got_plain = plain.HitRatios(sizes);
  double worst = 0, worst_plain = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    EXPECT_NEAR(got[i], want[i], 0.03) << sizes[i] << " pages";
    worst = std::max(worst, std::abs(got[i] - want[i]));
    worst_plain = std::max(worst_plain, std::abs(got_plain[i] - want[i]));
  }
  const MissRatioCurve::Counts c = mrc.counts();
  EXPECT_LE(c.keys, 2048u);
  EXPECT_LT(c.rate, 0.1);
  EXPECT_GT(c.rate, 0.02);
  EXPECT_LT(c.samples, trace.size() / 2);
  EXPECT_GT(worst_plain, 2 * worst) << "the correction by the read count matters here";
}

TEST(MissRatioCurveTest, AgingFollowsAChangeOfWorkload) {
  // 200 pages read in a cycle (fits in 200), then 2000 pages (fits only in 2000): with a half-life
  // of 20000 reads the curve at 200 pages comes down from ~1 to ~0 once the second phase has run
  // for many half-lives; without aging it stays in between.
  MissRatioCurve::Config config = EveryRead();
  config.half_life_reads = 20000;
  MissRatioCurve aged(config);
  MissRatioCurve flat(EveryRead());
  for (int i = 0; i < 200000; ++i) {
    aged.Record(H(i % 200));
    flat.Record(H(i % 200));
  }
  EXPECT_GT(aged.HitRatios({200})[0], 0.99);
  for (int i = 0; i < 200000; ++i) {
    aged.Record(H(1000 + i % 2000));
    flat.Record(H(1000 + i % 2000));
  }
  EXPECT_LT(aged.HitRatios({200})[0], 0.01);
  EXPECT_GT(aged.HitRatios({2000})[0], 0.98);
  EXPECT_NEAR(flat.HitRatios({200})[0], 0.5, 0.01);
  // The reads each curve stands for: all of them, or what aging left (between one and two
  // half-lives' worth, less rounding).
  EXPECT_EQ(flat.counts().covered, 400000u);
  EXPECT_GE(aged.counts().covered, 19000u);
  EXPECT_LE(aged.counts().covered, 40000u);
}

// raw_tier = kernel's curve, young: uniform reads over 32 Ki pages, three passes. Counted over
// every read, the first pass's first reads (a third of the reads) hold the hit ratio at the larger
// sizes well below the steady state's k / 32 Ki; counted over the reads that can tell each size,
// it is near. Beyond the data, the curve is flat.
TEST(MissRatioCurveTest, KernelTiersYoungCurveCountsEachSizeOverTheReadsThatCanTellIt) {
  constexpr uint64_t kPages = 32768, kCache = 16384;
  MissRatioCurve::Config whole = MissRatioCurve::Config::ForKernelTier(kCache);
  whole.by_footprint = false;
  MissRatioCurve latest(MissRatioCurve::Config::ForKernelTier(kCache));
  MissRatioCurve history(whole);
  std::mt19937_64 rng(5);
  for (uint64_t i = 0; i < kPages * 3; ++i) {
    const uint64_t h = H(rng() % kPages);
    latest.Record(h);
    history.Record(h);
  }
  for (uint64_t k : {kPages / 4, kPages / 2, kPages * 3 / 4, kPages * 7 / 8}) {
    const double steady = static_cast<double>(k) / kPages;
    const double got = latest.HitRatios({k})[0], was = history.HitRatios({k})[0];
    std::printf("%llu pages: %.3f, over every read %.3f, steady %.3f\n",
                static_cast<unsigned long long>(k), got, was, steady);
    EXPECT_NEAR(got, steady, 0.1 * steady) << k;
    if (k >= kPages * 3 / 4) {
      EXPECT_LT(was, 0.85 * steady) << k;
    }
  }
  const double full = latest.HitRatios({kPages})[0];
  EXPECT_GT(full, 0.85);
  EXPECT_DOUBLE_EQ(latest.HitRatios({2 * kPages})[0], full);
}

// Normalised by its samples (raw_tier = kernel's curve), a curve stands for its sampled weight:
// about the reads of the pages it samples, scaled by the rate.
TEST(MissRatioCurveTest, CoveredReadsAreTheSampledWeightWhenNormalisedBySamples) {
  MissRatioCurve::Config config;
  config.initial_rate = 1.0 / 8;
  config.max_keys = 0;
  config.normalize_by_samples = true;
  MissRatioCurve mrc(config);
  for (int i = 0; i < 400000; ++i) mrc.Record(H(i % 20000));
  mrc.HitRatios({100});
  EXPECT_NEAR(static_cast<double>(mrc.counts().covered), 400000.0, 40000.0);
}

TEST(MissRatioCurveTest, RecordDropsRatherThanWaitsWhileTheLockIsHeld) {
  MissRatioCurve::Config config = EveryRead();
  config.ring_slots = 16;
  MissRatioCurve mrc(config);
  mrc.TEST_mutex()->Lock();
  // Recorded on another thread (try_lock on a mutex the caller holds is undefined).
  auto done = std::async(std::launch::async, [&] {
    for (uint64_t k = 0; k < 100; ++k) mrc.Record(H(k));
  });
  const bool finished = done.wait_for(std::chrono::seconds(20)) == std::future_status::ready;
  mrc.TEST_mutex()->Unlock();
  ASSERT_TRUE(finished) << "Record waited for the lock";
  done.get();
  MissRatioCurve::Counts c = mrc.counts();
  EXPECT_EQ(c.reads, 100u);
  EXPECT_EQ(c.samples, 0u) << "nothing processed while the lock was held";
  EXPECT_EQ(c.drops, 100u - 16u) << "the ring held 16, the rest were dropped";
  // The samples queued are processed by the next holder, in order; the dropped reads leave the
  // count the curve divides by: 16 first reads seen of 16, not 16 misses in 100 reads.
  EXPECT_DOUBLE_EQ(mrc.HitRatios({1000})[0], 0.0);
  c = mrc.counts();
  EXPECT_EQ(c.samples, 16u);
  EXPECT_EQ(c.keys, 16u);
}

TEST(MissRatioCurveTest, ManyThreadsRecordWhileOthersQuery) {
  // Small bounds so that the rate falls, the stack compacts and the ring fills under contention.
  MissRatioCurve::Config config;
  config.max_keys = 256;
  config.ring_slots = 64;
  config.half_life_reads = 50000;
  MissRatioCurve mrc(config);
  constexpr int kThreads = 4;
  constexpr uint64_t kReads = 100000;
  std::atomic<bool> stop{false};
  std::thread querier([&] {
    const std::vector<uint64_t> sizes = {1, 10, 100, 1000, 10000};
    while (!stop.load()) {
      const std::vector<double> hit = mrc.HitRatios(sizes);
      for (size_t i = 0; i < hit.size(); ++i) {
        ASSERT_GE(hit[i], 0.0);
        ASSERT_LE(hit[i], 1.0);
        if (i > 0) {
          ASSERT_GE(hit[i], hit[i - 1]) << "an LRU curve never falls with size";
        }
      }
      (void)mrc.counts();
    }
  });
  std::vector<std::thread> readers;
  for (int t = 0; t < kThreads; ++t) {
    readers.emplace_back([&, t] {
      const std::vector<uint64_t> trace = ParetoTrace(20000, kReads, 100 + t);
      for (uint64_t h : trace) mrc.Record(h);
    });
  }
  for (auto& r : readers) r.join();
  stop = true;
  querier.join();
  // Readers drain only when the mutex is free: a querier descheduled while it holds it leaves
  // every sample of the run in the ring or dropped (seen: 64 kept, 399,936 dropped). A query
  // processes what the ring holds.
  (void)mrc.HitRatios({1});
  MissRatioCurve::Counts c = mrc.counts();
  EXPECT_EQ(c.reads, kThreads * kReads);
  EXPECT_LE(c.keys, 256u);
  EXPECT_GT(c.samples, 0u) << "dropped " << c.drops;
  // Back to back, the ring overflows (drops); how many depends on the interleaving. Whatever was
  // kept, one more thread's distinct pages push the rate down within the bound.
  for (uint64_t k = 0; k < 20000; ++k) mrc.Record(H(1000000 + k));
  c = mrc.counts();
  EXPECT_LE(c.keys, 256u);
  EXPECT_LT(c.rate, 0.1);
  const std::vector<double> hit = mrc.HitRatios({1, 1000000});
  EXPECT_GE(hit[0], 0.0);
  EXPECT_LE(hit[1], 1.0);
}

// The engine records every page read, hit or miss, and its curve at its own size agrees with the
// hit ratio it had: uniform reads over twice as many pages as it holds. (2 Ki pages: the engine
// samples one page in two, enough for a point or two of accuracy.)
TEST(MissRatioCurveEngineTest, EngineCurveMatchesItsHitRatioAtItsSize) {
  constexpr size_t kPs = 16384;
  constexpr uint64_t kPages = 2048;
  std::unique_ptr<MemBackingStore> store = NewMemBackingStore();
  store->Put("f", std::string(kPages * kPs, 'x'));
  std::unique_ptr<BackingFile> file;
  ASSERT_TRUE(store->Open("f", O_RDONLY, 0, &file).ok());
  Options o;
  o.memory = kPages / 2 * kPs;
  o.page_size = kPs;
  o.compressed_percent = 0;
  std::unique_ptr<PageCache> cache;
  ASSERT_TRUE(PageCache::Create(o, &cache).ok());
  std::mt19937_64 rng(3);
  std::vector<char> buf(kPs);
  auto read_some = [&](int n) {
    for (int i = 0; i < n; ++i) {
      size_t got = 0;
      ASSERT_TRUE(cache->Read(1, file.get(), (rng() % kPages) * kPs, kPs, buf.data(), &got).ok());
    }
  };
  ASSERT_NO_FATAL_FAILURE(read_some(4096));  // warm
  cache->Quiesce();
  const CacheStats before = cache->Stats();
  ASSERT_NO_FATAL_FAILURE(read_some(100000));
  const CacheStats after = cache->Stats();
  // Pages are sampled, not reads: about half of the pages, so about half of the reads.
  EXPECT_GT(after.mrc_samples, after.reads * 4 / 10);
  EXPECT_LT(after.mrc_samples, after.reads * 6 / 10);
  EXPECT_EQ(after.mrc_drops, 0u);
  const double engine_hit =
      static_cast<double>(after.raw_hits - before.raw_hits) / (after.reads - before.reads);

  const std::vector<PageCache::CurvePoint> curve = cache->HitRatioCurve();
  ASSERT_EQ(curve.size(), 33u);
  EXPECT_EQ(curve.front().pages, 16u);
  EXPECT_EQ(curve[24].pages, 1024u);
  EXPECT_EQ(curve.back().pages, 4096u);
  for (size_t i = 1; i < curve.size(); ++i) EXPECT_GE(curve[i].hit_ratio, curve[i - 1].hit_ratio);
  std::printf("engine hit ratio %.4f; curve at %llu pages %.4f, at %llu pages %.4f; %llu samples\n",
              engine_hit, static_cast<unsigned long long>(curve[24].pages), curve[24].hit_ratio,
              static_cast<unsigned long long>(curve[28].pages), curve[28].hit_ratio,
              static_cast<unsigned long long>(after.mrc_samples));
  // Uniform over 2 Ki pages: LRU of k pages hits k / 2 Ki of the reads, less the 2 Ki cold reads
  // of 104 Ki (2%): ~0.49 at 1 Ki pages, ~0.98 at 2 Ki (all of them); the engine, holding a
  // little under 1 Ki pages, a little under one half.
  EXPECT_NEAR(curve[24].hit_ratio, 0.5 - 0.01, 0.02);
  EXPECT_NEAR(curve[28].hit_ratio, 1.0 - 0.02, 0.01);
  EXPECT_NEAR(curve[24].hit_ratio, engine_hit, 0.03);
}

}  // namespace
}  // namespace ccfs::cache
