// Access distributions: which page a replay reads next.
//
// A distribution draws a *rank* in [0, N) (rank 0 is the hottest page) and maps it to a page index
// through a PagePermutation keyed by the seed, so the hot pages are scattered over the whole data
// set. Three laws:
//
//   pareto   the exact h/(1-h) law (80/20 by default): rank = floor(N * u^E), u uniform in [0,1),
//            E = ln(h) / ln(1-h). Then P(rank < k) = P(u < (k/N)^(1/E)) = (k/N)^(1/E), and at
//            k = hN that is h^(1/E) = 1-h: the hottest fraction h of pages gets 1-h of the accesses.
//            For h = 0.2, E = ln 0.2 / ln 0.8 = 7.2126 and the hottest c of pages get c^0.1386 of
//            the accesses (the oracle hit ratio of a cache holding them).
//   uniform  every page equally likely.
//   zipf     P(rank = r) proportional to 1/(r+1)^theta, theta > 0, drawn by rejection-inversion
//            (Hörmann & Derflinger 1996): O(1) memory and time per draw for any N.
//
// Thread-safety: a distribution is immutable; Next() takes the caller's Rng, so one distribution
// may serve many threads, each with its own Rng.
#ifndef CCFS_MODEL_DISTRIBUTION_H_
#define CCFS_MODEL_DISTRIBUTION_H_

#include <cstdint>
#include <memory>
#include <string>

#include "ccfs/status.h"
#include "model/permutation.h"
#include "util/rng.h"

namespace ccfs {

struct DistSpec {
  enum class Kind { kPareto, kUniform, kZipf };
  Kind kind = Kind::kPareto;
  double hot_fraction = 0.2;  // pareto: the hottest fraction of pages, which gets 1 - h of accesses
  double theta = 0.99;        // zipf exponent

  // "pareto", "pareto:0.2" (hot fraction), "uniform", "zipf:0.99".
  std::string ToString() const;
};

// Parses --dist text. `hot_fraction` (from --hot-fraction) applies to "pareto" without its own
// value. Errors name the text and what is accepted.
Status ParseDistSpec(const std::string& text, double hot_fraction, DistSpec* spec);

class AccessDistribution {
 public:
  virtual ~AccessDistribution() = default;

  // A page index in [0, pages()), hot pages scattered by the permutation.
  uint64_t Next(Rng& rng) const { return permutation_.Forward(NextRank(rng)); }
  // A rank in [0, pages()), 0 the hottest, before scattering.
  virtual uint64_t NextRank(Rng& rng) const = 0;
  // Share of all accesses that go to the `hottest` hottest pages: the hit ratio of an ideal cache
  // holding that many pages (the oracle the model uses for skewed laws).
  virtual double HotShare(double hottest) const = 0;

  uint64_t pages() const { return permutation_.size(); }
  const PagePermutation& permutation() const { return permutation_; }
  const DistSpec& spec() const { return spec_; }

 protected:
  AccessDistribution(const DistSpec& spec, uint64_t pages, uint64_t seed)
      : spec_(spec), permutation_(pages, seed) {}

 private:
  DistSpec spec_;
  PagePermutation permutation_;
};

// Builds the distribution of `spec` over `pages` pages (>= 1), scattered by a permutation keyed by
// `seed`. Out-of-range parameters are InvalidArgument naming them.
Status NewAccessDistribution(const DistSpec& spec, uint64_t pages, uint64_t seed,
                             std::unique_ptr<AccessDistribution>* dist);

}  // namespace ccfs

#endif  // CCFS_MODEL_DISTRIBUTION_H_
