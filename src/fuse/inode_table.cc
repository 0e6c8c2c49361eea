// The inode table: see inode_table.h for how an Inode is found again by name, what the descriptor
// cache keeps, and why lookups never follow links.
#include "fuse/inode_table.h"

#include <fcntl.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include <fmt/format.h>

#include "fuse/log.h"

namespace ccfs {

FileSignature SignatureOf(const struct stat& st) {
  FileSignature s;
  s.size = static_cast<uint64_t>(st.st_size);
  s.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  s.ctime_ns = static_cast<int64_t>(st.st_ctim.tv_sec) * 1000000000 + st.st_ctim.tv_nsec;
  return s;
}

FileSignature SignatureOf(const struct statx& stx) {
  FileSignature s;
  s.size = stx.stx_size;
  s.mtime_ns = static_cast<int64_t>(stx.stx_mtime.tv_sec) * 1000000000 + stx.stx_mtime.tv_nsec;
  s.ctime_ns = static_cast<int64_t>(stx.stx_ctime.tv_sec) * 1000000000 + stx.stx_ctime.tv_nsec;
  return s;
}

Inode::~Inode() {
  if (fd >= 0) close(fd);
}

InodeFd& InodeFd::operator=(InodeFd&& other) noexcept {
  if (this != &other) {
    Reset();
    table_ = std::exchange(other.table_, nullptr);
    inode_ = std::exchange(other.inode_, nullptr);
    fd_ = std::exchange(other.fd_, -1);
    err_ = std::exchange(other.err_, 0);
  }
  return *this;
}

void InodeFd::Reset() {
  if (table_ != nullptr) table_->Return(inode_);
  table_ = nullptr;
  inode_ = nullptr;
  fd_ = -1;
}

namespace {

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch()).count();
}

void CloseAll(const std::vector<int>& fds) {
  for (int fd : fds) close(fd);
}

// statx of `name` under `dir_fd` (with AT_EMPTY_PATH in `flags`, of what `dir_fd` itself names),
// never following a symlink nor mounting an automount point: what a LOOKUP or GETATTR reply
// needs, and the birth time where the store has one. The atime is not asked for: a FUSE store
// (sshfs, a GlusterFS client) marks a file's cached atime stale after every read, so a stat
// asking for it, as fstat does, costs a GETATTR round trip to the store's server each time the
// kernel refreshes the attributes of a file read through ccfs, which it does after every READ
// reply on a read-write mount. The other fields are as fresh as the store client's attribute
// cache (the staleness bound of docs/STORES.md counts it), and the atime comes from that cache too.
int StatxFlags(int dir_fd, const char* name, int flags, struct statx* stx) {
  if (statx(dir_fd, name, flags | AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT | AT_STATX_SYNC_AS_STAT,
            (STATX_BASIC_STATS & ~STATX_ATIME) | STATX_BTIME, stx) != 0) {
    return errno;
  }
  return 0;
}

int StatxOf(int fd, struct statx* stx) { return StatxFlags(fd, "", AT_EMPTY_PATH, stx); }

int64_t BirthNs(const struct statx& stx) {
  if (!(stx.stx_mask & STATX_BTIME)) return 0;
  return static_cast<int64_t>(stx.stx_btime.tv_sec) * 1000000000 + stx.stx_btime.tv_nsec;
}

struct timespec Timespec(const struct statx_timestamp& t) {
  struct timespec ts;
  ts.tv_sec = t.tv_sec;
  ts.tv_nsec = t.tv_nsec;
  return ts;
}

void StatFromStatx(const struct statx& stx, struct stat* st) {
  memset(st, 0, sizeof(*st));
  st->st_dev = makedev(stx.stx_dev_major, stx.stx_dev_minor);
  st->st_ino = stx.stx_ino;
  st->st_mode = stx.stx_mode;
  st->st_nlink = stx.stx_nlink;
  st->st_uid = stx.stx_uid;
  st->st_gid = stx.stx_gid;
  st->st_rdev = makedev(stx.stx_rdev_major, stx.stx_rdev_minor);
  st->st_size = static_cast<off_t>(stx.stx_size);
  st->st_blksize = static_cast<blksize_t>(stx.stx_blksize);
  st->st_blocks = static_cast<blkcnt_t>(stx.stx_blocks);
  st->st_atim = Timespec(stx.stx_atime);
  st->st_mtim = Timespec(stx.stx_mtime);
  st->st_ctim = Timespec(stx.stx_ctime);
}

