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
#include "util/cgroup_memory.h"

namespace ccfs {

KernelCache::KernelCache(uint64_t budget_bytes, uint32_t page_size, bool evict)
    : page_size_(page_size),
      evict_(evict),
      budget_pages_(budget_bytes / page_size),
      nominal_pages_(budget_bytes / page_size),
      // Pages dropped lately (second turns; mix): 8x the kernel's share (measured against the simulation's
      // share + compressed pages, which filtered too much: lower hit ratios at 2x and 8x Pareto).
      dropped_(std::max<uint64_t>(1024, budget_bytes / page_size * 8)) {
  counts_.budget_bytes = budget_bytes;
  slack_pages_ = std::min<uint64_t>(budget_pages_ / 32, kMaxSlackBytes / page_size_);
}

KernelCache::~KernelCache() { Stop(); }

void KernelCache::SetDemoter(Demoter demoter) {
  demoter_ = std::move(demoter);
  demote_ = evict_;  // only pages the daemon drops can be asked back
}

void KernelCache::Start(fuse_session* se) {
  MutexLock lock(&mu_);
  session_ = se;
  stop_ = false;
  thread_ = std::thread([this] { Loop(); });
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
  pending_.clear();
  soon_.clear();
}

void KernelCache::DropSoon(fuse_ino_t ino, uint64_t off, uint64_t len) {
  if (len == 0) return;
  // Whole ccfs pages: a read of part of a page may have brought the kernel the rest of it.
  const uint64_t first = off / page_size_, pages = (off + len - 1) / page_size_ - first + 1;
  off = first * page_size_;
  len = pages * page_size_;
  MutexLock lock(&mu_);
  if (stop_) return;
  // The thread may be waiting with no deadline; with notices already due or queued it wakes by
  // itself before this one is due (the delay is the same for all).
  if (soon_.empty() && queue_.empty()) wake_.Signal();
  soon_.push_back(Soon{std::chrono::steady_clock::now() + kKeepOutDelay, Notice{ino, off, len}});
  counts_.kept_out_pages += pages;
}

void KernelCache::Served(fuse_ino_t ino, uint64_t file_id, uint64_t off, uint64_t len) {
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
      it->second->came_back = true;
      order_.splice(order_.end(), order_, it->second);
      continue;
    }
    const bool came_back = evict_ && dropped_.Contains(cache::PageKey{file_id, p});
    order_.push_back(Key{ino, p, file_id, came_back});
    pages.emplace(p, std::prev(order_.end()));
  }
  EvictOverBudgetLocked();
}

bool KernelCache::DemotesLocked(const Key& k) {
  if (!demote_) return false;
  if (!demoter_.mix) return true;
  // mix: every page until the compressed tier first fills, then only pages that came back (the
  // room a compressed hit frees is theirs, not a first-time page's).
  if (!filled_ && demoter_.full && demoter_.full()) filled_ = true;
  return !filled_ || k.came_back;
}

