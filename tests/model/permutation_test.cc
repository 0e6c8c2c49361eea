// PagePermutation must be a true bijection of [0, N) for every N, or some pages would never be
// read and others read twice as often as the law says.
#include "model/permutation.h"

#include <vector>

#include <gtest/gtest.h>

namespace ccfs {
namespace {

TEST(PagePermutation, IsABijectionForPowersOfTwoAndOtherSizes) {
  for (uint64_t n : {1ull, 2ull, 3ull, 5ull, 7ull, 8ull, 100ull, 1000ull, 1024ull, 4097ull,
                     65535ull, 131072ull, 1000003ull}) {
    PagePermutation perm(n, 42);
    std::vector<bool> seen(n);
    for (uint64_t r = 0; r < n; ++r) {
      uint64_t p = perm.Forward(r);
      ASSERT_LT(p, n) << "n=" << n;
      ASSERT_FALSE(seen[p]) << "n=" << n << ": page " << p << " reached twice";
      seen[p] = true;
      ASSERT_EQ(perm.Inverse(p), r) << "n=" << n;
    }
  }
}

TEST(PagePermutation, ScattersAndDependsOnTheSeed) {
  constexpr uint64_t kPages = 100000;
  PagePermutation a(kPages, 1), b(kPages, 2);
  int fixed = 0, same = 0, low = 0;
  for (uint64_t r = 0; r < 1000; ++r) {
    fixed += a.Forward(r) == r;
    same += a.Forward(r) == b.Forward(r);
    low += a.Forward(r) < kPages / 10;  // the first 1000 ranks should not stay near offset 0
  }
  EXPECT_LT(fixed, 5);
  EXPECT_LT(same, 5);
  EXPECT_NEAR(low, 100, 40);
}

}  // namespace
}  // namespace ccfs
