// The FUSE handlers of Filesystem, grouped by kind, and the per-mount state they share (FsContext).
//
// Shape (libfuse's example/passthrough_hp.cc is the model): one thin handler per op, with exactly
// the signature of its fuse_lowlevel_ops slot, all registered in one table (filesystem.cc,
// kOpTable); every handler ends in exactly one fuse_reply_* (fuse_reply_none for FORGET). A handler
// performs the same system call on the backing directory, relative to the descriptor of a backing
// inode, and answers with the errno the backing file system gave. Nodes of the .ccfs directory
// (Inode::kind != NodeKind::kReal) are handed to ControlDir, whose handlers reply for them.
//
//   entry_ops.cc  names and attributes: lookup, forget, getattr, setattr, readlink, mknod, mkdir,
//                 symlink, link, unlink, rmdir, rename, statfs
//   data_ops.cc   open files: open, create, read, write, flush, fsync, release, fallocate, lseek,
//                 ioctl (the warm-up's)
//   dir_ops.cc    directories: opendir, readdir, releasedir, fsyncdir
//   xattr_ops.cc  extended attributes: setxattr, getxattr, listxattr, removexattr
//
// A new op is a handler here plus one line in kOpTable. A new kind of node gets its own unit, as
// the .ccfs directory has (control_dir.h).
//
// Ownership: the Filesystem owns its FsContext; a handler borrows it through fuse_req_userdata for
// the length of one request. Thread-safety: handlers run on any number of request threads at once;
// the parts of FsContext say how each is guarded.
#ifndef CCFS_FUSE_OPS_H_
#define CCFS_FUSE_OPS_H_

#include <sys/stat.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <memory>
#include <string>

#include "ccfs/page_cache.h"
#include "fuse/change_detector.h"
#include "fuse/control_dir.h"
#include "fuse/dir_warmer.h"
#include "fuse/filesystem.h"
#include "fuse/fuse_api.h"
#include "fuse/inode_table.h"
#include "fuse/kernel_cache.h"
#include "fuse/listing_walk.h"
#include "fuse/miss_pool.h"
#include "fuse/open_file_watch.h"
#include "fuse/open_handles.h"
#include "fuse/passthrough.h"
#include "fuse/persister.h"
#include "fuse/pins.h"
#include "fuse/read_handles.h"
#include "stats/request_stats.h"

namespace ccfs {

// Everything one mounted Filesystem's handlers share.
struct FsContext {
  FsContext(const Filesystem::Config& config, PageCache* cache);
  // Runs after the request loop has stopped (Filesystem's contract), so no handler holds a handle;
  // the registries then close what the kernel never released.
  ~FsContext();

  const Filesystem::Config config;
  PageCache* const cache;  // borrowed

