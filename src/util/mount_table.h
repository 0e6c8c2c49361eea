// The kernel's table of mounts, as the daemon's tools, tests and benchmarks need it: is something
// mounted here yet, or still?
//
// Reads /proc/mounts afresh on every call (no caching: callers poll it while a mount comes up or
// goes away). Paths are compared as /proc/mounts spells them: absolute, without a trailing slash,
// and with the kernel's octal escapes (a space is "\040"), so pass a path as realpath(3) gives it.
//
// Thread-safety: may be called from any thread.
#ifndef CCFS_UTIL_MOUNT_TABLE_H_
#define CCFS_UTIL_MOUNT_TABLE_H_

#include <string>

namespace ccfs {

// True if `path` is a mount point listed in /proc/mounts; false also when it cannot be read.
bool IsMounted(const std::string& path);

}  // namespace ccfs

#endif  // CCFS_UTIL_MOUNT_TABLE_H_
