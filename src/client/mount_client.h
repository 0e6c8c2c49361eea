// Mount client: how every command talks to a running ccfs mount through its .ccfs directory.
//
// The protocol itself (names, the control file's replies) is in include/ccfs/mount_protocol.h;
// this is its one client-side implementation, used by `ccfs stat`, `ccfs set`, `ccfs umount`,
// `ccfs replay` and the replay library. It answers four questions:
//   - is this a ccfs mount (IsCcfsMount for a quick yes/no, CheckMount for an error worth showing);
//   - what do its counters say (ReadMountStats; parsing is stats/stats_json.h's);
//   - which process is its daemon (ReadDaemonPid);
//   - apply live settings (ApplyLiveSettings), reporting the daemon's own reason for a refusal.
//
// Errors name the path and say what the user faces: a mount point that does not exist, a
// directory that is not a ccfs mount (NotFound), a mount whose daemon has died (ENOTCONN), a
// refused setting (InvalidArgument carrying the daemon's message).
//
// Thread-safety: every function may be called from any thread; none keeps state between calls.
// A call that reads the mount blocks while the daemon answers (ReadDaemonPid excepted, which
// gives up after its timeout).
#ifndef CCFS_CLIENT_MOUNT_CLIENT_H_
#define CCFS_CLIENT_MOUNT_CLIENT_H_

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

#include "ccfs/stats.h"
#include "ccfs/status.h"

namespace ccfs {

// MOUNTPOINT/.ccfs/stats.json and MOUNTPOINT/.ccfs/control.
std::string MountStatsPath(const std::string& mountpoint);
std::string MountControlPath(const std::string& mountpoint);

// True if `path` looks like a ccfs mount (it has .ccfs/stats.json). Never fails: anything else,
// a dead mount included, is false.
bool IsCcfsMount(const std::string& path);

// OK if `mountpoint` is a directory holding .ccfs/stats.json. Otherwise an error naming the path:
// the mount point does not exist, is not a directory, is not a ccfs mount (NotFound), or its daemon
// is gone (IOError ENOTCONN, with the command that cleans up).
Status CheckMount(const std::string& mountpoint);

// Reads and parses MOUNTPOINT/.ccfs/stats.json after CheckMount. A document that does not parse is
// InvalidArgument naming the file and the key. On error *stats is unchanged. If `uptime_s` is
// given it receives the daemon's uptime from the same document (the seconds its counters cover;
// 0 from a daemon that does not say).
Status ReadMountStats(const std::string& mountpoint, CacheStats* stats,
                      double* uptime_s = nullptr);
// The same without CheckMount's stat() of the mount point, for callers that poll a mount already
// checked (replay reads the counters many times a run). Errors name the file.
Status ReadMountStatsFile(const std::string& mountpoint, CacheStats* stats,
                          double* uptime_s = nullptr);

// The daemon's process id, from stats.json's "daemon" object. Read on a helper thread, so a hung
// daemon costs at most `timeout`. 0 when unknown: no answer in time, no such mount, or a daemon too
// old to say.
pid_t ReadDaemonPid(const std::string& mountpoint, std::chrono::milliseconds timeout);

struct LiveSetting {
  std::string key;
  std::string value;  // REQUIRES: on one line
};

// Writes every setting to MOUNTPOINT/.ccfs/control in a single write(), so the daemon applies all
// of them or none. Errors: the control file cannot be opened or written (IOError or NotFound
// naming it); the daemon refused (InvalidArgument, and only then: the daemon's message, which
// names the key and the reason, or, from a daemon that gives none, "refused by the daemon
// (EINVAL)" with the lines sent). REQUIRES: !settings.empty(); CheckMount(mountpoint) passed
// (otherwise a plain directory gets a confusing message about its control file).
Status ApplyLiveSettings(const std::string& mountpoint, const std::vector<LiveSetting>& settings);

// What a refusal means, given the lines written and what the control file read back afterwards:
// InvalidArgument with the daemon's message when `reply` is "error: <message>\n", else with
// "refused by the daemon (EINVAL)" and the lines sent. Pure; ApplyLiveSettings uses it.
Status ControlRefusal(const std::string& sent, const std::string& reply);

}  // namespace ccfs

#endif  // CCFS_CLIENT_MOUNT_CLIENT_H_
