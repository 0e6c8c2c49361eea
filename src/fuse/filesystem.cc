// The handlers of Filesystem. Each is a thin wrapper around one system call on the backing
// directory and ends in exactly one fuse_reply_*. Notes on the choices that are not obvious:
//
// Inodes. A fuse_ino_t is the address of an Inode that holds an O_PATH descriptor of the backing
// inode, keyed by (st_dev, st_ino) and counted by lookups (the kernel's FORGET gives them back).
// Holding the descriptor pins the backing inode, so its number cannot be reused while the kernel
// may still name it, and every op works relative to it: nothing is looked up by path and the
// daemon never follows a symlink (lookups use O_NOFOLLOW; data files are reopened through
// /proc/self/fd only once they are known to be regular files).
//
// File ids. The engine names a file by the backing inode number. An inode number can be reused
// after the file is deleted behind our back, so "changed underneath" is judged by a signature
// (size, mtime, ctime) that outlives the Inode: when the kernel forgets an Inode its signature is
// kept in `saved_signatures_`, and a new file with the same number has a new ctime. Pages are only
// ever cached for an id whose signature is recorded, so an id with no record has nothing cached.
//
// Why fstat on every read: it costs ~0.3 µs here, against ~5 µs for the FUSE round trip (measured
// with bench/fuse_rtt.cc), and it is the only scheme that never serves a stale page once the
// change is visible to stat(2) without trusting timers or inotify (which misses writes through
// other mounts of the same file system and can overflow).
//
// Open handles. Each fi->fh (a FileHandle, a DirHandle, a stats.json snapshot) is owned by a
// registry of its kind (OpenHandles) from OPEN until RELEASE. The registries are what frees the
// handles the kernel never gives back: a daemon stopped by SIGTERM, or whose connection ends, while
// files are still open gets no RELEASE for them, and destroying the Filesystem closes them then.
#include "fuse/filesystem.h"

#define FUSE_USE_VERSION FUSE_MAKE_VERSION(3, 14)
#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <fuse3/fuse_lowlevel.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ccfs/config.h"
#include "fuse/kill_priv.h"
#include "fuse/live_options.h"
#include "fuse/log.h"
#include "fuse/open_flags.h"
#include "stats/stats_json.h"

namespace ccfs {

namespace {

struct FileSignature {
  uint64_t size = 0;
  int64_t mtime_ns = 0;
  int64_t ctime_ns = 0;
  bool operator==(const FileSignature&) const = default;
};

FileSignature SignatureOf(const struct stat& st) {
  FileSignature s;
  s.size = static_cast<uint64_t>(st.st_size);
  s.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  s.ctime_ns = static_cast<int64_t>(st.st_ctim.tv_sec) * 1000000000 + st.st_ctim.tv_nsec;
  return s;
}

enum class NodeKind { kReal, kControlDir, kStatsFile, kControlFile };

// Inode numbers reported for the virtual nodes (chosen to be unlike real ones).
constexpr ino_t kControlDirIno = 0xCCF5000000000001ull;
constexpr ino_t kStatsFileIno = 0xCCF5000000000002ull;
constexpr ino_t kControlFileIno = 0xCCF5000000000003ull;

struct Inode {
  Inode() = default;
  Inode(const Inode&) = delete;
  Inode& operator=(const Inode&) = delete;
  ~Inode() {
    if (fd >= 0) close(fd);
  }

  NodeKind kind = NodeKind::kReal;
  int fd = -1;  // O_PATH descriptor of the backing inode
  dev_t dev = 0;
  ino_t ino = 0;
  mode_t type = 0;       // S_IFMT bits
  uint64_t file_id = 0;  // the engine's name for the file
  uint64_t nlookup = 0;  // guarded by Impl::table_mu_

  // Last signature seen of the backing file; guarded by sig_mu. Writers through the mount hold
  // sig_mu across check, write and record, so a reader's check never sees a half-recorded write.
  std::mutex sig_mu;
  bool sig_known = false;
  FileSignature sig;
};

// An open data file.
struct FileHandle {
  ~FileHandle() {
    backing.reset();
    if (fd >= 0) close(fd);
  }
  Inode* inode = nullptr;
  int fd = -1;                           // opened with the caller's flags
  std::unique_ptr<BackingFile> backing;  // a dup of fd, plus an O_DIRECT fd for page reads
  bool append = false;                   // O_APPEND: pwrite lands at the end, not at `off`
};

struct DirHandle {
  ~DirHandle() {
    if (dp != nullptr) closedir(dp);
  }
  DIR* dp = nullptr;
  off_t offset = 0;
  struct dirent* entry = nullptr;  // read but not yet returned (the reply was full)
};

// The handles of one kind that the kernel holds open, each named by its fi->fh (its address). The
// registry owns them: Add at OPEN, Remove at RELEASE, and whatever is left when the registry is
// destroyed (never released: still open when the session ended) is closed and freed with it.
//
// Thread-safety: Add, Remove and size take mu_ and may run on any request threads at once. A
// handle itself is used without the lock: the kernel sends no request on an fh once its RELEASE
// is under way, and the registry is destroyed only after the request loop has stopped.
template <typename Handle>
class OpenHandles {
 public:
  // Takes `h`; returns the fi->fh that names it.
  uint64_t Add(std::unique_ptr<Handle> h) {
    Handle* raw = h.get();
    std::lock_guard<std::mutex> lock(mu_);
    handles_.emplace(raw, std::move(h));
    return reinterpret_cast<uint64_t>(raw);
  }

  // Closes and frees the handle `fh` names; 0 (no handle) is ignored.
  void Remove(uint64_t fh) {
    typename Map::node_type node;
    {
      std::lock_guard<std::mutex> lock(mu_);
      node = handles_.extract(reinterpret_cast<Handle*>(fh));
    }
    // The handle goes with `node`, outside the lock: closing a descriptor may take a while.
  }

  size_t size() {
    std::lock_guard<std::mutex> lock(mu_);
    return handles_.size();
  }

 private:
  using Map = std::unordered_map<Handle*, std::unique_ptr<Handle>>;
  std::mutex mu_;
  Map handles_;
};

std::string ProcPath(int fd) { return "/proc/self/fd/" + std::to_string(fd); }

std::string Trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string_view::npos) return "";
  size_t e = s.find_last_not_of(" \t\r");
  return std::string(s.substr(b, e - b + 1));
}

}  // namespace

class Filesystem::Impl {
 public:
  Impl(const Config& config, PageCache* cache) : config_(config), cache_(cache) {
    page_size_ = cache_->options().page_size;
    start_ = std::chrono::steady_clock::now();
    control_dir_.kind = NodeKind::kControlDir;
    control_dir_.type = S_IFDIR;
    control_dir_.ino = kControlDirIno;
    stats_file_.kind = NodeKind::kStatsFile;
    stats_file_.type = S_IFREG;
    stats_file_.ino = kStatsFileIno;
    control_file_.kind = NodeKind::kControlFile;
    control_file_.type = S_IFREG;
    control_file_.ino = kControlFileIno;
  }

