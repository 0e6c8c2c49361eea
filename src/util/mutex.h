// Mutex, MutexLock and CondVar: std::mutex and std::condition_variable with clang thread-safety
// annotations (util/thread_annotations.h), so members marked GUARDED_BY(mu_) are checked by the
// CCFS_THREAD_SAFETY build. Same cost and semantics as the std types they wrap (LevelDB's
// port::Mutex/CondVar are the model).
//
// Thread-safety: as std::mutex. A Mutex is not recursive. CondVar waits must be made with the
// Mutex they name held (REQUIRES); they release it while waiting and hold it again on return.
// Spurious wake-ups happen: wait in a loop over the condition.
#ifndef CCFS_UTIL_MUTEX_H_
#define CCFS_UTIL_MUTEX_H_

#include <chrono>
#include <condition_variable>
#include <mutex>

#include "util/thread_annotations.h"

namespace ccfs {

class CAPABILITY("mutex") Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void Lock() ACQUIRE() { mu_.lock(); }
  // Takes the mutex if it is free; never waits. True if taken.
  bool TryLock() TRY_ACQUIRE(true) { return mu_.try_lock(); }
  void Unlock() RELEASE() { mu_.unlock(); }

 private:
  friend class CondVar;
  std::mutex mu_;
};

// Holds `mu` from construction to destruction; Unlock()/Lock() drop and retake it in between
// (for work done without the lock). REQUIRES: held again (or never dropped) at destruction.
class SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex* mu) ACQUIRE(mu) : mu_(mu) { mu_->Lock(); }
  ~MutexLock() RELEASE() { mu_->Unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

  void Unlock() RELEASE() { mu_->Unlock(); }
  void Lock() ACQUIRE() { mu_->Lock(); }

 private:
  Mutex* const mu_;
};

// A condition variable. Each wait names the Mutex it is made under (as absl::CondVar does), so
// the analysis can check that it is held; use one Mutex with a given CondVar.
class CondVar {
 public:
  CondVar() = default;
  CondVar(const CondVar&) = delete;
  CondVar& operator=(const CondVar&) = delete;

  // Releases *mu, waits for a notification (or a spurious wake-up), retakes *mu.
  void Wait(Mutex* mu) REQUIRES(mu) {
    std::unique_lock<std::mutex> lock(mu->mu_, std::adopt_lock);
    cv_.wait(lock);
    lock.release();
  }
  // As Wait(), for at most `timeout`. True if it returned before the timeout.
  template <class Rep, class Period>
  bool WaitFor(Mutex* mu, const std::chrono::duration<Rep, Period>& timeout) REQUIRES(mu) {
    std::unique_lock<std::mutex> lock(mu->mu_, std::adopt_lock);
    std::cv_status st = cv_.wait_for(lock, timeout);
    lock.release();
    return st == std::cv_status::no_timeout;
  }
  // As Wait(), until `deadline` at the latest. True if it returned before the deadline.
  template <class Clock, class Duration>
  bool WaitUntil(Mutex* mu, const std::chrono::time_point<Clock, Duration>& deadline)
      REQUIRES(mu) {
    std::unique_lock<std::mutex> lock(mu->mu_, std::adopt_lock);
    std::cv_status st = cv_.wait_until(lock, deadline);
    lock.release();
    return st == std::cv_status::no_timeout;
  }
  void Signal() { cv_.notify_one(); }
  void SignalAll() { cv_.notify_all(); }

 private:
  std::condition_variable cv_;
};

}  // namespace ccfs

#endif  // CCFS_UTIL_MUTEX_H_
