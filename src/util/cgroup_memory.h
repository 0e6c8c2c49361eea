// The memory cgroup this process is in, as it stands now: its limit, what is charged to it, and
// how much of that is file pages (the page cache). Cgroup v1 (the "memory" controller's line of
// /proc/self/cgroup) and v2 (the "0::" line) alike; the files are read at every call, since the
// process may be moved to another cgroup at any time (ccfs replay moves a kernel-mode daemon into
// the cgroup it shares with its reader).
//
// Thread-safety: a plain function; any thread.
#ifndef CCFS_UTIL_CGROUP_MEMORY_H_
#define CCFS_UTIL_CGROUP_MEMORY_H_

#include <cstdint>
#include <string>

namespace ccfs {

struct CgroupMemory {
  uint64_t limit = 0;  // bytes; 0: no limit
  uint64_t usage = 0;  // bytes charged now
  uint64_t file = 0;   // of which page cache
};

// Fills *m and returns true when this process is in a memory cgroup with a limit. `root` is where
// the cgroup file systems are mounted (tests point it at a fake tree); `self` is the
// /proc/self/cgroup text to use (empty: read the real one).
bool ReadCgroupMemory(CgroupMemory* m, const std::string& root = "/sys/fs/cgroup",
                      const std::string& self = "");

}  // namespace ccfs

#endif  // CCFS_UTIL_CGROUP_MEMORY_H_
