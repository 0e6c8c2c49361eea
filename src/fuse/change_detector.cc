// Change detection by file signature: see change_detector.h for the rule and why it is fstat on
// every read.
#include "fuse/change_detector.h"

#include <sys/stat.h>

#include <algorithm>
#include <utility>

#include "fuse/inode_table.h"

namespace ccfs {

ChangeDetector::ChangeDetector(PageCache* cache, StaleCallback stale)
    : cache_(cache), stale_(std::move(stale)), page_size_(cache->options().page_size) {}

void ChangeDetector::CheckBeforeRead(Inode* i, int fd) {
  // fstat outside the lock: concurrent readers of one file do not queue behind each other.
  struct stat st;
  if (fstat(fd, &st) != 0) return;
  FileSignature now = SignatureOf(st);
  MutexLock lock(&i->sig_mu);
  UpdateLocked(i, now);
}

void ChangeDetector::TruncatedByOpen(Inode* i, int fd) {
  MutexLock lock(&i->sig_mu);
  cache_->InvalidateFile(i->file_id);
  RecordLocked(i, fd);
}

void ChangeDetector::RecordNewTimes(Inode* i, int fd) {
  MutexLock lock(&i->sig_mu);
  if (fd >= 0) {
    RecordLocked(i, fd);
    return;
  }
  struct stat st;
  if (fstatat(i->fd, "", &st, AT_EMPTY_PATH) == 0 && i->sig_known) i->sig = SignatureOf(st);
}

void ChangeDetector::UpdateLocked(Inode* i, const FileSignature& now) {
  if (i->sig_known && i->sig == now) return;
  if (i->sig_known) {
    cache_->InvalidateFile(i->file_id);
    if (stale_) stale_(i, 0);
  }
  i->sig = now;
  i->sig_known = true;
}

void ChangeDetector::RecordLocked(Inode* i, int fd) {
  struct stat st;
  if (fstat(fd, &st) != 0) {
    i->sig_known = false;  // cannot tell: the next check with a known signature must not trust
    cache_->InvalidateFile(i->file_id);
    if (stale_) stale_(i, 0);
    return;
  }
  i->sig = SignatureOf(st);
  i->sig_known = true;
}

ChangeDetector::OwnChange::OwnChange(ChangeDetector* detector, Inode* i, int fd)
    : detector_(detector), inode_(i), lock_(&i->sig_mu) {
  struct stat st;
  if (fstat(fd, &st) == 0) detector_->UpdateLocked(i, SignatureOf(st));
}

uint64_t ChangeDetector::OwnChange::size_before() const {
  LockHeld();
  return inode_->sig_known ? inode_->sig.size : 0;
}

void ChangeDetector::OwnChange::DropFrom(uint64_t offset) {
  const uint64_t from = offset / detector_->page_size_ * detector_->page_size_;
  detector_->cache_->InvalidateFile(inode_->file_id, from);
  if (detector_->stale_) detector_->stale_(inode_, from);
}

void ChangeDetector::OwnChange::Record(int fd) {
  LockHeld();
  detector_->RecordLocked(inode_, fd);
}

}  // namespace ccfs
