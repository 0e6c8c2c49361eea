// Exact LRU stack distances and the hit-ratio curve they give (Mattson et al., "Evaluation
// techniques for storage hierarchies", 1970).
//
// The stack distance of an access is the number of distinct other keys accessed since the
// previous access to the same key (infinite, kCold, for a first access). An LRU cache of k pages
// hits exactly the accesses whose distance is below k, for every k at once: one pass over a trace
// gives the whole hit-ratio curve.
//
// StackDistanceCounter computes each distance in O(log n) for n accesses (Bennett & Kruskal,
// 1975): a Fenwick tree over access times holds a 1 at the time of each key's latest access, so
// the distinct keys touched since a key's previous access at time p are the ones in (p, now).
// Memory: 4 bytes per access for the tree plus 8 bytes per key for its last access time.
//
// LruHitCurve is the histogram of the distances: HitRatio(k) is the share of accesses an LRU cache
// of k pages would hit.
//
// This is the exact curve, for offline use (`ccfs advise`, tests): every access is counted. The
// engine's live estimate, from a sample of the reads, is another thing (src/cache).
//
// Thread-safety: none; one thread per object (LruHitCurve's const methods rebuild a cache of
// cumulative counts).
#ifndef CCFS_TRACE_STACK_DISTANCE_H_
#define CCFS_TRACE_STACK_DISTANCE_H_

#include <cstdint>
#include <limits>
#include <vector>

namespace ccfs {

class StackDistanceCounter {
 public:
  // The distance of a first access: a miss at every capacity.
  static constexpr uint64_t kCold = std::numeric_limits<uint64_t>::max();

  // Keys are in [0, keys); Access is called at most max_accesses times.
  StackDistanceCounter(uint64_t keys, uint64_t max_accesses);

  // Records an access to `key` and returns its stack distance (kCold the first time).
  // REQUIRES: key < keys; fewer than max_accesses calls so far.
  uint64_t Access(uint64_t key);

  uint64_t accesses() const { return now_; }

 private:
  void Add(uint64_t time, int32_t delta);
  // Ones at times 1..time.
  uint64_t Prefix(uint64_t time) const;

  std::vector<uint32_t> tree_;  // Fenwick tree, 1-based times
  std::vector<uint64_t> last_;  // key -> time of its latest access, 0 = never
  uint64_t now_ = 0;
};

class LruHitCurve {
 public:
  // Counts one access at `distance` (StackDistanceCounter::kCold for a first access).
  void Add(uint64_t distance);

  uint64_t accesses() const { return accesses_; }
  // Accesses with a finite distance (the rest are first accesses: misses at any capacity).
  uint64_t reuses() const { return accesses_ - cold_; }

  // Accesses an LRU cache of `capacity` pages hits: those with a distance below it.
  uint64_t Hits(uint64_t capacity) const;
  // Share of accesses a cache of `capacity` pages hits (0 with no access). A fractional capacity
  // is interpolated linearly between its neighbours, so a curve fed to a model of fractional page
  // counts stays continuous. Non-decreasing in capacity.
  double HitRatio(double capacity) const;

 private:
  std::vector<uint64_t> histogram_;  // accesses by finite distance
  uint64_t accesses_ = 0;
  uint64_t cold_ = 0;
  mutable std::vector<uint64_t> cumulative_;  // cumulative_[k] = accesses with distance < k
  mutable bool dirty_ = true;
};

}  // namespace ccfs

#endif  // CCFS_TRACE_STACK_DISTANCE_H_
