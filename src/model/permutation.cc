#include "model/permutation.h"

#include <bit>
#include <utility>

#include "util/rng.h"

namespace ccfs {

namespace {
uint64_t Mask(int bits) { return bits >= 64 ? ~0ull : (1ull << bits) - 1; }
}  // namespace

PagePermutation::PagePermutation(uint64_t n, uint64_t seed) : n_(n == 0 ? 1 : n) {
  // Domain 2^bits >= n, with at least one bit in each half so every round mixes something.
  int bits = n_ <= 1 ? 0 : 64 - std::countl_zero(n_ - 1);
  if (bits < 2) bits = 2;
  left_bits_ = (bits + 1) / 2;
  right_bits_ = bits / 2;
  uint64_t sm = seed ^ 0x5ca77e2ed9a9e5ull;  // a different stream from Rng(seed)
  for (uint64_t& key : keys_) key = SplitMix64(&sm);
}

// The round function: any keyed mixing of the half works, since Feistel rounds are invertible
// whatever F is; splitmix's finalizer spreads every input bit over the output.
uint64_t PagePermutation::Round(uint64_t half, int round) const {
  uint64_t state = half ^ keys_[round];
  return SplitMix64(&state);
}

// The halves have unequal widths when the domain has an odd number of bits: each round maps
// (L: a bits, R: b bits) to (R, L ^ F(R) mod 2^a), so the widths swap every round and return
// after an even number of rounds.
uint64_t PagePermutation::Encrypt(uint64_t x) const {
  int lbits = left_bits_, rbits = right_bits_;
  uint64_t left = x >> rbits, right = x & Mask(rbits);
  for (int i = 0; i < kRounds; ++i) {
    uint64_t mixed = left ^ (Round(right, i) & Mask(lbits));
    left = right;
    right = mixed;
    std::swap(lbits, rbits);
  }
  return (left << rbits) | right;
}

uint64_t PagePermutation::Decrypt(uint64_t x) const {
  int lbits = left_bits_, rbits = right_bits_;  // same shape at the end as at the start
  uint64_t left = x >> rbits, right = x & Mask(rbits);
  for (int i = kRounds - 1; i >= 0; --i) {
    // Undo (L, R) -> (R, L ^ F(R)): the previous right half is our left half.
    std::swap(lbits, rbits);
    uint64_t prev_right = left;
    uint64_t prev_left = right ^ (Round(prev_right, i) & Mask(lbits));
    left = prev_left;
    right = prev_right;
  }
  return (left << rbits) | right;
}

uint64_t PagePermutation::Forward(uint64_t rank) const {
  uint64_t x = rank;
  do x = Encrypt(x); while (x >= n_);
  return x;
}

uint64_t PagePermutation::Inverse(uint64_t page) const {
  uint64_t x = page;
  do x = Decrypt(x); while (x >= n_);
  return x;
}

}  // namespace ccfs
