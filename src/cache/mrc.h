// MissRatioCurve: while the cache serves, the hit ratio an LRU cache of any other size would have
// on the same reads, estimated from a small sample of them.
//
// 1. Algorithm: SHARDS (Waldspurger et al., "Efficient MRC Construction with SHARDS", FAST'15),
//    fixed-size variant.
//  - Spatial sampling. Each read names a page by a 64-bit hash. A page is sampled when
//    t = mix(hash) >> 40, a 24-bit value, is below the threshold T: sampling rate R = T / 2^24.
//    Whether a page is sampled depends on the page only, so every read of a sampled page is seen,
//    and the reuse distance of a sampled read, counted among sampled pages only, is about R times
//    the true one.
//  - Reuse distances. For a sampled read of a page seen before, d = the number of distinct
//    sampled pages read since its previous read (an LRU stack of sampled pages, kept as a Fenwick
//    tree over last-access times). An LRU cache of k pages hits that read when the true distance is
//    below k: the read adds weight 1/R to a histogram at distance d / R. A first read (cold) adds
//    1/R to the misses at every size.
//  - Fixed size. At most `max_keys` sampled pages are tracked. One more lowers T to the largest
//    t among them and forgets the pages at or above it (a max-heap of t): the rate adapts to the
//    number of distinct pages, the memory and the cost per sample stay bounded. Weights already
//    counted keep the 1/R of their time.
//  - Curve. miss(k) = (weighted sampled reads at distance >= k, cold ones included) / N, with N
//    the number of all reads recorded, counted exactly (less 1/R for each dropped sample). Dividing
//    by the true N rather than by the sampled weight is SHARDS_adj: under a skewed law a few hot
//    pages take much of the reads (the hottest page of the 80/20 law over 16 Ki pages takes a
//    quarter), so whether they fall in the sample swings the sampled weight, but they hardly ever
//    miss; the misses, spread over many pages, are what the sample estimates well. Without it the
//    curve is far off on skewed laws (bench/mrc_accuracy's max_noadj shows how far).
//    hit(k) = 1 - miss(k), clamped to [0, 1]. Distances are binned log-linearly
//    (LatencyHistogram's layout: exact below 256, 1/128 relative width above), interpolated within
//    a bin.
//  - Aging (half_life_reads > 0): every half_life_reads reads the histogram and N are halved
//    together, so the curve follows a workload that changes.
//
// 2. Read path (Record). One multiply and one compare for a page not sampled, plus one relaxed
//    add to a per-thread shard of the read count. A sampled read is pushed into a bounded
//    lock-free ring (Vyukov's MPMC queue: one CAS) and the reader then tries the mutex: if it is
//    free, the reader processes what the ring holds (usually its own sample; at most
//    kMaxDrainPerRecord) and lets it go; if it is held, the sample waits in the ring for the holder
//    or the next drainer. A full ring drops the sample (counted in drops; the reader still tries
//    the mutex, to drain). Nothing on the read path ever waits for a lock.
//
// 3. Cost and accuracy (bench/mrc_accuracy measures both; the engine's settings in
//    Config::ForCache, reasons in mrc.cc). An unsampled read costs a multiply and a compare besides
//    the hash, a sampled one mostly one cache miss on the page table; with 8 Ki pages tracked the
//    curve stays within about a point of exact LRU from a quarter to four times the cache's size
//    on skewed and uniform laws.
//
// 4. Why not ghost lists (ARC's history of evicted pages, cut into segments to give a curve).
//    Exact at its sizes, but it tracks every read (a lock or a sharded list on every read, costing
//    more than a raw hit) and needs a list of four times the cache's pages; a sample is the only
//    way to stay off the read path.
//
// 5. Limits. The curve is that of LRU over the reads recorded; writes and invalidations are not
//    recorded (a page written and then read counts as a hit where the cache misses). What the
//    recorder sees is what the caller records: under raw_tier = kernel the engine sees only the
//    kernel's misses, and every read only of the sampled pages it keeps out of the kernel
//    (Config::ForKernelTier, Sampled).
//
// Thread-safety: Record may be called from any number of threads at once and never blocks.
// HitRatios, ResetCounts and counts may be called from any thread at any time; HitRatios and
// ResetCounts take the mutex (they may wait for a reader's drain, a few microseconds).
#ifndef CCFS_CACHE_MRC_H_
#define CCFS_CACHE_MRC_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "util/mutex.h"

