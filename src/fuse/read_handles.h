// Read handles: descriptors of the store's files that the daemon keeps past the files' opens.
//
// On a read-only mount in raw_tier = kernel mode the daemon answers the first OPEN of a data file
// with ENOSYS; the kernel then opens every data file without asking (no OPEN, no RELEASE: two
// FUSE trips less for each open and close) and names no handle in its requests (fi->fh == 0). A
// read that must reach the store still needs a descriptor of the file: ReadHandles keeps one
// handle per file read this way, opened by the first read that needs one. On a read-write mount
// in kernel mode a read-only OPEN keeps its descriptor here past RELEASE (or, for a file the tiers
// hold whole, opens nothing, and its first read that must reach the store opens the handle), and
// the next read-only OPEN of the file uses it again once the file is found unchanged: over a
// network store each open and close of the store's file is a round trip to its server. The kernel
// says nothing when
// a file opened without OPEN is closed, and a kept descriptor has no close to wait for, so the
// least recently used handle is closed once more than `capacity` are kept, and all of them when an
// open fails for want of descriptors (Shed).
//
// Identity: handles are found by Inode and checked by its serial (Inode::serial), which no other
// Inode ever has; an Inode freed and its memory reused for another file never finds the first
// file's handle. A handle goes when its Inode is freed (FORGET), when the file's last link is
// removed through the mount (so that its space comes back), and when the file is found changed.
//
// Ownership: the cache owns a reference to each handle it keeps; a reader holds its own (a
// std::shared_ptr) for as long as it uses the handle, so a handle closed by the bound stays open
// until its last reader is done. Thread-safety: every method may run on any thread at once; one
// leaf mutex guards the map and the order, and no descriptor is opened or closed under it.
#ifndef CCFS_FUSE_READ_HANDLES_H_
#define CCFS_FUSE_READ_HANDLES_H_

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <unordered_map>
#include <vector>

#include "fuse/open_handles.h"
#include "util/mutex.h"

namespace ccfs {

class ReadHandles {
 public:
  // At most `capacity` (>= 1) handles are kept.
  explicit ReadHandles(size_t capacity) : capacity_(capacity < 1 ? 1 : capacity) {}
  ReadHandles(const ReadHandles&) = delete;
  ReadHandles& operator=(const ReadHandles&) = delete;

  // The handle kept for `i`, or null.
  std::shared_ptr<FileHandle> Find(const Inode* i);
  // Keeps `h`, just opened for `i`, and returns the handle to use: `h`, or the one another reader
  // kept for `i` meanwhile (then `h` is let go). Handles pushed out by the bound are let go: closed
  // here, or moved to *let_go if given, for the caller to close once it has replied (a close of a
  // network store's file is a round trip its request need not wait for).
  std::shared_ptr<FileHandle> Keep(const Inode* i, std::shared_ptr<FileHandle> h,
                                   std::vector<std::shared_ptr<FileHandle>>* let_go = nullptr);
  // Lets go of the handle kept for `i` (if `only` is not null: only if it reads through that
  // backing file), so that the next read or open of `i` opens the file anew. Returns whether one
  // was let go.
  bool Forget(const Inode* i, const BackingFile* only = nullptr);
  // Lets go of every kept handle (their descriptors close once no reader holds them); returns how
  // many there were.
  size_t Shed();
  size_t size();

 private:
  struct Entry {
    uint64_t serial = 0;
    std::shared_ptr<FileHandle> handle;
    std::list<const Inode*>::iterator pos;  // in lru_
  };
  const size_t capacity_;
  Mutex mu_;
  std::unordered_map<const Inode*, Entry> map_ GUARDED_BY(mu_);
  std::list<const Inode*> lru_ GUARDED_BY(mu_);  // most recently used first
};

}  // namespace ccfs

#endif  // CCFS_FUSE_READ_HANDLES_H_
