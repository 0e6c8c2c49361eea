// InodeTable: the inodes the kernel may name, each pinned by a descriptor of its backing inode and
// counted by lookups.
//
// A fuse_ino_t is the address of an Inode (FUSE_ROOT_ID names the dataset's root) that holds an
// O_PATH descriptor of the backing inode, keyed by (st_dev, st_ino). Every LOOKUP that answers with
// an Inode counts one reference; the kernel's FORGET gives them back (Unref) and the Inode goes
// when none is left. Holding the descriptor pins the backing inode, so its number cannot be reused
// while the kernel may still name it, and every op works relative to it: nothing is looked up by
// path and the daemon never follows a symlink (lookups use O_NOFOLLOW; data files are reopened
// through /proc/self/fd only once they are known to be regular files).
//
// The table also keeps the signatures (change_detector.h) of the files whose Inodes the kernel
// forgot, and gives each back to the next Inode of the same file id.
//
// A store whose client died and was mounted again at the same path (sshfs killed and restarted, a
// GlusterFS client remounted) leaves every descriptor the table holds on the dead mount, answering
// ENOTCONN. RecoverRoot opens DATASET's path again for the root; the kernel then looks every name
// up afresh through it (once its entry timeout passes) and gets new Inodes, while Inodes of the
// dead mount keep failing until the kernel forgets them. File ids change with it (a generation is
// mixed in), so pages cached of the dead mount's files are never taken for the new mount's, which
// may give the same inode numbers to other files.
//
// A regular file whose last link is removed through the mount (unlink, or rename over it) gives
// its space back at once, not when the kernel's FORGET comes (some time after the removal
// returned): LastLinkGone swaps the Inode's descriptor for a stand-in, a removed directory of the
// table's own, unless a FileHandle has the file open; then the last HandleClosed does. A file
// that is open is pinned by its handles' descriptors anyway, and getattr and the change detector
// of an open file keep using Inode::fd, which stays the file's until the last close. The swap is
// made with dup3 onto the same number, so a handler that read Inode::fd just before (a removal
// racing a getattr, open or setattr of the same inode) acts on the stand-in, which refuses data
// ops (EISDIR) and changes nothing of anyone's, never on a file that reused the number. A LOOKUP
// that finds the file again under a name (linked meanwhile) and an OPEN that opened it first
// give the Inode the file's descriptor back.
//
// The virtual nodes of the .ccfs directory are Inodes too (kind != kReal); ControlDir owns them
// and the table never counts or frees them.
//
// Ownership: the table owns the root Inode and every Inode it inserted, and with them their
// descriptors. An Inode lives until its last reference is given back or the table is destroyed;
// destroy the table only once no handler can run (Filesystem's contract).
//
// Thread-safety: every method may run on any number of request threads at once. One mutex guards
// the map, the lookup counts and the saved signatures. Lock order: the table's mutex, then an
// Inode's sig_mu, never the reverse.
#ifndef CCFS_FUSE_INODE_TABLE_H_
#define CCFS_FUSE_INODE_TABLE_H_

#include <sys/stat.h>
#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ccfs/status.h"
#include "fuse/fuse_api.h"
#include "util/mutex.h"

namespace ccfs {

// What identifies one version of a file's contents.
struct FileSignature {
  uint64_t size = 0;
  int64_t mtime_ns = 0;
  int64_t ctime_ns = 0;
  bool operator==(const FileSignature&) const = default;
};

FileSignature SignatureOf(const struct stat& st);
FileSignature SignatureOf(const struct statx& stx);  // the same three fields of a statx

enum class NodeKind { kReal, kControlDir, kStatsFile, kControlFile };

struct Inode {
  Inode() = default;
  Inode(const Inode&) = delete;
  Inode& operator=(const Inode&) = delete;
  ~Inode();

  NodeKind kind = NodeKind::kReal;
  // O_PATH descriptor of the backing inode. Atomic for the root's alone, which RecoverRoot replaces
  // while handlers read it (the descriptor replaced stays open until the table goes).
  std::atomic<int> fd{-1};
  dev_t dev = 0;  // not set for the root: InodeTable keeps the root's (RootIno)
  ino_t ino = 0;
  mode_t type = 0;       // S_IFMT bits
  uint64_t file_id = 0;  // the engine's name for the file
  uint64_t nlookup = 0;  // guarded by the InodeTable's mutex
  // Guarded by the InodeTable's mutex too: FileHandles open on the file; its last link gone; fd
  // swapped for the stand-in.
  int open_handles = 0;
  bool unlinked = false;
  bool released = false;

