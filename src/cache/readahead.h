// Read-ahead's two parts below the engine's API (include/ccfs/page_cache.h, ReadAhead): the
// window a reader's Stream keeps ahead of it (PageCache::Stream::Next, defined in readahead.cc),
// and the threads that read those windows.
//
// The window, like the kernel's on-demand read-ahead:
//   1. A stream starts at a read that follows the previous one (offset == where it ended), or at a
//      read of at least kStartBytes at offset 0 (a program reading a file from its start).
//   2. Its first window is four reads (at least kMinWindow), read ahead of where the stream is.
//   3. Each time the stream has less than half its window read ahead of it, the window doubles
//      (up to the largest: Options::readahead, and at most 1/kRawShareOfWindow of the raw tier)
//      and the bytes up to a full window ahead are queued.
//   4. Reads that arrive out of order (several request threads serve one open file) do not end a
//      stream: a read within a window of where the stream is continues it.
//   5. A read elsewhere, or one that reaches the end of the file, ends it.
// Beside the window, in both raw tiers: a small file (at most kWholeFileBytes, and within the
// window) read from its start is loaded whole by its first miss, in the same backing read
// (PageCache::Read's load_to), since its reader's next requests would each be a read of the store.
//
// ReadaheadQueue: a few threads (kThreads, started with the first task) take queued pieces of
// windows (kTaskBytes each) and read them (PageCache's Prefetch): a store that answers one read
// slowly but many at once (a network file system) streams a window with several reads in flight.
// The queue is bounded (kMaxQueued): read-ahead is a hint, and a request that finds the queue full
// is dropped rather than kept waiting behind others that may be stale by then; its stream starts
// its next window where the dropped piece began (Stream::Dropped).
//
// Thread-safety: every method may be called from any thread.
#ifndef CCFS_CACHE_READAHEAD_H_
#define CCFS_CACHE_READAHEAD_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "ccfs/backing_store.h"
#include "util/mutex.h"

namespace ccfs::cache {

// A stream's first window is never smaller than this.
inline constexpr uint64_t kMinWindow = 128 << 10;
// The largest window is at most this fraction of the raw tier (but never below kMinWindow): pages
// read ahead wait in the raw tier for their readers, and when the readers' windows together
// outgrow it they are evicted before they are read, read again as misses, and each such read
// pushes out another page read ahead.
inline constexpr uint64_t kRawShareOfWindow = 8;
// A first read at offset 0 starts a stream only if it is at least this long: a program reading a
// small file whole (one short read) must not cost a read past its end.
inline constexpr uint64_t kStartBytes = 32 << 10;
// The largest file a read from its start loads whole at its first miss (PageCache::WholeFileBytes):
// the kernel's default read-ahead window, which a sequential reader's read-ahead reaches by its
// second or third request. A larger file is left to read-ahead proper, so that a reader of only
// a file's first block (head, file(1), a random reader at offset 0) loads at most this much.
inline constexpr uint64_t kWholeFileBytes = 128 << 10;

class ReadaheadQueue {
 public:
  struct Task {
    uint64_t file_id;
    std::shared_ptr<BackingFile> file;
    uint64_t offset;  // page-aligned
    uint64_t len;     // a whole number of pages
    // When `file` is null: opens the file on the queue's thread (PageCache::PrefetchFile) and
    // sets *len, its size as read from the store just before (`offset` is 0); null when there
    // is nothing to read.
    std::function<std::shared_ptr<BackingFile>(uint64_t* len)> open;
  };
  static constexpr int kThreads = 8;
  static constexpr size_t kMaxQueued = 64;
  static constexpr uint64_t kTaskBytes = 256 << 10;

  // `read` runs each task on one of the queue's threads.
  explicit ReadaheadQueue(std::function<void(const Task&)> read);
  ~ReadaheadQueue();  // Stop()
  ReadaheadQueue(const ReadaheadQueue&) = delete;
  ReadaheadQueue& operator=(const ReadaheadQueue&) = delete;

  // Queues `task`; false (dropped) when kMaxQueued tasks are waiting or the queue has stopped.
  bool Push(Task task) EXCLUDES(mu_);
  // Waits until no task is queued or running.
  void Quiesce() EXCLUDES(mu_);
  // Drops the tasks still queued and joins the threads once they finish the ones running.
  void Stop() EXCLUDES(mu_);

 private:
  void Loop() EXCLUDES(mu_);

  const std::function<void(const Task&)> read_;
  Mutex mu_;
  CondVar work_cv_;  // a task was queued, or stop_
  CondVar idle_cv_;  // running_ fell to zero with nothing queued
  std::deque<Task> queued_ GUARDED_BY(mu_);
  int running_ GUARDED_BY(mu_) = 0;
  bool stop_ GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_ GUARDED_BY(mu_);  // none until the first task
};

}  // namespace ccfs::cache

#endif  // CCFS_CACHE_READAHEAD_H_
