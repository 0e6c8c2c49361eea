// Rng: the seeded pseudo-random generator behind every trace, dataset and sample in ccfs.
//
// xoshiro256** (Blackman & Vigna) seeded through splitmix64, so any 64-bit seed (0 included) gives
// a well-mixed state and the same sequence on every machine and compiler. Fast (a few ns a draw),
// statistically strong enough for workload generation; not for cryptography.
//
// Thread-safety: none; give each thread its own Rng (e.g. Rng(seed).Fork(thread_index)).
#ifndef CCFS_UTIL_RNG_H_
#define CCFS_UTIL_RNG_H_

#include <cstdint>

namespace ccfs {

// One step of splitmix64: advances *state and returns a well-mixed 64-bit value. Also used as a
// cheap keyed mixer (see PagePermutation).
inline uint64_t SplitMix64(uint64_t* state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

class Rng {
 public:
  explicit Rng(uint64_t seed) {
    uint64_t sm = seed;
    for (uint64_t& word : s_) word = SplitMix64(&sm);
  }

  // A generator for stream `index` of the same seed: independent of this one and of other indices.
  Rng Fork(uint64_t index) const {
    uint64_t sm = s_[0] ^ (index * 0xd1b54a32d192ed03ull);
    return Rng(SplitMix64(&sm) ^ s_[3]);
  }

  uint64_t Next() {
    const uint64_t result = Rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = Rotl(s_[3], 45);
    return result;
  }

  // Uniform in [0, 1) with 53 random bits.
  double NextDouble() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }

  // Uniform in [0, n) without modulo bias (Lemire's multiply-and-reject). REQUIRES: n > 0.
  uint64_t Below(uint64_t n) {
    unsigned __int128 m = static_cast<unsigned __int128>(Next()) * n;
    uint64_t low = static_cast<uint64_t>(m);
    if (low < n) {
      const uint64_t threshold = -n % n;
      while (low < threshold) {
        m = static_cast<unsigned __int128>(Next()) * n;
        low = static_cast<uint64_t>(m);
      }
    }
    return static_cast<uint64_t>(m >> 64);
  }

 private:
  static uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

}  // namespace ccfs

#endif  // CCFS_UTIL_RNG_H_
