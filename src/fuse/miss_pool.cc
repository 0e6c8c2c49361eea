#include "fuse/miss_pool.h"

#include <pthread.h>

#include <algorithm>
#include <optional>

#include "cache/blob.h"

namespace ccfs {

MissPool::MissPool(int max_threads, ThreadCpuGroup* cpu)
    : max_threads_(static_cast<size_t>(std::max(0, max_threads))), cpu_(cpu) {}

MissPool::~MissPool() { Stop(); }

bool MissPool::TryRun(std::function<void()>* work) {
  {
    MutexLock lock(&mu_);
    if (stop_) return false;
    if (idle_ <= queued_.size()) {
      // No waiting thread is free for it: a new one, or none.
      if (threads_.size() >= max_threads_) return false;
      threads_.emplace_back([this] { Loop(); });
    }
    queued_.push_back(std::move(*work));
  }
  work_cv_.Signal();
  return true;
}

void MissPool::Stop() {
  std::vector<std::thread> threads;
  {
    MutexLock lock(&mu_);
    stop_ = true;
    threads.swap(threads_);
  }
  work_cv_.SignalAll();
  // Pieces already handed over are still run: each owes its request a reply.
  for (std::thread& t : threads) t.join();
}

int MissPool::peak() const {
  MutexLock lock(&mu_);
  return peak_;
}

void MissPool::Loop() {
  pthread_setname_np(pthread_self(), "ccfs-miss");
  cache::NoThreadCache();
  std::optional<ThreadCpuGroup::Membership> member;
  if (cpu_ != nullptr) member.emplace(cpu_->Join());
  MutexLock lock(&mu_);
  for (;;) {
    while (queued_.empty() && !stop_) {
      ++idle_;
      work_cv_.Wait(&mu_);
      --idle_;
    }
    if (queued_.empty()) break;  // stopped
    std::function<void()> work = std::move(queued_.front());
    queued_.pop_front();
    peak_ = std::max(peak_, ++running_);
    lock.Unlock();
    work();
    work = nullptr;  // what it holds is let go outside the lock
    lock.Lock();
    --running_;
  }
}

}  // namespace ccfs
