// The inode table: see inode_table.h for what an Inode pins and why lookups never follow links.
#include "fuse/inode_table.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
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

InodeTable::~InodeTable() {
  for (int fd : dead_root_fds_) close(fd);
  if (stand_in_fd_ >= 0) close(stand_in_fd_);
}

namespace {

// An O_PATH descriptor of an empty directory that no path names (made in the temporary directory,
// then removed), or -1. Nothing done through it reaches a file anyone else can see.
int MakeStandIn() {
  const char* tmp = getenv("TMPDIR");
  std::string dir = fmt::format("{}/ccfs-gone.XXXXXX", tmp != nullptr && *tmp ? tmp : "/tmp");
  if (mkdtemp(dir.data()) == nullptr) return -1;
  int fd = open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  rmdir(dir.c_str());
  return fd;
}

}  // namespace

Status InodeTable::Open(const std::string& dataset) {
  dataset_ = dataset;
  root_.fd = open(dataset.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (root_.fd < 0) return Status::FromErrno(errno, "dataset " + dataset);
  struct stat st;
  if (fstatat(root_.fd, "", &st, AT_EMPTY_PATH) != 0) {
    return Status::FromErrno(errno, "dataset " + dataset);
  }
  root_.type = S_IFDIR;
  root_.file_id = st.st_ino;
  root_dev_.store(st.st_dev);
  root_ino_.store(st.st_ino);
  stand_in_fd_ = MakeStandIn();
  if (stand_in_fd_ < 0) {
    LogWarning(fmt::format("no temporary directory ({}): space of a file removed through the "
                           "mount comes back when the kernel forgets it, not at once",
                           std::strerror(errno)));
  }
  return Status::Ok();
}

bool InodeTable::RecoverRoot(int err) {
  // What a store's client that has gone answers (ENOTCONN: FUSE clients such as sshfs and
  // GlusterFS's; ESTALE: NFS); any other error is the op's own.
  if (err != ENOTCONN && err != ECONNABORTED && err != ESTALE) return false;
  auto now_ns = [] {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch()).count();
  };
  // A store found still gone is tried again 100 ms later at the soonest: the ops meanwhile fail
  // at once (EIO) instead of queueing here.
  constexpr int64_t kRetryNs = 100'000'000;
  if (now_ns() < recover_after_ns_.load(std::memory_order_relaxed)) return false;
  MutexLock recover(&recover_mu_);
  struct stat st;
  if (fstatat(root_.fd, "", &st, AT_EMPTY_PATH) == 0) return true;  // alive (recovered meanwhile)
  if (now_ns() < recover_after_ns_.load(std::memory_order_relaxed)) return false;  // tried meanwhile
  // An O_PATH open of a dead mount's root can succeed: the fstat says whether it is alive.
  int fd = open(dataset_.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0 && (fstatat(fd, "", &st, AT_EMPTY_PATH) != 0 || !S_ISDIR(st.st_mode))) {
    close(fd);
    fd = -1;
  }
  if (fd < 0) {
    recover_after_ns_.store(now_ns() + kRetryNs, std::memory_order_relaxed);
    return false;
  }
  MutexLock lock(&mu_);
  generation_.fetch_add(1, std::memory_order_relaxed);
  root_dev_.store(st.st_dev, std::memory_order_release);
  root_ino_.store(st.st_ino, std::memory_order_release);
  dead_root_fds_.push_back(root_.fd.exchange(fd));
  // The dead mount's numbers may come back as other files: its kept signatures mean nothing now.
  saved_signatures_.clear();
  LogWarning(fmt::format("dataset {}: the store's mount had gone ({}) and is back: its root opened "
                         "again; files open before keep failing until they are opened again",
                         dataset_, std::strerror(err)));
  return true;
}

