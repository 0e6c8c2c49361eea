// PagePermutation: a keyed bijection of [0, N) that scatters the hot pages of a distribution.
//
// Skewed distributions draw a *rank* (0 = hottest). Used as a page index directly, the hot pages
// would sit together at the start of the first file, which flatters read-ahead, the SSD and the
// cache's hash alike. The rank is therefore mapped through this permutation: a balanced-as-possible
// Feistel network over the next power of two >= N (so it is a bijection of that domain), with
// cycle-walking (apply again while the result is >= N), which restricts it to a bijection of
// exactly [0, N) for any N >= 1. The domain is at most 2N, so a walk takes fewer than two steps on
// average. Round keys come from the seed: the same (N, seed) gives the same permutation anywhere.
//
// Thread-safety: immutable after construction; Forward/Inverse may be called from any thread.
#ifndef CCFS_MODEL_PERMUTATION_H_
#define CCFS_MODEL_PERMUTATION_H_

#include <array>
#include <cstdint>

namespace ccfs {

class PagePermutation {
 public:
  // REQUIRES: n >= 1.
  PagePermutation(uint64_t n, uint64_t seed);

  uint64_t size() const { return n_; }
  // The page a rank maps to. REQUIRES: rank < size().
  uint64_t Forward(uint64_t rank) const;
  // The rank of a page: Inverse(Forward(r)) == r. REQUIRES: page < size().
  uint64_t Inverse(uint64_t page) const;

 private:
  static constexpr int kRounds = 6;  // even, so the halves end where they started
  uint64_t Encrypt(uint64_t x) const;
  uint64_t Decrypt(uint64_t x) const;
  uint64_t Round(uint64_t half, int round) const;

  uint64_t n_;
  int left_bits_;   // width of the high half of a domain value
  int right_bits_;  // width of the low half
  std::array<uint64_t, kRounds> keys_;
};

}  // namespace ccfs

#endif  // CCFS_MODEL_PERMUTATION_H_
