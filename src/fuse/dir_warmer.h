// DirWarmer: a walk of the tree (find, du, ls -R, tar, rsync) finds the store's metadata already
// read when it comes to the next directories.
//
// Each READDIRPLUS entry costs the daemon a statx of the name on the store, and a walk lists one
// directory after another: the reader, the kernel's FUSE work for each entry and the daemon's
// statx take turns, one name at a time, where a walk of the store itself costs just the statx.
// On a cold local disk the statx (the store's lookup of the name, its inode read) is most of the
// daemon's time. So once a walk is seen, the directories it comes to next are listed and stated
// on a thread of their own, ahead of it: the store's own caches (its dentries and inodes) then
// answer the daemon's statx when the walk gets there, and the store's work runs beside the
// reader's and the kernel's instead of between them.
//
// A walk is on when a listing read from the store ends (ListingEnded) of a directory that the
// end of an earlier listing expected: one of the first kAhead subdirectories of a directory just
// listed (a walk going down) or of the directories listed after one just listed in its parent
// (a walk going across). Every listing's end expects its own; a listing that was expected warms
// them, each directory once among the last kMemory queued, at most kMaxQueued waiting. A lone
// `ls` of a directory, or of one of its subdirectories, warms nothing; an `ls` of two in a row
// warms at most 2 * kAhead. Each warm-up reads at most kMaxNames names of its directory. Nothing
// it reads is kept by ccfs: the daemon's own lookups still read every name, so what they answer
// is as fresh as without it.
//
// Only on a store that keeps what a lookup found (a local file system): a network store's client
// keeps it no longer than its own attribute and entry timeouts, often none, and a warm-up would
// then double the lookups its server answers. readahead = 0 turns it off, as every read-ahead.
//
// Thread-safety: every method may run on any thread; one leaf mutex. The thread borrows from the
// InodeTable, which must outlive the warmer (FsContext declares it after `inodes`).
#ifndef CCFS_FUSE_DIR_WARMER_H_
#define CCFS_FUSE_DIR_WARMER_H_

#include <cstddef>
#include <deque>
#include <string>
#include <thread>
#include <unordered_set>

#include "fuse/inode_table.h"
#include "util/mutex.h"

namespace ccfs {

class DirWarmer {
 public:
  static constexpr size_t kAhead = 4;
  static constexpr size_t kMemory = 256;
  static constexpr size_t kMaxNames = 4096;
  // Entries of a listing looked at for its subdirectories or the directories after one.
  static constexpr size_t kMaxLooked = 256;
  // Directories waiting for the thread: beyond this the oldest go first, as a walk faster than
  // the warm-up has passed them.
  static constexpr size_t kMaxQueued = 4 * kAhead;

  // Warms nothing unless `dataset` is on a store that keeps what a lookup found (above).
  DirWarmer(InodeTable* inodes, const std::string& dataset);
  // Stops the thread; a warm-up under way finishes its current statx first.
  ~DirWarmer();
  DirWarmer(const DirWarmer&) = delete;
  DirWarmer& operator=(const DirWarmer&) = delete;

  // A listing of `dir` read from the store from its start has ended; `first` is the entry it
  // listed first (ino 0: none). `on` is false while read-ahead is off.
  void ListingEnded(Inode* dir, InodeKey first, bool on) EXCLUDES(mu_);

  bool enabled() const { return enabled_; }
  // Directories listed and stated since the start.
  size_t warmed() EXCLUDES(mu_);

 private:
  void Loop() EXCLUDES(mu_);
  void Warm(InodeKey key);
  // Remembers `key` in `set`/`order` (at most kMemory): false if it was there already.
  static bool Remember(std::unordered_set<InodeKey, InodeKeyHash>* set,
                       std::deque<InodeKey>* order, InodeKey key);

  InodeTable* const inodes_;
  const bool enabled_;
  Mutex mu_;
  CondVar wake_;
  bool stop_ GUARDED_BY(mu_) = false;
  std::deque<InodeKey> queue_ GUARDED_BY(mu_);
  std::unordered_set<InodeKey, InodeKeyHash> expected_ GUARDED_BY(mu_);
  std::deque<InodeKey> expected_order_ GUARDED_BY(mu_);
  std::unordered_set<InodeKey, InodeKeyHash> queued_ GUARDED_BY(mu_);
  std::deque<InodeKey> queued_order_ GUARDED_BY(mu_);
  size_t warmed_ GUARDED_BY(mu_) = 0;
  std::thread thread_;
};

}  // namespace ccfs

#endif  // CCFS_FUSE_DIR_WARMER_H_
