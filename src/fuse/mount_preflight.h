// The checks `ccfs mount` makes on DATASET and MOUNTPOINT before it forks, so that every refusal
// reaches the caller's terminal naming the path (and the errno where there is one), the exit
// status is non-zero, and nothing is mounted.
//
// PrepareMountPaths, in order:
//   1. DATASET: resolved to an absolute directory path (realpath(3)).
//   2. DATASET can be opened, listed and searched by this process as it is now: the daemon keeps
//      the caller's identity, so a dataset the caller cannot list would mount and then answer
//      EACCES to every `ls`. Checked by doing it (open, getdents) and by faccessat(2) with
//      AT_EACCESS for search, so capabilities count as they will for the daemon.
//   3. MOUNTPOINT: resolved likewise. If its daemon has died (stat says ENOTCONN, or ECONNABORTED
//      while the kernel aborts the connection) and the mount table lists fuse.ccfs on top there,
//      that dead mount is detached (lazy unmount: files still open on it keep failing, new
//      lookups see what is beneath) and one log line says so. A dead mount of any other type is
//      refused, naming the command that clears it: it is not ours to remove.
//   4. A live ccfs mount at MOUNTPOINT is refused (see RefuseStackedMount in the .cc).
//   5. MOUNTPOINT must be apart from DATASET: not inside it (the daemon's lookups of the mount
//      point's name would reach its own mount), not DATASET itself and not above it (the mount
//      would hide the dataset's path, which the daemon opens again when the store beneath it
//      comes back, and would then find its own mount). Compared as resolved paths and, for the
//      same directory reached by two paths (a bind mount), by device and inode.
//   6. A dataset with its own `.ccfs` entry gets one warning: the control directory of the same
//      name shadows it in the mount.
//
// Thread-safety: call from the main thread before any other thread exists (step 3 may run
// fusermount3 as a child process).
#ifndef CCFS_FUSE_MOUNT_PREFLIGHT_H_
#define CCFS_FUSE_MOUNT_PREFLIGHT_H_

#include <string>

#include "ccfs/status.h"
#include "util/mount_table.h"

namespace ccfs {

// Runs the checks above on the paths as given; on success *dataset and *mountpoint hold the
// resolved absolute paths. Errors name the path and say what to do.
Status PrepareMountPaths(const std::string& dataset_arg, const std::string& mountpoint_arg,
                         std::string* dataset, std::string* mountpoint);

// Step 3's decision, given the errno stat(2) gave for the mount point (0 if it succeeded) and the
// mount on top there (nullptr if none is listed): true when it is a dead ccfs mount, which
// PrepareMountPaths clears; false for anything else (a live mount, another file system's dead
// mount, a plain directory). Pure.
bool IsDeadCcfsMount(int stat_errno, const MountEntry* top);

}  // namespace ccfs

#endif  // CCFS_FUSE_MOUNT_PREFLIGHT_H_
