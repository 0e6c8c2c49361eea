// Open handles: what a fi->fh names from OPEN until RELEASE, and the registries that own them.
//
// Each fi->fh the layer gives the kernel (a FileHandle, a DirHandle, a .ccfs file's state) is the
// address of a handle owned by a registry of its kind (OpenHandles). The registries are what frees
// the handles the kernel never gives back: a daemon stopped by SIGTERM, or whose connection ends,
// while files are still open gets no RELEASE for them, and destroying the registry closes them then.
//
// Ownership: a registry owns its handles; a FileHandle borrows its Inode (the kernel holds a lookup
// reference on an inode while it has it open, so the Inode outlives the handle), and owns its
// descriptors.
//
// Thread-safety: Add, Remove and size take the registry's mutex (taken with no other lock held)
// and may run on any request threads at once. A handle itself is used without that lock: the
// kernel sends no request on an fh once its RELEASE is under way, and a registry is destroyed only
// after the request loop has stopped.
#ifndef CCFS_FUSE_OPEN_HANDLES_H_
#define CCFS_FUSE_OPEN_HANDLES_H_

#include <dirent.h>
#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ccfs/backing_store.h"
#include "ccfs/page_cache.h"
#include "util/mutex.h"

namespace ccfs {

struct Inode;

// An open data file.
struct FileHandle {
  Inode* inode = nullptr;
  // Opened with the caller's flags, and owned by `backing`, which closes it when it goes: valid
  // for as long as this handle is. One descriptor, not a dup of it for the backing file: each
  // close(2) of a descriptor of a FUSE store's file is a FLUSH round trip to its server, and a dup
  // would add one to every file's release. -1 (and no `backing`): a read-only open in kernel mode
  // of a file the tiers held whole, with no read handle kept of it (`kept`): it reads through the
  // one kept at each read (data_ops.cc OpenKept).
  int fd = -1;
  // Reads and writes the file through fd (and an O_DIRECT descriptor for page reads, which fd
  // may be itself). Shared with the engine's read-ahead, which may hold it a little past RELEASE
  // (until the window it is reading is in).
  std::shared_ptr<BackingFile> backing;
  bool append = false;  // O_APPEND: pwrite lands at the end, not at `off`
  // Read-only, in kernel mode: `backing` is shared with the read handle the daemon keeps of the
  // file past RELEASE (read_handles.h), which the next read-only OPEN of it may use again; or
  // there was none (fd -1), and the first read that must reach the store opens one.
  bool kept = false;
  PageCache::Stream stream;  // where this open file's reader stands, for read-ahead
  // passthrough (fuse/passthrough.h): the open is counted in its file's mode (`mode_counted`),
  // passed through to the registered file `backing_id` (> 0) or served by the daemon (0).
  bool mode_counted = false;
  int32_t backing_id = 0;
};

// An open real directory, and where the kernel's readdir stands in it.
struct DirHandle {
  ~DirHandle() {
    if (dp != nullptr) closedir(dp);
  }
  DIR* dp = nullptr;
  off_t offset = 0;
  struct dirent* entry = nullptr;  // read but not yet returned (the reply was full)
  // The last entry a READDIRPLUS reply listed (ino 0: none since the listing began or sought):
  // the next one listed follows it (InodeTable::NoteListed).
  std::pair<dev_t, ino_t> last_listed{0, 0};  // an InodeKey (inode_table.h)
  // The first entry a READDIRPLUS listing from its start listed (ino 0: none yet, or the listing
  // did not start at the start), until the listing's end takes it (ops::WalkInto).
  std::pair<dev_t, ino_t> first_listed{0, 0};
  // The stream's end was reached at `offset`. The kernel asks once more there (a listing ends
  // with a reply of no entries): that answer needs no trip to the store.
  bool at_end = false;
  // A READDIRPLUS listing read from its start: the entries listed so far, by name, to record their
  // order by name at the listing's end (InodeTable::NoteNameOrder). Given up (by_name false) at a
  // seek elsewhere or beyond kMaxByName entries.
  static constexpr size_t kMaxByName = 1 << 17;
  bool by_name = true;
  std::vector<std::pair<std::string, std::pair<dev_t, ino_t>>> listed;
};

// The handles of one kind that the kernel holds open, each named by its fi->fh (its address): Add
// at OPEN, Remove at RELEASE; whatever is left when the registry is destroyed is freed with it.
template <typename Handle>
class OpenHandles {
 public:
  OpenHandles() = default;
  OpenHandles(const OpenHandles&) = delete;
  OpenHandles& operator=(const OpenHandles&) = delete;

  // Takes `h`; returns the fi->fh that names it.
  uint64_t Add(std::unique_ptr<Handle> h) {
    Handle* raw = h.get();
    MutexLock lock(&mu_);
    handles_.emplace(raw, std::move(h));
    return reinterpret_cast<uint64_t>(raw);
  }

  // Closes and frees the handle `fh` names; 0 (no handle) is ignored.
  void Remove(uint64_t fh) {
    typename Map::node_type node;
    {
      MutexLock lock(&mu_);
      node = handles_.extract(reinterpret_cast<Handle*>(fh));
    }
    // The handle goes with `node`, outside the lock: closing a descriptor may take a while.
  }

  size_t size() {
    MutexLock lock(&mu_);
    return handles_.size();
  }

  // The handle `fh` names. REQUIRES: fh came from Add and was not removed.
  static Handle* Of(uint64_t fh) { return reinterpret_cast<Handle*>(fh); }

 private:
  using Map = std::unordered_map<Handle*, std::unique_ptr<Handle>>;
  Mutex mu_;
  Map handles_ GUARDED_BY(mu_);
};

}  // namespace ccfs

#endif  // CCFS_FUSE_OPEN_HANDLES_H_
