// Exact LRU stack distances: hand-computed sequences, the cyclic scan LRU cannot hold, a page read
// over and over, and the curve against a plain LRU cache simulated on the same reads.
#include "trace/stack_distance.h"

#include <algorithm>
#include <list>
#include <unordered_map>
#include <vector>

#include <gtest/gtest.h>

#include "util/rng.h"

namespace ccfs {
namespace {

constexpr uint64_t kCold = StackDistanceCounter::kCold;

std::vector<uint64_t> Distances(const std::vector<uint64_t>& keys, uint64_t key_space) {
  StackDistanceCounter stack(key_space, keys.size());
  std::vector<uint64_t> out;
  for (uint64_t k : keys) out.push_back(stack.Access(k));
  return out;
}

TEST(StackDistance, HandComputedExample) {
  // a b c b a d a: b's second read has c in between (1); a's second has b and c (2: b counts once
  // though read twice); a's third has d (1).
  enum { a, b, c, d };
  EXPECT_EQ(Distances({a, b, c, b, a, d, a}, 4),
            (std::vector<uint64_t>{kCold, kCold, kCold, 1, 2, kCold, 1}));

  LruHitCurve curve;
  for (uint64_t dist : Distances({a, b, c, b, a, d, a}, 4)) curve.Add(dist);
  EXPECT_EQ(curve.accesses(), 7u);
  EXPECT_EQ(curve.reuses(), 3u);
  EXPECT_EQ(curve.Hits(0), 0u);
  EXPECT_EQ(curve.Hits(1), 0u);  // one page: no read comes straight back
  EXPECT_EQ(curve.Hits(2), 2u);
  EXPECT_EQ(curve.Hits(3), 3u);
  EXPECT_EQ(curve.Hits(1000), 3u);
  EXPECT_DOUBLE_EQ(curve.HitRatio(2), 2.0 / 7);
  EXPECT_DOUBLE_EQ(curve.HitRatio(1.5), 1.0 / 7);  // halfway between 0 and 2 hits
  EXPECT_DOUBLE_EQ(curve.HitRatio(1e9), 3.0 / 7);
  EXPECT_DOUBLE_EQ(curve.HitRatio(0), 0.0);
}

TEST(StackDistance, CyclicScanMissesUntilTheWholeLoopFits) {
  constexpr uint64_t kLoop = 50, kRounds = 8;
  std::vector<uint64_t> keys;
  for (uint64_t r = 0; r < kRounds; ++r) {
    for (uint64_t k = 0; k < kLoop; ++k) keys.push_back(k);
  }
  LruHitCurve curve;
  std::vector<uint64_t> d = Distances(keys, kLoop);
  for (size_t i = 0; i < d.size(); ++i) {
    EXPECT_EQ(d[i], i < kLoop ? kCold : kLoop - 1) << i;
    curve.Add(d[i]);
  }
  // LRU's pathology: one page short of the loop and every read misses.
  EXPECT_EQ(curve.HitRatio(kLoop - 1), 0.0);
  EXPECT_DOUBLE_EQ(curve.HitRatio(kLoop), (kRounds - 1.0) / kRounds);
}

TEST(StackDistance, RepeatedPageHitsInACacheOfOnePage) {
  LruHitCurve curve;
  StackDistanceCounter stack(10, 100);
  for (int i = 0; i < 100; ++i) {
    const uint64_t d = stack.Access(7);
    EXPECT_EQ(d, i == 0 ? kCold : 0u);
    curve.Add(d);
  }
  EXPECT_EQ(stack.accesses(), 100u);
  EXPECT_DOUBLE_EQ(curve.HitRatio(1), 0.99);
  EXPECT_DOUBLE_EQ(curve.HitRatio(0.5), 0.495);
  EXPECT_EQ(curve.HitRatio(0), 0.0);
}

TEST(StackDistance, EmptyCurveHitsNothing) {
  LruHitCurve curve;
  EXPECT_EQ(curve.HitRatio(10), 0.0);
  EXPECT_EQ(curve.Hits(10), 0u);
}

// A plain LRU cache of `capacity` keys: the hits it scores on `keys`.
uint64_t SimulateLru(const std::vector<uint64_t>& keys, size_t capacity) {
  if (capacity == 0) return 0;
  std::list<uint64_t> order;  // most recent first
  std::unordered_map<uint64_t, std::list<uint64_t>::iterator> where;
  uint64_t hits = 0;
  for (uint64_t k : keys) {
    auto it = where.find(k);
    if (it != where.end()) {
      ++hits;
      order.erase(it->second);
    } else if (order.size() == capacity) {
      where.erase(order.back());
      order.pop_back();
    }
    order.push_front(k);
    where[k] = order.begin();
  }
  return hits;
}

TEST(StackDistance, CurveEqualsAnLruCacheOfEverySize) {
  // A skewed random stream: the hot few and a long tail.
  Rng rng(11);
  std::vector<uint64_t> keys;
  for (int i = 0; i < 5000; ++i) {
    keys.push_back(rng.NextDouble() < 0.7 ? rng.Below(20) : rng.Below(400));
  }
  LruHitCurve curve;
  for (uint64_t d : Distances(keys, 400)) curve.Add(d);
  for (size_t capacity : {0, 1, 2, 5, 19, 20, 21, 50, 150, 399, 400}) {
    EXPECT_EQ(curve.Hits(capacity), SimulateLru(keys, capacity)) << capacity;
  }
}

}  // namespace
}  // namespace ccfs
