// Handlers for directories (see ops.h). Readdir of the root hides a real ".ccfs": the name is the
// control directory's.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <memory>
#include <vector>

#include "fuse/ops.h"

namespace ccfs::ops {

namespace {

// A descriptor of directory `i` on the store for listing it, or -1 with errno. Cached descriptors
// are shed once if the limit is reached; the root is found again if it was replaced underneath.
int OpenStoreDir(FsContext* fs, Inode* i) {
  auto open_dir = [&]() -> int {
    InodeFd path_fd = fs->inodes.Borrow(i);
    if (!path_fd) {
      errno = path_fd.error();
      return -1;
    }
    int fd = openat(path_fd.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0 && (errno == EMFILE || errno == ENFILE) && fs->inodes.Shed(errno)) {
      fd = openat(path_fd.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    }
    return fd;
  };
  int fd = open_dir();
  if (fd < 0 && i == fs->inodes.root() && fs->inodes.RecoverRoot(errno)) fd = open_dir();
  return fd;
}

// Gives `d` its stream of directory `i` on the store if it has none yet: 0, or an errno.
int OpenStream(FsContext* fs, Inode* i, DirHandle* d) {
  if (d->dp != nullptr) return 0;
  const int fd = OpenStoreDir(fs, i);
  if (fd < 0) return errno;
  d->dp = fdopendir(fd);
  if (d->dp == nullptr) {
    const int err = errno;
    close(fd);
    return err;
  }
  return 0;
}

}  // namespace

// The kernel keeps the listings it is sent (cache_readdir) and may serve one again without a
// READDIR when the daemon vouches for it at OPENDIR (keep_cache): read from the store less than
// attr_timeout ago, the staleness a stat of its entries may have (docs/STORES.md). The kernel
// drops it by itself on a change made through the mount (the directory's i_version) and on a new
// mtime of the directory it is told of. Such an open opens nothing on the store: its stream is
// opened if the kernel asks for entries after all (its copy was reclaimed, or is incomplete).
// Otherwise the kernel's copy goes, and the listing read now is the one kept.
void Opendir(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  FsContext* fs = ContextOf(req);
  Inode* i = fs->inodes.Get(ino);
  if (i->kind != NodeKind::kReal) return fs->control.Opendir(req, i, fi);
  const int64_t now_ns = static_cast<int64_t>(SteadyNowNs());
  const int64_t max_age_ns = AttrTimeoutNs(fs);
  std::array<InodeKey, kListingOrders> firsts{};
  auto d = std::make_unique<DirHandle>();
  const bool fresh = max_age_ns > 0 && fs->inodes.ListingFresh(i, now_ns, max_age_ns, &firsts);
  if (!fresh) {
    const int err = OpenStream(fs, i, d.get());
    if (err != 0) return (void)ReplyErr(req, err);
  }
  fi->cache_readdir = 1;
  fi->keep_cache = fresh ? 1 : 0;
  fi->fh = fs->dirs.Add(std::move(d));
  // Before the reply: the kernel's READDIRPLUS may follow it on another thread and note the new
  // listing's first entries before this one goes on.
  if (!fresh) fs->inodes.ForgetListingFirsts(i);
  if (fuse_reply_open(req, fi) != 0) return fs->dirs.Remove(fi->fh);
  // Only once the kernel has the reply: an open it never saw dropped no copy it held.
  if (!fresh) fs->inodes.NoteListingRead(i, now_ns);
  // A walk going on goes into a listing the kernel serves as into one the daemon reads (WalkInto).
  if (fresh && (firsts[kListedOrder].second != 0 || firsts[kNameOrder].second != 0)) {
    WalkInto(fs, i, firsts);
  }
}

namespace {

// READDIR, or READDIRPLUS when `plus`. A plus entry counts one lookup reference to its Inode
// (LookupEntry), given back if the entry does not fit in the reply; "." and ".." go without a node
// (ino 0: the kernel resolves them itself). An entry whose lookup fails (removed since it was
// read) is left out.
void ReadEntries(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info* fi,
                 bool plus) {
  FsContext* fs = ContextOf(req);
  Inode* i = fs->inodes.Get(ino);
  if (i->kind == NodeKind::kControlDir) {
    return fs->control.Readdir(req, size, off, fs->inodes.RootIno(), plus);
  }
  std::vector<char> buf(size);
  size_t used = 0;
  std::vector<fuse_ino_t> counted;  // plus: the lookup references the reply carries
  DirHandle* d = OpenHandles<DirHandle>::Of(fi->fh);
  if (const int err = OpenStream(fs, i, d); err != 0) return (void)ReplyErr(req, err);
  if (off != d->offset) {
    seekdir(d->dp, off);
    d->entry = nullptr;
    d->offset = off;
    d->last_listed = {0, 0};
    d->first_listed = {0, 0};
    d->listed.clear();
    d->by_name = off == 0;  // a listing from its start again (rewinddir), or a part of one
    d->at_end = false;
  }
  int err = 0;
  while (!d->at_end) {
    if (d->entry == nullptr) {
      errno = 0;
      d->entry = readdir(d->dp);
      if (d->entry == nullptr) {
        err = errno;
        d->at_end = err == 0;
        break;
      }
    }
    const char* name = d->entry->d_name;
    if (!(i == fs->inodes.root() && strcmp(name, kControlDirName) == 0)) {
      fuse_entry_param e;
      memset(&e, 0, sizeof(e));
      e.attr.st_ino = d->entry->d_ino;
      e.attr.st_mode = static_cast<mode_t>(d->entry->d_type) << 12;
      bool listed = true;
      size_t need;
      if (!plus) {
        need = fuse_add_direntry(req, buf.data() + used, size - used, name, &e.attr,
                                 d->entry->d_off);
      } else {
        const bool dots = strcmp(name, ".") == 0 || strcmp(name, "..") == 0;
        if (!dots && LookupEntry(fs, i, name, &e) != 0) {
          listed = false;  // gone since readdir saw it: the next listing will not show it either
          need = 0;
        } else {
          need = fuse_add_direntry_plus(req, buf.data() + used, size - used, name, &e,
                                        d->entry->d_off);
          if (need > size - used && e.ino != 0) fs->inodes.Unref(fs->inodes.Get(e.ino), 1);
          if (need <= size - used && e.ino != 0) {
            counted.push_back(e.ino);
            Inode* listed = fs->inodes.Get(e.ino);
            fs->inodes.NoteListed(d->last_listed, listed, static_cast<uint64_t>(e.attr.st_size));
            // by_name: this listing began at the start, and went no further than kMaxByName yet.
            if (d->last_listed.second == 0 && d->by_name) d->first_listed = KeyOf(*listed);
            d->last_listed = KeyOf(*listed);
            if (d->by_name && d->listed.size() < DirHandle::kMaxByName) {
              d->listed.emplace_back(name, d->last_listed);
            } else {
              d->by_name = false;
              d->listed.clear();
            }
          }
        }
      }
      if (need > size - used) break;  // keep the entry for the next call
      if (listed) used += need;
    }
    d->offset = d->entry->d_off;
    d->entry = nullptr;
  }
  // The listing's end: its entries' order by name (bytewise), and a walk going on goes into it.
  if (plus && d->entry == nullptr && err == 0) {
    std::array<InodeKey, kListingOrders> firsts{};
    firsts[kListedOrder] = d->first_listed;
    if (d->first_listed.second != 0) {
      fs->dir_warmer.ListingEnded(i, d->first_listed, fs->cache->ReadAheadWindow() > 0);
    }
    d->first_listed = {0, 0};
    if (d->by_name) {
      std::sort(d->listed.begin(), d->listed.end());
      std::vector<InodeKey> keys;
      keys.reserve(d->listed.size());
      for (const auto& [entry_name, key] : d->listed) keys.push_back(key);
      fs->inodes.NoteNameOrder(keys);
      if (!keys.empty()) firsts[kNameOrder] = keys.front();
      d->by_name = false;
      d->listed = {};
    }
    if (firsts[kListedOrder].second != 0 || firsts[kNameOrder].second != 0) {
      fs->inodes.NoteListingFirsts(i, firsts);
      WalkInto(fs, i, firsts);
    }
  }
  // An error after some entries is reported by the next call (it starts at the failed one).
  if (err != 0 && used == 0) return (void)ReplyErr(req, err);
  if (fuse_reply_buf(req, buf.data(), used) == -ENOENT) {
    for (fuse_ino_t e : counted) fs->inodes.Unref(fs->inodes.Get(e), 1);  // the caller was interrupted
  }
}

}  // namespace

void Readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info* fi) {
  ReadEntries(req, ino, size, off, fi, /*plus=*/false);
}

void Readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info* fi) {
  ReadEntries(req, ino, size, off, fi, /*plus=*/true);
}

void Releasedir(fuse_req_t req, fuse_ino_t /*ino*/, fuse_file_info* fi) {
  ContextOf(req)->dirs.Remove(fi->fh);  // 0 for .ccfs
  ReplyOk(req);
}

void Fsyncdir(fuse_req_t req, fuse_ino_t ino, int datasync, fuse_file_info* fi) {
  DirHandle* d = OpenHandles<DirHandle>::Of(fi->fh);
  if (d == nullptr) return (void)ReplyOk(req);
  FsContext* fs = ContextOf(req);
  if (const int err = OpenStream(fs, fs->inodes.Get(ino), d); err != 0) {
    return (void)ReplyErr(req, err);
  }
  int fd = dirfd(d->dp);
  int res = datasync ? fdatasync(fd) : fsync(fd);
  ReplyResult(req, res);
}

}  // namespace ccfs::ops
