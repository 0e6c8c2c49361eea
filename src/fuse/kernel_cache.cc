// The ledger of pages the kernel may hold, and the thread that asks the kernel to drop them: see
// kernel_cache.h for why the ledger is an upper bound and why invalidations leave request threads.
//
// Eviction order is the order pages were served. The daemon cannot see the kernel's hits, so it
// cannot keep the kernel's pages in recency order; a hot page evicted this way comes back on the
// next read as a hit in the daemon's compressed tier (one FUSE trip and a decompression), and is
// then at the young end again.
#include "fuse/kernel_cache.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "fuse/log.h"

namespace ccfs {

KernelCache::KernelCache(uint64_t budget_bytes, uint32_t page_size, bool evict)
    : page_size_(page_size), evict_(evict), budget_pages_(budget_bytes / page_size) {
  counts_.budget_bytes = budget_bytes;
  slack_pages_ = std::min<uint64_t>(budget_pages_ / 32, kMaxSlackBytes / page_size_);
}

KernelCache::~KernelCache() { Stop(); }

void KernelCache::Start(fuse_session* se) {
  MutexLock lock(&mu_);
  session_ = se;
  stop_ = false;
  thread_ = std::thread([this] { Run(); });
}

void KernelCache::Stop() {
  {
    MutexLock lock(&mu_);
    stop_ = true;
  }
  wake_.SignalAll();
  if (thread_.joinable()) thread_.join();
  MutexLock lock(&mu_);
  session_ = nullptr;
}

void KernelCache::Served(fuse_ino_t ino, uint64_t off, uint64_t len) {
  if (len == 0) return;
  const uint64_t first = off / page_size_;
  const uint64_t last = (off + len - 1) / page_size_;
  MutexLock lock(&mu_);
  auto& pages = where_[ino];
  for (uint64_t p = first; p <= last; ++p) {
    auto it = pages.find(p);
    if (it != pages.end()) {
      // Asked for again while we thought it held: the kernel dropped it by itself. Young again.
      ++counts_.rerequests;
      order_.splice(order_.end(), order_, it->second);
      continue;
    }
    order_.push_back(Key{ino, p});
    pages.emplace(p, std::prev(order_.end()));
  }
  EvictOverBudgetLocked();
}

void KernelCache::EvictOverBudgetLocked() {
  // Eviction starts only once the ledger is a slack over the budget, and then brings it back to
  // the budget: a batch of invalidations per wake-up of the thread, not one per miss. Consecutive
  // pages of one file leave as one range, so a sequential reader's pages cost one notification per
  // run rather than one per page.
  if (order_.size() <= budget_pages_ + slack_pages_) return;
  Invalidation run{0, 0, 0};
  bool have_run = false;
  while (order_.size() > budget_pages_) {
    Key k = order_.front();
    order_.pop_front();
    auto f = where_.find(k.ino);
    f->second.erase(k.page);
    if (f->second.empty()) where_.erase(f);
    if (!evict_) continue;  // a memory cgroup holds the kernel's share: forget the oldest only
    ++counts_.evicted_pages;
    const uint64_t off = k.page * page_size_;
    if (have_run && run.ino == k.ino && run.off + run.len == off) {
      run.len += page_size_;
      continue;
    }
    if (have_run) QueueLocked(run);
    run = Invalidation{k.ino, off, page_size_};
    have_run = true;
  }
  if (have_run) QueueLocked(run);
}

void KernelCache::DropFileLocked(fuse_ino_t ino, uint64_t from_page) {
  auto f = where_.find(ino);
  if (f == where_.end()) return;
  for (auto it = f->second.begin(); it != f->second.end();) {
    if (it->first >= from_page) {
      order_.erase(it->second);
      it = f->second.erase(it);
    } else {
      ++it;
    }
  }
  if (f->second.empty()) where_.erase(f);
}

void KernelCache::InvalidateFrom(fuse_ino_t ino, uint64_t off) {
  MutexLock lock(&mu_);
  const uint64_t page = off / page_size_;
  DropFileLocked(ino, page);
  // len 0 reaches to the end of the file (fuse_lowlevel_notify_inval_inode).
  QueueLocked(Invalidation{ino, static_cast<uint64_t>(page * page_size_), 0});
}

void KernelCache::Forget(fuse_ino_t ino) {
  MutexLock lock(&mu_);
  DropFileLocked(ino, 0);
}

void KernelCache::SetBudget(uint64_t budget_bytes) {
  MutexLock lock(&mu_);
  budget_pages_ = budget_bytes / page_size_;
  slack_pages_ = std::min<uint64_t>(budget_pages_ / 32, kMaxSlackBytes / page_size_);
  counts_.budget_bytes = budget_bytes;
  EvictOverBudgetLocked();
}

KernelCache::Counts KernelCache::counts() const {
  MutexLock lock(&mu_);
  Counts c = counts_;
  c.held_pages = order_.size();
  c.held_bytes = c.held_pages * page_size_;
  return c;
}

void KernelCache::QueueLocked(const Invalidation& inv) {
  if (queue_.empty()) wake_.Signal();  // otherwise the thread is awake and will find it
  queue_.push_back(inv);
}

void KernelCache::Run() {
  MutexLock lock(&mu_);
  for (;;) {
    while (queue_.empty() && !stop_) wake_.Wait(&mu_);
    // Stopping: what is left is dropped with the mount (the kernel's pages go at unmount).
    if (stop_) return;
    Invalidation inv = queue_.front();
    queue_.pop_front();
    fuse_session* se = session_;
    lock.Unlock();
    // The kernel drops the range (unmapping it where it is mapped) and returns once it has;
    // ENOENT: it holds no inode of that number any more, so nothing of it is cached.
    int err = se == nullptr ? 0
                            : fuse_lowlevel_notify_inval_inode(se, inv.ino, static_cast<off_t>(inv.off),
                                                               static_cast<off_t>(inv.len));
    if (err != 0 && err != -ENOENT && err != -ENOTCONN && !warned_) {
      warned_ = true;
      LogWarning(fmt::format("cannot drop the kernel's pages of inode {} ({}); the kernel's share "
                             "of memory may exceed its budget (logged once)",
                             inv.ino, strerror(-err)));
    }
    lock.Lock();
  }
}

}  // namespace ccfs