  // Runs after the request loop has stopped (Filesystem's contract), so no handler holds a handle;
  // the registries then close what the kernel never released.
  ~Impl() {
    size_t files = files_.size() + stats_docs_.size();
    size_t dirs = dirs_.size();
    if (files + dirs > 0) {
      LogInfo(fmt::format("closing what is still open: files={} directories={}", files, dirs));
    }
  }

  Status Open() {
    root_.fd = open(config_.dataset.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (root_.fd < 0) return Status::FromErrno(errno, "dataset " + config_.dataset);
    struct stat st;
    if (fstatat(root_.fd, "", &st, AT_EMPTY_PATH) != 0) {
      return Status::FromErrno(errno, "dataset " + config_.dataset);
    }
    root_.dev = st.st_dev;
    root_.ino = st.st_ino;
    root_.type = S_IFDIR;
    root_.file_id = st.st_ino;
    return Status::Ok();
  }

  // ---- the handlers ----------------------------------------------------------------------------

  void Init(fuse_conn_info* conn) {
    // The kernel must not cache file data (the hit ratio would lie) nor batch writes (writes go
    // through before they are acknowledged); splice only pays for large transfers.
    conn->want &= ~(FUSE_CAP_WRITEBACK_CACHE | FUSE_CAP_SPLICE_READ | FUSE_CAP_SPLICE_WRITE |
                    FUSE_CAP_SPLICE_MOVE);
    // O_TRUNC arrives with open() instead of as a separate SETATTR.
    if (conn->capable & FUSE_CAP_ATOMIC_O_TRUNC) conn->want |= FUSE_CAP_ATOMIC_O_TRUNC;
  }

  void Lookup(fuse_req_t req, fuse_ino_t parent, const char* name) {
    Inode* p = Get(parent);
    fuse_entry_param e;
    if (p->kind == NodeKind::kControlDir) {
      Inode* v = strcmp(name, kStatsFileName) == 0     ? &stats_file_
                 : strcmp(name, kControlFileName) == 0 ? &control_file_
                 : strcmp(name, "..") == 0             ? &root_
                                                       : nullptr;
      if (v == nullptr) {
        fuse_reply_err(req, ENOENT);
        return;
      }
      if (v == &root_) {
        ReplyEntryOrErr(req, DoLookup(&root_, ".", &e), &e);
        return;
      }
      VirtualEntry(v, &e);
      fuse_reply_entry(req, &e);
      return;
    }
    if (p->kind != NodeKind::kReal) {
      fuse_reply_err(req, ENOTDIR);
      return;
    }
    if (p == &root_ && strcmp(name, kControlDirName) == 0) {
      VirtualEntry(&control_dir_, &e);
      fuse_reply_entry(req, &e);
      return;
    }
    ReplyEntryOrErr(req, DoLookup(p, name, &e), &e);
  }

  void Forget(fuse_ino_t ino, uint64_t nlookup) { Unref(Get(ino), nlookup); }

  void Getattr(fuse_req_t req, fuse_ino_t ino) {
    Inode* i = Get(ino);
    struct stat st;
    int err = StatOf(i, &st);
    if (err != 0) {
      fuse_reply_err(req, err);
      return;
    }
    fuse_reply_attr(req, &st, config_.attr_timeout);
  }

  void Setattr(fuse_req_t req, fuse_ino_t ino, struct stat* attr, int valid, fuse_file_info* fi) {
    Inode* i = Get(ino);
    if (i->kind != NodeKind::kReal) {
      // "echo k=v > .ccfs/control" truncates first; nothing else may change a virtual node.
      if (i->kind == NodeKind::kControlFile && (valid & ~(FUSE_SET_ATTR_SIZE | FUSE_SET_ATTR_ATIME |
                                                          FUSE_SET_ATTR_MTIME |
                                                          FUSE_SET_ATTR_ATIME_NOW |
                                                          FUSE_SET_ATTR_MTIME_NOW |
                                                          FUSE_SET_ATTR_CTIME)) == 0) {
        Getattr(req, ino);
      } else {
        fuse_reply_err(req, EPERM);
      }
      return;
    }
    FileHandle* h = (fi != nullptr && i->type == S_IFREG) ? HandleOf(fi) : nullptr;
    std::string path = ProcPath(i->fd);
    if (valid & FUSE_SET_ATTR_MODE) {
      int res = h != nullptr ? fchmod(h->fd, attr->st_mode)
                             : fchmodat(AT_FDCWD, path.c_str(), attr->st_mode, 0);
      if (res != 0) return (void)fuse_reply_err(req, errno);
    }
    if (valid & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID)) {
      uid_t uid = (valid & FUSE_SET_ATTR_UID) ? attr->st_uid : static_cast<uid_t>(-1);
      gid_t gid = (valid & FUSE_SET_ATTR_GID) ? attr->st_gid : static_cast<gid_t>(-1);
      if (fchownat(i->fd, "", uid, gid, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) != 0) {
        return (void)fuse_reply_err(req, errno);
      }
    }
    if (valid & FUSE_SET_ATTR_SIZE) {
      if (i->type != S_IFREG) return (void)fuse_reply_err(req, i->type == S_IFDIR ? EISDIR : EINVAL);
      std::lock_guard<std::mutex> lock(i->sig_mu);
      int fd = h != nullptr ? h->fd : -1;
      int own_fd = -1;
      if (fd < 0) {
        own_fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
        if (own_fd < 0) return (void)fuse_reply_err(req, errno);
        fd = own_fd;
      }
      CheckUnchangedLocked(i, fd);
      const uint64_t old_size = i->sig_known ? i->sig.size : 0;
      int res = 0, err = 0;
      if (TruncateMustClearSetId(valid, fuse_req_ctx(req)->uid)) err = ClearSetId(fd, req);
      if (err == 0) {
        res = ftruncate(fd, attr->st_size);
        err = errno;
      } else {
        res = -1;
      }
      if (res == 0) {
        // Shrinking: the page holding the new end keeps bytes beyond it; drop it too so a later
        // extension reads zeros there. Growing: the page that held the old end is cached short
        // (it ended the file); drop it so reads go on past the old end.
        cache_->InvalidateFile(i->file_id, RoundDown(std::min<uint64_t>(
                                               old_size, static_cast<uint64_t>(attr->st_size))));
        RecordSignatureLocked(i, fd);
      }
      if (own_fd >= 0) close(own_fd);
      if (res != 0) return (void)fuse_reply_err(req, err);
    }
    if (valid & (FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_MTIME)) {
      struct timespec tv[2];
      tv[0].tv_sec = tv[1].tv_sec = 0;
      tv[0].tv_nsec = tv[1].tv_nsec = UTIME_OMIT;
      if (valid & FUSE_SET_ATTR_ATIME_NOW) tv[0].tv_nsec = UTIME_NOW;
      else if (valid & FUSE_SET_ATTR_ATIME) tv[0] = attr->st_atim;
      if (valid & FUSE_SET_ATTR_MTIME_NOW) tv[1].tv_nsec = UTIME_NOW;
      else if (valid & FUSE_SET_ATTR_MTIME) tv[1] = attr->st_mtim;
      int res = h != nullptr ? futimens(h->fd, tv)
                             : utimensat(i->fd, "", tv, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW);
      if (res != 0 && errno == EINVAL && i->type != S_IFLNK) {
        // Kernels without AT_EMPTY_PATH for utimensat: the /proc link names the inode itself.
        res = utimensat(AT_FDCWD, path.c_str(), tv, 0);
      }
      if (res != 0) return (void)fuse_reply_err(req, errno);
      if (i->type == S_IFREG) {
        // A new mtime is our own change, not one made underneath.
        std::lock_guard<std::mutex> lock(i->sig_mu);
        if (h != nullptr) RecordSignatureLocked(i, h->fd);
        else RecordSignatureFromPathLocked(i);
      }
    }
    Getattr(req, ino);
  }

