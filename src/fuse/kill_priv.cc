#include "fuse/kill_priv.h"

#include <fcntl.h>
#include <linux/fuse.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>

#include "fuse/fuse_api.h"
#include "fuse/session_io.h"

namespace ccfs {
namespace {

// True when the kernel tells, per request, whether the caller had CAP_FSETID.
bool KernelSaysWhoMayKeep() { return (InitFlagsAdded() & kInitHandleKillprivV2) != 0; }

}  // namespace

mode_t ModeWithoutSetId(mode_t mode, bool caller_in_group) {
  mode &= ~S_ISUID;
  if ((mode & S_IXGRP) || !caller_in_group) mode &= ~S_ISGID;
  return mode;
}

int ClearSetId(int fd, fuse_req* req) {
  struct stat st;
  if (fstat(fd, &st) != 0) return errno;
  bool in_group = true;  // only asked when it matters: S_ISGID without S_IXGRP
  if ((st.st_mode & (S_ISGID | S_IXGRP)) == S_ISGID) {
    in_group = fuse_req_ctx(req)->gid == st.st_gid;
    gid_t groups[64];
    int n = in_group ? 0 : fuse_req_getgroups(req, 64, groups);
    for (int k = 0; k < std::min(n, 64) && !in_group; ++k) in_group = groups[k] == st.st_gid;
  }
  mode_t wanted = ModeWithoutSetId(st.st_mode, in_group);
  if (wanted == st.st_mode) return 0;
  return fchmod(fd, wanted & 07777) == 0 ? 0 : errno;
}

bool WriteMustClearSetId(bool writepage, uid_t caller) {
  if (writepage) return false;
  const RequestFlags& r = CurrentRequest();
  // Every kernel since 5.11 sends the flag with a direct_io WRITE whose caller lacks CAP_FSETID.
  if (r.opcode == FUSE_WRITE) return (r.write_flags & FUSE_WRITE_KILL_SUIDGID) != 0;
  return caller != 0;
}

bool TruncateMustClearSetId(int to_set, uid_t caller) {
  if (KernelSaysWhoMayKeep()) return (to_set & FUSE_SET_ATTR_KILL_SUID) != 0;
  return caller != 0;
}

bool OpenTruncMustClearSetId(int open_flags, uid_t caller) {
  if (!(open_flags & O_TRUNC)) return false;
  const RequestFlags& r = CurrentRequest();
  if (KernelSaysWhoMayKeep() && (r.opcode == FUSE_OPEN || r.opcode == FUSE_CREATE)) {
    return (r.open_flags & FUSE_OPEN_KILL_SUIDGID) != 0;
  }
  return caller != 0;
}

}  // namespace ccfs