void KernelCache::EvictOverBudgetLocked() {
  // Eviction starts only once the ledger is a slack over the budget, and then brings it back to
  // the budget: a batch of invalidations per wake-up of the thread, not one per miss. Consecutive
  // pages of one file leave as one range, so a sequential reader's pages cost one notification per
  // run rather than one per page. Runs to ask back go first: the kernel must still hold them.
  if (order_.size() <= budget_pages_ + slack_pages_) return;
  std::vector<Notice> drops, retrieves;
  const uint64_t epoch = demote_ && demoter_.epoch ? demoter_.epoch() : 0;
  const uint64_t max_run = std::max<uint64_t>(1, kMaxRetrieveBytes / page_size_);
  while (order_.size() > budget_pages_) {
    if (evict_ && order_.front().came_back && !order_.front().spared) {
      // The ledger cannot see the kernel's hits, only pages asked for again once dropped: a page
      // readers came back to gets a second turn before it is dropped again, as a CLOCK's
      // referenced page would (a page the readers keep asking for would otherwise leave the
      // kernel every turn, since the ledger drops in the order pages were served).
      order_.front().spared = true;
      order_.splice(order_.end(), order_, order_.begin());
      continue;
    }
    Key k = order_.front();
    order_.pop_front();
    auto f = where_.find(k.ino);
    f->second.erase(k.page);
    if (f->second.empty()) where_.erase(f);
    if (!evict_) continue;  // a memory cgroup holds the kernel's share: forget the oldest only
    ++counts_.evicted_pages;
    const uint64_t off = k.page * page_size_;
    if (!drops.empty() && drops.back().ino == k.ino && drops.back().off + drops.back().len == off) {
      drops.back().len += page_size_;
    } else {
      drops.push_back(Notice{k.ino, off, page_size_});
    }
    dropped_.Remember(cache::PageKey{k.file_id, k.page});
    if (!demote_) continue;
    if (!DemotesLocked(k)) continue;
    ++counts_.retrieved_pages;
    Pending* last = retrieves.empty() ? nullptr : &pending_[retrieves.back().cookie];
    if (last != nullptr && last->ino == k.ino && last->run.file_id == k.file_id &&
        last->run.first_page + last->run.pages == k.page && last->run.pages < max_run) {
      ++last->run.pages;
      retrieves.back().len += page_size_;
      continue;
    }
    const uint64_t cookie = next_cookie_++;
    pending_[cookie] = Pending{k.ino, Run{k.file_id, k.page, 1, epoch}};
    retrieves.push_back(Notice{k.ino, off, page_size_, cookie});
  }
  while (pending_.size() > kMaxPendingRuns) pending_.erase(pending_.begin());
  for (const Notice& n : retrieves) QueueLocked(n);
  for (const Notice& n : drops) QueueLocked(n);
}

bool KernelCache::Retrieved(uint64_t cookie, Run* run) {
  MutexLock lock(&mu_);
  auto it = pending_.find(cookie);
  if (it == pending_.end()) return false;
  *run = it->second.run;
  pending_.erase(it);
  return true;
}

void KernelCache::DropFileLocked(fuse_ino_t ino, uint64_t from_page) {
  // Runs of the file still to be answered are stale now (or belong to a forgotten inode whose
  // number may name another file by the time the kernel reads it).
  for (auto it = pending_.begin(); it != pending_.end();) {
    const Pending& p = it->second;
    if (p.ino == ino && p.run.first_page + p.run.pages > from_page) {
      it = pending_.erase(it);
    } else {
      ++it;
    }
  }
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
  QueueLocked(Notice{ino, static_cast<uint64_t>(page * page_size_), 0});
}

void KernelCache::Forget(fuse_ino_t ino) {
  MutexLock lock(&mu_);
  DropFileLocked(ino, 0);
}

void KernelCache::SetBudget(uint64_t budget_bytes) {
  MutexLock lock(&mu_);
  nominal_pages_ = budget_pages_ = budget_bytes / page_size_;
  slack_pages_ = std::min<uint64_t>(budget_pages_ / 32, kMaxSlackBytes / page_size_);
  counts_.budget_bytes = budget_bytes;
  filled_ = false;  // the compressed tier's share changed with it
  EvictOverBudgetLocked();  // the thread fits it to the cgroup again within kRoomPeriod
}

void KernelCache::FitLocked(const CgroupMemory* m) {
  uint64_t pages = nominal_pages_;
  if (m != nullptr) {
    // What else the cgroup holds: all it is charged, less the kernel's pages of our files (at most
    // the ledger's count, at most its page cache).
    const uint64_t ours = std::min<uint64_t>(order_.size() * page_size_, m->file);
    const uint64_t others = m->usage > ours ? m->usage - ours : 0;
    const uint64_t room =
        m->limit > others + kRoomMarginBytes ? m->limit - others - kRoomMarginBytes : 0;
    pages = std::clamp<uint64_t>(room / page_size_, nominal_pages_ / kMinRoomShare, nominal_pages_);
  }
  if (pages == budget_pages_) return;
  budget_pages_ = pages;
  counts_.budget_bytes = pages * page_size_;
}

