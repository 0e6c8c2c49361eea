// ChangeDetector: notices that a backing file changed behind the mount's back, by its signature
// (size, mtime, ctime), and drops the file's cached pages before one of them can be served stale.
//
// The rule. Each Inode records the signature it last saw of its backing file (Inode::sig, under
// Inode::sig_mu). Before each read the read path stats the file and compares (CheckBeforeRead):
// any difference drops every cached page of the file first. Changes made through the mount (write,
// truncate, fallocate, new times) hold sig_mu across check, change and record (an OwnChange), and
// record the signature they leave behind, so the next check does not take them for a change made
// underneath, and they drop only the pages they touched.
//
// Why a stat on every read: it costs a small fraction of the FUSE round trip every read already
// pays (bench/fuse_rtt.cc), and it is the only scheme that never serves a stale page once the
// change is visible to stat(2) without trusting timers or inotify (which misses writes through
// other mounts of the same file system and can overflow). It is a statx of size, mtime and ctime
// alone, never of the atime: a FUSE store marks the atime stale after each read, and asking for it
// would send a GETATTR to the store's server before every read (change_detector.cc).
//
// File ids. The engine names a file by its backing inode number (InodeTable::FileIdOf), which can
// be reused after the file is deleted behind our back; the ctime in the signature tells the two
// files apart. The signature outlives the Inode: when the kernel forgets an Inode the InodeTable
// keeps its signature and hands it to the next Inode of that id. Pages are only ever cached for an
// id whose signature is recorded, so an id with no record has nothing cached.
//
// The kernel's pages. In raw_tier = kernel mode the kernel caches pages too, and answers reads
// without asking; the detector tells it to drop what the daemon drops for a change it did not make
// through the kernel (a change underneath, an append that landed elsewhere) through the `stale`
// callback, called with the inode's sig_mu held (the callee takes only its own leaf lock). A
// kernel that holds every page of a file sends no READ, so the file is checked as well at each
// OPEN, when the daemon answers its attributes (GETATTR, LOOKUP: CheckAttributes; the handler
// waits for the kernel to have dropped the pages before it replies, so the read that asked for the
// attributes is not answered from them), and once per attr_timeout while it is open
// (open_file_watch.h).
//
// Ownership: borrows the PageCache, which must outlive the detector; the signatures live in the
// Inodes. Thread-safety: every method may run on any number of threads at once; each takes the
// inode's sig_mu (lock order: InodeTable's mutex, then sig_mu; the detector never takes the table's
// mutex, and holds sig_mu only while it compares, records, or while an OwnChange lives).
#ifndef CCFS_FUSE_CHANGE_DETECTOR_H_
#define CCFS_FUSE_CHANGE_DETECTOR_H_

#include <sys/stat.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>

#include "ccfs/page_cache.h"
#include "fuse/inode_table.h"
#include "util/mutex.h"

namespace ccfs {

class ChangeDetector {
 public:
  // Called with an inode whose bytes from `offset` on (0: all) the kernel may hold stale.
  using StaleCallback = std::function<void(Inode* i, uint64_t offset)>;

  // `cache` is borrowed. `stale` may be empty (daemon mode: the kernel caches no file data).
  explicit ChangeDetector(PageCache* cache, StaleCallback stale = nullptr);
  ChangeDetector(const ChangeDetector&) = delete;
  ChangeDetector& operator=(const ChangeDetector&) = delete;

  // Before a read of `i` through `fd`: drops its cached pages if the file changed since the last
  // record. A failing statx changes nothing (the read itself will report the failure). Returns
  // the file's size, or UINT64_MAX if statx failed.
  uint64_t CheckBeforeRead(Inode* i, int fd);
  // As CheckBeforeRead, with `now` the signature a statx of the file read just before (the one
  // InodeTable::BorrowKnown made as it opened the file). Returns now.size.
  uint64_t CheckSignature(Inode* i, const FileSignature& now);

  // As CheckBeforeRead, through `fd` (an open or an O_PATH descriptor of the file), but with the
  // statx made under sig_mu, so that a write through the mount cannot land between the statx and
  // the compare and be taken for a change underneath (which would drop every page): for the checks
  // that run while other opens of the file may be writing (kernel mode's OPEN, the open-file
  // watch, open_file_watch.h); a reader's check must not queue behind a store's statx. Returns
  // true when the file had changed; *size (if given): its size, or UINT64_MAX if statx failed.
  bool CheckOpenFile(Inode* i, int fd, uint64_t* size = nullptr);

  // The attributes `st` of `i` were just read to answer the kernel (GETATTR, LOOKUP): drops the
  // cached pages, and tells the kernel to, if they show a change since the last record. Returns
  // true when they did. This is how a change the kernel's own check misses reaches the kernel's
  // pages in raw_tier = kernel mode: the kernel compares only size and mtime when it refreshes
  // attributes, so a change that keeps both (another client's same-size write followed by a touch
  // to the old mtime) is seen only by the ctime here, and no READ reaches the daemon to check.
  bool CheckAttributes(Inode* i, const struct stat& st);

