// ListingWalk: read-ahead across the files of a directory read in its listing order.
//
// tar, grep -r, cp -r, find -exec cat: programs that read a tree's small files one after another,
// each whole, in the order their directory lists them. A small file is loaded whole at its first
// miss (PageCache::Read's load_to), but no sooner: such a walk waits for the store once per file,
// one file after another, and the kernel's read-ahead stops at each file's end. Over a network
// store the walk goes at the store's latency, not at its streaming speed.
//
// The daemon sees both halves: the listings (READDIRPLUS: InodeTable::NoteListed records, for each
// entry, the one listed after it, and at the listing's end NoteNameOrder the one after it by name:
// the two ListingOrders) and the first reads of small files (a read at offset 0 of a file no
// larger than PageCache::WholeFileBytes). When a small file's first read comes right after, in
// either order of its directory's last listing, a file whose first read was one of the last
// kRecent and came right after the one before it in turn (two steps in a row: in a tree read at
// random, a file often follows one of the last few read, rarely two in a row), a walk in that
// order is on: the regular files after it in that order are prefetched
// whole (PageCache::PrefetchFile, on the engine's read-ahead threads), at most kMaxFiles of them,
// each no larger than WholeFileBytes and together at most one reader's read-ahead window
// (PageCache::ReadAheadWindow). Each file is queued once (the last kQueuedMemory are
// remembered), so a walk in progress queues about one file per file it reads. The pages enter as
// read-ahead (on probation; counted as readahead_pages, then as readahead_hits or
// readahead_wasted). A small file read in neither order prefetches nothing, nor does any read of a
// larger file (its own read-ahead window covers it).
//
// Across directories: a walk's "next file" is the next regular file in the order find, tar and
// grep -r go (InodeTable::NextFilesOf): into the listing of a subdirectory when it is known, and
// from the end of a listing on after its directory in the listing above it. A program that lists
// a tree first and reads its files after, in that order (`find | xargs cat`, a data loader
// reading the list it made), goes on walking from one directory into the next, and its prefetch
// (InodeTable::ListedFrom) goes across them too.
//
// Into the next directory: tar, grep -r and cp -r list a subdirectory when they come to it, in
// the middle of their walk, and then read its files in its listing's order. So when a listing
// ends while a walk is on (the last small file read from its start continued one) and the
// directory listed comes in turn (InodeTable::InTurn: the next directory after the walk's last
// file in its directory's listing, or after that directory or one of its parents in theirs), the
// walk goes on into that listing in the same order: its first regular files are prefetched as
// above, and the first of them, when read, continues the walk. A listing with no regular file
// moves the walk's place to its start, so its own subdirectories come in turn next. A walk goes
// into one listing with regular files, then into another only once one of its files is read in
// turn: `ls -R` or `find` after a walk, reading no file, takes it into at most one directory. A
// listing out of turn takes no walk: `find DIR | xargs cat` lists directories far ahead of the
// files `cat` reads, and a walk taken into each would read files whose pages leave the cache
// unread before `cat` comes to them.
//
// Shutdown: the prefetches run on the engine's threads, which outlive the FsContext they use.
// Each runs inside its Gate; Close (at the FsContext's end) waits for those inside and turns the
// later ones away.
//
// Thread-safety: every method may run on any thread; one leaf mutex each.
#ifndef CCFS_FUSE_LISTING_WALK_H_
#define CCFS_FUSE_LISTING_WALK_H_

#include <array>
#include <cstddef>
#include <memory>

#include "fuse/inode_table.h"
#include "util/mutex.h"

namespace ccfs {

class ListingWalk {
 public:
  static constexpr size_t kRecent = 8;
  static constexpr size_t kMaxFiles = 16;
  static constexpr size_t kQueuedMemory = 64;

  class Gate {
   public:
    // False once closed; else the caller is inside until Leave.
    bool Enter() EXCLUDES(mu_);
    void Leave() EXCLUDES(mu_);
    // From now on Enter fails; waits for those inside to leave.
    void Close() EXCLUDES(mu_);

   private:
    Mutex mu_;
    CondVar left_;
    int inside_ GUARDED_BY(mu_) = 0;
    bool closed_ GUARDED_BY(mu_) = false;
  };

  ListingWalk() : gate_(std::make_shared<Gate>()) {}
  ~ListingWalk() { gate_->Close(); }
  ListingWalk(const ListingWalk&) = delete;
  ListingWalk& operator=(const ListingWalk&) = delete;

  // Where a walk is: in directory `dir`, after its entry `entry` ({0, 0}: at the start of dir's
  // listing).
  struct Place {
    InodeKey dir{};
    InodeKey entry{};
  };
  // The small file `key`, listed in directory `parent`, was read from its start, and `next` are
  // the regular files after it in each ListingOrder (InodeTable::NextFilesOf; ino 0: none known).
  // True, with *order, when this continues a walk: `key` came right after, in *order, a file among
  // the last kRecent so read, which itself came right after one read before it. The walk is then
  // at {parent, key}.
  bool Started(InodeKey key, InodeKey parent, const std::array<InodeKey, kListingOrders>& next,
               ListingOrder* order) EXCLUDES(mu_);
  // The walk on is at `place` (a listing with no regular file: its start).
  void At(const Place& place) EXCLUDES(mu_);
  // A listing ended: true, with *order and *place, if a walk is on (the last call to Started
  // returned true and no listing took that walk since).
  bool Walking(ListingOrder* order, Place* place) EXCLUDES(mu_);
  // The walk goes on into a listing whose first regular file in `order` is `first`: a read of
  // `first` from its start continues it. The walk is taken (Walking is false until Started next
  // returns true).
  void Into(InodeKey first, ListingOrder order) EXCLUDES(mu_);
  // True if `key` was not among the last kQueuedMemory files queued; it is one of them now.
  bool FirstQueue(InodeKey key) EXCLUDES(mu_);
  // `key`'s queueing failed (the read-ahead queue was full): a later read of the walk may queue
  // it again.
  void Unqueue(InodeKey key) EXCLUDES(mu_);
  // What each prefetch passes through (see Shutdown above).
  std::shared_ptr<Gate> gate() const { return gate_; }

 private:
  const std::shared_ptr<Gate> gate_;
  Mutex mu_;
  struct Expected {
    InodeKey key;
    ListingOrder order = kListedOrder;
    int steps = 0;  // the files in a row, each right after the one before, that end with `key`'s
  };
  // The entries after the recent reads, in each order.
  std::array<Expected, kRecent * kListingOrders> expected_ GUARDED_BY(mu_){};
  size_t expected_at_ GUARDED_BY(mu_) = 0;
  void ExpectLocked(const Expected& e) REQUIRES(mu_);
  // The walk the last Started found, until a listing takes it.
  bool walking_ GUARDED_BY(mu_) = false;
  ListingOrder walking_order_ GUARDED_BY(mu_) = kListedOrder;
  Place place_ GUARDED_BY(mu_);
  std::array<InodeKey, kQueuedMemory> queued_ GUARDED_BY(mu_){};
  size_t queued_at_ GUARDED_BY(mu_) = 0;
};

}  // namespace ccfs

#endif  // CCFS_FUSE_LISTING_WALK_H_