namespace ccfs::cache {

class MissRatioCurve {
 public:
  struct Config {
    // Sampled pages tracked at most (SHARDS's s_max). 0 = no bound: the rate stays initial_rate.
    uint32_t max_keys = 8192;
    // Sampling rate at the start, in (0, 1]; the bound on max_keys lowers it as needed.
    double initial_rate = 1.0;
    // Reads after which recorded counts weigh half (0 = never: the curve covers every read since
    // the start or the last ResetCounts).
    uint64_t half_life_reads = 0;
    // Samples the ring holds between two drains (rounded up to a power of two).
    uint32_t ring_slots = 4096;
    // true: plain SHARDS, hit(k) = sampled weight below k / all sampled weight, without the
    // correction by the true read count (for comparison: bench/mrc_accuracy).
    bool normalize_by_samples = false;
    // With normalize_by_samples: the hit ratio at k pages counts only the reads made once the
    // curve had seen k distinct pages. An earlier read cannot tell a cache of k pages: a page's
    // first read then may be a reuse, at a distance below k, of a read before the start. Counted,
    // a first pass's first reads scale every size's hit ratio down until aging halves them, long
    // after the data has been read once, so a larger cache looks worth less than it is. Sizes
    // beyond the distinct pages seen before three quarters of the reads are read at that size.
    bool by_footprint = false;

    // What the engine runs for a cache of `cache_pages` pages (memory / page_size): at most 8 Ki
    // sampled pages, at most one read in two sampled, counts halved every 64 cache sizes of
    // reads. See mrc.cc for the measurements behind each number.
    static Config ForCache(uint64_t cache_pages);
    // raw_tier = kernel: the kernel answers its hits unseen, so the curve can see every read of a
    // page only if the page is kept out of the kernel's cache (Sampled, page_cache.h
    // KeepsFromKernel). Each sampled page then costs its readers a trip on every read, so the rate
    // starts at kKernelRate; and since the engine counts only the reads that reach it, the curve
    // is normalised by the sampled weight (normalize_by_samples) rather than by the read count.
    // Nothing anchors that curve to a measured hit ratio (the readers' is not seen, while under
    // raw_tier = daemon the tuner scales the curve to the engine's), so it counts each size over
    // the reads that can tell it (by_footprint).
    static constexpr double kKernelRate = 1.0 / 128;
    static Config ForKernelTier(uint64_t cache_pages);
  };

  struct Counts {
    uint64_t reads = 0;     // Record calls
    uint64_t samples = 0;   // sampled reads processed into the curve
    uint64_t reuses = 0;    // of them, reads of a page sampled before: the reuse the curve has seen
    uint64_t drops = 0;     // sampled reads dropped because the ring was full
    double rate = 0;        // sampling rate now
    uint32_t keys = 0;      // sampled pages tracked now
    // The reads the curve's counts stand for now, aged with them: the sampled weight (sum of 1/R)
    // under normalize_by_samples, else N. A curve shows reuse only at distances its reads have
    // had time to reach, so it describes caches up to a fraction of this many pages.
    uint64_t covered = 0;
  };

  // A reader drains at most this many samples per Record (a query drains them all).
  static constexpr int kMaxDrainPerRecord = 64;

  // REQUIRES: 0 < initial_rate <= 1; ring_slots >= 2.
  explicit MissRatioCurve(const Config& config);
  ~MissRatioCurve();
  MissRatioCurve(const MissRatioCurve&) = delete;
  MissRatioCurve& operator=(const MissRatioCurve&) = delete;

  // One read of the page whose 64-bit hash is `hash` (a well-mixed hash: HashPageKey). Never
  // blocks. Inline: on the engine's read path.
  void Record(uint64_t hash) {
    read_shards_[MyShard()].n.fetch_add(1, std::memory_order_relaxed);
    if (SampleValue(hash) < threshold_.load(std::memory_order_relaxed)) RecordSampled(hash);
  }

  // Whether reads of the page whose hash is `hash` are sampled now (the threshold only falls: a
  // page sampled now may stop being sampled, never the other way). Never blocks.
  bool Sampled(uint64_t hash) const {
    return SampleValue(hash) < threshold_.load(std::memory_order_relaxed);
  }

  // Estimated hit ratio of an LRU cache of capacities[i] pages over the reads recorded (aged),
  // one per capacity, in [0, 1]; all 0 before any read. Processes pending samples first.
  std::vector<double> HitRatios(const std::vector<uint64_t>& capacities) const EXCLUDES(mu_);

