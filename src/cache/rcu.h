// RCU helpers: registration of reader threads and a scoped read-side section.
//
// ccfs uses liburcu's "memb" flavor: read-side sections are a couple of plain loads and stores
// (the writer side uses membarrier), readers may block inside them (they only delay reclamation),
// and every thread that enters one must be registered. Threads are registered lazily, the first
// time they enter a section, and unregistered when they exit (thread_local destructor).
#ifndef CCFS_CACHE_RCU_H_
#define CCFS_CACHE_RCU_H_

#include "cache/page_entry.h"

namespace ccfs::cache {

// Registers the calling thread with RCU if it is not yet registered.
void EnsureRcuThread();

class RcuReadLock {
 public:
  RcuReadLock() {
    EnsureRcuThread();
    urcu_memb_read_lock();
  }
  ~RcuReadLock() { urcu_memb_read_unlock(); }
  RcuReadLock(const RcuReadLock&) = delete;
  RcuReadLock& operator=(const RcuReadLock&) = delete;
};

}  // namespace ccfs::cache

#endif  // CCFS_CACHE_RCU_H_
