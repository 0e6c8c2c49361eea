// Handlers for names and attributes (see ops.h), and the helpers every handler group shares.
#include <fcntl.h>
#include <fmt/format.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "fuse/caller_identity.h"
#include "fuse/kill_priv.h"
#include "fuse/log.h"
#include "fuse/ops.h"

namespace ccfs::ops {

// ---- shared helpers -----------------------------------------------------------------------------

int StatOf(FsContext* fs, Inode* i, struct stat* st) {
  if (i->kind != NodeKind::kReal) {
    fs->control.Stat(i, st);
    return 0;
  }
  int err;
  {
    InodeFd fd = fs->inodes.Borrow(i);
    if (!fd) return fd.error();
    err = StatOfFd(fd.get(), st);
    if (err == 0) return 0;
  }
  // The root's descriptor dead, the store back at DATASET's path: once more through the new root.
  if (i != fs->inodes.root() || !fs->inodes.RecoverRoot(err)) return err;
  InodeFd fd = fs->inodes.Borrow(i);
  return StatOfFd(fd.get(), st);
}

bool IsVirtualName(FsContext* fs, Inode* parent, const char* name) {
  return parent->kind != NodeKind::kReal ||
         (parent == fs->inodes.root() && strcmp(name, kControlDirName) == 0);
}

namespace {

// How long an attribute reply waits for the kernel to drop the pages of a file found changed. The
// kernel's invalidation waits for pages locked by READs in flight, which other request threads
// serve; the bound keeps a reply from waiting on a READ queued behind it on the same thread.
constexpr std::chrono::milliseconds kStaleDropWait{500};

// `st`, the attributes of `i` about to be sent to the kernel, are checked against the file's
// signature (change_detector.h); if they show a change made behind the mount's back, the reply
// waits until the kernel has dropped its pages of the file, so the read that asked is not answered
// from them.
void CheckAttributes(FsContext* fs, Inode* i, const struct stat& st) {
  if (i->kind != NodeKind::kReal || !fs->changes.CheckAttributes(i, st)) return;
  static std::atomic<bool> warned{false};
  if (fs->kernel != nullptr && !fs->kernel->AwaitSent(kStaleDropWait) &&
      !warned.exchange(true)) {
    LogWarning(fmt::format("the kernel's pages of backing inode {}, changed underneath, were not "
                           "dropped within {} ms; replied without waiting longer (logged once)",
                           i->ino, kStaleDropWait.count()));
  }
}

}  // namespace

int LookupEntry(FsContext* fs, Inode* parent, const char* name, fuse_entry_param* e) {
  memset(e, 0, sizeof(*e));
  e->attr_timeout = fs->config.attr_timeout;
  e->entry_timeout = fs->config.entry_timeout;
  Inode* found = nullptr;
  const ChangeDetector::AttrRead read = fs->changes.BeforeAttributes();
  int err = fs->inodes.Lookup(parent, name, &e->attr, &found);
  if (err != 0 && parent == fs->inodes.root() && fs->inodes.RecoverRoot(err)) {
    err = fs->inodes.Lookup(parent, name, &e->attr, &found);
  }
  if (err != 0) return err;
  CheckAttributes(fs, found, e->attr);
  if (found != fs->inodes.root()) fs->changes.NoteAttributes(found, e->attr, read);
  e->ino = fs->inodes.InoOf(found);
  return 0;
}

void ReplyEntryOrErr(FsContext* fs, fuse_req_t req, int err, fuse_entry_param* e) {
  if (err != 0) return (void)ReplyErr(req, err);
  if (fuse_reply_entry(req, e) == -ENOENT) {
    fs->inodes.Unref(fs->inodes.Get(e->ino), 1);  // the caller was interrupted
  }
}

namespace {

// Answers with i's attributes: those read from the store less than attr_timeout ago, for the time
// left of it, when no change through the mount began since (change_detector.h, attribute
// records); else read now, checked for a change underneath and recorded.
void ReplyAttr(FsContext* fs, fuse_req_t req, Inode* i) {
  struct stat st;
  const bool recorded = i->kind == NodeKind::kReal && i != fs->inodes.root();
  double left_s = 0;
  if (recorded && fs->changes.RecentAttributes(i, AttrTimeoutNs(fs), &st, &left_s)) {
    fuse_reply_attr(req, &st, left_s);
    return;
  }
  const ChangeDetector::AttrRead read = fs->changes.BeforeAttributes();
  int err = StatOf(fs, i, &st);
  if (err != 0) return (void)ReplyErr(req, err);
  CheckAttributes(fs, i, st);
  if (recorded) fs->changes.NoteAttributes(i, st, read);
  fuse_reply_attr(req, &st, fs->config.attr_timeout);
}

// Runs `make(parent_fd)` (mkdir, mknod, symlink, link) and replies with the new entry. With
// `as_caller`, `make` runs with the caller's identity (caller_identity.h), so the node is created
// as the kernel would create it for them: their owner, the group a set-group-ID directory gives,
// the set-id bits they asked for, and the backing file system's own permission check. A link makes
// no node: it runs as the daemon, after the kernel's checks, and leaves the file's owner alone.
template <typename Make>
void MakeNode(fuse_req_t req, fuse_ino_t parent, const char* name, bool as_caller, Make make) {
  FsContext* fs = ContextOf(req);
  Inode* p = fs->inodes.Get(parent);
  if (IsVirtualName(fs, p, name)) {
    return (void)ReplyErr(req, p->kind == NodeKind::kReal ? EEXIST : EACCES);
  }
  int err = 0;
  {
    InodeFd dir = fs->inodes.Borrow(p);
    if (!dir) {
      err = dir.error();
    } else if (as_caller) {
      CallerIdentity caller(req);
      err = caller.error();
      if (err == 0 && make(dir.get()) != 0) err = errno;
    } else if (make(dir.get()) != 0) {
      err = errno;
    }
  }
  if (err != 0) return (void)ReplyErr(req, err);
  fuse_entry_param e;
  ReplyEntryOrErr(fs, req, LookupEntry(fs, p, name, &e), &e);
}

// The link `name` in `parent` to the file `st` describes is gone (unlink, or replaced by rename).
// When it was the last one the file's pages can never be read again: drop them now rather than
// wait for CLOCK, and let the backing file go so its space comes back before the removal returns
// (its kept read handle too, read_handles.h).
void DroppedLink(FsContext* fs, Inode* parent, const char* name, const struct stat& st) {
  if (const Inode* last = fs->inodes.LinkRemoved(parent, name, st)) fs->read_handles.Forget(last);
  if (!S_ISREG(st.st_mode) || st.st_nlink > 1) return;
  uint64_t id = fs->inodes.FileIdOf(st);
  fs->cache->InvalidateFile(id);
  fs->inodes.ForgetSignature(id);
}

void RemoveEntry(fuse_req_t req, fuse_ino_t parent, const char* name, int flags) {
  FsContext* fs = ContextOf(req);
  Inode* p = fs->inodes.Get(parent);
  if (IsVirtualName(fs, p, name)) return (void)ReplyErr(req, EPERM);
  struct stat st;
  {
    InodeFd dir = fs->inodes.Borrow(p);
    if (!dir) return (void)ReplyErr(req, dir.error());
    bool known = fstatat(dir.get(), name, &st, AT_SYMLINK_NOFOLLOW) == 0;
    if (unlinkat(dir.get(), name, flags) != 0) return (void)ReplyErr(req, errno);
    if (known) DroppedLink(fs, p, name, st);
  }
  ReplyOk(req);
}

// ---- the steps of SETATTR, in the order they run; each returns 0 or the errno ------------------

int SetMode(FileHandle* h, const InodeFd& path_fd, mode_t mode) {
  int res = h != nullptr ? fchmod(h->fd, mode)
                         : fchmodat(AT_FDCWD, ProcPath(path_fd.get()).c_str(), mode, 0);
  return res == 0 ? 0 : errno;
}

int SetOwner(const InodeFd& path_fd, const struct stat* attr, int valid) {
  uid_t uid = (valid & FUSE_SET_ATTR_UID) ? attr->st_uid : static_cast<uid_t>(-1);
  gid_t gid = (valid & FUSE_SET_ATTR_GID) ? attr->st_gid : static_cast<gid_t>(-1);
  if (fchownat(path_fd.get(), "", uid, gid, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) != 0) {
    return errno;
  }
  return 0;
}

int SetSize(fuse_req_t req, FsContext* fs, Inode* i, FileHandle* h, const InodeFd& path_fd,
            off_t size, int valid) {
  if (i->type != S_IFREG) return i->type == S_IFDIR ? EISDIR : EINVAL;
  int fd = h != nullptr ? h->fd : -1;
  int own_fd = -1;
  if (fd < 0) {
    own_fd = open(ProcPath(path_fd.get()).c_str(), O_WRONLY | O_CLOEXEC);
    if (own_fd < 0) return errno;
    fd = own_fd;
  }
  int err = 0;
  {
    ChangeDetector::OwnChange change(&fs->changes, i, fd);
    const uint64_t old_size = change.size_before();
    if (TruncateMustClearSetId(valid, fuse_req_ctx(req)->uid)) err = ClearSetId(fd, req);
    if (err != 0) {
      // the set-id bits could not be cleared: the size is left as it was
    } else if (ftruncate(fd, size) != 0) {
      err = errno;
    } else {
      // Shrinking: the page holding the new end keeps bytes beyond it; drop it too so a later
      // extension reads zeros there. Growing: the page that held the old end is cached short
      // (it ended the file); drop it so reads go on past the old end.
      change.DropFrom(std::min<uint64_t>(old_size, static_cast<uint64_t>(size)));
      change.Record(fd);
    }
  }
  if (own_fd >= 0) close(own_fd);
  return err;
}

int SetTimes(FsContext* fs, Inode* i, FileHandle* h, const InodeFd& path_fd,
             const struct stat* attr, int valid) {
  struct timespec tv[2];
  tv[0].tv_sec = tv[1].tv_sec = 0;
  tv[0].tv_nsec = tv[1].tv_nsec = UTIME_OMIT;
  if (valid & FUSE_SET_ATTR_ATIME_NOW) tv[0].tv_nsec = UTIME_NOW;
  else if (valid & FUSE_SET_ATTR_ATIME) tv[0] = attr->st_atim;
  if (valid & FUSE_SET_ATTR_MTIME_NOW) tv[1].tv_nsec = UTIME_NOW;
  else if (valid & FUSE_SET_ATTR_MTIME) tv[1] = attr->st_mtim;
  int res = h != nullptr ? futimens(h->fd, tv)
                         : utimensat(path_fd.get(), "", tv, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW);
  if (res != 0 && errno == EINVAL && i->type != S_IFLNK) {
    // Kernels without AT_EMPTY_PATH for utimensat: the /proc link names the inode itself.
    res = utimensat(AT_FDCWD, ProcPath(path_fd.get()).c_str(), tv, 0);
  }
  if (res != 0) return errno;
  if (i->type == S_IFREG) {
    fs->changes.RecordNewTimes(i, h != nullptr ? h->fd : -1, path_fd.get());
  }
  return 0;
}

}  // namespace

// ---- handlers -----------------------------------------------------------------------------------

void Lookup(fuse_req_t req, fuse_ino_t parent, const char* name) {
  FsContext* fs = ContextOf(req);
  Inode* p = fs->inodes.Get(parent);
  fuse_entry_param e;
  if (p->kind == NodeKind::kControlDir) {
    if (strcmp(name, "..") == 0) {
      return ReplyEntryOrErr(fs, req, LookupEntry(fs, fs->inodes.root(), ".", &e), &e);
    }
    Inode* v = fs->control.Child(name);
    if (v == nullptr) return (void)ReplyErr(req, ENOENT);
    fs->control.Entry(v, &e);
    if (fuse_reply_entry(req, &e) == -ENOENT) fs->control.Forget(v, 1);  // interrupted
    return;
  }
  if (p->kind != NodeKind::kReal) return (void)ReplyErr(req, ENOTDIR);
  if (p == fs->inodes.root() && strcmp(name, kControlDirName) == 0) {
    fs->control.Entry(fs->control.dir(), &e);
    return (void)fuse_reply_entry(req, &e);
  }
  const int err = LookupEntry(fs, p, name, &e);
  if (err == ENOENT && fs->config.negative_timeout > 0) {
    // The name's absence, kept by the kernel for negative_timeout: a name made underneath shows
    // that much later.
    memset(&e, 0, sizeof(e));
    e.entry_timeout = fs->config.negative_timeout;
    return (void)fuse_reply_entry(req, &e);
  }
  ReplyEntryOrErr(fs, req, err, &e);
}

namespace {

// The kernel gave back `nlookup` references to `ino`. When that was the last, the kernel has
// evicted the inode, and its cached pages with it; the table tells the ledger when it frees the
// Inode (Filesystem's before_free); ControlDir frees a stats.json node.
void ForgetOne(FsContext* fs, fuse_ino_t ino, uint64_t nlookup) {
  Inode* i = fs->inodes.Get(ino);
  if (i->kind != NodeKind::kReal) return fs->control.Forget(i, nlookup);
  // A freed Inode is never named again (a new LOOKUP makes a new one): its kept read handle, if
  // any, would only hold a descriptor, and the file's space on the store were it removed. `i` is
  // a key here, not looked at.
  if (fs->inodes.Unref(i, nlookup)) fs->read_handles.Forget(i);
}

}  // namespace

void Forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup) {
  ForgetOne(ContextOf(req), ino, nlookup);
  fuse_reply_none(req);
}

