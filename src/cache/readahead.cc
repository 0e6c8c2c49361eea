#include "cache/readahead.h"

#include <pthread.h>

#include <algorithm>

#include "ccfs/page_cache.h"

namespace ccfs {

uint64_t PageCache::Stream::Next(uint64_t offset, uint64_t n, bool at_end, uint64_t max_window,
                                 uint64_t* ahead_offset) {
  std::lock_guard<std::mutex> lock(mu_);
  const uint64_t end = offset + n;
  bool follows;
  if (window_ == 0) {
    follows = (offset == end_ && end_ != 0) || (offset == 0 && n >= cache::kStartBytes);
  } else {
    // Within a window of where the stream is, behind it or ahead (requests out of order).
    follows = offset + window_ >= end_ && offset <= std::max(issued_, end_);
  }
  if (max_window == 0 || at_end || !follows) {
    window_ = 0;
    issued_ = 0;
    end_ = at_end ? 0 : end;
    return 0;
  }
  end_ = std::max(end_, end);
  if (window_ == 0) {
    window_ = std::min(max_window, std::max(4 * n, cache::kMinWindow));
    issued_ = end_;
  } else if (issued_ > end_ && issued_ - end_ >= window_ / 2) {
    return 0;  // enough read ahead already
  } else {
    window_ = std::min(max_window, 2 * window_);
  }
  const uint64_t from = std::max(issued_, end_);
  const uint64_t to = end_ + window_;
  if (to <= from) return 0;
  issued_ = to;
  *ahead_offset = from;
  return to - from;
}

void PageCache::Stream::Dropped(uint64_t offset) {
  std::lock_guard<std::mutex> lock(mu_);
  if (window_ != 0 && offset < issued_) issued_ = std::max(offset, end_);
}

namespace cache {

ReadaheadQueue::ReadaheadQueue(std::function<void(const Task&)> read) : read_(std::move(read)) {}

ReadaheadQueue::~ReadaheadQueue() { Stop(); }

bool ReadaheadQueue::Push(Task task) {
  {
    MutexLock lock(&mu_);
    if (stop_ || queued_.size() >= kMaxQueued) return false;
    queued_.push_back(std::move(task));
    // The threads start with the first task: a mount whose readers never stream (kernel mode,
    // readahead = 0, random readers) runs none.
    if (threads_.empty()) {
      threads_.reserve(kThreads);
      for (int i = 0; i < kThreads; ++i) threads_.emplace_back([this] { Loop(); });
    }
  }
  work_cv_.Signal();
  return true;
}

void ReadaheadQueue::Quiesce() {
  MutexLock lock(&mu_);
  while (!queued_.empty() || running_ > 0) idle_cv_.Wait(&mu_);
}

void ReadaheadQueue::Stop() {
  std::deque<Task> dropped;  // their files are let go outside the lock
  std::vector<std::thread> threads;
  {
    MutexLock lock(&mu_);
    stop_ = true;
    dropped.swap(queued_);
    threads.swap(threads_);
  }
  work_cv_.SignalAll();
  for (std::thread& t : threads) t.join();
  idle_cv_.SignalAll();
}

void ReadaheadQueue::Loop() {
  pthread_setname_np(pthread_self(), "ccfs-readahead");
  MutexLock lock(&mu_);
  for (;;) {
    while (!stop_ && queued_.empty()) work_cv_.Wait(&mu_);
    if (stop_) break;
    Task task = std::move(queued_.front());
    queued_.pop_front();
    ++running_;
    lock.Unlock();
    read_(task);
    task.file.reset();
    lock.Lock();
    --running_;
    if (running_ == 0 && queued_.empty()) idle_cv_.SignalAll();
  }
}

}  // namespace cache
}  // namespace ccfs
