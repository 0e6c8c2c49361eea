// The thesis's model of a split page cache: hit ratio and microseconds per buffer as functions of
// the split C (compressed_percent / 100: the share of memory given to compressed pages).
//
// 1. The thesis's model.
//   T memory, B page size, N pages in the data set, R compression ratio.
//   raw capacity      K_raw  = T (1 - C) / B              pages
//   compressed        K_comp = T C R / B                  pages
//   hit ratio         g(C) = S(min(N, K_raw + K_comp))    where S(k) is the share of accesses that
//                                                         go to the k hottest pages: k / N under
//                                                         uniform access (g is then the thesis's
//                                                         (T(1-C) + TCR) / B / N, capped at 1),
//                                                         (k/N)^(1/E) under the h/(1-h) law, and
//                                                         the Zipf partial sums under zipf.
//   raw hits          S(min(N, K_raw)) — the raw tier is taken to hold the hottest pages (or, with
//                     ModelInputs' replacement set, Che's approximation of LRU or FIFO, che.h;
//                     or, kGclock, the daemon's two CLOCKs, clock_model.h, which give both tiers'
//                     hits: the raw tier keeps the pages the compressed tier cannot hold longer);
//   compressed hits   g(C) - raw hits;   misses  1 - g(C).
//   µs per buffer     h_raw t_hit + h_comp (t_decomp + t_comp) + miss (t_disk + t_comp)
// The thesis charges one compression per restoration and per miss (a raw victim must be compressed
// to make room); with C = 0 victims are dropped, so no compression is charged.
//
// 2. The transport. The thesis's cache sits in the reader's process; ccfs's sits behind FUSE,
//    and the reader pays a round trip (t_trip) on every read that reaches the daemon, beyond the
//    daemon's own handling that the path costs above measure. Where raw pages live decides which
//    reads do:
//   raw_tier = daemon   every read:  h_raw (t_trip + t_hit) + h_comp (t_trip + t_decomp + t_comp)
//                                    + miss (t_trip + t_disk + t_comp), the thesis's sum + t_trip;
//   raw_tier = kernel   the kernel's page cache is the raw tier (it holds the raw share T(1 - C),
//                       options.h raw_share(), or as many pages as the kernel was counted to
//                       hold: raw_pages) and answers its hits itself: h_raw t_kernel_hit, no
//                       trip; compressed hits and misses reach the daemon and pay t_trip as above.
//    With t_trip = 0 in daemon mode (the engine in the reader's process) the sum is the thesis's.
//
// 3. Refinements. Three inputs refine the thesis's model for `ccfs advise` (trace/advise.h); at
//    their defaults the model is exactly the thesis's, which is what `ccfs model` and
//    `ccfs replay` evaluate:
//   hot_share             S(k) from elsewhere than the law (an exact LRU curve of a trace);
//   storable_fraction     the share s of pages the compressed tier can hold at all (the others do
//                         not compress enough and are dropped). The K_comp pages it holds are then
//                         spread over K_comp / s positions of the hotness order, of which it holds
//                         s:  compressed hits = s (S(min(N, K_raw + K_comp / s)) - S(K_raw));
//   compressions_per_read the compressions charged per read instead of the thesis's one per
//                         compressed hit and per miss (at C > 0): ccfs compresses only the raw
//                         victims its admission filter lets through.
//    Replay, which measures the paths' costs in the run itself, also sets compress_share = 0:
//    ccfs compresses in a pool, off the readers' threads, and what that costs a reader is inside
//    the measured means: charging it again would count it twice.
//
// 4. The read window. A fourth input (che.h) takes a cold cache's first reads off S(k); replay
//    gives it its warm-up and its run, so that a run too short to read every page before it is
//    measured is predicted as measured rather than as the steady state.
//
// Thread-safety: pure functions.
#ifndef CCFS_MODEL_CACHE_MODEL_H_
#define CCFS_MODEL_CACHE_MODEL_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ccfs/options.h"
#include "model/che.h"
#include "model/distribution.h"

