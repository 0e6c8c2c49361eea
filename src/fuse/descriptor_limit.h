// The daemon's descriptor limit, and how many of them the inode table may keep idle.
//
// Inodes the kernel names hold no descriptor of their own (inode_table.h), so the tree's size does
// not matter; what does is what is open at once: the table's idle cache (max_open_files), up to two
// per file the kernel holds open (the caller's flags, and the O_DIRECT one for page reads, which a
// read-only open's is itself) plus the inode's own while open, one per open directory, and a few
// of the daemon's own (/dev/fuse, the rings, the metrics socket, logs). In kernel mode the daemon
// also keeps read handles (fuse/read_handles.h), two descriptors each at most, at most
// max_open_files / 4 of them: a read-only mount's files, which the kernel opens without OPEN, and
// on a read-write mount read-only opens' descriptors kept past RELEASE (shared with the open file
// while it is open). The daemon raises its soft RLIMIT_NOFILE to the hard limit at start
// (util/descriptor_limit.h).
#ifndef CCFS_FUSE_DESCRIPTOR_LIMIT_H_
#define CCFS_FUSE_DESCRIPTOR_LIMIT_H_

#include <cstddef>
#include <string>

#include "ccfs/status.h"

namespace ccfs {

// Descriptors kept free of the table's cache for open files and the daemon's own, at the least.
inline constexpr size_t kDescriptorReserve = 64;

// Raises the soft limit to the hard one and chooses the table's bound: `configured`
// (max_open_files), or half the limit when 0. *report says what was got, for the log. A bound the
// limit cannot hold beside the reserve is InvalidArgument naming max_open_files and the limit.
Status ChooseDescriptorBound(int configured, size_t* bound, std::string* report);

}  // namespace ccfs

#endif  // CCFS_FUSE_DESCRIPTOR_LIMIT_H_