void ForgetMulti(fuse_req_t req, size_t count, fuse_forget_data* forgets) {
  FsContext* fs = ContextOf(req);
  for (size_t k = 0; k < count; ++k) ForgetOne(fs, forgets[k].ino, forgets[k].nlookup);
  fuse_reply_none(req);
}

void Getattr(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  FsContext* fs = ContextOf(req);
  Inode* i = fs->inodes.Get(ino);
  if (i->kind != NodeKind::kReal) return fs->control.Getattr(req, i, fi);
  ReplyAttr(fs, req, i);
}

void Setattr(fuse_req_t req, fuse_ino_t ino, struct stat* attr, int valid, fuse_file_info* fi) {
  FsContext* fs = ContextOf(req);
  Inode* i = fs->inodes.Get(ino);
  if (i->kind != NodeKind::kReal) return fs->control.Setattr(req, i, valid);
  // A read-only open with no descriptor of its own (data_ops.cc OpenKept) changes the file by name.
  FileHandle* h = (fi != nullptr && i->type == S_IFREG) ? FileOf(fi) : nullptr;
  if (h != nullptr && h->fd < 0) h = nullptr;
  int err = 0;
  {
    InodeFd fd = fs->inodes.Borrow(i);
    if (!fd) err = fd.error();
    if (err == 0 && (valid & FUSE_SET_ATTR_MODE)) err = SetMode(h, fd, attr->st_mode);
    if (err == 0 && (valid & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID))) {
      err = SetOwner(fd, attr, valid);
    }
    if (err == 0 && (valid & FUSE_SET_ATTR_SIZE)) {
      err = SetSize(req, fs, i, h, fd, attr->st_size, valid);
    }
    if (err == 0 && (valid & (FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_MTIME))) {
      err = SetTimes(fs, i, h, fd, attr, valid);
    }
  }
  if (err != 0) return (void)ReplyErr(req, err);
  ReplyAttr(fs, req, i);
}