  // Last signature seen of the backing file (see ChangeDetector).
  Mutex sig_mu;  // after InodeTable::mu_ when both are held
  bool sig_known GUARDED_BY(sig_mu) = false;
  FileSignature sig GUARDED_BY(sig_mu);
};

class InodeTable {
 public:
  InodeTable() = default;
  ~InodeTable();
  InodeTable(const InodeTable&) = delete;
  InodeTable& operator=(const InodeTable&) = delete;

  // Opens the dataset directory as the root. Errors name the path.
  Status Open(const std::string& dataset);

  Inode* root() { return &root_; }
  // The backing inode number of the root in use.
  ino_t RootIno() const { return root_ino_.load(std::memory_order_acquire); }

  // After an op through the root failed with `err`: if the root's descriptor is dead (the store's
  // client went away) and DATASET's path now names a live directory (it came back), the root is
  // opened again there. Returns true when the root is usable now (then retry the op once).
  bool RecoverRoot(int err);

  // The Inode the kernel's number names, and back.
  Inode* Get(fuse_ino_t ino) { return ino == FUSE_ROOT_ID ? &root_ : reinterpret_cast<Inode*>(ino); }
  fuse_ino_t InoOf(Inode* i) const {
    return i == &root_ ? FUSE_ROOT_ID : reinterpret_cast<fuse_ino_t>(i);
  }

  // Looks `name` up in the real directory `parent` without following a symlink, fills *st, and
  // counts one kernel reference to the result, *found. ".." of the root is the root (never above
  // the dataset). Returns 0 or the errno.
  int Lookup(Inode* parent, const char* name, struct stat* st, Inode** found);

  // Gives back `n` kernel references to `i`; the last one frees it (its signature is kept) and
  // returns true, after calling `before_free` (if any) while no LOOKUP can yet reuse the Inode's
  // address as a new ino. Virtual nodes and the root are never freed.
  bool Unref(Inode* i, uint64_t n, const std::function<void()>& before_free = nullptr);

  // The file `id` names is gone for good (its last link was removed): forget its kept signature.
  void ForgetSignature(uint64_t id);

  // A link to the regular file `st` describes was removed and it may have been the last: if the
  // table has an Inode of it and the file has no link left, the Inode's descriptor is let go now,
  // or at the last HandleClosed while it is open.
  void LastLinkGone(const struct stat& st);
  // A FileHandle of `i` was opened (its descriptor `fd`), or closed.
  void HandleOpened(Inode* i, int fd);
  void HandleClosed(Inode* i);

  // The engine's name for the file `st` describes.
  uint64_t FileIdOf(const struct stat& st) const;

 private:
  // Takes `fd`: keeps it in a new Inode or closes it when the inode is already known.
  Inode* FindOrInsert(int fd, const struct stat& st);
  // Swaps i->fd for the stand-in. REQUIRES: i is in table_.
  void ReleaseLocked(Inode* i) REQUIRES(mu_);
  // Makes i->fd name the file again, by a descriptor of it (`fd`, kept by the caller).
  void RestoreLocked(Inode* i, int fd) REQUIRES(mu_);

  Inode root_;  // written by Open before any handler runs; its fd replaced by RecoverRoot
  std::string dataset_;
  std::atomic<dev_t> root_dev_{0};
  std::atomic<ino_t> root_ino_{0};
  std::atomic<uint64_t> generation_{0};  // roots opened again
  // steady_clock ns before which RecoverRoot does not try again after a try found the store
  // still gone: during an outage every root op fails, and each would otherwise queue on
  // recover_mu_ behind the open and stat of a store that may hang.
  std::atomic<int64_t> recover_after_ns_{0};

  // O_PATH descriptor of an empty directory the table made and removed: what a let-go Inode's
  // descriptor becomes. -1 when it could not be made: then descriptors wait for FORGET.
  int stand_in_fd_ = -1;

  Mutex recover_mu_;  // one recovery at a time; before mu_
  std::vector<int> dead_root_fds_ GUARDED_BY(mu_);  // closed with the table

  // Lock order: mu_, then an Inode's sig_mu (Unref keeps a signature), then what Unref's before_free
  // takes (the kernel ledger's mutex).
  Mutex mu_;
  std::map<std::pair<dev_t, ino_t>, std::unique_ptr<Inode>> table_ GUARDED_BY(mu_);
  std::unordered_map<uint64_t, FileSignature> saved_signatures_ GUARDED_BY(mu_);
};

}  // namespace ccfs

#endif  // CCFS_FUSE_INODE_TABLE_H_
