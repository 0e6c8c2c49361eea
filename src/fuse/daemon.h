// The ccfs daemon: mounts a dataset directory through Filesystem and serves it until unmounted.
//
// RunDaemon does, in order: read --config then every -o list over the defaults (an unknown key, a
// bad value or a missing file is an error naming the key and line); check DATASET and MOUNTPOINT
// (fuse/mount_preflight.h: a dataset this process cannot list, a mount point on, in or above the
// dataset, a live ccfs mount there or another file system's dead one are refused; a dead ccfs
// mount is cleared); then, unless foreground, fork a child that detaches. The parent waits on a
// pipe and returns only once the child reports the mount ready (exit 0), or the child failed
// (exit 1; the child wrote why to stderr). Errors before the mount exists never leave anything
// mounted.
//
// While serving: SIGTERM and SIGINT unmount and return 0; SIGHUP re-reads --config (plus the -o
// lists) and applies what can change live, logging what changed and what needs a remount; SIGUSR1
// logs a stats line. An unmount from outside (fusermount3 -u) also ends it with 0. With persist,
// the cache file is reloaded in the background once the mount serves, and written after the
// unmount, before the daemon exits (fuse/persister.h). Logs go to
// stderr in the foreground and to syslog once detached.
//
// Thread-safety: call once per process, from the main thread, before any other thread exists.
#ifndef CCFS_FUSE_DAEMON_H_
#define CCFS_FUSE_DAEMON_H_

#include <string>
#include <vector>

namespace ccfs {

struct DaemonArgs {
  std::string config_file;                // --config, may be empty
  std::vector<std::string> option_lists;  // each -o value, applied in order after the file
  bool foreground = false;                // -f
  std::string dataset;
  std::string mountpoint;
};

// Returns the process exit code.
int RunDaemon(const DaemonArgs& args);

}  // namespace ccfs

#endif  // CCFS_FUSE_DAEMON_H_
