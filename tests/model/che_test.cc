// Che's approximation against the oracle, exact cases, and a simulated LRU and FIFO cache.
#include "model/che.h"

#include <gtest/gtest.h>

#include <cmath>
#include <list>
#include <memory>
#include <unordered_map>

#include "testing/law.h"
#include "util/rng.h"

namespace ccfs {
namespace {

using testing::Law;

// Hit ratio of a simulated LRU (or FIFO: no move on a hit) cache of `capacity` pages over `ops`
// reads after `warmup` reads (as many as measured if negative), the cache empty at the start.
double Simulate(const AccessDistribution& dist, size_t capacity, bool fifo, int ops, int warmup = -1) {
  if (warmup < 0) warmup = ops;
  std::list<uint64_t> order;  // front = most recent (LRU) / newest (FIFO)
  std::unordered_map<uint64_t, std::list<uint64_t>::iterator> where;
  Rng rng(42);
  int hits = 0;
  for (int i = 0; i < warmup + ops; ++i) {
    uint64_t page = dist.NextRank(rng);
    auto it = where.find(page);
    const bool measured = i >= warmup;
    if (it != where.end()) {
      hits += measured;
      if (!fifo) order.splice(order.begin(), order, it->second);
      continue;
    }
    order.push_front(page);
    where[page] = order.begin();
    if (order.size() > capacity) {
      where.erase(order.back());
      order.pop_back();
    }
  }
  return static_cast<double>(hits) / ops;
}

TEST(CheTest, UniformAccessHitsTheCachedFractionWhateverTheReplacement) {
  auto dist = Law("uniform", 10000);
  for (Replacement r : {Replacement::kOracle, Replacement::kLru, Replacement::kFifo}) {
    EXPECT_NEAR(CacheHitRatio(*dist, 2500, r), 0.25, 1e-3) << ReplacementName(r);
    EXPECT_EQ(CacheHitRatio(*dist, 0, r), 0.0);
    EXPECT_EQ(CacheHitRatio(*dist, 20000, r), 1.0);
  }
}

TEST(CheTest, UnderASkewedLawFifoHitsLessThanLruAndLruLessThanTheOracle) {
  for (const char* law : {"pareto", "zipf:0.9"}) {
    auto dist = Law(law, 100000);
    double previous = 0;
    for (double k : {1000.0, 5000.0, 20000.0, 50000.0}) {
      const double oracle = CacheHitRatio(*dist, k, Replacement::kOracle);
      const double lru = CacheHitRatio(*dist, k, Replacement::kLru);
      const double fifo = CacheHitRatio(*dist, k, Replacement::kFifo);
      EXPECT_LT(lru, oracle) << law << " k=" << k;
      EXPECT_LT(fifo, lru) << law << " k=" << k;
      EXPECT_GT(fifo, previous) << law << ": rises with capacity";
      previous = fifo;
    }
  }
}

TEST(CheTest, MatchesASimulatedCache) {
  for (const char* law : {"pareto", "zipf:0.9"}) {
    auto dist = Law(law, 4000);
    for (size_t k : {200u, 800u}) {
      EXPECT_NEAR(CacheHitRatio(*dist, k, Replacement::kLru), Simulate(*dist, k, false, 200000),
                  0.02)
          << law << " LRU k=" << k;
      EXPECT_NEAR(CacheHitRatio(*dist, k, Replacement::kFifo), Simulate(*dist, k, true, 200000),
                  0.02)
          << law << " FIFO k=" << k;
    }
  }
}

TEST(CheTest, AWindowAfterAShortWarmUpMissesTheFirstReads) {
  // 16384 pages, a warm-up of four times their number, 20000 measured reads (the crossover's
  // Pareto at 2x memory): the cold pages, read once in the warm-up on average, are often read for
  // the first time in the window and miss even where the cache could hold every page.
  auto dist = Law("pareto", 16384);
  const ReadWindow window{65536, 20000};
  for (Replacement r : {Replacement::kOracle, Replacement::kLru}) {
    const double whole = CacheHitRatio(*dist, 16384, r, window);
    EXPECT_NEAR(whole, Simulate(*dist, 16384, false, 20000, 65536), 0.01) << ReplacementName(r);
    EXPECT_LT(whole, 0.97) << ReplacementName(r);
  }
  EXPECT_NEAR(CacheHitRatio(*dist, 4000, Replacement::kLru, window),
              Simulate(*dist, 4000, false, 20000, 65536), 0.02);
  // Uniform, the whole data set cached: a page's first read in the window is e^(-W/N) (1 - e^(-M/N))
  // N / M of the reads.
  auto uniform = Law("uniform", 10000);
  const double first = std::exp(-2.0) * -std::expm1(-1.0) / 1.0;
  EXPECT_NEAR(CacheHitRatio(*uniform, 10000, Replacement::kOracle, {20000, 10000}), 1.0 - first, 1e-6);
  // A quarter of it under LRU fills after ~2900 reads (T = N ln 4/3), long before the window: the
  // first reads cost nothing. Nine tenths fills after ~23000 (N ln 10), inside the window.
  EXPECT_NEAR(CacheHitRatio(*uniform, 2500, Replacement::kLru, {20000, 10000}), 0.25, 1e-3);
  const double filling = CacheHitRatio(*uniform, 9000, Replacement::kLru, {20000, 10000});
  EXPECT_LT(filling, 0.899);  // the steady state: 0.9
  EXPECT_NEAR(filling, Simulate(*uniform, 9000, false, 10000, 20000), 0.01);
  // After a warm-up long enough to read every page many times, the window is the steady state.
  EXPECT_NEAR(CacheHitRatio(*dist, 4000, Replacement::kLru, {1e9, 20000}),
              CacheHitRatio(*dist, 4000, Replacement::kLru), 1e-9);
}

}  // namespace
}  // namespace ccfs
