// What the daemon does with the open(2) flags the kernel passes on with OPEN and CREATE (the
// caller's flags, less O_CREAT, O_EXCL and O_NOCTTY, which the kernel has dealt with).
//
//   O_DIRECT   not passed to the backing open. The kernel hands the daemon the caller's bytes in
//              its own request buffer, at no particular alignment, and FUSE lets O_DIRECT writes
//              through at any offset and length, so an O_DIRECT backing descriptor would refuse
//              most of them (EINVAL). What O_DIRECT promises the caller is kept another way: such a
//              handle's writes are written back to the backing device before the reply
//              (BackingFileOptions::write_through_to_device), and reads are never served from the
//              kernel's page cache anyway (direct_io) nor stale from the daemon's tiers (a write
//              drops the pages it covers before it is acknowledged).
//   O_SYNC, O_DSYNC  kept: the backing writes are synchronous, as the caller asked (the kernel
//              sends no FSYNC after a direct_io write).
//   O_APPEND   kept: the backing pwrite lands at the end of the file whatever offset the kernel
//              sent (FileHandle::append then drops the cached pages past the old end).
//   O_NOATIME  kept, and the backing store's page-read descriptor gets it too.
//   O_TRUNC    kept (atomic O_TRUNC): the backing open truncates.
//   O_NOFOLLOW stripped by the handlers: the daemon reopens a known regular file.
//   O_NONBLOCK, O_LARGEFILE, O_CLOEXEC  kept; no effect on a regular file's backing descriptor.
//   O_PATH     never reaches the daemon (the kernel sends no OPEN for it).
//
// Thread-safety: pure functions.
#ifndef CCFS_FUSE_OPEN_FLAGS_H_
#define CCFS_FUSE_OPEN_FLAGS_H_

#include "ccfs/backing_store.h"

namespace ccfs {

// The flags to open the backing file with, given the caller's.
int BackingOpenFlags(int caller_flags);

// How the handle's backing file must write, given the caller's flags.
BackingFileOptions BackingFileOptionsFor(int caller_flags);

}  // namespace ccfs

#endif  // CCFS_FUSE_OPEN_FLAGS_H_
