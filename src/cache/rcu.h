// RCU helpers: registration of reader threads and a scoped read-side section.
//
// ccfs uses liburcu's "memb" flavor: read-side sections are a couple of plain loads and stores
// (the writer side uses membarrier), readers may block inside them (they only delay reclamation),
// and every thread that enters one must be registered. Threads are registered lazily, the first
// time they enter a section, and unregistered when they exit (thread_local destructor).
#ifndef CCFS_CACHE_RCU_H_
#define CCFS_CACHE_RCU_H_

#include "cache/page_entry.h"

// ThreadSanitizer cannot see the ordering RCU provides (liburcu synchronizes with membarrier and
// its own uninstrumented atomics). These annotations tell it what RCU guarantees: the end of every
// read-side section happens before the reclamation callbacks that run after the next grace period,
// and an entry's initialisation happens before any reader that finds it in the index.
#if defined(CCFS_TSAN)
extern "C" void __tsan_acquire(void* addr);
extern "C" void __tsan_release(void* addr);
#define CCFS_TSAN_ACQUIRE(p) __tsan_acquire(const_cast<void*>(static_cast<const void*>(p)))
#define CCFS_TSAN_RELEASE(p) __tsan_release(const_cast<void*>(static_cast<const void*>(p)))
#else
#define CCFS_TSAN_ACQUIRE(p) ((void)0)
#define CCFS_TSAN_RELEASE(p) ((void)0)
#endif

namespace ccfs::cache {

// The token every read-side section releases and every reclamation callback acquires (TSan only).
extern char rcu_grace_token;

// Registers the calling thread with RCU if it is not yet registered.
void EnsureRcuThread();

class RcuReadLock {
 public:
  RcuReadLock() {
    EnsureRcuThread();
    urcu_memb_read_lock();
  }
  ~RcuReadLock() {
    CCFS_TSAN_RELEASE(&rcu_grace_token);
    urcu_memb_read_unlock();
  }
  RcuReadLock(const RcuReadLock&) = delete;
  RcuReadLock& operator=(const RcuReadLock&) = delete;
};

}  // namespace ccfs::cache

#endif  // CCFS_CACHE_RCU_H_