  // Forgets the counts (the histogram and N), not the sampled pages' recency: the curve covers
  // the reads recorded from now on (a warm-up left out, a new phase).
  void ResetCounts() EXCLUDES(mu_);

  // Counters, read without the mutex (each exact; read one after another).
  Counts counts() const;

  // The mutex drains take; a test holds it to show that Record does not wait.
  Mutex* TEST_mutex() RETURN_CAPABILITY(mu_) { return &mu_; }

 private:
  class Stack;  // the sampled pages' LRU stack and the histogram (mrc.cc)
  struct alignas(64) ReadShard {
    std::atomic<uint64_t> n{0};
  };
  struct RingSlot {
    std::atomic<uint64_t> seq;
    uint64_t hash;
  };
  static constexpr int kReadShards = 8;
  static constexpr int kSampleBits = 24;

  static uint32_t SampleValue(uint64_t hash) {
    // A multiply decorrelates the sampling bits from the bits the page index and the frequency
    // sketch take from the same hash.
    return static_cast<uint32_t>((hash * 0x9E3779B97F4A7C15ull) >> (64 - kSampleBits));
  }
  static unsigned MyShard() {
    static std::atomic<unsigned> next{0};
    thread_local unsigned shard = next.fetch_add(1, std::memory_order_relaxed) % kReadShards;
    return shard;
  }

  void RecordSampled(uint64_t hash);
  bool Push(uint64_t hash);
  // Processes up to `max` samples from the ring.
  void DrainLocked(int max) const REQUIRES(mu_);
  // Stores the stack's covered reads for counts().
  void PublishCovered() const REQUIRES(mu_);
  uint64_t TotalReads() const;

  // Members written by drains are mutable: a query (const) drains pending samples first; what it
  // changes is when samples are processed, not what the curve says.

  // Sampling threshold T (t < T is sampled); lowered only, under mu_.
  mutable std::atomic<uint32_t> threshold_;
  ReadShard read_shards_[kReadShards];
  std::atomic<uint64_t> drops_{0};

  // The ring: producers claim slots with a CAS on ring_tail_; the single consumer (whoever holds
  // mu_) advances ring_head_. Slot i's seq is i + 1 when it holds the sample of position i, and
  // i + slots when it is free for position i + slots.
  std::unique_ptr<RingSlot[]> ring_;
  const uint64_t ring_mask_;
  alignas(64) std::atomic<uint64_t> ring_tail_{0};

  mutable Mutex mu_;  // a leaf: nothing is locked under it
  alignas(64) mutable uint64_t ring_head_ GUARDED_BY(mu_) = 0;
  const std::unique_ptr<Stack> stack_ PT_GUARDED_BY(mu_);
  mutable std::atomic<uint64_t> samples_{0};  // written under mu_, read without
  mutable std::atomic<uint64_t> reuses_{0};   // written under mu_, read without
  mutable std::atomic<uint32_t> keys_{0};     // written under mu_, read without
  mutable std::atomic<uint64_t> covered_{0};  // written under mu_, read without
};

// ExactLruCurve: the reference MissRatioCurve is measured against: the LRU stack distance of every
// read (a Fenwick tree over read times), exact, O(log reads) per read, memory O(reads + pages).
// For tests and bench/mrc_accuracy, not for a read path.
//
// Thread-safety: none; one thread.
class ExactLruCurve {
 public:
  // Room for `max_reads` reads in all. REQUIRES: Record is called at most max_reads times.
  explicit ExactLruCurve(uint64_t max_reads);

  // One read of `key`; `count` false: it only sets the LRU order (a warm-up).
  void Record(uint64_t key, bool count = true);

  // Hit ratio of an LRU cache of capacities[i] pages over the counted reads (0 before any).
  std::vector<double> HitRatios(const std::vector<uint64_t>& capacities) const;

 private:
  std::vector<uint32_t> tree_;                  // 1 at each key's last read time (1-based)
  std::unordered_map<uint64_t, uint64_t> last_;  // key -> its last read time
  std::vector<uint64_t> hist_;                  // counted reads by stack distance
  uint64_t now_ = 0;
  uint64_t counted_ = 0;
};

}  // namespace ccfs::cache

#endif  // CCFS_CACHE_MRC_H_