int InodeTable::Lookup(Inode* parent, const char* name, struct stat* st, Inode** found) {
  if (parent == &root_ && strcmp(name, "..") == 0) name = ".";  // never above the dataset
  int fd = openat(parent->fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return errno;
  if (fstatat(fd, "", st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) != 0) {
    int err = errno;
    close(fd);
    return err;
  }
  *found = FindOrInsert(fd, *st);
  return 0;
}

Inode* InodeTable::FindOrInsert(int fd, const struct stat& st) {
  MutexLock lock(&mu_);
  if (st.st_dev == root_dev_.load(std::memory_order_acquire) &&
      st.st_ino == root_ino_.load(std::memory_order_acquire)) {
    close(fd);
    return &root_;
  }
  auto key = std::make_pair(st.st_dev, st.st_ino);
  auto it = table_.find(key);
  if (it != table_.end()) {
    Inode* i = it->second.get();
    // Let go as removed, but found under a name again: it has a link after all.
    if (i->released) RestoreLocked(i, fd);
    i->unlinked = false;
    close(fd);
    ++i->nlookup;
    return i;
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
    MutexLock sig_lock(&inode->sig_mu);  // not yet shared: uncontended, taken for the analysis
    inode->sig_known = true;
    inode->sig = saved->second;
    saved_signatures_.erase(saved);
  }
  Inode* raw = inode.get();
  table_.emplace(key, std::move(inode));
  return raw;
}

bool InodeTable::Unref(Inode* i, uint64_t n, const std::function<void()>& before_free) {
  if (i->kind != NodeKind::kReal || i == &root_) return false;
  MutexLock lock(&mu_);
  i->nlookup -= std::min(n, i->nlookup);
  if (i->nlookup > 0) return false;
  {
    MutexLock sig_lock(&i->sig_mu);
    if (i->sig_known) saved_signatures_[i->file_id] = i->sig;
  }
  if (before_free) before_free();
  table_.erase(std::make_pair(i->dev, i->ino));
  return true;
}

void InodeTable::LastLinkGone(const struct stat& st) {
  if (stand_in_fd_ < 0 || !S_ISREG(st.st_mode)) return;
  MutexLock lock(&mu_);
  auto it = table_.find(std::make_pair(st.st_dev, st.st_ino));
  if (it == table_.end()) return;
  Inode* i = it->second.get();
  // The name removed may not have been the last: a link made since the caller's stat keeps it.
  struct stat now;
  if (i->released || fstatat(i->fd, "", &now, AT_EMPTY_PATH) != 0 || now.st_nlink > 0) return;
  i->unlinked = true;
  if (i->open_handles == 0) ReleaseLocked(i);
}

void InodeTable::HandleOpened(Inode* i, int fd) {
  if (i->kind != NodeKind::kReal) return;
  MutexLock lock(&mu_);
  ++i->open_handles;
  // Opened through the descriptor just before a removal let it go.
  if (i->released) RestoreLocked(i, fd);
}

void InodeTable::HandleClosed(Inode* i) {
  if (i->kind != NodeKind::kReal) return;
  MutexLock lock(&mu_);
  --i->open_handles;
  if (i->open_handles == 0 && i->unlinked && !i->released && i != &root_) ReleaseLocked(i);
}

void InodeTable::ReleaseLocked(Inode* i) {
  if (dup3(stand_in_fd_, i->fd, O_CLOEXEC) >= 0) i->released = true;
}

void InodeTable::RestoreLocked(Inode* i, int fd) {
  struct stat st;
  if (fstat(fd, &st) != 0 || st.st_dev != i->dev || st.st_ino != i->ino) return;
  int path_fd = open(fmt::format("/proc/self/fd/{}", fd).c_str(), O_PATH | O_CLOEXEC);
  if (path_fd < 0) return;
  if (dup3(path_fd, i->fd, O_CLOEXEC) >= 0) i->released = false;
  close(path_fd);
}

void InodeTable::ForgetSignature(uint64_t id) {
  MutexLock lock(&mu_);
  saved_signatures_.erase(id);
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
