// MissPool: the threads that finish reads the tiers cannot answer at once (a page missing, or
// still loading), so that a request thread never waits for the store and N readers keep N misses
// in flight (Options::misses_in_flight).
//
// A request thread serves what the tiers hold (PageCache::TryRead); at the first page it would
// have to wait for, it hands the rest of the request to an idle pool thread, which reads it (one
// run of misses, as a request thread would), replies, and goes back to wait. The request thread
// takes its next request meanwhile. When every pool thread is busy, TryRun refuses and the request
// thread reads the rest itself: the depth is then the pool's plus the request threads'.
//
// Threads start on demand, up to the limit, and stay (a mount that never misses runs none). Each
// holds one miss at a time; nothing queues behind a busy thread, so a miss never waits for
// another to finish.
//
// Thread-safety: every method may be called from any thread. Stop() waits for the work running;
// the caller must stop it while the FUSE session it replies to still exists.
#ifndef CCFS_FUSE_MISS_POOL_H_
#define CCFS_FUSE_MISS_POOL_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <thread>
#include <vector>

#include "util/mutex.h"
#include "util/thread_cpu.h"

namespace ccfs {

class MissPool {
 public:
  // The pool's threads join `cpu` (if set) for their lifetime, as the request threads do; it is
  // borrowed and must outlive them.
  MissPool(int max_threads, ThreadCpuGroup* cpu);
  ~MissPool();  // Stop()
  MissPool(const MissPool&) = delete;
  MissPool& operator=(const MissPool&) = delete;

  // Runs `work` on an idle pool thread, starting one if fewer than the limit run; false (and
  // `work` untouched) when all are busy or the pool has stopped.
  bool TryRun(std::function<void()>* work) EXCLUDES(mu_);
  // Waits for the work running, then joins the threads; TryRun refuses from then on.
  void Stop() EXCLUDES(mu_);

  // The most pieces of work that ran at once since the pool started.
  int peak() const EXCLUDES(mu_);

 private:
  void Loop() EXCLUDES(mu_);

  const size_t max_threads_;
  ThreadCpuGroup* const cpu_;
  mutable Mutex mu_;
  CondVar work_cv_;  // work was handed over, or stop_
  // Handed over, not yet taken. Invariant: queued_.size() <= idle_ + threads started for it, so
  // every piece has a thread that will take it.
  std::deque<std::function<void()>> queued_ GUARDED_BY(mu_);
  size_t idle_ GUARDED_BY(mu_) = 0;  // threads waiting on work_cv_
  int running_ GUARDED_BY(mu_) = 0;  // pieces being run
  int peak_ GUARDED_BY(mu_) = 0;
  bool stop_ GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_ GUARDED_BY(mu_);
};

}  // namespace ccfs

#endif  // CCFS_FUSE_MISS_POOL_H_