namespace ccfs {

// Costs of each path, microseconds per page.
struct PathCosts {
  double hit_us = 1.0;         // raw hit: copy out of a frame
  double decompress_us = 1.0;  // compressed hit: decompress (and copy)
  double compress_us = 2.0;    // compressing one victim
  double disk_us = 110.0;      // miss: read from the backing device
  // The transport, as the reader sees it.
  double trip_us = 0.0;        // one FUSE request round trip beyond the daemon's own handling
                               // (0: the cache is in the reader's process)
  double kernel_hit_us = 1.0;  // raw_tier = kernel: a read the kernel's page cache answers
};

// Where the raw tier is, for the model (Options::raw_tier): in the daemon, every read pays the
// trip; in the kernel's page cache, raw hits are kernel hits and pay no trip.
enum class RawTierMode { kDaemon, kKernel };
const char* RawTierModeName(RawTierMode mode);
// "daemon" or "kernel" (kRawTierNames); false for anything else.
bool ParseRawTierMode(const std::string& text, RawTierMode* mode);

// The thesis's figures for 8 KiB pages: lz4 2.13x, compress 2 µs, decompress 1 µs; zstd 2.97x,
// 8 µs, 3 µs; SSD page fault 110 µs; a raw hit is taken as 1 µs, and so is a kernel hit (the thesis
// has no kernel tier: a copy out of a page, as a raw hit is). No trip: the thesis's cache is in
// the reader's process.
PathCosts ThesisCosts(CodecKind codec);
double ThesisRatio(CodecKind codec);

struct ModelInputs {
  uint64_t memory_bytes = 0;
  uint32_t page_size = 8192;
  uint64_t dataset_pages = 0;
  double compressed_fraction = 0;  // C, 0..0.95
  double ratio = 1.0;              // R
  DistSpec dist;
  PathCosts costs;
  RawTierMode raw_tier = RawTierMode::kDaemon;
  // How S(k) is read (che.h): the thesis's oracle (the k hottest pages are cached), or Che's
  // approximation of the replacement each level really does — for the whole cache (raw plus
  // compressed pages) and for the raw level alone. Replay reads the daemon's tiers as they are,
  // raw_replacement = kGclock (raw_tier = daemon: both tiers' hits from clock_model.h, the
  // reach and cache_replacement unused), and with raw_tier = kernel FIFO for the kernel raw tier
  // when the daemon's ledger evicts it, LRU otherwise, over an LRU for the whole cache.
  // When the raw level's replacement differs from the whole cache's (the kernel's FIFO over the
  // daemon's LRU-like tiers), the raw level's loss against the whole cache's policy at the raw
  // capacity is carried into the whole cache: a page the first level drops too early must come back
  // from the level below or from the store.
  Replacement cache_replacement = Replacement::kOracle;
  Replacement raw_replacement = Replacement::kOracle;
  // The engine's CLOCK (engine_facts.h). REQUIRES: set when either replacement is kGclock.
  ClockFacts clock;
  // Compressions charged per read. Negative: the thesis's charge (one per compressed hit and per
  // miss, when C > 0). A measured rate (a run's compressions / reads) replaces it: ccfs compresses
  // victims in the background and admits only some (admission.h), far fewer than one per miss.
  double compressions_per_read = -1;
  // The share of each compression's time the reader pays beyond the paths' costs. 1: the thesis's
  // charge (its cache compresses on the reader's thread, and its path costs are the codec's and
  // the device's, which leave compression out). Replay gives 0: its path costs are the run's own
  // means, and ccfs compresses in its pool, never on a reader's thread (cache/evictor.h), so what
  // the pool costs a reader — a miss that waits for a free frame, a CPU shared with the pool — is
  // already inside those means; charging the compressions as well counted them twice.
  double compress_share = 1.0;
  // The raw level's capacity in pages where it was measured rather than set (negative: the raw
  // share T(1 - C) / B). raw_tier = kernel: the kernel decides how many of the mount's pages it
  // keeps — under a memory cgroup (kernel_evict = false) whatever the daemon and the readers leave
  // of it — and replay counts them (cachestat(2)), as it measures the ratio R.
  double raw_pages = -1;
  // Refinements (see the top of this file); the defaults give the thesis's model.
  std::function<double(double pages)> hot_share;  // empty: the law's (dist)
  double storable_fraction = 1.0;                 // in [0, 1]
  // The reads before the measured ones and the measured ones (che.h): a read of a page not read
  // before is a miss whatever the split. The default is the steady state (`ccfs model`, advise);
  // replay gives its warm-up and its run, whose first reads of the law's cold pages are misses the
  // steady state does not have (Pareto at 2x memory after a warm-up of 4x its pages, the whole data
  // set cached: ~5% of the reads).
  ReadWindow window;
};

struct ModelResult {
  double raw_capacity_pages = 0;
  double compressed_capacity_pages = 0;
  // Positions of the hotness order the two tiers cover: min(N, K_raw + K_comp / s).
  double reach_pages = 0;
  double capacity_fraction = 0;  // min(1, (K_raw + K_comp) / N)
  double raw_hit_ratio = 0;
  double compressed_hit_ratio = 0;
  double hit_ratio = 0;
  double miss_ratio = 0;
  double us_per_buffer = 0;
  double trip_us_per_buffer = 0;  // the part of us_per_buffer that is the transport's trips
  double compressions_per_read = 0;     // what was charged
  double compress_us_per_buffer = 0;    // the part of us_per_buffer that is compression
};

ModelResult EvaluateModel(const ModelInputs& inputs);

// A phase-change trace (OpSource::SetPhases): the law of phase k is laws[k % laws.size()], each
// phase phase_ops operations long. The model of operations [begin, end): each law's steady state
// (inputs with dist = that law, inputs.window ignored), weighted by the operations of the range it
// covers. What the moves of the hot set cost (the misses just after a change) is not in it.
ModelResult EvaluatePhasedModel(const ModelInputs& inputs, const std::vector<DistSpec>& laws,
                                uint64_t phase_ops, uint64_t begin, uint64_t end);

}  // namespace ccfs

#endif  // CCFS_MODEL_CACHE_MODEL_H_
