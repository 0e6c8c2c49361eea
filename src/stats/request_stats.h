// RequestStats: requests by kind, and the time each took, as the daemon saw them. The FUSE layer
// records every op of its table (fuse/filesystem.cc, kOpTable), from the handler's entry to its
// return, which follows the handler's one reply (a read handed to the miss pool: to the pool's
// reply, fuse/miss_pool.h, so its wait for the store is in it); the metrics endpoint exports them
// (stats/prometheus.h: ccfs_fuse_requests_total, ccfs_fuse_request_seconds). Not in it: the time a
// request waited in the kernel's queue or for a request thread, and the trip to and from the
// kernel.
//
// Per kind, a histogram over the fixed bounds kLatencyBoundsNs (the bounds Prometheus is shown, so
// a value is counted in the bucket it is exported in, with no rebucketing error) and the sum of
// the nanoseconds; the count is the buckets' sum. Why not LatencyHistogram (ccfs/stats.h): its
// 7,424 buckets per kind, for every op and shard, are ~60x the memory, and its atomics are shared
// by every thread; only these bounds are ever exported.
//
// Cost: Record is a search of the 24 bounds (5 comparisons) and two relaxed fetch_adds on the
// calling thread's shard; threads are spread over kShards shards as EngineCounters spreads them
// (cache/engine_counters.h), so two request threads rarely write one cache line. No lock.
//
// Thread-safety: Record from any thread; Snapshot may run concurrently and reads each count at
// some recent value (a snapshot under load may pair a bucket with a sum a request apart).
#ifndef CCFS_STATS_REQUEST_STATS_H_
#define CCFS_STATS_REQUEST_STATS_H_

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "util/thread_shard.h"

namespace ccfs {

// Upper bounds of the exported latency histograms' buckets (ccfs_read_seconds,
// ccfs_fuse_request_seconds), in nanoseconds, ascending; +Inf follows. 250ns .. 10s in 1-2.5-5
// steps: a raw hit inside the engine to a miss on a slow store.
inline constexpr uint64_t kLatencyBoundsNs[] = {
    250,        500,         1'000,       2'500,       5'000,         10'000,
    25'000,     50'000,      100'000,     250'000,     500'000,       1'000'000,
    2'500'000,  5'000'000,   10'000'000,  25'000'000,  50'000'000,    100'000'000,
    250'000'000, 500'000'000, 1'000'000'000, 2'500'000'000, 5'000'000'000, 10'000'000'000};
inline constexpr size_t kLatencyBuckets = std::size(kLatencyBoundsNs) + 1;  // the last: above all

// The steady clock in nanoseconds: what Record's times are measured with.
inline uint64_t SteadyNowNs() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

class RequestStats {
 public:
  // One kind's counts. buckets[i] counts values <= kLatencyBoundsNs[i] and above the bound before
  // it (not cumulative); buckets[kLatencyBuckets - 1] those above the last bound.
  struct Kind {
    std::string name;
    uint64_t sum_ns = 0;
    std::array<uint64_t, kLatencyBuckets> buckets{};
    uint64_t count() const;
  };

  // `kinds` name the kinds 0 .. kinds.size() - 1 (the Prometheus label values).
  explicit RequestStats(std::vector<std::string> kinds);
  RequestStats(const RequestStats&) = delete;
  RequestStats& operator=(const RequestStats&) = delete;

  // One request of kind `kind` that took `ns`. REQUIRES: kind < kinds.size().
  void Record(size_t kind, uint64_t ns) {
    Slot* slot = &slots_[MyShard() * kinds_.size() + kind];
    slot->buckets[BucketOf(ns)].fetch_add(1, std::memory_order_relaxed);
    slot->sum_ns.fetch_add(ns, std::memory_order_relaxed);
  }

  // Every kind, in the order of `kinds`, summed over the shards.
  std::vector<Kind> Snapshot() const;

  // The bucket `ns` falls in (exposed for tests).
  static size_t BucketOf(uint64_t ns);

 private:
  static constexpr unsigned kShards = 8;
  static unsigned MyShard() { return ThreadIndex() % kShards; }
  struct alignas(64) Slot {
    std::atomic<uint64_t> sum_ns{0};
    std::array<std::atomic<uint64_t>, kLatencyBuckets> buckets{};
  };

  const std::vector<std::string> kinds_;
  const std::unique_ptr<Slot[]> slots_;  // kShards rows of kinds_.size() slots
};

}  // namespace ccfs

#endif  // CCFS_STATS_REQUEST_STATS_H_
