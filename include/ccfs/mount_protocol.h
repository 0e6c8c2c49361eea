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
// The daemon side lives in src/fuse/; the client side (every command that talks to a mount) in
// src/client/mount_client.h. Code that walks a mount's tree includes it to skip the directory
// (trace/dataset.cc); nothing else should need it.
//
// Constants only: thread-safe.
#ifndef CCFS_MOUNT_PROTOCOL_H_
#define CCFS_MOUNT_PROTOCOL_H_

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

}  // namespace ccfs

#endif  // CCFS_MOUNT_PROTOCOL_H_
