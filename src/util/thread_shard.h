// ThreadIndex: a number per thread, handed out in the order threads first ask, for spreading
// per-thread counters over a few shards (ThreadIndex() % shards): the first `shards` threads to
// ask each get a shard of their own, so two busy threads rarely write one cache line.
//
// Thread-safe; the index of a thread never changes.
#ifndef CCFS_UTIL_THREAD_SHARD_H_
#define CCFS_UTIL_THREAD_SHARD_H_

#include <atomic>

namespace ccfs {

inline unsigned ThreadIndex() {
  static std::atomic<unsigned> next{0};
  thread_local unsigned index = next.fetch_add(1, std::memory_order_relaxed);
  return index;
}

}  // namespace ccfs

#endif  // CCFS_UTIL_THREAD_SHARD_H_