void Readlink(fuse_req_t req, fuse_ino_t ino) {
  FsContext* fs = ContextOf(req);
  Inode* i = fs->inodes.Get(ino);
  if (i->kind != NodeKind::kReal) return (void)ReplyErr(req, EINVAL);
  InodeFd fd = fs->inodes.Borrow(i);
  if (!fd) return (void)ReplyErr(req, fd.error());
  char buf[PATH_MAX + 1];
  ssize_t n = readlinkat(fd.get(), "", buf, sizeof(buf));
  if (n < 0) return (void)ReplyErr(req, errno);
  if (n >= static_cast<ssize_t>(sizeof(buf))) return (void)ReplyErr(req, ENAMETOOLONG);
  buf[n] = '\0';
  fuse_reply_readlink(req, buf);
}

void Mknod(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode, dev_t rdev) {
  MakeNode(req, parent, name, /*as_caller=*/true, [&](int dirfd) {
    return S_ISDIR(mode) ? mkdirat(dirfd, name, mode) : mknodat(dirfd, name, mode, rdev);
  });
}

void Mkdir(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode) {
  MakeNode(req, parent, name, /*as_caller=*/true,
           [&](int dirfd) { return mkdirat(dirfd, name, mode); });
}

void Symlink(fuse_req_t req, const char* link, fuse_ino_t parent, const char* name) {
  MakeNode(req, parent, name, /*as_caller=*/true,
           [&](int dirfd) { return symlinkat(link, dirfd, name); });
}

