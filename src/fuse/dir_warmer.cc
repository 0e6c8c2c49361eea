// The directory warm-up ahead of a walk: see dir_warmer.h for why it exists.
#include "fuse/dir_warmer.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cstring>
#include <vector>

namespace ccfs {

namespace {

// Stores whose clients keep a lookup's result for their own timeouts at most (their magic numbers,
// statfs(2)): FUSE (sshfs, GlusterFS), NFS, SMB and CIFS, Ceph, 9P.
bool KeepsLookups(const std::string& dataset) {
  struct statfs sf;
  if (statfs(dataset.c_str(), &sf) != 0) return false;
  switch (static_cast<unsigned long>(sf.f_type)) {
    case 0x65735546UL:  // FUSE
    case 0x6969UL:      // NFS
    case 0xFE534D42UL:  // SMB2
    case 0xFF534D42UL:  // CIFS
    case 0x00C36400UL:  // Ceph
    case 0x01021997UL:  // 9P
      return false;
    default:
      return true;
  }
}

}  // namespace

DirWarmer::DirWarmer(InodeTable* inodes, const std::string& dataset)
    : inodes_(inodes), enabled_(KeepsLookups(dataset)) {
  if (enabled_) thread_ = std::thread([this] { Loop(); });
}

DirWarmer::~DirWarmer() {
  {
    MutexLock lock(&mu_);
    stop_ = true;
  }
  wake_.SignalAll();
  if (thread_.joinable()) thread_.join();
}

bool DirWarmer::Remember(std::unordered_set<InodeKey, InodeKeyHash>* set,
                         std::deque<InodeKey>* order, InodeKey key) {
  if (!set->insert(key).second) return false;
  order->push_back(key);
  if (order->size() > kMemory) {
    set->erase(order->front());
    order->pop_front();
  }
  return true;
}

void DirWarmer::ListingEnded(Inode* dir, InodeKey first, bool on) {
  if (!enabled_ || !on) return;
  // What the walk comes to next: this directory's first subdirectories (going down), and the
  // directories listed after it in its parent (going across).
  std::vector<InodeKey> next;
  if (first.second != 0) {
    next = inodes_->ListedDirsFrom(first, kListedOrder, kAhead, kMaxLooked);
  }
  const InodeKey after = inodes_->NextOf(dir)[kListedOrder];
  if (after.second != 0) {
    std::vector<InodeKey> across = inodes_->ListedDirsFrom(after, kListedOrder, kAhead, kMaxLooked);
    next.insert(next.end(), across.begin(), across.end());
  }
  bool queued = false;
  {
    MutexLock lock(&mu_);
    const bool walking = expected_.count(KeyOf(*dir)) > 0;
    for (const InodeKey& k : next) {
      Remember(&expected_, &expected_order_, k);
      if (walking && Remember(&queued_, &queued_order_, k)) {
        if (queue_.size() == kMaxQueued) queue_.pop_front();
        queue_.push_back(k);
        queued = true;
      }
    }
  }
  if (queued) wake_.SignalAll();
}

size_t DirWarmer::warmed() {
  MutexLock lock(&mu_);
  return warmed_;
}

void DirWarmer::Loop() {
  for (;;) {
    InodeKey key;
    {
      MutexLock lock(&mu_);
      while (!stop_ && queue_.empty()) wake_.Wait(&mu_);
      if (stop_) return;
      key = queue_.front();
      queue_.pop_front();
    }
    Warm(key);
  }
}

void DirWarmer::Warm(InodeKey key) {
  Inode* found = nullptr;
  InodeFd path_fd = inodes_->BorrowKnown(key, &found, S_IFDIR);
  if (!path_fd) return;  // forgotten, or not that directory any more
  const int fd = openat(path_fd.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  DIR* dp = fdopendir(fd);
  if (dp == nullptr) {
    close(fd);
    return;
  }
  size_t names = 0;
  struct statx stx;
  while (names < kMaxNames) {
    const struct dirent* e = readdir(dp);
    if (e == nullptr) break;
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    if (++names % 64 == 0) {
      MutexLock lock(&mu_);
      if (stop_) break;
    }
    StatxAt(fd, e->d_name, &stx);  // for what the store keeps of it; the result is not used
  }
  closedir(dp);
  MutexLock lock(&mu_);
  ++warmed_;
}

}  // namespace ccfs
