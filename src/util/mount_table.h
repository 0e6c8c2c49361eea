// The kernel's table of mounts, as the daemon's tools, tests and benchmarks need it: is something
// mounted here yet, or still, and what?
//
// Reads /proc/mounts afresh on every call (no caching: callers poll it while a mount comes up or
// goes away). IsMounted compares paths as /proc/mounts spells them: absolute, without a trailing
// slash, and with the kernel's octal escapes (a space is "\040"), so pass a path as realpath(3)
// gives it. TopMountAt decodes those escapes first, so it takes a path as realpath(3) gives it.
//
// Thread-safety: may be called from any thread.
#ifndef CCFS_UTIL_MOUNT_TABLE_H_
#define CCFS_UTIL_MOUNT_TABLE_H_

#include <string>

namespace ccfs {

// True if `path` is a mount point listed in /proc/mounts; false also when it cannot be read.
bool IsMounted(const std::string& path);

// One line of /proc/mounts, escapes decoded.
struct MountEntry {
  std::string source;  // the device column: for ccfs, the dataset
  std::string target;
  std::string type;    // e.g. "fuse.ccfs"
};

// Parses one line of /proc/mounts (device, mount point, type, ...), decoding the escapes. False
// for a line with fewer than three fields.
bool ParseMountLine(const std::string& line, MountEntry* entry);

// The mount that is on top at `path` (the last one listed for it), if any. False when nothing is
// mounted at `path` or /proc/mounts cannot be read.
bool TopMountAt(const std::string& path, MountEntry* entry);

// The "MAJ:MIN" device number of the mount on top at `path` (a path as realpath(3) gives it), from
// /proc/self/mountinfo; "" when none is listed there.
std::string MountDeviceAt(const std::string& path);

}  // namespace ccfs

#endif  // CCFS_UTIL_MOUNT_TABLE_H_