void Link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char* newname) {
  FsContext* fs = ContextOf(req);
  Inode* i = fs->inodes.Get(ino);
  if (i->kind != NodeKind::kReal) return (void)ReplyErr(req, EPERM);
  InodeFd fd = fs->inodes.Borrow(i);
  if (!fd) return (void)ReplyErr(req, fd.error());
  MakeNode(req, newparent, newname, /*as_caller=*/false, [&](int dirfd) {
    int res = linkat(fd.get(), "", dirfd, newname, AT_EMPTY_PATH);
    if (res != 0 && (errno == EPERM || errno == ENOENT) && i->type != S_IFLNK) {
      // AT_EMPTY_PATH needs CAP_DAC_READ_SEARCH; the /proc link works for everyone.
      res = linkat(AT_FDCWD, ProcPath(fd.get()).c_str(), dirfd, newname, AT_SYMLINK_FOLLOW);
    }
    return res;
  });
}

void Unlink(fuse_req_t req, fuse_ino_t parent, const char* name) {
  RemoveEntry(req, parent, name, 0);
}

void Rmdir(fuse_req_t req, fuse_ino_t parent, const char* name) {
  RemoveEntry(req, parent, name, AT_REMOVEDIR);
}

void Rename(fuse_req_t req, fuse_ino_t parent, const char* name, fuse_ino_t newparent,
            const char* newname, unsigned int flags) {
  FsContext* fs = ContextOf(req);
  Inode* p = fs->inodes.Get(parent);
  Inode* np = fs->inodes.Get(newparent);
  if (IsVirtualName(fs, p, name) || IsVirtualName(fs, np, newname)) {
    return (void)ReplyErr(req, EPERM);
  }
  {
    InodeFd from = fs->inodes.Borrow(p);
    if (!from) return (void)ReplyErr(req, from.error());
    InodeFd to = fs->inodes.Borrow(np);
    if (!to) return (void)ReplyErr(req, to.error());
    struct stat moved, victim;
    bool known = fstatat(from.get(), name, &moved, AT_SYMLINK_NOFOLLOW) == 0;
    bool replaces = fstatat(to.get(), newname, &victim, AT_SYMLINK_NOFOLLOW) == 0;
    if (renameat2(from.get(), name, to.get(), newname, flags) != 0) {
      return (void)ReplyErr(req, errno);
    }
    if (replaces && (flags & RENAME_EXCHANGE)) {
      fs->inodes.Renamed(np, newname, p, name, victim);
    } else if (replaces) {
      DroppedLink(fs, np, newname, victim);
    }
    if (known) fs->inodes.Renamed(p, name, np, newname, moved);
  }
  ReplyOk(req);
}

void Statfs(fuse_req_t req, fuse_ino_t ino) {
  FsContext* fs = ContextOf(req);
  Inode* i = fs->inodes.Get(ino);
  struct statvfs sv;
  InodeFd fd = fs->inodes.Borrow(i->kind == NodeKind::kReal ? i : fs->inodes.root());
  if (!fd) return (void)ReplyErr(req, fd.error());
  if (fstatvfs(fd.get(), &sv) != 0) return (void)ReplyErr(req, errno);
  fuse_reply_statfs(req, &sv);
}

}  // namespace ccfs::ops
