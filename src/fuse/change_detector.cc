// Change detection by file signature: see change_detector.h for the rule and why it is a stat on
// every read.
#include "fuse/change_detector.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include "fuse/inode_table.h"
#include "stats/request_stats.h"

namespace ccfs {

namespace {

// The signature of the file `fd` names (an open descriptor or an O_PATH one). statx asks for the
// size, mtime and ctime alone: a FUSE store (sshfs, a GlusterFS client) marks a file's cached atime
// stale after every read, and a stat that asks for the atime too, as fstat does, then costs a
// GETATTR round trip to the store's server on every read through ccfs, a network round trip that
// would dominate each miss and each hit over sshfs and GlusterFS.
bool ReadSignature(int fd, FileSignature* sig) {
  struct statx stx;
  if (statx(fd, "", AT_EMPTY_PATH | AT_STATX_SYNC_AS_STAT,
            STATX_SIZE | STATX_MTIME | STATX_CTIME, &stx) != 0) {
    return false;
  }
  *sig = SignatureOf(stx);
  return true;
}

}  // namespace

ChangeDetector::ChangeDetector(PageCache* cache, StaleCallback stale)
    : cache_(cache), stale_(std::move(stale)), page_size_(cache->options().page_size) {}

uint64_t ChangeDetector::CheckBeforeRead(Inode* i, int fd) {
  // Outside the lock: concurrent readers of one file do not queue behind each other.
  FileSignature now;
  if (!ReadSignature(fd, &now)) return UINT64_MAX;
  return CheckSignature(i, now);
}

uint64_t ChangeDetector::CheckSignature(Inode* i, const FileSignature& now) {
  MutexLock lock(&i->sig_mu);
  UpdateLocked(i, now);
  return now.size;
}

bool ChangeDetector::CheckOpenFile(Inode* i, int fd, uint64_t* size) {
  MutexLock lock(&i->sig_mu);
  FileSignature now;
  if (size != nullptr) *size = UINT64_MAX;
  if (!ReadSignature(fd, &now)) return false;
  if (size != nullptr) *size = now.size;
  return UpdateLocked(i, now);
}

bool ChangeDetector::CheckAttributes(Inode* i, const struct stat& st) {
  if (!S_ISREG(st.st_mode)) return false;
  MutexLock lock(&i->sig_mu);
  return UpdateLocked(i, SignatureOf(st));
}

ChangeDetector::MountChange::MountChange(ChangeDetector* detector) : detector_(detector) {
  detector_->changes_in_flight_.fetch_add(1);
  detector_->changes_begun_.fetch_add(1);
}

ChangeDetector::MountChange::~MountChange() { detector_->changes_in_flight_.fetch_sub(1); }

ChangeDetector::AttrRead ChangeDetector::BeforeAttributes() const {
  AttrRead read;
  read.start_ns = static_cast<int64_t>(SteadyNowNs());
  read.epoch = changes_begun_.load();
  read.quiet = changes_in_flight_.load() == 0;
  return read;
}

void ChangeDetector::NoteAttributes(Inode* i, const struct stat& st, const AttrRead& read) {
  if (!read.quiet || i->kind != NodeKind::kReal) return;
  MutexLock lock(&i->sig_mu);
  if (S_ISREG(st.st_mode) && (!i->sig_known || !(i->sig == SignatureOf(st)))) return;
  if (read.start_ns < i->attr.read_ns) return;  // a later read is recorded
  AttrRecord a;
  a.read_ns = read.start_ns;
  a.epoch = read.epoch;
  a.size = static_cast<uint64_t>(st.st_size);
  a.blocks = static_cast<uint64_t>(st.st_blocks);
  a.rdev = st.st_rdev;
  a.atime_s = st.st_atim.tv_sec;
  a.mtime_s = st.st_mtim.tv_sec;
  a.ctime_s = st.st_ctim.tv_sec;
  a.atime_ns = static_cast<uint32_t>(st.st_atim.tv_nsec);
  a.mtime_ns = static_cast<uint32_t>(st.st_mtim.tv_nsec);
  a.ctime_ns = static_cast<uint32_t>(st.st_ctim.tv_nsec);
  a.mode = st.st_mode;
  a.nlink = static_cast<uint32_t>(st.st_nlink);
  a.uid = st.st_uid;
  a.gid = st.st_gid;
  a.blksize = static_cast<uint32_t>(st.st_blksize);
  i->attr = a;
}

bool ChangeDetector::RecentAttributes(Inode* i, int64_t max_age_ns, struct stat* st,
                                      double* left_s) {
  const uint64_t epoch = changes_begun_.load();
  MutexLock lock(&i->sig_mu);
  const AttrRecord a = i->attr;  // a copy: the analysis cannot follow a reference to it
  if (a.read_ns == 0 || a.epoch != epoch) return false;
  const int64_t age = static_cast<int64_t>(SteadyNowNs()) - a.read_ns;
  if (age < 0 || age >= max_age_ns) return false;
  memset(st, 0, sizeof(*st));
  st->st_dev = i->dev;
  st->st_ino = i->ino;
  st->st_mode = a.mode;
  st->st_nlink = a.nlink;
  st->st_uid = a.uid;
  st->st_gid = a.gid;
  st->st_rdev = a.rdev;
  st->st_size = static_cast<off_t>(a.size);
  st->st_blksize = static_cast<blksize_t>(a.blksize);
  st->st_blocks = static_cast<blkcnt_t>(a.blocks);
  st->st_atim = {a.atime_s, a.atime_ns};
  st->st_mtim = {a.mtime_s, a.mtime_ns};
  st->st_ctim = {a.ctime_s, a.ctime_ns};
  *left_s = static_cast<double>(max_age_ns - age) / 1e9;
  attr_answers_.fetch_add(1, std::memory_order_relaxed);
  return true;
}

void ChangeDetector::TruncatedByOpen(Inode* i, int fd) {
  MutexLock lock(&i->sig_mu);
  cache_->InvalidateFile(i->file_id);
  RecordLocked(i, fd);
}

void ChangeDetector::RecordNewTimes(Inode* i, int fd, int path_fd) {
  MutexLock lock(&i->sig_mu);
  if (fd >= 0) {
    RecordLocked(i, fd);
    return;
  }
  FileSignature now;
  if (ReadSignature(path_fd, &now) && i->sig_known) i->sig = now;
}

bool ChangeDetector::UpdateLocked(Inode* i, const FileSignature& now) {
  if (i->sig_known && i->sig == now) return false;
  const bool changed = i->sig_known;
  if (changed) {
    i->attr.read_ns = 0;
    cache_->InvalidateFile(i->file_id);
    if (stale_) stale_(i, 0);
  }
  i->sig = now;
  i->sig_known = true;
  return changed;
}

void ChangeDetector::RecordLocked(Inode* i, int fd) {
  i->attr.read_ns = 0;  // a change through the mount, or one made underneath
  FileSignature now;
  if (!ReadSignature(fd, &now)) {
    i->sig_known = false;  // cannot tell: the next check with a known signature must not trust
    cache_->InvalidateFile(i->file_id);
    if (stale_) stale_(i, 0);
    return;
  }
  i->sig = now;
  i->sig_known = true;
}

ChangeDetector::OwnChange::OwnChange(ChangeDetector* detector, Inode* i, int fd)
    : detector_(detector), inode_(i), lock_(&i->sig_mu) {
  FileSignature now;
  if (ReadSignature(fd, &now)) detector_->UpdateLocked(i, now);
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
