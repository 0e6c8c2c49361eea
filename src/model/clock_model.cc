#include "model/clock_model.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace ccfs {

namespace {

constexpr double kStays = 1e30;    // a residence with no end
constexpr double kNoPeriod = 1e14; // the hand never turns: the tier does not fill

// A figure for each count of uses, 0..use_max.
using Uses = std::vector<double>;

// Poisson(m): out[k] for k < n, and out[n] = P(>= n).
void Poisson(double m, int n, double* out) {
  double term = std::exp(-m);
  double sum = 0;
  for (int k = 0; k < n; ++k) {
    out[k] = term;
    sum += term;
    term *= m / (k + 1);
  }
  out[n] = std::max(0.0, 1.0 - sum);
}

// Solves a x = b for x (left in b): Gaussian elimination with partial pivoting, a row-major n x n.
// False when a is singular.
bool Solve(std::vector<double>& a, std::vector<double>& b, int n) {
  for (int c = 0; c < n; ++c) {
    int pivot = c;
    for (int r = c + 1; r < n; ++r) {
      if (std::abs(a[r * n + c]) > std::abs(a[pivot * n + c])) pivot = r;
    }
    if (std::abs(a[pivot * n + c]) < 1e-12) return false;
    if (pivot != c) {
      for (int k = 0; k < n; ++k) std::swap(a[c * n + k], a[pivot * n + k]);
      std::swap(b[c], b[pivot]);
    }
    for (int r = 0; r < n; ++r) {
      const double f = r == c ? 0.0 : a[r * n + c] / a[c * n + c];
      if (f == 0) continue;
      for (int k = c; k < n; ++k) a[r * n + k] -= f * a[c * n + k];
      b[r] -= f * b[c];
    }
  }
  for (int r = 0; r < n; ++r) b[r] /= a[r * n + r];
  return true;
}

// R(u): the expected reads from a page's entry with u uses until the hand evicts it, the hand
// passing it every `period` reads (the first pass a period after the load: the frame was freed just
// behind the hand), a hit adding a use (at most use_max) and a pass taking one or evicting at zero.
Uses Residence(double p, double period, int use_max) {
  const Uses stays(use_max + 1, kStays);
  const double hits_per_turn = p * period;
  if (period >= kNoPeriod || hits_per_turn > 30) return stays;
  std::vector<double> hits(use_max + 2);
  Poisson(hits_per_turn, use_max + 1, hits.data());
  const int n = use_max + 1;
  std::vector<double> a(n * n, 0.0), b(n, period);
  for (int u = 0; u < n; ++u) {
    a[u * n + u] += 1;
    for (int k = 0; k <= use_max + 1; ++k) {
      const int next = std::min(use_max, u + k);
      if (next > 0) a[u * n + next - 1] -= hits[k];
    }
  }
  if (!Solve(a, b, n)) return stays;
  Uses out(n);
  for (int u = 0; u < n; ++u) {
    if (!(b[u] >= 0)) return stays;
    out[u] = std::min(b[u], kStays);
  }
  return out;
}

// The uses a page loaded by a miss starts with: the sketch's count of it at a random moment,
// Poisson with the mean of a count halved every `aging` reads (aging p after a halving, 2 aging p
// before the next), at most use_max.
Uses CreditAtLoad(double p, double aging, int use_max) {
  Uses credit(use_max + 1);
  Poisson(1.5 * aging * p, use_max, credit.data());
  return credit;
}

// Where a page of probability p spends its time: the raw tier's share for a page the compressed
// tier cannot hold, and for one it can, the raw and the compressed tiers' shares.
struct Shares {
  double raw_unstorable = 1;
  double raw_storable = 1;
  double compressed = 0;
};

Shares PageShares(double p, double period, double compressed_period, double aging,
                  bool compressed_tier, const ClockFacts& engine) {
  Shares out;
  const Uses residence = Residence(p, period, engine.use_max);
  if (residence[engine.promoted_uses] >= kStays) return out;
  const Uses credit = CreditAtLoad(p, aging, engine.use_max);
  double loaded = 0;  // the residence of a page a miss loaded
  for (int u = 0; u <= engine.use_max; ++u) loaded += credit[u] * residence[u];
  out.raw_unstorable = loaded / (loaded + 1.0 / p);
  out.raw_storable = out.raw_unstorable;
  if (!compressed_tier) return out;
  // In the compressed tier: promoted (chance a) on the second read, or evicted at a pass that finds
  // it unread since the last one (its first pass a period after it entered).
  double promoted = 1.0, stay = 2.0 / p;
  if (compressed_period < kNoPeriod) {
    const double x = p * compressed_period;
    const double none = std::exp(-x), one = x * none;
    const double read_in_next = -std::expm1(-x);
    promoted = (1.0 - none - one) + one * read_in_next;
    stay = 2.0 * (1.0 - none) / p - compressed_period * none + one * read_in_next / p;
  }
  const double raw = promoted * residence[engine.promoted_uses] + (1.0 - promoted) * loaded;
  const double total = raw + stay + (1.0 - promoted) / p;
  out.raw_storable = raw / total;
  out.compressed = stay / total;
  return out;
}

// Bisection on log period for the period at which `filled` (rising with it) reaches `target`;
// kNoPeriod when it never does.
template <typename Filled>
double SolvePeriod(Filled filled, double target) {
  if (filled(kNoPeriod) < target) return kNoPeriod;
  double lo = 1.0, hi = kNoPeriod;
  for (int i = 0; i < 36 && hi / lo > 1.0 + 1e-5; ++i) {
    const double mid = std::sqrt(lo * hi);
    (filled(mid) < target ? lo : hi) = mid;
  }
  return std::sqrt(lo * hi);
}

}  // namespace