  void Readlink(fuse_req_t req, fuse_ino_t ino) {
    Inode* i = Get(ino);
    if (i->kind != NodeKind::kReal) return (void)fuse_reply_err(req, EINVAL);
    char buf[PATH_MAX + 1];
    ssize_t n = readlinkat(i->fd, "", buf, sizeof(buf));
    if (n < 0) return (void)fuse_reply_err(req, errno);
    if (n >= static_cast<ssize_t>(sizeof(buf))) return (void)fuse_reply_err(req, ENAMETOOLONG);
    buf[n] = '\0';
    fuse_reply_readlink(req, buf);
  }

  void Mknod(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode, dev_t rdev) {
    MakeNode(req, parent, name, [&](int dirfd) {
      return S_ISDIR(mode) ? mkdirat(dirfd, name, mode) : mknodat(dirfd, name, mode, rdev);
    });
  }

  void Mkdir(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode) {
    MakeNode(req, parent, name, [&](int dirfd) { return mkdirat(dirfd, name, mode); });
  }

  void Symlink(fuse_req_t req, const char* link, fuse_ino_t parent, const char* name) {
    MakeNode(req, parent, name, [&](int dirfd) { return symlinkat(link, dirfd, name); });
  }

  void Link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char* newname) {
    Inode* i = Get(ino);
    if (i->kind != NodeKind::kReal) return (void)fuse_reply_err(req, EPERM);
    MakeNode(req, newparent, newname, [&](int dirfd) {
      int res = linkat(i->fd, "", dirfd, newname, AT_EMPTY_PATH);
      if (res != 0 && (errno == EPERM || errno == ENOENT) && i->type != S_IFLNK) {
        // AT_EMPTY_PATH needs CAP_DAC_READ_SEARCH; the /proc link works for everyone.
        res = linkat(AT_FDCWD, ProcPath(i->fd).c_str(), dirfd, newname, AT_SYMLINK_FOLLOW);
      }
      return res;
    });
  }

  void Unlink(fuse_req_t req, fuse_ino_t parent, const char* name) { Remove(req, parent, name, 0); }
  void Rmdir(fuse_req_t req, fuse_ino_t parent, const char* name) {
    Remove(req, parent, name, AT_REMOVEDIR);
  }

  void Rename(fuse_req_t req, fuse_ino_t parent, const char* name, fuse_ino_t newparent,
              const char* newname, unsigned int flags) {
    Inode* p = Get(parent);
    Inode* np = Get(newparent);
    if (IsVirtualName(p, name) || IsVirtualName(np, newname)) return (void)fuse_reply_err(req, EPERM);
    if (p->kind != NodeKind::kReal || np->kind != NodeKind::kReal) {
      return (void)fuse_reply_err(req, EPERM);
    }
    struct stat victim;
    bool replaces = fstatat(np->fd, newname, &victim, AT_SYMLINK_NOFOLLOW) == 0;
    if (renameat2(p->fd, name, np->fd, newname, flags) != 0) return (void)fuse_reply_err(req, errno);
    if (replaces && !(flags & RENAME_EXCHANGE)) DroppedLink(victim);
    fuse_reply_err(req, 0);
  }

  void Open(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
    Inode* i = Get(ino);
    if (i->kind != NodeKind::kReal) return OpenVirtual(req, i, fi);
    if (i->type == S_IFDIR) return (void)fuse_reply_err(req, EISDIR);
    if (i->type != S_IFREG) return (void)fuse_reply_err(req, ELOOP);
    int flags = BackingOpenFlags(fi->flags) & ~(O_NOFOLLOW | O_CREAT | O_EXCL);
    int fd = open(ProcPath(i->fd).c_str(), flags | O_CLOEXEC);
    if (fd < 0) return (void)fuse_reply_err(req, errno);
    if (OpenTruncMustClearSetId(flags, fuse_req_ctx(req)->uid)) ClearSetId(fd, req);
    if (flags & O_TRUNC) TruncatedByOpen(i, fd);
    int err = AttachHandle(i, fd, fi);
    if (err != 0) return (void)fuse_reply_err(req, err);
    if (fuse_reply_open(req, fi) == -ENOENT) DetachHandle(fi);  // the caller was interrupted
  }

  void Create(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode,
              fuse_file_info* fi) {
    Inode* p = Get(parent);
    if (p->kind != NodeKind::kReal) return (void)fuse_reply_err(req, EACCES);
    if (IsVirtualName(p, name)) return (void)fuse_reply_err(req, EEXIST);
    int flags = BackingOpenFlags(fi->flags | O_CREAT) & ~O_NOFOLLOW;
    int fd = openat(p->fd, name, flags | O_CLOEXEC, mode);
    if (fd < 0) return (void)fuse_reply_err(req, errno);
    ChownToCaller(req, p->fd, name);
    fuse_entry_param e;
    int err = DoLookup(p, name, &e);
    if (err != 0) {
      close(fd);
      return (void)fuse_reply_err(req, err);
    }
    Inode* i = Get(e.ino);
    if (flags & O_TRUNC) TruncatedByOpen(i, fd);
    err = AttachHandle(i, fd, fi);
    if (err != 0) {
      Unref(i, 1);
      return (void)fuse_reply_err(req, err);
    }
    if (fuse_reply_create(req, &e, fi) == -ENOENT) {
      DetachHandle(fi);
      Unref(i, 1);
    }
  }

  void Read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info* fi) {
    Inode* i = Get(ino);
    if (i->kind == NodeKind::kStatsFile) {
      const std::string* doc = reinterpret_cast<const std::string*>(fi->fh);
      size_t o = std::min(static_cast<size_t>(off), doc->size());
      // Reply from a copy this thread owns: once the kernel has the reply, the reader may close
      // and the RELEASE (another request thread) frees *doc while fuse_reply_buf's writev is still
      // returning; the sanitizers' writev interceptors look at the buffer after the call.
      thread_local std::string reply;
      reply.assign(*doc, o, std::min(size, doc->size() - o));
      fuse_reply_buf(req, reply.data(), reply.size());
      return;
    }
    if (i->kind != NodeKind::kReal) return (void)fuse_reply_buf(req, nullptr, 0);
    FileHandle* h = HandleOf(fi);
    CheckUnchanged(i, h->fd);
    // One buffer per request thread, grown to the largest read seen; the reply copies out of it
    // before the thread takes its next request.
    thread_local std::vector<char> buffer;
    if (buffer.size() < size) buffer.resize(size);
    size_t n = 0;
    Status s = cache_->Read(i->file_id, h->backing.get(), static_cast<uint64_t>(off), size,
                            buffer.data(), &n);
    if (!s.ok()) return (void)fuse_reply_err(req, s.ToErrno());
    fuse_reply_buf(req, buffer.data(), n);
  }

  void Write(fuse_req_t req, fuse_ino_t ino, const char* buf, size_t size, off_t off,
             fuse_file_info* fi) {
    Inode* i = Get(ino);
    if (i->kind == NodeKind::kControlFile) {
      Status s = ApplyControlText(std::string(buf, size));
      if (!s.ok()) return (void)fuse_reply_err(req, EINVAL);
      fuse_reply_write(req, size);
      return;
    }
    if (i->kind != NodeKind::kReal) return (void)fuse_reply_err(req, EBADF);
    FileHandle* h = HandleOf(fi);
    // The write-back of a shared writable mapping must land at `off`, which O_APPEND on the
    // backing descriptor would ignore (the page would be appended): refuse it rather than corrupt.
    if (fi->writepage && h->append) return (void)fuse_reply_err(req, EIO);
    std::lock_guard<std::mutex> lock(i->sig_mu);
    CheckUnchangedLocked(i, h->fd);
    if (WriteMustClearSetId(fi->writepage, fuse_req_ctx(req)->uid)) {
      int err = ClearSetId(h->fd, req);
      if (err != 0) return (void)fuse_reply_err(req, err);
    }
    uint64_t end_before = i->sig.size;
    Status s = cache_->Write(i->file_id, h->backing.get(), static_cast<uint64_t>(off), buf, size);
    if (h->append) {
      // The bytes landed at the end of the file, not at `off`: drop what the engine did not.
      cache_->InvalidateFile(i->file_id, RoundDown(std::min<uint64_t>(end_before, off)));
    }
    RecordSignatureLocked(i, h->fd);
    if (!s.ok()) return (void)fuse_reply_err(req, s.ToErrno());
    fuse_reply_write(req, size);
  }

  void Flush(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
    Inode* i = Get(ino);
    if (i->kind != NodeKind::kReal) return (void)fuse_reply_err(req, 0);
    // close() of a duplicate reports deferred write errors (NFS and the like) and drops POSIX
    // locks, as the caller's close() would on the backing file.
    int res = close(dup(HandleOf(fi)->fd));
    fuse_reply_err(req, res == 0 ? 0 : errno);
  }

  void Release(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
    Inode* i = Get(ino);
    if (i->kind == NodeKind::kStatsFile) stats_docs_.Remove(fi->fh);
    if (i->kind == NodeKind::kReal) DetachHandle(fi);
    fuse_reply_err(req, 0);
  }

  void Fsync(fuse_req_t req, fuse_ino_t ino, int datasync, fuse_file_info* fi) {
    Inode* i = Get(ino);
    if (i->kind != NodeKind::kReal) return (void)fuse_reply_err(req, 0);
    int fd = HandleOf(fi)->fd;
    int res = datasync ? fdatasync(fd) : fsync(fd);
    fuse_reply_err(req, res == 0 ? 0 : errno);
  }

  void Opendir(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
    Inode* i = Get(ino);
    if (i->kind == NodeKind::kControlDir) {
      fi->fh = 0;
      return (void)fuse_reply_open(req, fi);
    }
    if (i->kind != NodeKind::kReal) return (void)fuse_reply_err(req, ENOTDIR);
    int fd = openat(i->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return (void)fuse_reply_err(req, errno);
    auto d = std::make_unique<DirHandle>();
    d->dp = fdopendir(fd);
    if (d->dp == nullptr) {
      int err = errno;
      close(fd);
      return (void)fuse_reply_err(req, err);
    }
    fi->fh = dirs_.Add(std::move(d));
    if (fuse_reply_open(req, fi) != 0) dirs_.Remove(fi->fh);
  }

  void Readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info* fi) {
    Inode* i = Get(ino);
    std::vector<char> buf(size);
    size_t used = 0;
    struct stat st;
    memset(&st, 0, sizeof(st));
    if (i->kind == NodeKind::kControlDir) {
      const char* names[] = {".", "..", kStatsFileName, kControlFileName};
      const mode_t types[] = {S_IFDIR, S_IFDIR, S_IFREG, S_IFREG};
      const ino_t inos[] = {kControlDirIno, root_.ino, kStatsFileIno, kControlFileIno};
      for (off_t k = off; k < 4; ++k) {
        st.st_ino = inos[k];
        st.st_mode = types[k];
        size_t need = fuse_add_direntry(req, buf.data() + used, size - used, names[k], &st, k + 1);
        if (need > size - used) break;
        used += need;
      }
      return (void)fuse_reply_buf(req, buf.data(), used);
    }
    DirHandle* d = reinterpret_cast<DirHandle*>(fi->fh);
    if (off != d->offset) {
      seekdir(d->dp, off);
      d->entry = nullptr;
      d->offset = off;
    }
    int err = 0;
    while (true) {
      if (d->entry == nullptr) {
        errno = 0;
        d->entry = readdir(d->dp);
        if (d->entry == nullptr) {
          err = errno;
          break;
        }
      }
      const char* name = d->entry->d_name;
      if (!(i == &root_ && strcmp(name, kControlDirName) == 0)) {
        st.st_ino = d->entry->d_ino;
        st.st_mode = static_cast<mode_t>(d->entry->d_type) << 12;
        size_t need = fuse_add_direntry(req, buf.data() + used, size - used, name, &st,
                                        d->entry->d_off);
        if (need > size - used) break;  // keep the entry for the next call
        used += need;
      }
      d->offset = d->entry->d_off;
      d->entry = nullptr;
    }
    // An error after some entries is reported by the next call (it starts at the failed one).
    if (err != 0 && used == 0) return (void)fuse_reply_err(req, err);
    fuse_reply_buf(req, buf.data(), used);
  }

  void Releasedir(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
    dirs_.Remove(fi->fh);  // 0 for .ccfs
    fuse_reply_err(req, 0);
  }

  void Fsyncdir(fuse_req_t req, fuse_ino_t ino, int datasync, fuse_file_info* fi) {
    DirHandle* d = reinterpret_cast<DirHandle*>(fi->fh);
    if (d == nullptr) return (void)fuse_reply_err(req, 0);
    int fd = dirfd(d->dp);
    int res = datasync ? fdatasync(fd) : fsync(fd);
    fuse_reply_err(req, res == 0 ? 0 : errno);
  }

  void Statfs(fuse_req_t req, fuse_ino_t ino) {
    Inode* i = Get(ino);
    struct statvfs sv;
    if (fstatvfs(i->kind == NodeKind::kReal ? i->fd : root_.fd, &sv) != 0) {
      return (void)fuse_reply_err(req, errno);
    }
    fuse_reply_statfs(req, &sv);
  }

  void Setxattr(fuse_req_t req, fuse_ino_t ino, const char* name, const char* value, size_t size,
                int flags) {
    std::string path;
    int err = XattrPath(Get(ino), &path);
    if (err != 0) return (void)fuse_reply_err(req, err);
    int res = setxattr(path.c_str(), name, value, size, flags);
    fuse_reply_err(req, res == 0 ? 0 : errno);
  }

  void Getxattr(fuse_req_t req, fuse_ino_t ino, const char* name, size_t size) {
    std::string path;
    int err = XattrPath(Get(ino), &path);
    if (err != 0) return (void)fuse_reply_err(req, err == ENOTSUP ? ENODATA : err);
    if (size == 0) {
      ssize_t n = getxattr(path.c_str(), name, nullptr, 0);
      if (n < 0) return (void)fuse_reply_err(req, errno);
      return (void)fuse_reply_xattr(req, static_cast<size_t>(n));
    }
    std::vector<char> buf(size);
    ssize_t n = getxattr(path.c_str(), name, buf.data(), size);
    if (n < 0) return (void)fuse_reply_err(req, errno);
    fuse_reply_buf(req, buf.data(), static_cast<size_t>(n));
  }

  void Listxattr(fuse_req_t req, fuse_ino_t ino, size_t size) {
    std::string path;
    int err = XattrPath(Get(ino), &path);
    if (err == ENOTSUP) {
      // Virtual nodes and symlinks have no attributes to list.
      return (void)(size == 0 ? fuse_reply_xattr(req, 0) : fuse_reply_buf(req, nullptr, 0));
    }
    if (err != 0) return (void)fuse_reply_err(req, err);
    if (size == 0) {
      ssize_t n = listxattr(path.c_str(), nullptr, 0);
      if (n < 0) return (void)fuse_reply_err(req, errno);
      return (void)fuse_reply_xattr(req, static_cast<size_t>(n));
    }
    std::vector<char> buf(size);
    ssize_t n = listxattr(path.c_str(), buf.data(), size);
    if (n < 0) return (void)fuse_reply_err(req, errno);
    fuse_reply_buf(req, buf.data(), static_cast<size_t>(n));
  }

  void Removexattr(fuse_req_t req, fuse_ino_t ino, const char* name) {
    std::string path;
    int err = XattrPath(Get(ino), &path);
    if (err != 0) return (void)fuse_reply_err(req, err);
    int res = removexattr(path.c_str(), name);
    fuse_reply_err(req, res == 0 ? 0 : errno);
  }

  void Fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t offset, off_t length,
                 fuse_file_info* fi) {
    Inode* i = Get(ino);
    if (i->kind != NodeKind::kReal) return (void)fuse_reply_err(req, EOPNOTSUPP);
    FileHandle* h = HandleOf(fi);
    std::lock_guard<std::mutex> lock(i->sig_mu);
    CheckUnchangedLocked(i, h->fd);
    const uint64_t old_size = i->sig_known ? i->sig.size : 0;
    if (fallocate(h->fd, mode, offset, length) != 0) return (void)fuse_reply_err(req, errno);
    // Punching, zeroing, collapsing or inserting a range changes the bytes from `offset` on; an
    // allocation past the end grows the file, so the page that held the old end (cached short)
    // goes too.
    cache_->InvalidateFile(i->file_id,
                           RoundDown(std::min<uint64_t>(old_size, static_cast<uint64_t>(offset))));
    RecordSignatureLocked(i, h->fd);
    fuse_reply_err(req, 0);
  }

  void Lseek(fuse_req_t req, fuse_ino_t ino, off_t off, int whence, fuse_file_info* fi) {
    Inode* i = Get(ino);
    if (i->kind != NodeKind::kReal) return (void)fuse_reply_err(req, ESPIPE);
    off_t res = lseek(HandleOf(fi)->fd, off, whence);
    if (res < 0) return (void)fuse_reply_err(req, errno);
    fuse_reply_lseek(req, res);
  }

  // ---- control and stats -----------------------------------------------------------------------

  Status ApplyControlText(const std::string& text) {
    std::lock_guard<std::mutex> lock(control_mu_);
    const Options before = cache_->options();
    Options wanted = before;
    size_t start = 0;
    int line_no = 0;
    while (start <= text.size()) {
      size_t end = text.find('\n', start);
      if (end == std::string::npos) end = text.size();
      std::string line = Trim(std::string_view(text).substr(start, end - start));
      start = end + 1;
      ++line_no;
      if (line.empty() || line[0] == '#') continue;
      size_t eq = line.find('=');
      std::string source = fmt::format("{}/{}:{}", kControlDirName, kControlFileName, line_no);
      if (eq == std::string::npos) {
        return ControlError(fmt::format("{}: \"{}\": expected key=value", source, line));
      }
      std::string key = Trim(line.substr(0, eq));
      std::string value = Trim(line.substr(eq + 1));
      if (!IsKnownKey(key)) return ControlError(fmt::format("{}: unknown key \"{}\"", source, key));
      if (!IsLiveKey(key)) {
        return ControlError(fmt::format("{}: {} cannot change while mounted: needs a remount",
                                        source, key));
      }
      Status s = ApplyKeyValue(key, value, source, &wanted);
      if (!s.ok()) return ControlError(s.ToString());
    }
    Status s = wanted.Validate();
    if (!s.ok()) return ControlError(fmt::format("{}/{}: {}", kControlDirName, kControlFileName, s.ToString()));
    s = cache_->Reconfigure(wanted);
    if (!s.ok()) return ControlError(fmt::format("{}/{}: {}", kControlDirName, kControlFileName, s.ToString()));
    for (const std::string& key : ChangedKeys(before, wanted)) {
      LogInfo(fmt::format("{}/{}: {} (was {})", kControlDirName, kControlFileName,
                          DescribeKey(wanted, key), DescribeKey(before, key)));
    }
    return Status::Ok();
  }

  Status ApplyLiveOptions(const Options& wanted, const std::string& source,
                          std::vector<std::string>* needs_remount) {
    std::lock_guard<std::mutex> lock(control_mu_);
    const Options before = cache_->options();
    for (const std::string& key : ChangedKeys(before, wanted)) {
      if (!IsLiveKey(key)) {
        needs_remount->push_back(key);
        LogWarning(fmt::format("{}: {} needs a remount; still {}", source, DescribeKey(wanted, key),
                               DescribeKey(before, key)));
      }
    }
    Options next = WithLiveKeys(before, wanted);
    std::vector<std::string> changed = ChangedKeys(before, next);
    if (changed.empty()) {
      LogInfo(fmt::format("{}: no live setting changed", source));
      return Status::Ok();
    }
    Status s = cache_->Reconfigure(next);
    if (!s.ok()) {
      LogError(fmt::format("{}: {}", source, s.ToString()));
      return s;
    }
    for (const std::string& key : changed) {
      LogInfo(fmt::format("{}: {} (was {})", source, DescribeKey(next, key), DescribeKey(before, key)));
    }
    return Status::Ok();
  }

  std::string RenderStats() const {
    std::string doc = RenderStatsJson(cache_->Stats());
    double uptime = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    std::string daemon = fmt::format(
        "  \"daemon\": {{\"pid\": {}, \"dataset\": {}, \"mountpoint\": {}, \"uptime_s\": {:.3f}}}",
        getpid(), JsonString(config_.dataset), JsonString(config_.mountpoint), uptime);
    // The document is one object: add the daemon's own keys before its closing brace.
    size_t close_brace = doc.rfind('}');
    if (close_brace == std::string::npos) return doc;
    size_t last = doc.find_last_not_of(" \t\r\n", close_brace - 1);
    bool empty = last != std::string::npos && doc[last] == '{';
    return doc.substr(0, last + 1) + (empty ? "\n" : ",\n") + daemon + "\n}\n";
  }

  std::string StatsLine() const {
    CacheStats s = cache_->Stats();
    HistogramSnapshot all = s.all_latency();
    return fmt::format(
        "stats: reads={} hit={:.1f}% raw_hits={} compressed_hits={} misses={} us_per_buffer={:.2f} "
        "p50={:.1f}us p99={:.1f}us raw={} compressed={} ratio={:.2f} evictions={} compressions={} "
        "stalls={}",
        s.reads, 100.0 * s.hit_ratio(), s.raw_hits, s.compressed_hits, s.misses, s.us_per_buffer(),
        all.PercentileUs(0.5), all.PercentileUs(0.99), FormatSize(s.raw_bytes),
        FormatSize(s.compressed_bytes), s.compression_ratio(), s.evictions, s.compressions,
        s.stalls);
  }

 private:
  Inode* Get(fuse_ino_t ino) {
    return ino == FUSE_ROOT_ID ? &root_ : reinterpret_cast<Inode*>(ino);
  }
  fuse_ino_t InoOf(Inode* i) {
    return i == &root_ ? FUSE_ROOT_ID : reinterpret_cast<fuse_ino_t>(i);
  }
  static FileHandle* HandleOf(fuse_file_info* fi) { return reinterpret_cast<FileHandle*>(fi->fh); }

  uint64_t RoundDown(uint64_t offset) const { return offset / page_size_ * page_size_; }

  uint64_t FileIdOf(const struct stat& st) const {
    if (st.st_dev == root_.dev) return st.st_ino;
    // A file on a file system mounted inside the dataset: mix the device in.
    return st.st_ino ^ (static_cast<uint64_t>(st.st_dev) * 0x9E3779B97F4A7C15ull);
  }

  bool IsVirtualName(Inode* parent, const char* name) {
    return parent->kind != NodeKind::kReal ||
           (parent == &root_ && strcmp(name, kControlDirName) == 0);
  }

  void ReplyEntryOrErr(fuse_req_t req, int err, fuse_entry_param* e) {
    if (err != 0) {
      fuse_reply_err(req, err);
      return;
    }
    if (fuse_reply_entry(req, e) == -ENOENT) Unref(Get(e->ino), 1);  // the caller was interrupted
  }

  // Looks `name` up in `parent` and counts one kernel reference to the result.
  int DoLookup(Inode* parent, const char* name, fuse_entry_param* e) {
    memset(e, 0, sizeof(*e));
    e->attr_timeout = config_.attr_timeout;
    e->entry_timeout = config_.attr_timeout;
    if (parent == &root_ && strcmp(name, "..") == 0) name = ".";  // never above the dataset
    int fd = openat(parent->fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return errno;
    if (fstatat(fd, "", &e->attr, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) != 0) {
      int err = errno;
      close(fd);
      return err;
    }
    e->ino = InoOf(FindOrInsert(fd, e->attr));
    return 0;
  }

  // Takes `fd`: keeps it in a new Inode or closes it when the inode is already known.
  Inode* FindOrInsert(int fd, const struct stat& st) {
    std::lock_guard<std::mutex> lock(table_mu_);
    if (st.st_dev == root_.dev && st.st_ino == root_.ino) {
      close(fd);
      return &root_;
    }
    auto key = std::make_pair(st.st_dev, st.st_ino);
    auto it = table_.find(key);
    if (it != table_.end()) {
      close(fd);
      ++it->second->nlookup;
      return it->second.get();
    }
    auto inode = std::make_unique<Inode>();
    inode->fd = fd;
    inode->dev = st.st_dev;
    inode->ino = st.st_ino;
    inode->type = st.st_mode & S_IFMT;
    inode->file_id = FileIdOf(st);
    inode->nlookup = 1;
    auto saved = saved_signatures_.find(inode->file_id);
    if (saved != saved_signatures_.end()) {
      inode->sig_known = true;
      inode->sig = saved->second;
      saved_signatures_.erase(saved);
    }
    Inode* raw = inode.get();
    table_.emplace(key, std::move(inode));
    return raw;
  }

  void Unref(Inode* i, uint64_t n) {
    if (i->kind != NodeKind::kReal || i == &root_) return;
    std::lock_guard<std::mutex> lock(table_mu_);
    i->nlookup -= std::min(n, i->nlookup);
    if (i->nlookup > 0) return;
    {
      std::lock_guard<std::mutex> sig_lock(i->sig_mu);
      if (i->sig_known) saved_signatures_[i->file_id] = i->sig;
    }
    table_.erase(std::make_pair(i->dev, i->ino));
  }

  // A link to the file `st` describes is gone (unlink, or replaced by rename). When it was the
  // last one the file's pages can never be read again: drop them now rather than wait for CLOCK.
  void DroppedLink(const struct stat& st) {
    if (!S_ISREG(st.st_mode) || st.st_nlink > 1) return;
    uint64_t id = FileIdOf(st);
    cache_->InvalidateFile(id);
    std::lock_guard<std::mutex> lock(table_mu_);
    saved_signatures_.erase(id);
  }

  void Remove(fuse_req_t req, fuse_ino_t parent, const char* name, int flags) {
    Inode* p = Get(parent);
    if (IsVirtualName(p, name)) return (void)fuse_reply_err(req, EPERM);
    struct stat st;
    bool known = fstatat(p->fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
    if (unlinkat(p->fd, name, flags) != 0) return (void)fuse_reply_err(req, errno);
    if (known) DroppedLink(st);
    fuse_reply_err(req, 0);
  }

  // Runs `make(parent_fd)` (mkdir, mknod, symlink, link), gives the new node to the caller and
  // replies with its entry.
  template <typename Make>
  void MakeNode(fuse_req_t req, fuse_ino_t parent, const char* name, Make make) {
    Inode* p = Get(parent);
    if (IsVirtualName(p, name)) {
      return (void)fuse_reply_err(req, p->kind == NodeKind::kReal ? EEXIST : EACCES);
    }
    if (make(p->fd) != 0) return (void)fuse_reply_err(req, errno);
    ChownToCaller(req, p->fd, name);
    fuse_entry_param e;
    ReplyEntryOrErr(req, DoLookup(p, name, &e), &e);
  }

  // A daemon running as root creates files as root; give them to the user who asked (only
  // reachable with allow_other, where the kernel checks permissions: default_permissions).
  void ChownToCaller(fuse_req_t req, int dirfd, const char* name) {
    if (geteuid() != 0) return;
    const fuse_ctx* ctx = fuse_req_ctx(req);
    if (ctx->uid == 0 && ctx->gid == 0) return;
    [[maybe_unused]] int res = fchownat(dirfd, name, ctx->uid, ctx->gid, AT_SYMLINK_NOFOLLOW);
  }

  int StatOf(Inode* i, struct stat* st) {
    memset(st, 0, sizeof(*st));
    switch (i->kind) {
      case NodeKind::kReal:
        if (fstatat(i->fd, "", st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) != 0) return errno;
        return 0;
      case NodeKind::kControlDir:
        st->st_mode = S_IFDIR | 0555;
        st->st_nlink = 2;
        break;
      case NodeKind::kStatsFile:
        st->st_mode = S_IFREG | 0444;
        st->st_nlink = 1;
        st->st_size = static_cast<off_t>(RenderStats().size());
        break;
      case NodeKind::kControlFile:
        st->st_mode = S_IFREG | 0600;
        st->st_nlink = 1;
        break;
    }
    st->st_ino = i->ino;
    st->st_uid = geteuid();
    st->st_gid = getegid();
    st->st_blksize = 4096;
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    st->st_atim = st->st_mtim = st->st_ctim = now;
    return 0;
  }

  void VirtualEntry(Inode* v, fuse_entry_param* e) {
    memset(e, 0, sizeof(*e));
    StatOf(v, &e->attr);
    e->ino = reinterpret_cast<fuse_ino_t>(v);
    // Sizes of virtual files change with every read: let the kernel ask each time.
    e->attr_timeout = 0;
    e->entry_timeout = config_.attr_timeout;
  }

  void OpenVirtual(fuse_req_t req, Inode* i, fuse_file_info* fi) {
    if (i->kind == NodeKind::kControlDir) return (void)fuse_reply_err(req, EISDIR);
    int mode = fi->flags & O_ACCMODE;
    fi->direct_io = 1;
    fi->keep_cache = 0;
    fi->nonseekable = 0;
    if (i->kind == NodeKind::kStatsFile) {
      if (mode != O_RDONLY) return (void)fuse_reply_err(req, EACCES);
      fi->fh = stats_docs_.Add(std::make_unique<std::string>(RenderStats()));
      if (fuse_reply_open(req, fi) == -ENOENT) stats_docs_.Remove(fi->fh);
      return;
    }
    const fuse_ctx* ctx = fuse_req_ctx(req);
    if (mode != O_RDONLY && ctx->uid != 0 && ctx->uid != geteuid()) {
      return (void)fuse_reply_err(req, EACCES);
    }
    fi->fh = 0;
    fuse_reply_open(req, fi);
  }

  // Wraps an open descriptor of a data file in a FileHandle, registered in files_ and named by
  // fi->fh.
  int AttachHandle(Inode* i, int fd, fuse_file_info* fi) {
    auto h = std::make_unique<FileHandle>();
    h->inode = i;
    h->fd = fd;
    h->append = (fi->flags & O_APPEND) != 0;
    int dup_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (dup_fd < 0) return errno;  // h closes fd
    Status s = NewPosixBackingFile(dup_fd, &h->backing, BackingFileOptionsFor(fi->flags));
    if (!s.ok()) {
      LogWarning(fmt::format("open inode {}: {}", i->ino, s.ToString()));
      return s.ToErrno();
    }
    // direct_io: every read reaches the engine, so the kernel page cache never answers a repeat
    // and the engine's hit ratio is the reader's hit ratio.
    fi->direct_io = 1;
    fi->keep_cache = 0;
    fi->fh = files_.Add(std::move(h));
    return 0;
  }

  void DetachHandle(fuse_file_info* fi) {
    files_.Remove(fi->fh);
    fi->fh = 0;
  }

  void TruncatedByOpen(Inode* i, int fd) {
    std::lock_guard<std::mutex> lock(i->sig_mu);
    cache_->InvalidateFile(i->file_id);
    RecordSignatureLocked(i, fd);
  }

  // Drops the cached pages of `i` if its backing file changed since we last looked.
  void CheckUnchanged(Inode* i, int fd) {
    struct stat st;
    if (fstat(fd, &st) != 0) return;  // the read itself will report the failure
    FileSignature now = SignatureOf(st);
    std::lock_guard<std::mutex> lock(i->sig_mu);
    UpdateSignatureLocked(i, now);
  }

  void CheckUnchangedLocked(Inode* i, int fd) {
    struct stat st;
    if (fstat(fd, &st) == 0) UpdateSignatureLocked(i, SignatureOf(st));
  }

  void UpdateSignatureLocked(Inode* i, const FileSignature& now) {
    if (i->sig_known && i->sig == now) return;
    if (i->sig_known) cache_->InvalidateFile(i->file_id);
    i->sig = now;
    i->sig_known = true;
  }

  // Records the signature our own change left, so the next check does not take it for a change
  // made underneath.
  void RecordSignatureLocked(Inode* i, int fd) {
    struct stat st;
    if (fstat(fd, &st) != 0) {
      i->sig_known = false;  // cannot tell: the next check with a known signature must not trust
      cache_->InvalidateFile(i->file_id);
      return;
    }
    i->sig = SignatureOf(st);
    i->sig_known = true;
  }

  void RecordSignatureFromPathLocked(Inode* i) {
    struct stat st;
    if (fstatat(i->fd, "", &st, AT_EMPTY_PATH) == 0) {
      if (i->sig_known) i->sig = SignatureOf(st);
    }
  }

  int XattrPath(Inode* i, std::string* path) {
    // Extended attributes need a path or a real descriptor; an O_PATH descriptor of a symlink
    // would name the link's target through /proc, so symlinks have none here.
    if (i->kind != NodeKind::kReal || i->type == S_IFLNK) return ENOTSUP;
    *path = ProcPath(i->fd);
    return 0;
  }

  Status ControlError(const std::string& message) {
    LogWarning(message);
    return Status::InvalidArgument(message);
  }

  static std::string JsonString(const std::string& s) {
    std::string out = "\"";
    for (char c : s) {
      if (c == '"' || c == '\\') {
        out += '\\';
        out += c;
      } else if (static_cast<unsigned char>(c) < 0x20) {
        out += fmt::format("\\u{:04x}", static_cast<int>(c));
      } else {
        out += c;
      }
    }
    return out + "\"";
  }

  const Config config_;
  PageCache* const cache_;
  uint64_t page_size_ = 0;
  std::chrono::steady_clock::time_point start_;

  Inode root_;
  Inode control_dir_;
  Inode stats_file_;
  Inode control_file_;

  // Lock order: table_mu_ before any Inode::sig_mu.
  std::mutex table_mu_;
  std::map<std::pair<dev_t, ino_t>, std::unique_ptr<Inode>> table_;
  std::unordered_map<uint64_t, FileSignature> saved_signatures_;  // of forgotten inodes

  // What fi->fh names, by kind. Declared after the inode table so they go first: a FileHandle
  // points at its Inode. Each has its own mutex, taken with no other lock held.
  OpenHandles<FileHandle> files_;
  OpenHandles<DirHandle> dirs_;
  OpenHandles<std::string> stats_docs_;  // stats.json as rendered at its OPEN

  std::mutex control_mu_;  // one settings change at a time (control writes, SIGHUP)
};

namespace {

Filesystem::Impl* ImplOf(fuse_req_t req) {
  return static_cast<Filesystem::Impl*>(fuse_req_userdata(req));
}

const fuse_lowlevel_ops kOps = [] {
  fuse_lowlevel_ops ops;
  memset(&ops, 0, sizeof(ops));
  ops.init = [](void* userdata, fuse_conn_info* conn) {
    static_cast<Filesystem::Impl*>(userdata)->Init(conn);
  };
  ops.lookup = [](fuse_req_t r, fuse_ino_t p, const char* n) { ImplOf(r)->Lookup(r, p, n); };
  ops.forget = [](fuse_req_t r, fuse_ino_t i, uint64_t n) {
    ImplOf(r)->Forget(i, n);
    fuse_reply_none(r);
  };
  ops.forget_multi = [](fuse_req_t r, size_t count, fuse_forget_data* forgets) {
    for (size_t k = 0; k < count; ++k) ImplOf(r)->Forget(forgets[k].ino, forgets[k].nlookup);
    fuse_reply_none(r);
  };
  ops.getattr = [](fuse_req_t r, fuse_ino_t i, fuse_file_info*) { ImplOf(r)->Getattr(r, i); };
  ops.setattr = [](fuse_req_t r, fuse_ino_t i, struct stat* a, int v, fuse_file_info* fi) {
    ImplOf(r)->Setattr(r, i, a, v, fi);
  };
  ops.readlink = [](fuse_req_t r, fuse_ino_t i) { ImplOf(r)->Readlink(r, i); };
  ops.mknod = [](fuse_req_t r, fuse_ino_t p, const char* n, mode_t m, dev_t d) {
    ImplOf(r)->Mknod(r, p, n, m, d);
  };
  ops.mkdir = [](fuse_req_t r, fuse_ino_t p, const char* n, mode_t m) {
    ImplOf(r)->Mkdir(r, p, n, m);
  };
  ops.unlink = [](fuse_req_t r, fuse_ino_t p, const char* n) { ImplOf(r)->Unlink(r, p, n); };
  ops.rmdir = [](fuse_req_t r, fuse_ino_t p, const char* n) { ImplOf(r)->Rmdir(r, p, n); };
  ops.symlink = [](fuse_req_t r, const char* l, fuse_ino_t p, const char* n) {
    ImplOf(r)->Symlink(r, l, p, n);
  };
  ops.rename = [](fuse_req_t r, fuse_ino_t p, const char* n, fuse_ino_t np, const char* nn,
                  unsigned int f) { ImplOf(r)->Rename(r, p, n, np, nn, f); };
  ops.link = [](fuse_req_t r, fuse_ino_t i, fuse_ino_t np, const char* nn) {
    ImplOf(r)->Link(r, i, np, nn);
  };
  ops.open = [](fuse_req_t r, fuse_ino_t i, fuse_file_info* fi) { ImplOf(r)->Open(r, i, fi); };
  ops.read = [](fuse_req_t r, fuse_ino_t i, size_t s, off_t o, fuse_file_info* fi) {
    ImplOf(r)->Read(r, i, s, o, fi);
  };
  ops.write = [](fuse_req_t r, fuse_ino_t i, const char* b, size_t s, off_t o,
                 fuse_file_info* fi) { ImplOf(r)->Write(r, i, b, s, o, fi); };
  ops.flush = [](fuse_req_t r, fuse_ino_t i, fuse_file_info* fi) { ImplOf(r)->Flush(r, i, fi); };
  ops.release = [](fuse_req_t r, fuse_ino_t i, fuse_file_info* fi) {
    ImplOf(r)->Release(r, i, fi);
  };
  ops.fsync = [](fuse_req_t r, fuse_ino_t i, int d, fuse_file_info* fi) {
    ImplOf(r)->Fsync(r, i, d, fi);
  };
  ops.opendir = [](fuse_req_t r, fuse_ino_t i, fuse_file_info* fi) {
    ImplOf(r)->Opendir(r, i, fi);
  };
  ops.readdir = [](fuse_req_t r, fuse_ino_t i, size_t s, off_t o, fuse_file_info* fi) {
    ImplOf(r)->Readdir(r, i, s, o, fi);
  };
  ops.releasedir = [](fuse_req_t r, fuse_ino_t i, fuse_file_info* fi) {
    ImplOf(r)->Releasedir(r, i, fi);
  };
  ops.fsyncdir = [](fuse_req_t r, fuse_ino_t i, int d, fuse_file_info* fi) {
    ImplOf(r)->Fsyncdir(r, i, d, fi);
  };
  ops.statfs = [](fuse_req_t r, fuse_ino_t i) { ImplOf(r)->Statfs(r, i); };
  ops.setxattr = [](fuse_req_t r, fuse_ino_t i, const char* n, const char* v, size_t s, int f) {
    ImplOf(r)->Setxattr(r, i, n, v, s, f);
  };
  ops.getxattr = [](fuse_req_t r, fuse_ino_t i, const char* n, size_t s) {
    ImplOf(r)->Getxattr(r, i, n, s);
  };
  ops.listxattr = [](fuse_req_t r, fuse_ino_t i, size_t s) { ImplOf(r)->Listxattr(r, i, s); };
  ops.removexattr = [](fuse_req_t r, fuse_ino_t i, const char* n) {
    ImplOf(r)->Removexattr(r, i, n);
  };
  ops.create = [](fuse_req_t r, fuse_ino_t p, const char* n, mode_t m, fuse_file_info* fi) {
    ImplOf(r)->Create(r, p, n, m, fi);
  };
  ops.fallocate = [](fuse_req_t r, fuse_ino_t i, int m, off_t o, off_t l, fuse_file_info* fi) {
    ImplOf(r)->Fallocate(r, i, m, o, l, fi);
  };
  ops.lseek = [](fuse_req_t r, fuse_ino_t i, off_t o, int w, fuse_file_info* fi) {
    ImplOf(r)->Lseek(r, i, o, w, fi);
  };
  return ops;
}();

}  // namespace

Status Filesystem::Create(const Config& config, PageCache* cache, std::unique_ptr<Filesystem>* fs) {
  auto impl = std::make_unique<Impl>(config, cache);
  Status s = impl->Open();
  if (!s.ok()) return s;
  fs->reset(new Filesystem(std::move(impl)));
  return Status::Ok();
}

Filesystem::Filesystem(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Filesystem::~Filesystem() = default;

const fuse_lowlevel_ops& Filesystem::Ops() { return kOps; }
void* Filesystem::userdata() { return impl_.get(); }

Status Filesystem::ApplyControlText(const std::string& text) {
  return impl_->ApplyControlText(text);
}

Status Filesystem::ApplyLiveOptions(const Options& wanted, const std::string& source,
                                    std::vector<std::string>* needs_remount) {
  return impl_->ApplyLiveOptions(wanted, source, needs_remount);
}

std::string Filesystem::RenderStats() const { return impl_->RenderStats(); }
std::string Filesystem::StatsLine() const { return impl_->StatsLine(); }

}  // namespace ccfs