  // Declared before the registries, so it outlives them: a FileHandle points at its Inode.
  InodeTable inodes;
  // raw_tier = kernel: the ledger of the kernel's pages of the mount's files; nullptr in daemon
  // mode. Before `changes`, which tells it about stale pages.
  std::unique_ptr<KernelCache> kernel;
  ChangeDetector changes;
  // raw_tier = kernel: checks the open files for changes underneath (open_file_watch.h); nullptr
  // in daemon mode. Started and stopped with the kernel ledger; before `control`, which reads it.
  std::unique_ptr<OpenFileWatch> watch;
  // The request threads (RequestLoop, UringTransport) join it; before `control`, which reads it.
  ThreadCpuGroup request_cpu;
  // Every request, by op, timed around its handler (filesystem.cc, Timed).
  RequestStats requests;
  // The `pin` key: which files' pages are evicted last. Before `control`, which changes it.
  Pins pins;
  // passthrough (kernel mode): the opens the kernel serves itself; nullptr when off, and unused
  // unless INIT agreed to it (InitFlagsAdded). Before `control`, which counts them.
  std::unique_ptr<PassthroughOpens> passthrough;
  ControlDir control;
  OpenHandles<FileHandle> files;  // what fi->fh names for an open data file
  OpenHandles<DirHandle> dirs;    // ... for an open real directory (0 for .ccfs)
  // A read-only mount in kernel mode whose kernel opens files without OPEN (set by INIT, before
  // any request): OPEN is answered ENOSYS, and READ then names no handle (read_handles.h).
  std::atomic<bool> no_open{false};
  // The data files read without an OPEN: at most a quarter of max_open_files (two descriptors
  // each).
  ReadHandles read_handles;
  // Requests from /dev/fuse whose request thread waits for the store itself. Up to
  // config.request_threads - 1 may: a thread is then still free for the next request, and a lone
  // reader's miss costs no hand-off to the pool (a hand-off is a large share of a lone reader's
  // miss on a local disk). A request from a ring always goes to the pool: its queue's thread is its
  // CPU's only one.
  std::atomic<int> inline_misses{0};
  // The store refused an O_DIRECT open of a data file (EINVAL): read-only opens stop asking for
  // one (data_ops.cc Open). Set once, never cleared.
  std::atomic<bool> direct_open_refused{false};
  // Prefetches the next small files of a directory read in its listing order (listing_walk.h).
  // After what its prefetches use (inodes, changes, read_handles), so it goes first and waits for
  // them.
  ListingWalk walk;
  // Lists and stats the directories a walk comes to next, ahead of it (dir_warmer.h). After
  // `inodes`, which its thread borrows from.
  DirWarmer dir_warmer;
  // persist: the cache file's writer and reloader; nullptr when off. After `inodes`, which it
  // borrows.
  std::unique_ptr<Persister> persister;
  // Finishes reads that must wait for the store; nullptr when misses_in_flight = 0. Last, so it
  // stops first: its threads use everything above.
  std::unique_ptr<MissPool> misses;
};

namespace ops {

// The time of the request a thread is running (the op table's timer, filesystem.cc Timed). A
// handler that gives its reply on another thread takes it with HandOffRequestTime and calls Done
// there after the reply; KeepRequestTime undoes a hand-off that did not happen.
struct RequestTime {
  RequestStats* stats = nullptr;  // nullptr: nothing to record
  size_t kind = 0;
  uint64_t start_ns = 0;
  void Done() const {
    if (stats != nullptr) stats->Record(kind, SteadyNowNs() - start_ns);
  }
};
// Makes `time` this thread's request time while it lives.
class RequestTimeScope {
 public:
  explicit RequestTimeScope(RequestTime* time);
  ~RequestTimeScope();
  RequestTimeScope(const RequestTimeScope&) = delete;
  RequestTimeScope& operator=(const RequestTimeScope&) = delete;
  bool handed_off() const { return handed_off_; }

 private:
  friend RequestTime HandOffRequestTime();
  friend void KeepRequestTime();
  RequestTime* const time_;
  bool handed_off_ = false;
};
RequestTime HandOffRequestTime();
void KeepRequestTime();

// ---- shared by the handlers (entry_ops.cc) ------------------------------------------------------

inline FsContext* ContextOf(fuse_req_t req) {
  return static_cast<FsContext*>(fuse_req_userdata(req));
}
inline FileHandle* FileOf(fuse_file_info* fi) { return OpenHandles<FileHandle>::Of(fi->fh); }

// attr_timeout in ns: how long attributes read from the store answer for them
// (ChangeDetector::RecentAttributes).
inline int64_t AttrTimeoutNs(const FsContext* fs) {
  return static_cast<int64_t>(fs->config.attr_timeout * 1e9);
}
// Replies with `err`, the backing file system's errno; but a store whose client has gone or lost
// its server (ENOTCONN, ECONNABORTED: an sshfs or GlusterFS client killed or cut off; EBADFD: a
// GlusterFS client whose brick is gone) is answered EIO, the error of a device that failed: from
// a mount, ENOTCONN would read as ccfs itself being gone, and EBADFD as a bad descriptor of the
// caller's.
inline void ReplyErr(fuse_req_t req, int err) {
  fuse_reply_err(req, err == ENOTCONN || err == ECONNABORTED || err == EBADFD ? EIO : err);
}
// The success reply of ops that return nothing but their outcome (RELEASE, FLUSH, FSYNC, ...).
inline void ReplyOk(fuse_req_t req) { fuse_reply_err(req, 0); }
// The reply of such an op done by one call that returned `res`: 0 succeeded, else errno says how
// it failed.
inline void ReplyResult(fuse_req_t req, int res) {
  if (res == 0) return ReplyOk(req);
  ReplyErr(req, errno);
}
// A path naming the inode `fd` holds (for calls that take no descriptor).
inline std::string ProcPath(int fd) { return "/proc/self/fd/" + std::to_string(fd); }

// Attributes of `i`, real or virtual. Returns 0 or the errno.
int StatOf(FsContext* fs, Inode* i, struct stat* st);
// Whether `name` in `parent` is (or is inside) the .ccfs directory, which no real op may touch.
bool IsVirtualName(FsContext* fs, Inode* parent, const char* name);
// Looks `name` up in the real directory `parent`, counts one kernel reference to it and fills *e.
// Returns 0 or the errno.
int LookupEntry(FsContext* fs, Inode* parent, const char* name, fuse_entry_param* e);
// Replies with *e, or with `err` when it is not 0. Gives the reference back if the caller was
// interrupted before it got the entry.
void ReplyEntryOrErr(FsContext* fs, fuse_req_t req, int err, fuse_entry_param* e);

// ---- entry_ops.cc --------------------------------------------------------------------------------

void Lookup(fuse_req_t req, fuse_ino_t parent, const char* name);
void Forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup);
void ForgetMulti(fuse_req_t req, size_t count, fuse_forget_data* forgets);
void Getattr(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi);
void Setattr(fuse_req_t req, fuse_ino_t ino, struct stat* attr, int valid, fuse_file_info* fi);
void Readlink(fuse_req_t req, fuse_ino_t ino);
void Mknod(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode, dev_t rdev);
void Mkdir(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode);
void Symlink(fuse_req_t req, const char* link, fuse_ino_t parent, const char* name);
void Link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char* newname);
void Unlink(fuse_req_t req, fuse_ino_t parent, const char* name);
void Rmdir(fuse_req_t req, fuse_ino_t parent, const char* name);
void Rename(fuse_req_t req, fuse_ino_t parent, const char* name, fuse_ino_t newparent,
            const char* newname, unsigned int flags);