ClockTierHits ClockTierHitRatios(const AccessDistribution& dist, const ClockTiers& tiers,
                                 const ReadWindow& window) {
  ClockTierHits out;
  const ClockFacts& engine = tiers.engine;
  if (dist.pages() == 0 || tiers.raw_pages <= 0 || engine.use_max < 1 ||
      engine.promoted_uses < 0 || engine.promoted_uses > engine.use_max) {
    return out;
  }
  // Buckets 5% wide (the figures change slowly with p), those of equal p merged (uniform: one).
  std::vector<RankBucket> buckets;
  for (const RankBucket& b : RankBuckets(dist, 0.05)) {
    if (b.p <= 0) continue;
    if (!buckets.empty() && std::abs(buckets.back().p - b.p) <= 1e-9 * b.p) {
      buckets.back().pages += b.pages;
    } else {
      buckets.push_back(b);
    }
  }
  const bool compressed_tier = tiers.compressed_pages > 0 && tiers.storable > 0;
  const double s = compressed_tier ? std::clamp(tiers.storable, 0.0, 1.0) : 0.0;
  const double aging = engine.aging_reads_per_page * tiers.memory_pages;
  auto occupancy = [&](double period, double compressed_period, bool compressed) {
    double pages = 0;
    for (const RankBucket& b : buckets) {
      const Shares sh = PageShares(b.p, period, compressed_period, aging, compressed_tier, engine);
      pages += b.pages * (compressed ? s * sh.compressed
                                     : (1 - s) * sh.raw_unstorable + s * sh.raw_storable);
    }
    return pages;
  };
  auto raw_period = [&](double compressed_period) {
    return SolvePeriod([&](double t) { return occupancy(t, compressed_period, false); },
                       tiers.raw_pages);
  };
  double compressed_period = kNoPeriod;
  double period = raw_period(kNoPeriod);
  if (compressed_tier && occupancy(period, kNoPeriod, true) > tiers.compressed_pages) {
    compressed_period = SolvePeriod(
        [&](double q) { return occupancy(raw_period(q), q, true); }, tiers.compressed_pages);
    period = raw_period(compressed_period);
  }
  // A tier that does not fill keeps every page it takes; a page's first read is still a miss.
  const bool cold = window.measured > 0;
  const double w0 = window.before, w1 = window.before + window.measured;
  for (const RankBucket& b : buckets) {
    const double first = cold ? UnreadShare(b.p, w0, w1) : 0.0;
    const double reads = b.pages * b.p;
    if (period >= kNoPeriod) {
      out.raw += reads * (1 - first);
      continue;
    }
    const Shares sh = PageShares(b.p, period, compressed_period, aging, compressed_tier, engine);
    out.raw += reads * ((1 - s) * sh.raw_unstorable + s * sh.raw_storable);
    out.compressed += reads * s *
                      (compressed_period >= kNoPeriod ? std::max(0.0, 1 - first - sh.raw_storable)
                                                      : sh.compressed);
  }
  out.raw = std::clamp(out.raw, 0.0, 1.0);
  out.compressed = std::clamp(out.compressed, 0.0, 1.0 - out.raw);
  return out;
}

}  // namespace ccfs
