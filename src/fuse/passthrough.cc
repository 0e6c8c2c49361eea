#include "fuse/passthrough.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include <fmt/format.h>

#include "fuse/log.h"
#include "fuse/session_io.h"

namespace ccfs {

int32_t PassthroughOpens::Open(const Inode* i, bool may_start, bool writable,
                               const std::function<int()>& open_file) {
  {
    MutexLock lock(&mu_);
    File& f = files_[i];
    if (f.passed > 0) {
      ++f.passed;
      f.written = f.written || writable;
      ++opens_passed_;
      return f.id;
    }
    if (f.cached > 0 || !may_start || refused_) {
      ++f.cached;
      return 0;
    }
  }
  // Opened and registered outside the lock: over a network store an open is a round trip.
  int32_t id = 0;
  const int fd = open_file();
  int err = fd < 0 ? errno : 0;
  if (fd >= 0) {
    id = RegisterBacking(fd);
    close(fd);
    if (id < 0) err = -id;
    if (id <= 0) id = 0;
  }
  MutexLock lock(&mu_);
  File& f = files_[i];
  if (id == 0 && err != 0 && fd >= 0) Refused(err);
  if (f.passed > 0 || (f.cached == 0 && id > 0)) {
    // Another open of the file started meanwhile (its id is used, this one dropped), or none did.
    if (f.passed > 0 && id > 0) UnregisterBacking(id);
    if (f.passed == 0) f.id = id;
    ++f.passed;
    f.written = f.written || writable;
    ++opens_passed_;
    return f.id;
  }
  if (id > 0) UnregisterBacking(id);  // a cached open came first meanwhile
  ++f.cached;
  return 0;
}

bool PassthroughOpens::Release(const Inode* i, int32_t id) {
  int32_t drop = 0;
  bool written = false;
  {
    MutexLock lock(&mu_);
    auto it = files_.find(i);
    if (it == files_.end()) return false;
    File& f = it->second;
    if (id == 0) {
      if (f.cached > 0) --f.cached;
    } else if (f.passed > 0 && --f.passed == 0) {
      drop = f.id;
      written = f.written;
      f.id = 0;
      f.written = false;
    }
    if (f.passed == 0 && f.cached == 0) files_.erase(it);
  }
  if (drop > 0) UnregisterBacking(drop);
  return written;
}

uint64_t PassthroughOpens::opens_passed() const {
  MutexLock lock(&mu_);
  return opens_passed_;
}

void PassthroughOpens::Refused(int err) {
  if (err == EPERM) refused_ = true;
  if (logged_) return;
  logged_ = true;
  LogWarning(fmt::format("passthrough: the kernel refused to register a file ({}){}; such opens "
                         "are served by the daemon",
                         std::strerror(err),
                         err == EPERM ? " (needs CAP_SYS_ADMIN), for every file from now" : ""));
}

}  // namespace ccfs