  // Attribute records (Inode::attr). The kernel refreshes a file's attributes after every READ the
  // daemon answers (the atime it marks stale), and opens it with an OPEN; over a network store
  // whose client no longer holds the file (GlusterFS keeps 65,536 inodes) a statx for either is a
  // round trip to the server, for a file the tiers hold whole. The attributes read from the store
  // less than attr_timeout ago answer both instead (entry_ops.cc ReplyAttr, data_ops.cc OpenKept),
  // and in kernel mode stand for the check before a read through a kept read handle (data_ops.cc
  // CheckFile), when no change through the mount began since. The bound of docs/STORES.md holds:
  // the kernel is answered attributes at most attr_timeout old, with the time left of it, as if it
  // had kept the reply they were read for, and a change underneath is seen by the first statx after
  // it.
  //
  // A change through the mount (a MountChange around every handler that may change what a stat
  // shows) voids every record whose statx began before it ended: a record carries the count of
  // changes begun when its statx began, and none is kept whose statx began while one was in flight.
  class MountChange {
   public:
    explicit MountChange(ChangeDetector* detector);
    ~MountChange();
    MountChange(const MountChange&) = delete;
    MountChange& operator=(const MountChange&) = delete;

   private:
    ChangeDetector* const detector_;
  };
  // Taken just before a statx whose attributes may be recorded (NoteAttributes).
  struct AttrRead {
    int64_t start_ns = 0;
    uint64_t epoch = 0;
    bool quiet = false;  // no change through the mount was in flight
  };
  AttrRead BeforeAttributes() const;
  // Records `st`, read from the store by a statx that began at `read`, as i's attributes; not when
  // a change was in flight then, and for a regular file only if they are those of the signature
  // recorded (a check since has seen newer ones). Not for the root (the Inode has no key).
  void NoteAttributes(Inode* i, const struct stat& st, const AttrRead& read);
  // i's recorded attributes, if read less than `max_age_ns` ago with no change through the mount
  // begun since: *st, and *left_s the seconds left of `max_age_ns`.
  bool RecentAttributes(Inode* i, int64_t max_age_ns, struct stat* st, double* left_s);
  // How many times RecentAttributes answered (stats.json attr_answers).
  uint64_t attr_answers() const { return attr_answers_.load(std::memory_order_relaxed); }

  // `fd` was just opened with O_TRUNC: every cached page is stale; records the new signature.
  void TruncatedByOpen(Inode* i, int fd);

  // New times were set on `i` (setattr): a new mtime is our own change, not one made underneath.
  // Records the signature through `fd` (the open file's), or through `path_fd` (the inode's,
  // InodeTable::Borrow) when fd < 0; the latter only refreshes a signature that is already known.
  void RecordNewTimes(Inode* i, int fd, int path_fd);

  // A change to a regular file's contents made through the mount. Construction takes i->sig_mu and
  // first drops the cached pages if the file changed underneath (as CheckBeforeRead); the lock is
  // held until destruction, so a reader's check never sees a half-recorded change.
  class OwnChange {
   public:
    OwnChange(ChangeDetector* detector, Inode* i, int fd);
    OwnChange(const OwnChange&) = delete;
    OwnChange& operator=(const OwnChange&) = delete;

    // The file's size before the change as last recorded (0 when no signature is recorded, in
    // which case nothing is cached for the file).
    uint64_t size_before() const;

    // Drops the cached pages from byte `offset` (rounded down to a page) to the end of the file.
    void DropFrom(uint64_t offset);

    // Records the signature the change left (fstat of `fd`). If fstat fails the signature becomes
    // unknown and every cached page is dropped, since the next check could not tell.
    void Record(int fd);

   private:
    // Tells the analysis what construction established: lock_ holds inode_->sig_mu.
    void LockHeld() const ASSERT_CAPABILITY(inode_->sig_mu) {}

    ChangeDetector* const detector_;
    Inode* const inode_;
    MutexLock lock_;  // inode_->sig_mu, for the object's lifetime
  };

 private:
  // Records `now`; drops the cached pages first if it differs from a known record. True if it did.
  bool UpdateLocked(Inode* i, const FileSignature& now) REQUIRES(i->sig_mu);
  void RecordLocked(Inode* i, int fd) REQUIRES(i->sig_mu);

  PageCache* const cache_;
  const StaleCallback stale_;
  const uint64_t page_size_;
  // MountChange: changes begun, and in flight. Begun counts after in flight rises, and a record's
  // statx reads it before it reads in flight: a change whose count the record carries was in
  // flight when the record's statx began, or had ended.
  std::atomic<uint64_t> changes_begun_{0};
  std::atomic<int64_t> changes_in_flight_{0};
  std::atomic<uint64_t> attr_answers_{0};
};

}  // namespace ccfs

#endif  // CCFS_FUSE_CHANGE_DETECTOR_H_