bool KernelCache::Holds(fuse_ino_t ino, uint64_t page) const {
  MutexLock lock(&mu_);
  auto it = where_.find(ino);
  return it != where_.end() && it->second.count(page) != 0;
}

KernelCache::Counts KernelCache::counts() const {
  MutexLock lock(&mu_);
  Counts c = counts_;
  c.held_pages = order_.size();
  c.held_bytes = c.held_pages * page_size_;
  return c;
}

void KernelCache::QueueLocked(const Notice& n) {
  if (queue_.empty()) wake_.Signal();  // otherwise the thread is awake and will find it
  queue_.push_back(n);
  queue_.back().seq = ++queued_seq_;
}

bool KernelCache::AwaitSent(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  MutexLock lock(&mu_);
  const uint64_t want = queued_seq_;
  while (sent_seq_ < want) {
    if (session_ == nullptr || stop_) return false;
    if (!sent_.WaitUntil(&mu_, deadline) && sent_seq_ < want) return false;
  }
  return true;
}

void KernelCache::Loop() {
  MutexLock lock(&mu_);
  auto next_fit = std::chrono::steady_clock::now();
  for (;;) {
    // Stopping: what is left is dropped with the mount (the kernel's pages go at unmount).
    if (stop_) {
      sent_.SignalAll();
      return;
    }
    if (demote_ && std::chrono::steady_clock::now() >= next_fit) {
      next_fit = std::chrono::steady_clock::now() + kRoomPeriod;
      lock.Unlock();
      CgroupMemory m;
      const bool limited = ReadCgroupMemory(&m);
      lock.Lock();
      FitLocked(limited ? &m : nullptr);
      EvictOverBudgetLocked();
    }
    const auto now = std::chrono::steady_clock::now();
    while (!soon_.empty() && soon_.front().due <= now) {
      QueueLocked(soon_.front().notice);
      soon_.pop_front();
    }
    if (queue_.empty()) {
      if (demote_ || !soon_.empty()) {
        auto until = soon_.empty() ? next_fit : soon_.front().due;
        if (demote_) until = std::min(until, next_fit);
        wake_.WaitUntil(&mu_, until);
      } else {
        wake_.Wait(&mu_);
      }
      continue;
    }
    Notice n = queue_.front();
    queue_.pop_front();
    // A run whose file was forgotten or invalidated meanwhile is not asked for.
    if (n.cookie == 0 || pending_.find(n.cookie) != pending_.end()) {
      fuse_session* se = session_;
      lock.Unlock();
      if (se != nullptr) Send(se, n);
      lock.Lock();
    }
    sent_seq_ = n.seq;
    sent_.SignalAll();
  }
}

void KernelCache::Send(fuse_session* se, const Notice& n) {
  if (n.cookie != 0) {
    // The kernel answers with the pages it still holds from `off` on (up to the first it lacks);
    // ENOENT: it holds no inode of that number any more.
    const int err = fuse_lowlevel_notify_retrieve(se, n.ino, n.len, static_cast<off_t>(n.off),
                                                  reinterpret_cast<void*>(n.cookie));
    if (err != 0) {
      MutexLock lock(&mu_);
      pending_.erase(n.cookie);
    }
    return;
  }
  // The kernel drops the range (unmapping it where it is mapped) and returns once it has;
  // ENOENT: it holds no inode of that number any more, so nothing of it is cached.
  const int err = fuse_lowlevel_notify_inval_inode(se, n.ino, static_cast<off_t>(n.off),
                                                   static_cast<off_t>(n.len));
  if (err != 0 && err != -ENOENT && err != -ENOTCONN && !warned_) {
    warned_ = true;
    LogWarning(fmt::format("cannot drop the kernel's pages of inode {} ({}); the kernel's share "
                           "of memory may exceed its budget (logged once)",
                           n.ino, strerror(-err)));
  }
}

}  // namespace ccfs
