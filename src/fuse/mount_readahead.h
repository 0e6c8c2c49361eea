// MountReadahead: how far ahead the kernel reads a file of the mount in raw_tier = kernel mode,
// and so how large its READ requests to the daemon are when a reader streams a file.
//
// The kernel sizes a FUSE read-ahead request by the read-ahead window of the mount's backing
// device info (bdi, /sys/class/bdi/MAJ:MIN/read_ahead_kb), capped by max_pages (negotiated at
// INIT: 256 pages, 1 MiB, with libfuse's default max_write). The bdi starts at the kernel's
// default window (128 KiB) and INIT can only lower it (the kernel keeps the smaller of the bdi's
// window and INIT's max_readahead), so a larger window is set through sysfs once INIT is done.
// A larger window means fewer trips and, on a miss, fewer and larger backing reads per MiB; random
// readers are not affected (the kernel reads ahead only for what it sees as a stream, and a
// random read asks for just its own pages).
//
// In daemon mode files are opened direct_io: the kernel does not read ahead, and a read(2)
// reaches the daemon as requests of up to max_pages as it is; the engine reads ahead instead
// (PageCache::ReadAhead). In kernel mode the kernel's window is the read-ahead, and the engine's is
// not used: its pages would wait in the small staging tier, where most of them are evicted unread
// (scripts/stream_bench.sh measures it). Both follow the `readahead` key.
// A window larger than max_pages is read as several requests in flight at once.
//
// Thread-safety: stateless; may be called from any thread. Needs root (sysfs): otherwise it fails
// and the mount keeps the kernel's window.
#ifndef CCFS_FUSE_MOUNT_READAHEAD_H_
#define CCFS_FUSE_MOUNT_READAHEAD_H_

#include <cstdint>
#include <string>

#include "ccfs/status.h"

namespace ccfs {

// Sets the read-ahead window of the FUSE mount at `mountpoint` (as realpath(3) gives it) to
// `bytes`. The mount is found in /proc/self/mountinfo (its device number names the bdi); the mount
// itself is never accessed. REQUIRES: the mount's INIT has been answered (the kernel applies
// INIT's max_readahead to the bdi when it reads the reply).
Status SetMountReadahead(const std::string& mountpoint, uint64_t bytes);

}  // namespace ccfs

#endif  // CCFS_FUSE_MOUNT_READAHEAD_H_
