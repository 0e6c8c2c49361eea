// OpenFileWatch: in raw_tier = kernel mode, checks the files open through the mount for a change
// made underneath once per period (attr_timeout), so that the kernel's cached pages of a file kept
// open and read again and again are dropped within the staleness bound (docs/STORES.md).
//
// Why a thread of the daemon. The kernel answers reads of pages it holds without asking, and only
// its `auto_inval_data` mode refreshes a file's attributes on such reads (and drops the file's
// pages on a new mtime). But that mode also drops every page of a file after the daemon's own
// WRITE: the kernel does not update its cached mtime when it sends a write, so the next refresh
// finds "a new mtime" (results/kernel-own-writes). ccfs turns it off and finds changes itself:
//   - at OPEN, through the new descriptor (data_ops.cc: the open then goes without keep_cache, and
//     the kernel drops the file's pages before the open returns);
//   - when attributes are answered (GETATTR, LOOKUP: entry_ops.cc CheckAttributes), and before a
//     READ that reaches the daemon (ChangeDetector::CheckBeforeRead);
//   - here, for every file open now, once per period: a statx of size, mtime and ctime through
//     the descriptor the InodeTable keeps of an open file. A file that is not open is read by the
//     kernel only after an OPEN (an mmap holds its file open), which checks it.
// Own changes (writes, truncations through the mount) record their signature under the Inode's
// sig_mu (ChangeDetector::OwnChange), so they are never taken for a change underneath.
//
// Cost: one statx per open file per period (a store's client answers from its attribute cache,
// at most its own timeout old). A pass that takes longer than the period delays the next one; the
// time spent is reported (stats.json kernel_watch_ns over kernel_watch_passes: the mean pass,
// beside kernel_watch_checks and kernel_watch_changes).
//
// Thread-safety: Start and Stop from one thread; Counts from any. Ownership: borrows the table
// and the detector, which must outlive Stop.
#ifndef CCFS_FUSE_OPEN_FILE_WATCH_H_
#define CCFS_FUSE_OPEN_FILE_WATCH_H_

#include <chrono>
#include <cstdint>
#include <thread>

#include "fuse/change_detector.h"
#include "fuse/inode_table.h"
#include "util/mutex.h"

namespace ccfs {

class OpenFileWatch {
 public:
  struct Counts {
    uint64_t passes = 0;         // passes over the open files
    uint64_t checks = 0;         // files checked, in all passes
    uint64_t changes = 0;        // files found changed underneath
    uint64_t ns = 0;             // time spent in passes
  };

  // `period`: the mount's attr_timeout, at least kMinPeriod.
  OpenFileWatch(InodeTable* inodes, ChangeDetector* changes, std::chrono::microseconds period);
  ~OpenFileWatch();
  OpenFileWatch(const OpenFileWatch&) = delete;
  OpenFileWatch& operator=(const OpenFileWatch&) = delete;

  void Start();
  // Returns once the thread has ended (a pass under way finishes its current statx first).
  void Stop();

  Counts counts() const;
  std::chrono::microseconds period() const { return period_; }

  static constexpr std::chrono::microseconds kMinPeriod{100000};

 private:
  void Loop();
  // One pass over the files open now; adds to counts_.
  void Pass();

  InodeTable* const inodes_;
  ChangeDetector* const changes_;
  const std::chrono::microseconds period_;
  mutable Mutex mu_;
  CondVar wake_;
  bool stop_ GUARDED_BY(mu_) = false;
  Counts counts_ GUARDED_BY(mu_);
  std::thread thread_;
};

}  // namespace ccfs

#endif  // CCFS_FUSE_OPEN_FILE_WATCH_H_