void Statfs(fuse_req_t req, fuse_ino_t ino);

// ---- data_ops.cc ---------------------------------------------------------------------------------

void Open(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi);
void Create(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode, fuse_file_info* fi);
void Read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info* fi);
void Write(fuse_req_t req, fuse_ino_t ino, const char* buf, size_t size, off_t off,
           fuse_file_info* fi);
void Flush(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi);
void Fsync(fuse_req_t req, fuse_ino_t ino, int datasync, fuse_file_info* fi);
void Release(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi);
void Fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t offset, off_t length,
               fuse_file_info* fi);
void Lseek(fuse_req_t req, fuse_ino_t ino, off_t off, int whence, fuse_file_info* fi);
// A READDIRPLUS listing of `dir` from its start ended; `firsts`: its first entry in each
// ListingOrder (ino 0: not known). A walk going on (listing_walk.h) that `dir` comes in turn for
// goes on into it: its first small files are queued to be read ahead. Only lookups: the opens and
// reads are the read-ahead threads'.
void WalkInto(FsContext* fs, Inode* dir, const std::array<InodeKey, kListingOrders>& firsts);
// The warm-up's ioctls on a regular file (ccfs/mount_protocol.h); any other command is ENOTTY.
void Ioctl(fuse_req_t req, fuse_ino_t ino, unsigned int cmd, void* arg, fuse_file_info* fi,
           unsigned flags, const void* in_buf, size_t in_bufsz, size_t out_bufsz);
// kernel_demote: the bytes of pages asked back before the kernel drops them (kernel_cache.h).
void RetrieveReply(fuse_req_t req, void* cookie, fuse_ino_t ino, off_t offset, fuse_bufvec* bufv);

// ---- dir_ops.cc ----------------------------------------------------------------------------------

void Opendir(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi);
void Readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info* fi);
// With each entry's attributes and a lookup reference to it, so a listing fills the kernel's
// entries (`ls -l`, `find`, `du` then send no LOOKUP per name).
void Readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info* fi);
void Releasedir(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi);
void Fsyncdir(fuse_req_t req, fuse_ino_t ino, int datasync, fuse_file_info* fi);

// ---- xattr_ops.cc --------------------------------------------------------------------------------

void Setxattr(fuse_req_t req, fuse_ino_t ino, const char* name, const char* value, size_t size,
              int flags);
void Getxattr(fuse_req_t req, fuse_ino_t ino, const char* name, size_t size);
void Listxattr(fuse_req_t req, fuse_ino_t ino, size_t size);
void Removexattr(fuse_req_t req, fuse_ino_t ino, const char* name);

}  // namespace ops
}  // namespace ccfs

#endif  // CCFS_FUSE_OPS_H_
