// Clearing the set-user-ID and set-group-ID bits when a file is written, truncated or given away,
// as Linux's VFS does on a local file system.
//
// The daemon runs as root, so the backing file system sees a writer with CAP_FSETID and keeps the
// bits; the kernel's FUSE client leaves the job to the daemon (FUSE_HANDLE_KILLPRIV, which libfuse
// asks for, and FUSE_HANDLE_KILLPRIV_V2, which SessionIo adds) and says, per request, whether the
// caller lacked CAP_FSETID:
//   write     FUSE_WRITE_KILL_SUIDGID in WRITE's write_flags (SessionIo's CurrentRequest());
//             never for the write-back of pages dirtied through a shared mapping (fi->writepage)
//   truncate  FATTR_KILL_SUIDGID in SETATTR's valid (libfuse passes it as FUSE_SET_ATTR_KILL_SUID)
//   O_TRUNC   FUSE_OPEN_KILL_SUIDGID in OPEN's and CREATE's open_flags (CurrentRequest())
//   chown     nothing to do: Linux clears S_ISUID (and S_ISGID when group-executable) on every
//             chown of a non-directory, root's included, so the backing chown does it
// Kernels without HANDLE_KILLPRIV_V2 (before 5.11) send no flag with a truncate or an open; there,
// and if no flag could be read at all, any caller but uid 0 counts as lacking CAP_FSETID.
//
// What is cleared (setattr_should_drop_suidgid in the kernel's fs/attr.c): S_ISUID; S_ISGID when
// the group may execute, or when the caller is not in the file's group.
//
// Thread-safety: the functions keep no state; the Must* ones read the calling thread's request.
#ifndef CCFS_FUSE_KILL_PRIV_H_
#define CCFS_FUSE_KILL_PRIV_H_

#include <sys/types.h>

struct fuse_req;

namespace ccfs {

// `mode` without the bits a write by a caller without CAP_FSETID clears.
mode_t ModeWithoutSetId(mode_t mode, bool caller_in_group);

// Clears them on the file `fd` is open on (not O_PATH), if it has any; `req` is the request whose
// caller's groups count. Returns 0 or an errno.
int ClearSetId(int fd, fuse_req* req);

// Whether the WRITE this thread serves must clear them. `writepage`: fuse_file_info::writepage.
bool WriteMustClearSetId(bool writepage, uid_t caller);

// Whether a SETATTR that changes the size must clear them. `to_set`: the handler's bit mask.
bool TruncateMustClearSetId(int to_set, uid_t caller);

// Whether the OPEN (or the CREATE that found the file) this thread serves, with O_TRUNC in
// `open_flags`, must clear them.
bool OpenTruncMustClearSetId(int open_flags, uid_t caller);

}  // namespace ccfs

#endif  // CCFS_FUSE_KILL_PRIV_H_
