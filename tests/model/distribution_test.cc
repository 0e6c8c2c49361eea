// Access distributions: the laws the replay promises (80/20 exact, flat, Zipf), scattering of hot
// pages over the whole data set, and exact repeatability by seed.
#include "model/distribution.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

namespace ccfs {
namespace {

std::unique_ptr<AccessDistribution> Make(const std::string& text, uint64_t pages, uint64_t seed,
                                         double hot_fraction = 0.2) {
  DistSpec spec;
  Status s = ParseDistSpec(text, hot_fraction, &spec);
  EXPECT_TRUE(s.ok()) << s.ToString();
  std::unique_ptr<AccessDistribution> dist;
  s = NewAccessDistribution(spec, pages, seed, &dist);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return dist;
}

// Share of `draws` accesses that fall on the hottest `fraction` of pages, ranking pages by how
// often they were drawn (what a user measuring the trace would see).
double ShareOfMostDrawn(const std::vector<uint64_t>& counts, double fraction, uint64_t draws) {
  std::vector<uint64_t> sorted = counts;
  std::sort(sorted.rbegin(), sorted.rend());
  size_t top = static_cast<size_t>(fraction * sorted.size());
  return static_cast<double>(std::accumulate(sorted.begin(), sorted.begin() + top, 0ull)) / draws;
}

TEST(ParetoDistribution, TopTwentyPercentOfPagesGetEightyPercentOfAccesses) {
  constexpr uint64_t kPages = 1000;  // 1000 draws a page on average: the ranking by count is sharp
  constexpr uint64_t kDraws = 1000000;
  auto dist = Make("pareto", kPages, 42);
  Rng rng(7);
  std::vector<uint64_t> counts(kPages);
  for (uint64_t i = 0; i < kDraws; ++i) ++counts[dist->Next(rng)];
  EXPECT_NEAR(ShareOfMostDrawn(counts, 0.2, kDraws), 0.80, 0.01);
}

TEST(ParetoDistribution, HottestRanksGetTheirShareOnALargeDataSet) {
  constexpr uint64_t kPages = 131072;  // 1 GiB of 8 KiB pages
  constexpr uint64_t kDraws = 1000000;
  auto dist = Make("pareto", kPages, 1);
  Rng rng(99);
  uint64_t hot = 0, hottest_percent = 0;
  for (uint64_t i = 0; i < kDraws; ++i) {
    uint64_t rank = dist->permutation().Inverse(dist->Next(rng));
    hot += rank < kPages / 5;
    hottest_percent += rank < kPages / 100;
  }
  EXPECT_NEAR(static_cast<double>(hot) / kDraws, 0.80, 0.01);
  // The oracle c^0.1386 holds away from 20% too: the hottest 1% get 0.01^0.1386 = 52.8%.
  EXPECT_NEAR(static_cast<double>(hottest_percent) / kDraws, std::pow(0.01, 0.1386), 0.01);
  EXPECT_NEAR(dist->HotShare(0.2 * kPages), 0.80, 1e-9);
}

TEST(ParetoDistribution, HotFractionGeneralisesTheLaw) {
  constexpr uint64_t kPages = 10000;
  constexpr uint64_t kDraws = 1000000;
  auto dist = Make("pareto", kPages, 5, /*hot_fraction=*/0.1);  // 90/10
  Rng rng(3);
  uint64_t hot = 0;
  for (uint64_t i = 0; i < kDraws; ++i) hot += dist->permutation().Inverse(dist->Next(rng)) < kPages / 10;
  EXPECT_NEAR(static_cast<double>(hot) / kDraws, 0.90, 0.01);
  EXPECT_NEAR(Make("pareto:0.3", kPages, 5)->HotShare(0.3 * kPages), 0.70, 1e-9);
}

TEST(ParetoDistribution, HotPagesAreSpreadOverTheWholeDataSet) {
  constexpr uint64_t kPages = 100000;
  auto dist = Make("pareto", kPages, 11);
  // The hottest 20% of pages, wherever the permutation put them: each tenth of the data set should
  // hold about a tenth of them (binomial sd ~ 0.95 pages per 1000, so 2% slack is wide).
  std::vector<uint64_t> per_decile(10);
  for (uint64_t rank = 0; rank < kPages / 5; ++rank) ++per_decile[dist->permutation().Forward(rank) * 10 / kPages];
  for (int d = 0; d < 10; ++d) EXPECT_NEAR(per_decile[d], kPages / 50, kPages / 50 * 0.1) << "decile " << d;
  // And the accesses themselves land in every decile, not mostly at low offsets.
  Rng rng(1);
  std::vector<uint64_t> draws_per_decile(10);
  for (int i = 0; i < 100000; ++i) ++draws_per_decile[dist->Next(rng) * 10 / kPages];
  for (int d = 0; d < 10; ++d) EXPECT_GT(draws_per_decile[d], 5000u) << "decile " << d;
}

TEST(ParetoDistribution, SameSeedSameTraceOtherSeedOtherTrace) {
  auto a = Make("pareto", 50000, 123);
  auto b = Make("pareto", 50000, 123);
  auto c = Make("pareto", 50000, 124);
  Rng ra(123), rb(123), rc(124);
  int differ = 0;
  for (int i = 0; i < 10000; ++i) {
    uint64_t x = a->Next(ra);
    ASSERT_EQ(x, b->Next(rb)) << "draw " << i;
    differ += x != c->Next(rc);
  }
  EXPECT_GT(differ, 9000);
}

TEST(UniformDistribution, FlatWithinSamplingError) {
  constexpr uint64_t kPages = 1000;
  constexpr uint64_t kDraws = 1000000;
  auto dist = Make("uniform", kPages, 9);
  Rng rng(9);
  std::vector<uint64_t> counts(kPages);
  for (uint64_t i = 0; i < kDraws; ++i) ++counts[dist->Next(rng)];
  const double expected = static_cast<double>(kDraws) / kPages;
  double chi2 = 0;
  for (uint64_t c : counts) chi2 += (c - expected) * (c - expected) / expected;
  // 999 degrees of freedom: mean 999, sd 44.7; 1150 is beyond the 99.9th percentile.
  EXPECT_LT(chi2, 1150.0);
  EXPECT_GT(chi2, 850.0);  // suspiciously flat would mean the generator is not random
}

TEST(ZipfDistribution, FollowsItsLaw) {
  for (double theta : {0.6, 0.99, 1.0, 1.5}) {
    constexpr uint64_t kPages = 5000;
    constexpr uint64_t kDraws = 1000000;
    auto dist = Make(fmt::format("zipf:{}", theta), kPages, 17);
    Rng rng(17);
    std::vector<uint64_t> counts(kPages);
    for (uint64_t i = 0; i < kDraws; ++i) ++counts[dist->NextRank(rng)];
    double norm = 0;
    for (uint64_t k = 1; k <= kPages; ++k) norm += std::pow(k, -theta);
    // Chi-square over the first 20 ranks one by one and the rest in ten bins.
    double chi2 = 0;
    int cells = 0;
    auto add = [&](uint64_t lo, uint64_t hi) {  // ranks [lo, hi)
      double p = 0;
      uint64_t observed = 0;
      for (uint64_t r = lo; r < hi; ++r) {
        p += std::pow(r + 1, -theta) / norm;
        observed += counts[r];
      }
      double expected = p * kDraws;
      chi2 += (observed - expected) * (observed - expected) / expected;
      ++cells;
    };
    for (uint64_t r = 0; r < 20; ++r) add(r, r + 1);
    for (int b = 0; b < 10; ++b) add(20 + b * (kPages - 20) / 10, 20 + (b + 1) * (kPages - 20) / 10);
    // 29 degrees of freedom: the 99.9th percentile is 58.3.
    EXPECT_LT(chi2, 58.3) << "theta " << theta;
    EXPECT_NEAR(dist->HotShare(1), 1.0 / norm, 1e-12) << "theta " << theta;
  }
}

TEST(ParseDistSpec, AcceptsTheDocumentedFormsAndNamesBadOnes) {
  DistSpec spec;
  ASSERT_TRUE(ParseDistSpec("pareto", 0.2, &spec).ok());
  EXPECT_EQ(spec.ToString(), "pareto:0.2");
  ASSERT_TRUE(ParseDistSpec("zipf:1.2", 0.2, &spec).ok());
  EXPECT_EQ(spec.ToString(), "zipf:1.2");
  ASSERT_TRUE(ParseDistSpec("uniform", 0.2, &spec).ok());
  EXPECT_EQ(spec.kind, DistSpec::Kind::kUniform);

  Status s = ParseDistSpec("gauss", 0.2, &spec);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("gauss"), std::string::npos) << s.message();
  s = ParseDistSpec("pareto", 0.9, &spec);
  EXPECT_NE(s.message().find("0.9"), std::string::npos) << s.message();
  EXPECT_FALSE(ParseDistSpec("zipf:abc", 0.2, &spec).ok());
  EXPECT_FALSE(ParseDistSpec("zipf:0", 0.2, &spec).ok());
  EXPECT_FALSE(ParseDistSpec("uniform:3", 0.2, &spec).ok());
}

}  // namespace
}  // namespace ccfs
