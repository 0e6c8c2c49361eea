// EngineCounters: the engine's counts (the Outcome and Event rows of CCFS_CACHE_COUNTERS in
// ccfs/stats.h), sharded by thread so that two readers never write the same cache line.
//
// A count is named by a pointer to its member of Shard, which has one atomic per count, named as
// the CacheStats field: counters.Add(&EngineCounters::Shard::misses). The member pointer is a
// constant offset, so Add costs one relaxed fetch_add on the calling thread's shard. Snapshot()
// adds the shards up into a CacheStats.
//
// compressed_evictions and wasted_compressions are counted by CompressedTier under its mutex
// (CompressedTier::Counts), mrc_samples and mrc_drops by MissRatioCurve (cache/mrc.h);
// cpu_compress_ns and cpu_evictor_ns are read from those threads' CPU clocks, and
// cpu_request_threads_ns from the request threads' by the FUSE layer. Their slots here stay zero
// and the engine (or the FUSE layer) fills those fields itself.
//
// Thread-safety: every method may be called from any thread. Each count is exact; a snapshot
// taken under load reads the counts one after another.
#ifndef CCFS_CACHE_ENGINE_COUNTERS_H_
#define CCFS_CACHE_ENGINE_COUNTERS_H_

#include <atomic>
#include <chrono>
#include <cstdint>

#include "ccfs/stats.h"
#include "util/thread_shard.h"

namespace ccfs::cache {

class EngineCounters {
 public:
  struct alignas(64) Shard {
#define CCFS_SHARD_Outcome(field) std::atomic<uint64_t> field{0};
#define CCFS_SHARD_Event(field) std::atomic<uint64_t> field{0};
#define CCFS_SHARD_TierSize(field)
#define CCFS_SHARD_Level(field)
#define CCFS_SHARD_FIELD(field, kind, help) CCFS_SHARD_##kind(field)
    CCFS_CACHE_COUNTERS(CCFS_SHARD_FIELD)
#undef CCFS_SHARD_FIELD
#undef CCFS_SHARD_Level
#undef CCFS_SHARD_TierSize
#undef CCFS_SHARD_Event
#undef CCFS_SHARD_Outcome
  };
  using Counter = std::atomic<uint64_t> Shard::*;

  void Add(Counter c, uint64_t n = 1) {
    (shards_[MyShard()].*c).fetch_add(n, std::memory_order_relaxed);
  }
  uint64_t Sum(Counter c) const {
    uint64_t total = 0;
    for (const Shard& s : shards_) total += (s.*c).load(std::memory_order_relaxed);
    return total;
  }
  // Sets every count field of *stats (Outcome and Event) to its sum over the shards.
  void Snapshot(CacheStats* stats) const {
#define CCFS_SUM_Outcome(field) stats->field = Sum(&Shard::field);
#define CCFS_SUM_Event(field) stats->field = Sum(&Shard::field);
#define CCFS_SUM_TierSize(field)
#define CCFS_SUM_Level(field)
#define CCFS_SUM_FIELD(field, kind, help) CCFS_SUM_##kind(field)
    CCFS_CACHE_COUNTERS(CCFS_SUM_FIELD)
#undef CCFS_SUM_FIELD
#undef CCFS_SUM_Level
#undef CCFS_SUM_TierSize
#undef CCFS_SUM_Event
#undef CCFS_SUM_Outcome
  }

 private:
  static constexpr int kShards = 8;
  static unsigned MyShard() { return ThreadIndex() % kShards; }

  Shard shards_[kShards];
};

// The clock stall_ns, compress_ns and decompress_ns (and the latency histograms) are measured with.
inline uint64_t NowNs() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

}  // namespace ccfs::cache

#endif  // CCFS_CACHE_ENGINE_COUNTERS_H_
