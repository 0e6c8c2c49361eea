// The mount's own protocol: the names and the wire format both sides of a ccfs mount agree on.
//
// A ccfs mount serves a virtual directory MOUNTPOINT/.ccfs (not listed by readdir) holding:
//   stats.json  read-only. The engine's counters and settings as one JSON document, rendered
//               afresh at each open (shape: src/stats/stats_json.h), plus an object
//               "daemon": {"pid", "dataset", "mountpoint", "uptime_s"} describing the daemon.
//   control     read-write, for the mount's owner. A write() carries "key=value" lines (blank lines
//               and lines starting with '#' are skipped). The daemon checks every line of one
//               write before applying any, so one write is all-or-nothing:
//                 accepted: write() returns the byte count; a following read from offset 0 on the
//                           same descriptor returns "ok\n".
//                 refused:  write() fails with EINVAL and nothing changes; a following read from
//                           offset 0 on the same descriptor returns one line
//                           "error: <message>\n", where <message> names the key and the reason.
//               A daemon older than this protocol answers a refusal with a bare EINVAL and reads
//               back nothing.
//
// Every regular file of the mount also answers three ioctl(2) commands on a descriptor open for
// reading, the door of `ccfs warmup` (the argument is a WarmRange, read and written back):
//   kWarmIoctl       loads the range's pages that are in neither tier from the store, as pages
//                    someone wants (past probation; into the compressed tier once the raw share is
//                    full), then reports what the tiers hold of the range.
//   kResidencyIoctl  reports what the daemon's tiers hold of the range.
//   kEvictIoctl      drops every page of the file from the daemon's tiers (and, under
//                    raw_tier = kernel, from the kernel's page cache); allowed to the daemon's
//                    user and root only (EPERM otherwise), as the control file is.
// A file of another file system, or a daemon older than this protocol, answers ENOTTY.
//
// The daemon side lives in src/fuse/; the client side (every command that talks to a mount) in
// src/client/mount_client.h. Code that walks a mount's tree includes it to skip the directory
// (trace/dataset.cc); nothing else should need it.
//
// Constants and a plain struct only: thread-safe.
#ifndef CCFS_MOUNT_PROTOCOL_H_
#define CCFS_MOUNT_PROTOCOL_H_

#include <linux/ioctl.h>

#include <cstdint>

namespace ccfs {

// Name of the virtual directory at the mount root, and of the files in it.
inline constexpr char kControlDirName[] = ".ccfs";
inline constexpr char kStatsFileName[] = "stats.json";
inline constexpr char kControlFileName[] = "control";

// stats.json: the object describing the daemon, and its process id within it.
inline constexpr char kStatsDaemonKey[] = "daemon";
inline constexpr char kStatsDaemonPidKey[] = "pid";
// Seconds since the daemon started serving (what `ccfs stat`'s since-mount row divides by).
inline constexpr char kStatsDaemonUptimeKey[] = "uptime_s";

// control: what a read after a write returns.
inline constexpr char kControlOkReply[] = "ok\n";
inline constexpr char kControlErrorPrefix[] = "error: ";

// The argument of the ioctls above. Sizes are fixed, so the kernel copies it both ways.
struct WarmRange {
  // In: the range of the file, in bytes; length 0 reaches to the end of the file.
  uint64_t offset;
  uint64_t length;
  // Out: bytes read from the store for this call (kWarmIoctl; 0 for the others).
  uint64_t loaded;
  // Out: what the daemon's tiers hold of the range's pages now. Under raw_tier = kernel the raw
  // share is the kernel's page cache, which the client asks itself (cachestat, mincore):
  // raw_pages then counts only the daemon's small staging tier.
  uint64_t raw_pages;
  uint64_t compressed_pages;
  uint64_t compressed_bytes;
  // Out: pages in the range (to the end of the file when it ends first), the engine's page size,
  // and whether raw_tier = kernel (1) or daemon (0).
  uint64_t pages;
  uint32_t page_size;
  uint32_t kernel_tier;
};
inline constexpr unsigned long kWarmIoctl = _IOWR('C', 0x57, WarmRange);
inline constexpr unsigned long kResidencyIoctl = _IOWR('C', 0x52, WarmRange);
inline constexpr unsigned long kEvictIoctl = _IOWR('C', 0x45, WarmRange);

}  // namespace ccfs

#endif  // CCFS_MOUNT_PROTOCOL_H_
