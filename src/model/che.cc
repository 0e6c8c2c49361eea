#include "model/che.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

#include "model/clock_model.h"

namespace ccfs {

namespace {

double Occupancy(double p, double t, Replacement r) {
  const double x = p * t;
  return r == Replacement::kFifo ? x / (1.0 + x) : -std::expm1(-x);
}

}  // namespace

// Geometric groups (1% by default): the hot head, where probabilities change fastest, keeps its
// resolution, and a data set of any size costs a few hundred buckets.
std::vector<RankBucket> RankBuckets(const AccessDistribution& dist, double growth) {
  const double n = static_cast<double>(dist.pages());
  std::vector<RankBucket> out;
  double start = 0;
  double share_start = 0;
  while (start < n) {
    double width = std::max(1.0, std::floor(start * growth));
    if (start < 64) width = 1;
    const double end = std::min(n, start + width);
    const double share_end = dist.HotShare(end);
    out.push_back({end - start, std::max(0.0, share_end - share_start) / (end - start)});
    start = end;
    share_start = share_end;
  }
  return out;
}

double UnreadShare(double p, double a, double b) {
  if (b <= a) return std::exp(-p * a);
  const double x = p * (b - a);
  if (x < 1e-12) return std::exp(-p * a);
  return std::exp(-p * a) * -std::expm1(-x) / x;
}

const char* ReplacementName(Replacement r) {
  switch (r) {
    case Replacement::kLru:
      return "lru";
    case Replacement::kFifo:
      return "fifo";
    case Replacement::kGclock:
      return "gclock";
    case Replacement::kOracle:
      break;
  }
  return "oracle";
}

bool ParseReplacement(const std::string& text, Replacement* r) {
  for (Replacement candidate :
       {Replacement::kOracle, Replacement::kLru, Replacement::kFifo, Replacement::kGclock}) {
    if (text == ReplacementName(candidate)) {
      *r = candidate;
      return true;
    }
  }
  return false;
}

double CacheHitRatio(const AccessDistribution& dist, double capacity, Replacement replacement,
                     const ReadWindow& window, const ClockFacts& clock) {
  const double n = static_cast<double>(dist.pages());
  const double k = std::clamp(capacity, 0.0, n);
  if (replacement == Replacement::kGclock) {
    ClockTiers cache;
    cache.raw_pages = k;
    cache.memory_pages = k;
    cache.engine = clock;
    return ClockTierHitRatios(dist, cache, window).raw;
  }
  const bool cold = window.measured > 0;
  if (replacement == Replacement::kOracle && !cold) return dist.HotShare(k);
  if (k <= 0) return 0.0;
  if (k >= n && !cold) return 1.0;
  const std::vector<RankBucket> buckets = RankBuckets(dist);
  // Each bucket's hits: its reads times the share of them that find the page cached.
  auto hits_of = [&](const std::function<double(const RankBucket&)>& hit) {
    double hits = 0;
    for (const RankBucket& b : buckets) hits += b.pages * b.p * hit(b);
    return std::clamp(hits, 0.0, 1.0);
  };
  const double w0 = window.before, w1 = window.before + window.measured;
  if (replacement == Replacement::kOracle || k >= n) {
    // The k hottest pages (buckets are in rank order), each a hit once it has been read.
    double first_rank = 0;
    return hits_of([&](const RankBucket& b) {
      const double in = std::clamp(k - first_rank, 0.0, b.pages) / b.pages;
      first_rank += b.pages;
      return in * (cold ? 1.0 - UnreadShare(b.p, w0, w1) : 1.0);
    });
  }
  auto filled = [&](double t) {
    double pages = 0;
    for (const RankBucket& b : buckets) pages += b.pages * Occupancy(b.p, t, replacement);
    return pages;
  };
  // Bisection on log T: filled() rises monotonically from 0 to n (pages with p = 0 never enter).
  double lo = 1e-3, hi = 1.0;
  while (filled(hi) < k && hi < 1e18) hi *= 4;
  for (int i = 0; i < 100 && hi / lo > 1.0 + 1e-9; ++i) {
    const double mid = std::sqrt(lo * hi);
    (filled(mid) < k ? lo : hi) = mid;
  }
  const double t = std::sqrt(lo * hi);
  // A read at position r finds its page cached with the steady state's chance once the cache has
  // filled (r >= T: it holds the pages of the last T reads), and before that whenever the page has
  // been read at all (nothing has been evicted yet): 1 - e^(-p r).
  return hits_of([&](const RankBucket& b) {
    const double steady = Occupancy(b.p, t, replacement);
    if (!cold || t <= w0) return steady;
    const double filling_end = std::min(t, w1);
    const double filling = (filling_end - w0) / window.measured;
    return filling * (1.0 - UnreadShare(b.p, w0, filling_end)) + (1.0 - filling) * steady;
  });
}

}  // namespace ccfs
