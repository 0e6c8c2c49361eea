// Che's approximation: the hit ratio of an LRU or FIFO cache of K pages under independent
// references drawn from an access law, beside the oracle and the daemon's CLOCK (Replacement).
//
// 1. The approximation (Che, Tung & Wang, IEEE JSAC 2002; for FIFO, Martina, Garetto & Leonardi,
//    INFOCOM 2014). A page of access probability p stays in an LRU cache for a "characteristic
//    time" T (in references) after its last reference, the same T for every page:
//      LRU   h(p) = 1 - exp(-p T)          FIFO   h(p) = p T / (1 + p T)
//    where T solves  sum over pages of h(p) = K  (the cache holds K pages), and the hit ratio is
//    sum over pages of p h(p).
//
// 2. Against the oracle. Under uniform access both give K / N exactly; under a skewed law they
//    fall below the oracle (the K hottest pages always cached, the thesis's model), FIFO further
//    than LRU: this is why a cache evicting in the order pages were sent (the kernel raw tier's
//    ledger) hits less than one keeping recency (the daemon's CLOCK, close to LRU). The daemon's
//    CLOCK itself is not Che's: kGclock is clock_model.h's model.
//
// 3. Evaluation. Pages are grouped by rank into buckets whose probabilities come from the law's
//    HotShare (RankBuckets), so one evaluation costs O(buckets x bisection steps) for any N.
//
// 4. The read window. The steady state is a cache that has filled; a run measured from an empty
//    cache also pays for the first read of each page (ReadWindow; its default is the steady state).
//
// Thread-safety: pure functions.
#ifndef CCFS_MODEL_CHE_H_
#define CCFS_MODEL_CHE_H_

#include <string>
#include <vector>

#include "model/distribution.h"
#include "model/engine_facts.h"

namespace ccfs {

enum class Replacement {
  kOracle,  // the `capacity` hottest pages (the thesis's model: HotShare(capacity))
  kLru,     // Che's approximation for LRU (CLOCK and GCLOCK come close to it)
  kFifo,    // Che's approximation for FIFO
  kGclock,  // ccfs's raw CLOCK with the frequency sketch's credit (clock_model.h): a cache of
            // `capacity` pages of memory with no compressed tier
};
const char* ReplacementName(Replacement r);
// "oracle", "lru", "fifo" or "gclock"; false for anything else.
bool ParseReplacement(const std::string& text, Replacement* r);

// The reads around a measurement: `before` reads (a warm-up) precede the `measured` ones, from an
// empty cache. A read of a page never read before misses whatever the capacity. Under LRU or FIFO,
// with T the steady state's characteristic time (in reads), a cache still filling holds every page
// read so far: a read at position r finds its page with chance 1 - e^(-p r) while r < T, and with
// the steady state's h(p) from then on; under the oracle, one of the k hottest pages hits once it
// has been read. So the first reads cost nothing once T <= W (W = before), and where the cache
// never fills (the whole data set fits: T infinite) they cost a page of probability p the share
//   e^(-p W) (1 - e^(-p M)) / (p M)        (M = measured)
// of its reads. The default (measured = 0) is the steady state.
struct ReadWindow {
  double before = 0;
  double measured = 0;
};

// Pages grouped by rank, hottest first: the first 64 ranks alone, then buckets each `growth` wider
// than the last (at least a page); every page of a bucket gets the bucket's mean access probability.
struct RankBucket {
  double pages;
  double p;
};
std::vector<RankBucket> RankBuckets(const AccessDistribution& dist, double growth = 0.01);

// The mean of e^(-p t) over t in [a, b): the chance that a page of probability p has not been read
// in the first t reads, averaged over the reads from a to b (a read there is its first).
double UnreadShare(double p, double a, double b);

// The hit ratio of a cache of `capacity` pages (clamped to [0, pages]) under `dist`, over `window`.
// `clock`: the engine's CLOCK, for kGclock (REQUIRES: set there; engine_facts.h).
double CacheHitRatio(const AccessDistribution& dist, double capacity, Replacement replacement,
                     const ReadWindow& window = {}, const ClockFacts& clock = {});

}  // namespace ccfs

#endif  // CCFS_MODEL_CHE_H_
