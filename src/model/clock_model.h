// The daemon's two tiers under independent references: a characteristic-time model of ccfs's
// raw CLOCK with the frequency sketch's credit, and of its compressed tier's second-hit promotion.
//
// 1. Why not Che's LRU. Che's LRU (che.h) reads every level as one recency order. ccfs's raw tier
//    is not one: a page a miss loads starts on the CLOCK with the sketch's count of its recent
//    reads as uses (at most ClockFacts::use_max), a page promoted from the compressed tier with
//    ClockFacts::promoted_uses, a hit adds a use and each pass of the hand takes one, the hand
//    evicting at zero (the engine's cache/page_entry.h). A raw victim that compresses goes to the
//    compressed tier, whose own hand gives a referenced page one more turn and whose second hit on
//    a page promotes it; one that does not is dropped. Once the compressed tier holds every
//    storable page, the misses are the pages it cannot hold, each loaded with the credit of a page
//    read often; promoted pages start with one use. So the raw tier keeps far more of the
//    incompressible pages than their share of the data set, and the hit ratio is higher than a
//    single recency order gives; this model follows the two hands, so it predicts that higher
//    ratio.
//
// 2. A page's cycle. Each page of access probability p (per read) goes round a cycle: in the raw
//    tier for a residence R(u) that depends on the uses u it entered with, then (storable) in the
//    compressed tier until promoted or evicted, then (dropped, or evicted from both) out until its
//    next read, a miss. With one period P (reads) for a turn of the raw hand and one period Q for
//    the compressed hand, as Che takes one characteristic time for every page:
//   - R(u): a Markov chain over the uses at each pass (hits Poisson(p P) per period, at most
//     use_max), solved for the expected reads until the hand finds the page at zero; a page read
//     faster than the hand turns stays.
//   - the credit at a load: the sketch's count of the page at a random moment (halved every
//     aging_reads_per_page x memory pages reads: between aging p and 2 aging p, Poisson with
//     the mean 1.5 aging p), at most use_max. The count of a page just evicted is lower, but the
//     hand's period absorbs the credit's level: what counts is how a loaded page's credit
//     compares with a promoted one's.
//   - the compressed tier: a page enters unreferenced; the hand evicts it at a pass unless read
//     since the last one; its second read promotes it. Promoted with the chance a, after a mean
//     time t_c; out 1/p after an eviction.
//
// 3. The periods. The share of time a page spends in each place is its share of each kind of read
//    (reads are independent of the cache); P and Q solve "the pages' time in the raw tier sums to
//    its frames" and the same for the compressed tier. A tier that never fills (every page it
//    could hold is in it) has no period: its pages stay, and then a page's first read in a window
//    (che.h ReadWindow) is still a miss.
//
// 4. Not modelled. Probation (a page the sketch had not seen lately goes first): modelled as
//    leaving at once, it takes the model further from the engine than leaving it out does. The
//    admission filter's ghosts: every storable victim is taken to be compressed.
//
// 5. The engine's figures. Its use counts and the sketch's aging are handed in (engine_facts.h),
//    never read from cache/, so the model stays a pure function of its inputs.
//
// Thread-safety: pure functions.
#ifndef CCFS_MODEL_CLOCK_MODEL_H_
#define CCFS_MODEL_CLOCK_MODEL_H_

#include "model/che.h"
#include "model/distribution.h"
#include "model/engine_facts.h"

namespace ccfs {

struct ClockTiers {
  double raw_pages = 0;         // frames of the raw CLOCK
  double compressed_pages = 0;  // pages the compressed tier holds (0: none; victims are dropped)
  double storable = 1.0;        // the share of pages the compressed tier can hold at all
  double memory_pages = 0;      // the cache's memory in pages: the frequency sketch halves its
                                // counts every engine.aging_reads_per_page times as many reads
  ClockFacts engine;            // REQUIRES: set (engine_facts.h); no hits otherwise
};

struct ClockTierHits {
  double raw = 0;         // share of reads the raw tier answers
  double compressed = 0;  // and the compressed tier
};

ClockTierHits ClockTierHitRatios(const AccessDistribution& dist, const ClockTiers& tiers,
                                 const ReadWindow& window = {});

}  // namespace ccfs

#endif  // CCFS_MODEL_CLOCK_MODEL_H_
