// Persister: keeps a mount's cached pages across a restart (persist = DIR).
//
// 1. Writing. At unmount, at SIGTERM and every persist_interval (live) the daemon writes what its
//    tiers hold to one cache file in DIR per DATASET (cache/cache_file.h: write new, fsync,
//    rename, fsync DIR). Raw pages come first (the hotter ones), compressed with the codec in
//    force on the way out, then the compressed tier's pages as they are. Each page is filed under
//    its file's id, the signature ccfs had recorded for the file and a path to it (InodeTable).
//    A page whose file has no recorded signature or no known path is not written. The signature is
//    read before the pages are copied: a page copied later is never older than it (a change
//    recorded meanwhile dropped the older pages first), and a page newer than its signature is
//    dropped at reload, where the file's signature no longer matches. An error (a full disk)
//    leaves the previous file, is said in one log line and counted in persist_errors; the mount
//    goes on.
// 2. Reloading. At mount a thread reads the file once, restoring its pages into the compressed
//    tier while reads are served, until the file ends or the tier is full. Each record checks
//    before it is used; a damaged, truncated, foreign or other-version file met before the
//    reload stops is ignored with one log line (a cold start): the pages restored before the
//    damage are dropped again. A reload stopped by a full tier keeps what it restored: each of
//    those records checked. persist_pages_restored counts a reload's pages once it stopped. A file
//    is restored only if its path names a regular file with the same signature (size, mtime,
//    ctime), else its pages are dropped (persist_pages_dropped_stale); they are restored under
//    the id the file has now. Not under the recorded id: stores that number inodes per mount or
//    per lookup (sshfs numbers them anew once the kernel forgets a node) give an unchanged file
//    another id after a restart. A file put in its place differs in its ctime (set by creation
//    and by rename), except on stores without one (sftp: ctime is the mtime), where the change
//    detector is no better while mounted. A file `pin` names is pinned before its pages are
//    restored, so they come back pinned.
// 3. Never stale. A page restored for file X must never be served if X changed since its
//    signature S was recorded. Before a page of X is published: the engine's change epoch E is
//    read; the path is stat()ed (S must match); S becomes X's recorded signature if none is
//    recorded (InodeTable::AdoptSignature), and the one recorded must be S. Then the page is
//    published with E (PageCache::Restore), which refuses it if any write or invalidation
//    happened since E and drops it if one happens during its insert. So when it is published X's
//    recorded signature is S and no change was recorded since the check: the check before each
//    read (fuse/change_detector.h) compares the file with S and drops X's pages on a difference,
//    as it does for pages loaded by misses.
// 4. Cost. Nothing on the read path. The writer copies pages as readers do (page_cache.h section
//    7) and compresses on its own thread; reload and periodic writes run at the lowest CPU
//    priority.
//
// Thread-safety: Start, Finish and the destructor are called by one thread (the daemon's main
// thread); WriteNow may be called from any thread, one write at a time (a mutex serializes them).
// Borrows the PageCache, the InodeTable and the Pins, which must outlive it.
#ifndef CCFS_FUSE_PERSISTER_H_
#define CCFS_FUSE_PERSISTER_H_

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>

#include "ccfs/page_cache.h"
#include "ccfs/status.h"
#include "fuse/inode_table.h"
#include "fuse/pins.h"
#include "util/mutex.h"

namespace ccfs {

class Persister {
 public:
  struct Config {
    std::string dir;      // absolute path of an existing directory
    std::string dataset;  // absolute path: names the cache file and is its dataset id
  };
  Persister(const Config& config, PageCache* cache, InodeTable* inodes, Pins* pins);
  // Stops the threads without writing (Finish writes).
  ~Persister();
  Persister(const Persister&) = delete;
  Persister& operator=(const Persister&) = delete;

  // The cache file's path in DIR.
  const std::string& path() const { return path_; }

  // Starts the reload of the cache file (if there is one) and the periodic writes, each on a
  // thread of its own.
  void Start();
  // At unmount or SIGTERM, once no request is served any more: stops the reload where it is and
  // abandons a periodic write in progress (its temporary file removed), then writes the cache
  // file once more, unless the reload had not finished (the file then keeps what it held). A
  // no-op if Start was not called (a mount that failed).
  void Finish();

  // What one write did.
  struct Written {
    uint64_t files = 0;
    uint64_t pages = 0;
    uint64_t bytes = 0;  // the file's size
    double seconds = 0;
  };
  // Writes the cache file now (section 1); logs one line either way. `abandon` (may be null):
  // the write stops with Busy, its temporary file removed, once it reads true.
  Status WriteNow(Written* written, const std::atomic<bool>* abandon = nullptr);

  // What one reload did.
  struct Reloaded {
    bool used = false;  // the file existed and checked whole (a damaged one: false, all 0)
    uint64_t files = 0, pages = 0, dropped_stale = 0;
    uint64_t bytes = 0;  // compressed bytes restored
    bool full = false;   // stopped at a full compressed tier
    double seconds = 0;
    double cpu_seconds = 0;      // the reloading thread's CPU time
  };
  // Reloads the cache file now (section 2) on the calling thread; logs one line.
  void ReloadNow(Reloaded* reloaded);

 private:
  void ReloadThread();
  void WriterThread();

  const Config config_;
  const std::string path_;
  const std::string name_;
  PageCache* const cache_;
  InodeTable* const inodes_;
  Pins* const pins_;

  Mutex write_mu_;  // one write at a time; a leaf
  Mutex mu_;        // with cv_: the writer thread's wait between writes; a leaf
  CondVar cv_;
  bool started_ = false;  // Start was called (the daemon's main thread only)
  std::atomic<bool> stopping_{false};
  std::atomic<bool> reload_done_{false};
  std::thread reload_thread_;
  std::thread writer_thread_;
};

}  // namespace ccfs

#endif  // CCFS_FUSE_PERSISTER_H_
