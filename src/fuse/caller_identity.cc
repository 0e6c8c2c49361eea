#include "fuse/caller_identity.h"

#include <sys/fsuid.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <string>

#include "fuse/fuse_api.h"
#include "fuse/log.h"

namespace ccfs {
namespace {

// glibc's setgroups() would change every thread of the process; the system call changes this one.
int SetThreadGroups(const std::vector<gid_t>& groups) {
  return syscall(SYS_setgroups, groups.size(), groups.data()) == 0 ? 0 : errno;
}

// setfsuid() and setfsgid() report no failure (they return the previous id either way); asking
// again with an id that cannot be set (-1) returns the one in force, which says whether it took.
int SetThreadFsuid(uid_t uid) {
  setfsuid(uid);
  return static_cast<uid_t>(setfsuid(static_cast<uid_t>(-1))) == uid ? 0 : EPERM;
}

int SetThreadFsgid(gid_t gid) {
  setfsgid(gid);
  return static_cast<gid_t>(setfsgid(static_cast<gid_t>(-1))) == gid ? 0 : EPERM;
}

// The caller's supplementary groups; none when they cannot be read (see the header).
std::vector<gid_t> CallerGroups(fuse_req* req) {
  std::vector<gid_t> groups(32);
  for (;;) {
    int n = fuse_req_getgroups(req, static_cast<int>(groups.size()), groups.data());
    if (n < 0) return {};
    if (static_cast<size_t>(n) <= groups.size()) {
      groups.resize(n);
      return groups;
    }
    groups.resize(n);  // more than fitted: read them again into room for all
  }
}

}  // namespace

CallerIdentity::CallerIdentity(fuse_req* req) {
  const fuse_ctx* ctx = fuse_req_ctx(req);
  if (geteuid() != 0) return;
  if (ctx->uid == 0 && ctx->gid == getegid()) return;
  saved_fsuid_ = static_cast<uid_t>(setfsuid(static_cast<uid_t>(-1)));
  saved_fsgid_ = static_cast<gid_t>(setfsgid(static_cast<gid_t>(-1)));
  int n = getgroups(0, nullptr);
  if (n < 0) {
    error_ = errno;
    return;
  }
  saved_groups_.resize(n);
  if (getgroups(n, saved_groups_.data()) != n) {
    error_ = errno;
    return;
  }
  // Groups and fsgid first: with fsuid still 0 nothing the thread does in between is refused.
  error_ = SetThreadGroups(CallerGroups(req));
  if (error_ != 0) return;
  switched_ = true;  // from here on the destructor has something to put back
  error_ = SetThreadFsgid(ctx->gid);
  if (error_ == 0) error_ = SetThreadFsuid(ctx->uid);
  if (error_ != 0) {
    Restore();
    switched_ = false;
  }
}

CallerIdentity::~CallerIdentity() {
  if (switched_) Restore();
}

void CallerIdentity::Restore() {
  // The switch in reverse.
  int err = SetThreadFsuid(saved_fsuid_);
  if (err == 0) err = SetThreadFsgid(saved_fsgid_);
  if (err == 0) err = SetThreadGroups(saved_groups_);
  if (err == 0) return;
  LogError("cannot give a request thread its own identity back (" + std::to_string(err) +
           "); stopping rather than serve later requests as another user");
  std::abort();
}

}  // namespace ccfs