bool OutOfDescriptors(int err) { return err == EMFILE || err == ENFILE; }

// How often running out of descriptors is logged (with the count since the last line).
constexpr int64_t kShortageLogNs = 10'000'000'000;

}  // namespace

int StatOfFd(int fd, struct stat* st) {
  struct statx stx;
  if (int err = StatxOf(fd, &stx); err != 0) return err;
  StatFromStatx(stx, st);
  return 0;
}

int StatxAt(int dir_fd, const char* name, struct statx* stx) {
  return StatxFlags(dir_fd, name, 0, stx);
}

InodeTable::~InodeTable() {
  for (int fd : dead_root_fds_) close(fd);
  if (int fd = root_fd_.load(); fd >= 0) close(fd);
}

Status InodeTable::Open(const std::string& dataset, size_t max_open,
                        std::function<void(fuse_ino_t)> before_free) {
  dataset_ = dataset;
  max_open_ = std::max<size_t>(max_open, 1);
  before_free_ = std::move(before_free);
  int fd = open(dataset.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Status::FromErrno(errno, "dataset " + dataset);
  root_fd_.store(fd);
  struct stat st;
  if (fstatat(fd, "", &st, AT_EMPTY_PATH) != 0) {
    return Status::FromErrno(errno, "dataset " + dataset);
  }
  root_.type = S_IFDIR;
  root_.file_id = st.st_ino;
  root_dev_.store(st.st_dev);
  root_ino_.store(st.st_ino);
  return Status::Ok();
}

bool InodeTable::RecoverRoot(int err) {
  // What a store's client that has gone answers (ENOTCONN: FUSE clients such as sshfs and
  // GlusterFS's; ESTALE: NFS); any other error is the op's own.
  if (err != ENOTCONN && err != ECONNABORTED && err != ESTALE) return false;
  // A store found still gone is tried again 100 ms later at the soonest: the ops meanwhile fail
  // at once (EIO) instead of queueing here.
  constexpr int64_t kRetryNs = 100'000'000;
  if (NowNs() < recover_after_ns_.load(std::memory_order_relaxed)) return false;
  MutexLock recover(&recover_mu_);
  struct stat st;
  if (fstatat(root_fd_.load(), "", &st, AT_EMPTY_PATH) == 0) return true;  // alive (recovered)
  if (NowNs() < recover_after_ns_.load(std::memory_order_relaxed)) return false;  // tried meanwhile
  // An O_PATH open of a dead mount's root can succeed: the fstat says whether it is alive.
  int fd = open(dataset_.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0 && (fstatat(fd, "", &st, AT_EMPTY_PATH) != 0 || !S_ISDIR(st.st_mode))) {
    close(fd);
    fd = -1;
  }
  if (fd < 0) {
    recover_after_ns_.store(NowNs() + kRetryNs, std::memory_order_relaxed);
    return false;
  }
  std::vector<int> to_close;
  {
    MutexLock lock(&mu_);
    generation_.fetch_add(1, std::memory_order_relaxed);
    root_dev_.store(st.st_dev, std::memory_order_release);
    root_ino_.store(st.st_ino, std::memory_order_release);
    dead_root_fds_.push_back(root_fd_.exchange(fd));
    // The dead mount's numbers may come back as other files: its kept signatures mean nothing
    // now, and its idle descriptors only answer ENOTCONN.
    saved_signatures_.clear();
    saved_paths_.clear();
    TrimLocked(0, &to_close);
  }
  CloseAll(to_close);
  LogWarning(fmt::format("dataset {}: the store's mount had gone ({}) and is back: its root opened "
                         "again; files open before keep failing until they are opened again",
                         dataset_, std::strerror(err)));
  return true;
}

InodeFd InodeTable::Borrow(Inode* i) { return BorrowAt(i, 0); }

InodeFd InodeTable::BorrowAt(Inode* i, int depth) {
  if (i == &root_) return InodeFd(nullptr, nullptr, root_fd_.load(std::memory_order_acquire));
  {
    MutexLock lock(&mu_);
    if (i->fd >= 0) {
      LruRemoveLocked(i);
      ++i->borrowed;
      return InodeFd(this, i, i->fd);
    }
  }
  const int fd = Reopen(i, depth);
  if (fd < 0) return InodeFd(-fd);
  return InodeFd(this, i, fd);
}

void InodeTable::NoteListed(InodeKey prev, Inode* cur, uint64_t size) {
  if (cur == &root_ || cur->kind != NodeKind::kReal) return;
  MutexLock lock(&mu_);
  cur->listed_size = size;
  if (prev.second == 0) return;
  auto it = table_.find(prev);
  if (it == table_.end()) return;
  it->second->next[kListedOrder] = KeyOf(*cur);
}

void InodeTable::NoteNameOrder(const std::vector<InodeKey>& keys) {
  MutexLock lock(&mu_);
  for (size_t k = 0; k < keys.size(); ++k) {
    auto it = table_.find(keys[k]);
    if (it == table_.end()) continue;
    it->second->next[kNameOrder] = k + 1 < keys.size() ? keys[k + 1] : InodeKey{0, 0};
  }
}

void InodeTable::ForgetListingFirsts(Inode* dir) {
  MutexLock lock(&mu_);
  for (InodeKey& k : dir->listing_first) k = {0, 0};
}

void InodeTable::NoteListingRead(Inode* dir, int64_t now_ns) {
  MutexLock lock(&mu_);
  dir->listing_ns = now_ns;
}

void InodeTable::NoteListingFirsts(Inode* dir, const std::array<InodeKey, kListingOrders>& firsts) {
  MutexLock lock(&mu_);
  for (size_t o = 0; o < firsts.size(); ++o) dir->listing_first[o] = firsts[o];
}

bool InodeTable::ListingFresh(Inode* dir, int64_t now_ns, int64_t max_age_ns,
                              std::array<InodeKey, kListingOrders>* firsts) {
  MutexLock lock(&mu_);
  if (dir->listing_ns == 0 || now_ns - dir->listing_ns >= max_age_ns) return false;
  for (size_t o = 0; o < firsts->size(); ++o) (*firsts)[o] = dir->listing_first[o];
  return true;
}

std::array<InodeKey, kListingOrders> InodeTable::NextOf(Inode* i) {
  MutexLock lock(&mu_);
  return {i->next[kListedOrder], i->next[kNameOrder]};
}

InodeKey InodeTable::KeyLocked(const Inode* i) const {
  if (i == nullptr) return {};
  if (i == &root_) {
    return {root_dev_.load(std::memory_order_acquire), root_ino_.load(std::memory_order_acquire)};
  }
  return KeyOf(*i);
}

const Inode* InodeTable::FindLocked(InodeKey key) const {
  if (key == KeyLocked(&root_)) return &root_;
  auto it = table_.find(key);
  return it != table_.end() ? it->second.get() : nullptr;
}

bool InodeTable::FirstDirIsLocked(InodeKey from, InodeKey dir, ListingOrder order) {
  bool found = false;
  WalkListingLocked(from, order, kMaxLooked, /*across=*/false, [&](InodeKey key, const Inode& n) {
    if (n.type != S_IFDIR) return true;
    found = key == dir;
    return false;
  });
  return found;
}

bool InodeTable::InTurn(InodeKey dir, InodeKey walk_dir, InodeKey entry, ListingOrder order) {
  MutexLock lock(&mu_);
  const Inode* at = FindLocked(walk_dir);
  if (at == nullptr) return false;
  if (entry.second == 0) {
    if (FirstDirIsLocked(at->listing_first[order], dir, order)) return true;
  } else if (const Inode* e = FindLocked(entry);
             e != nullptr && FirstDirIsLocked(e->next[order], dir, order)) {
    return true;
  }
  for (int level = 0; level < kInTurnLevels && at->parent != nullptr; ++level) {
    if (FirstDirIsLocked(at->next[order], dir, order)) return true;
    at = at->parent;
  }
  return false;
}

template <typename Take>
void InodeTable::WalkListingLocked(InodeKey from, ListingOrder order, size_t max_looked,
                                   bool across, Take take) {
  InodeKey next = from;
  const Inode* dir = nullptr;  // the directory of the entry looked at last
  for (size_t looked = 0; looked < max_looked; ++looked) {
    if (next.second == 0) {
      // The end of a listing: across, on after its directory in the listing above it.
      if (!across || dir == nullptr || dir->parent == nullptr) break;
      next = dir->next[order];
      dir = dir->parent;
      continue;
    }
    if (looked > 0 && next == from) break;  // a loop (renames between listings)
    auto it = table_.find(next);
    if (it == table_.end()) break;  // forgotten: the listing is not known past it
    const Inode& n = *it->second;
    if (!take(next, n)) break;
    dir = n.parent;
    // Across: into a directory whose listing is known, then on after it (its entries come before
    // the ones after it, as find, tar and grep -r go).
    next = across && n.type == S_IFDIR && n.listing_first[order].second != 0
               ? n.listing_first[order]
               : n.next[order];
  }
}

std::array<InodeKey, kListingOrders> InodeTable::NextFilesOf(Inode* i, InodeKey* parent) {
  std::array<InodeKey, kListingOrders> out{};
  MutexLock lock(&mu_);
  *parent = KeyLocked(i->parent);
  const InodeKey self = KeyOf(*i);
  for (int o = 0; o < kListingOrders; ++o) {
    WalkListingLocked(self, static_cast<ListingOrder>(o), kMaxLookedNext, /*across=*/true,
                      [&](InodeKey key, const Inode& n) {
                        if (key == self || n.type != S_IFREG) return true;
                        out[o] = key;
                        return false;
                      });
  }
  return out;
}

std::vector<InodeTable::ListedFile> InodeTable::ListedFrom(InodeKey from, ListingOrder order,
                                                           size_t max_files, uint64_t max_size,
                                                           uint64_t max_bytes) {
  std::vector<ListedFile> out;
  if (max_files == 0) return out;
  uint64_t bytes = 0;
  MutexLock lock(&mu_);
  WalkListingLocked(from, order, 2 * max_files, /*across=*/true, [&](InodeKey key, const Inode& n) {
    if (n.type == S_IFREG && n.listed_size <= max_size) {
      if (bytes + n.listed_size > max_bytes && !out.empty()) return false;
      bytes += n.listed_size;
      out.push_back(ListedFile{key, n.file_id, n.listed_size});
    }
    return out.size() < max_files;
  });
  return out;
}

std::vector<InodeKey> InodeTable::ListedDirsFrom(InodeKey from, ListingOrder order,
                                                 size_t max_dirs, size_t max_looked) {
  std::vector<InodeKey> out;
  if (max_dirs == 0) return out;
  MutexLock lock(&mu_);
  WalkListingLocked(from, order, max_looked, /*across=*/false, [&](InodeKey key, const Inode& n) {
    if (n.type == S_IFDIR) out.push_back(key);
    return out.size() < max_dirs;
  });
  return out;
}

InodeFd InodeTable::BorrowKnown(InodeKey key, Inode** found, mode_t type,
                                std::optional<FileSignature>* opened) {
  Inode* i = nullptr;
  {
    MutexLock lock(&mu_);
    auto it = table_.find(key);
    if (it == table_.end() || it->second->type != type) return InodeFd(ENOENT);
    i = it->second.get();
    if (i->fd >= 0) {
      LruRemoveLocked(i);
      ++i->borrowed;
      *found = i;
      return InodeFd(this, i, i->fd);
    }
    ++i->holds;  // kept while it is opened again below
  }
  const int fd = Reopen(i, 0, opened);  // lends the descriptor it returns
  std::vector<int> to_close;
  {
    MutexLock lock(&mu_);
    --i->holds;
    if (fd < 0) MaybeFreeLocked(i, &to_close);
  }
  CloseAll(to_close);
  if (fd < 0) return InodeFd(-fd);
  *found = i;
  return InodeFd(this, i, fd);
}

int InodeTable::Reopen(Inode* i, int depth, std::optional<FileSignature>* opened) {
  // Deeper than any path can be: names changed underneath made the recorded parents a loop. The
  // kernel's next lookups through the real path mend it.
  constexpr int kMaxDepth = 4096;
  if (depth > kMaxDepth) return -ESTALE;
  Inode* parent = nullptr;
  std::string name;
  {
    MutexLock lock(&mu_);
    if (i->fd >= 0) {  // opened by another thread meanwhile
      LruRemoveLocked(i);
      ++i->borrowed;
      return i->fd;
    }
    if (!i->named || i->unlinked || i->parent == nullptr) return -ESTALE;
    parent = i->parent;
    name = i->name;
    ++parent->holds;  // kept while the walk passes through it, whatever renames do meanwhile
  }
  int fd = -1;
  int err = 0;
  {
    InodeFd dir = BorrowAt(parent, depth + 1);
    if (!dir) {
      err = dir.error();
    } else {
      for (int tries = 0; fd < 0 && err == 0; ++tries) {
        fd = openat(dir.get(), name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0 && !(tries == 0 && OutOfDescriptors(errno) && Shed(errno))) err = errno;
      }
    }
  }
  if (fd >= 0) {
    // The same file, or none (inode_table.h, 3).
    struct statx stx;
    err = StatxOf(fd, &stx);
    const int64_t btime = BirthNs(stx);
    if (err == 0 && (makedev(stx.stx_dev_major, stx.stx_dev_minor) != i->dev ||
                     stx.stx_ino != i->ino || (stx.stx_mode & S_IFMT) != i->type ||
                     (btime != 0 && i->btime_ns != 0 && btime != i->btime_ns))) {
      err = ESTALE;
    }
    if (err != 0) {
      close(fd);
      fd = -1;
    } else if (opened != nullptr) {
      *opened = SignatureOf(stx);
    }
  }
  // A name that is gone, or names a directory no more: the file the kernel means is not there.
  if (err == ENOENT || err == ENOTDIR) err = ESTALE;
  std::vector<int> to_close;
  int result;
  {
    MutexLock lock(&mu_);
    --parent->holds;
    MaybeFreeLocked(parent, &to_close);
    if (err != 0) {
      result = -err;
    } else {
      result = Adopt(i, fd, &to_close);
      ++i->borrowed;
      TrimLocked(max_open_, &to_close);
    }
  }
  CloseAll(to_close);
  return result;
}

void InodeTable::Return(Inode* i) {
  std::vector<int> to_close;
  {
    MutexLock lock(&mu_);
    --i->borrowed;
    SettleLocked(i, &to_close);
  }
  CloseAll(to_close);
}

void InodeTable::SettleLocked(Inode* i, std::vector<int>* to_close) {
  IdleLocked(i, to_close);
  MaybeFreeLocked(i, to_close);
  TrimLocked(max_open_, to_close);
}

int InodeTable::Adopt(Inode* i, int fd, std::vector<int>* to_close) {
  if (i->fd >= 0) {
    to_close->push_back(fd);
  } else {
    i->fd = fd;
    ++fds_;
  }
  return i->fd;
}

int InodeTable::Lookup(Inode* parent, const char* name, struct stat* st, Inode** found) {
  if (parent == &root_ && strcmp(name, "..") == 0) name = ".";  // never above the dataset
  struct statx stx;
  {
    InodeFd dir = Borrow(parent);
    if (!dir) return dir.error();
    if (int err = StatxAt(dir.get(), name, &stx); err != 0) return err;
  }
  StatFromStatx(stx, st);
  *found = FindOrInsert(parent, name, *st, BirthNs(stx));
  return 0;
}

Inode* InodeTable::FindOrInsert(Inode* parent, const char* name, const struct stat& st,
                                int64_t btime_ns) {
  Inode* result;
  {
    MutexLock lock(&mu_);
    if (st.st_dev == root_dev_.load(std::memory_order_acquire) &&
        st.st_ino == root_ino_.load(std::memory_order_acquire)) {
      result = &root_;
    } else {
      auto key = std::make_pair(st.st_dev, st.st_ino);
      auto it = table_.find(key);
      if (it != table_.end() && it->second->btime_ns != 0 && btime_ns != 0 &&
          it->second->btime_ns != btime_ns) {
        // The store gave the number of a file that is gone to a new one: the old Inode lives on,
        // nameless, until the kernel forgets it; the new file gets an Inode of its own.
        Inode* old = it->second.get();
        old->named = false;
        LruRemoveLocked(old);
        orphans_.emplace(old, std::move(it->second));
        table_.erase(it);
        it = table_.end();
      }
      // "." and ".." are no names to open a file again by.
      const bool real_name = strcmp(name, ".") != 0 && strcmp(name, "..") != 0;
      if (it != table_.end()) {
        result = it->second.get();
        if (real_name) {
          SetNameLocked(result, parent, name);
          result->named = true;
        }
        result->unlinked = false;  // found under a name: it has a link after all
        ++result->nlookup;
      } else {
        auto inode = std::make_unique<Inode>();
        inode->dev = st.st_dev;
        inode->ino = st.st_ino;
        inode->type = st.st_mode & S_IFMT;
        inode->btime_ns = btime_ns;
        inode->file_id = FileIdOf(st);
        inode->serial = ++serials_;
        inode->nlookup = 1;
        auto saved = saved_signatures_.find(inode->file_id);
        if (saved != saved_signatures_.end()) {
          MutexLock sig_lock(&inode->sig_mu);  // not yet shared: uncontended, taken for analysis
          inode->sig_known = true;
          inode->sig = saved->second;
          saved_signatures_.erase(saved);
          saved_paths_.erase(inode->file_id);
        }
        result = inode.get();
        table_.emplace(key, std::move(inode));
        if (real_name) SetNameLocked(result, parent, name);
        result->named = real_name;
      }
      // A descriptor it kept (none for a new Inode) idles in the LRU list again now it is named
      // and linked; nothing is opened here, so the bound needs no trim.
      LruAddLocked(result);
    }
  }
  return result;
}

bool InodeTable::PathOf(Inode* i, std::string* path) {
  MutexLock lock(&mu_);
  return PathLocked(i, path);
}

void InodeTable::SetNameLocked(Inode* i, Inode* parent, const std::string& name) {
  if (i->parent != parent) {
    ++parent->holds;
    Inode* old = std::exchange(i->parent, parent);
    if (old != nullptr) {
      --old->holds;
      // Its last hold may be gone; it is freed by the caller's next MaybeFreeLocked of it, or
      // here: a directory holds no pages, so no ledger needs telling.
      std::vector<int> to_close;
      MaybeFreeLocked(old, &to_close);
      for (int fd : to_close) close(fd);  // O_PATH descriptors: no I/O
    }
  }
  i->name = name;
}

bool InodeTable::Unref(Inode* i, uint64_t n) {
  if (i->kind != NodeKind::kReal || i == &root_) return false;
  std::vector<int> to_close;
  bool freed;
  {
    MutexLock lock(&mu_);
    i->nlookup -= std::min(n, i->nlookup);
    freed = MaybeFreeLocked(i, &to_close);
  }
  CloseAll(to_close);
  return freed;
}

bool InodeTable::MaybeFreeLocked(Inode* i, std::vector<int>* to_close) {
  bool freed_first = false;
  for (bool first = true; i != nullptr; first = false) {
    if (i == &root_ || i->kind != NodeKind::kReal || i->nlookup > 0 || i->holds > 0 ||
        i->borrowed > 0 || i->open_handles > 0) {
      break;
    }
    {
      MutexLock sig_lock(&i->sig_mu);
      if (i->sig_known) saved_signatures_[i->file_id] = i->sig;
    }
    if (std::string path; keep_paths_ && PathLocked(i, &path)) saved_paths_[i->file_id] = path;
    if (before_free_) before_free_(InoOf(i));
    LruRemoveLocked(i);
    CloseFdLocked(i, to_close);
    Inode* parent = std::exchange(i->parent, nullptr);
    auto it = table_.find(std::make_pair(i->dev, i->ino));
    if (it != table_.end() && it->second.get() == i) {
      table_.erase(it);
    } else {
      orphans_.erase(i);
    }
    if (first) freed_first = true;
    if (parent != nullptr) --parent->holds;
    i = parent;
  }
  return freed_first;
}

void InodeTable::IdleLocked(Inode* i, std::vector<int>* to_close) {
  if (i->borrowed > 0 || i->fd < 0) return;
  if (i->unlinked && i->open_handles == 0) {
    CloseFdLocked(i, to_close);
  } else {
    LruAddLocked(i);
  }
}

void InodeTable::LruAddLocked(Inode* i) {
  if (i->borrowed > 0 || i->fd < 0 || i->open_handles > 0 || !i->named || i->in_lru) return;
  lru_.push_front(i);
  i->lru_pos = lru_.begin();
  i->in_lru = true;
}

void InodeTable::LruRemoveLocked(Inode* i) {
  if (!i->in_lru) return;
  lru_.erase(i->lru_pos);
  i->in_lru = false;
}

void InodeTable::CloseFdLocked(Inode* i, std::vector<int>* to_close) {
  LruRemoveLocked(i);
  if (i->fd < 0) return;
  to_close->push_back(i->fd);
  i->fd = -1;
  --fds_;
}

void InodeTable::TrimLocked(size_t keep, std::vector<int>* to_close) {
  while (fds_ > keep && !lru_.empty()) CloseFdLocked(lru_.back(), to_close);
}

void InodeTable::Renamed(Inode* parent, const std::string& name, Inode* new_parent,
                         const std::string& new_name, const struct stat& st) {
  MutexLock lock(&mu_);
  auto it = table_.find(std::make_pair(st.st_dev, st.st_ino));
  if (it == table_.end()) return;
  Inode* i = it->second.get();
  if (i->parent == parent && i->name == name) SetNameLocked(i, new_parent, new_name);
}

const Inode* InodeTable::LinkRemoved(Inode* parent, const std::string& name,
                                     const struct stat& st) {
  std::vector<int> to_close;
  const Inode* last = nullptr;
  {
    MutexLock lock(&mu_);
    auto it = table_.find(std::make_pair(st.st_dev, st.st_ino));
    if (it == table_.end()) return nullptr;
    Inode* i = it->second.get();
    if (i->parent == parent && i->name == name) {
      // No name to open it again by: its descriptor, if any, stays until a LOOKUP names it.
      i->named = false;
      LruRemoveLocked(i);
    }
    if (S_ISREG(st.st_mode)) {
      // The name removed may not have been the last: a link made since the caller's stat keeps it.
      struct stat now;
      const bool gone = i->fd >= 0 ? (fstat(i->fd, &now) == 0 && now.st_nlink == 0)
                                   : st.st_nlink <= 1;
      if (gone) {
        i->unlinked = true;
        IdleLocked(i, &to_close);
        last = i;
      }
    }
  }
  CloseAll(to_close);
  return last;
}

void InodeTable::HandleOpened(Inode* i, int fd) {
  if (i->kind != NodeKind::kReal) return;
  MutexLock lock(&mu_);
  if (i->open_handles++ == 0) open_.insert(i);
  LruRemoveLocked(i);  // kept while open: getattr and the change detector of an open file use it
  if (i->fd < 0 && i != &root_ && fd >= 0) {
    // Opened by a handler whose borrowed descriptor was let go meanwhile (a removal raced it).
    int path_fd = open(fmt::format("/proc/self/fd/{}", fd).c_str(), O_PATH | O_CLOEXEC);
    if (path_fd >= 0) {
      i->fd = path_fd;
      ++fds_;
    }
  }
}

void InodeTable::HandleClosed(Inode* i) {
  if (i->kind != NodeKind::kReal) return;
  std::vector<int> to_close;
  {
    MutexLock lock(&mu_);
    if (--i->open_handles == 0) open_.erase(i);
    SettleLocked(i, &to_close);
  }
  CloseAll(to_close);
}

std::vector<std::pair<Inode*, InodeFd>> InodeTable::BorrowOpenFiles() {
  std::vector<std::pair<Inode*, InodeFd>> out;
  MutexLock lock(&mu_);
  out.reserve(open_.size());
  for (Inode* i : open_) {
    if (i->fd < 0) continue;  // HandleOpened could not keep a descriptor: nothing to lend
    ++i->borrowed;
    out.emplace_back(i, InodeFd(this, i, i->fd));
  }
  return out;
}

bool InodeTable::Shed(int err) {
  std::vector<int> to_close;
  std::string line;
  {
    MutexLock lock(&mu_);
    ++shortages_;
    TrimLocked(0, &to_close);
    const int64_t now = NowNs();
    if (now - shortage_logged_ns_ >= kShortageLogNs) {
      line = fmt::format("out of descriptors ({}): {} open(s) refused since the last report; the "
                         "inode table holds {} (max_open_files = {}), {} idle closed now; raise "
                         "the limit (LimitNOFILE=) or lower max_open_files",
                         std::strerror(err), shortages_, fds_, max_open_, to_close.size());
      shortages_ = 0;
      shortage_logged_ns_ = now;
    }
  }
  CloseAll(to_close);
  if (!line.empty()) LogWarning(line);
  return !to_close.empty();
}

size_t InodeTable::open_descriptors() {
  MutexLock lock(&mu_);
  return fds_;
}

void InodeTable::ForgetSignature(uint64_t id) {
  MutexLock lock(&mu_);
  saved_signatures_.erase(id);
  saved_paths_.erase(id);
}

void InodeTable::KeepPaths() {
  MutexLock lock(&mu_);
  keep_paths_ = true;
}

bool InodeTable::PathLocked(const Inode* i, std::string* path) const {
  std::vector<const std::string*> names;
  for (; i != &root_; i = i->parent) {
    if (i->parent == nullptr || !i->named || i->name.empty()) return false;
    names.push_back(&i->name);
  }
  path->clear();
  for (auto it = names.rbegin(); it != names.rend(); ++it) {
    if (!path->empty()) *path += '/';
    *path += **it;
  }
  return true;
}

void InodeTable::DescribeFiles(const std::vector<uint64_t>& ids, std::vector<FileRecord>* out) {
  struct Known {
    FileSignature sig;
    std::string path;
    bool agree = true;
    bool seen = false;
  };
  std::unordered_map<uint64_t, Known> wanted;
  for (uint64_t id : ids) wanted.emplace(id, Known());
  MutexLock lock(&mu_);
  std::vector<Inode*> inodes;
  inodes.reserve(table_.size() + orphans_.size());
  for (auto& [key, inode] : table_) inodes.push_back(inode.get());
  for (auto& [orphan, inode] : orphans_) inodes.push_back(inode.get());
  for (Inode* i : inodes) {
    auto it = wanted.find(i->file_id);
    if (it == wanted.end()) continue;
    Known& k = it->second;
    MutexLock sig_lock(&i->sig_mu);
    if (!i->sig_known || (k.seen && !(k.sig == i->sig))) {
      k.agree = false;  // pages of a file whose Inodes disagree are not saved
      continue;
    }
    k.sig = i->sig;
    k.seen = true;
    if (std::string path; k.path.empty() && PathLocked(i, &path)) k.path = path;
  }
  for (auto& [id, k] : wanted) {
    if (!k.seen && k.agree) {
      auto sig = saved_signatures_.find(id);
      auto path = saved_paths_.find(id);
      if (sig == saved_signatures_.end() || path == saved_paths_.end()) continue;
      k.sig = sig->second;
      k.path = path->second;
      k.seen = true;
    }
    if (k.seen && k.agree && !k.path.empty()) out->push_back(FileRecord{id, k.sig, k.path});
  }
}

bool InodeTable::AdoptSignature(const struct stat& st, const FileSignature& sig,
                                const std::string& path) {
  const uint64_t id = FileIdOf(st);
  MutexLock lock(&mu_);
  std::vector<Inode*> inodes;
  if (auto it = table_.find(std::make_pair(st.st_dev, st.st_ino));
      it != table_.end() && it->second->file_id == id) {
    inodes.push_back(it->second.get());
  }
  for (auto& [orphan, inode] : orphans_) {
    if (inode->file_id == id) inodes.push_back(inode.get());
  }
  bool same = true;
  for (Inode* i : inodes) {
    MutexLock sig_lock(&i->sig_mu);
    if (!i->sig_known) {
      i->sig = sig;
      i->sig_known = true;
    }
    same = same && i->sig == sig;
  }
  const bool inode_found = !inodes.empty();
  if (inode_found) return same;
  auto [saved, inserted] = saved_signatures_.emplace(id, sig);
  if (inserted && keep_paths_) saved_paths_[id] = path;
  return inserted || saved->second == sig;
}

int InodeTable::StatPath(const std::string& path, struct stat* st) {
  return fstatat(root_fd_.load(std::memory_order_acquire), path.c_str(), st,
                 AT_SYMLINK_NOFOLLOW) == 0
             ? 0
             : errno;
}

uint64_t InodeTable::FileIdOf(const struct stat& st) const {
  uint64_t id = st.st_ino;
  // A file on a file system mounted inside the dataset: mix the device in.
  if (st.st_dev != root_dev_.load(std::memory_order_acquire)) {
    id ^= static_cast<uint64_t>(st.st_dev) * 0x9E3779B97F4A7C15ull;
  }
  // A root opened again (RecoverRoot): its files are other files than the dead mount's.
  if (const uint64_t gen = generation_.load(std::memory_order_acquire); gen > 0) {
    id ^= gen * 0xC2B2AE3D27D4EB4Full;
  }
  return id;
}

}  // namespace ccfs
