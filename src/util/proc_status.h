// One figure of a process's /proc/PID/status, in bytes: the memory lines ("VmRSS:", "RssAnon:",
// ...), which the kernel gives in kB; and one of /proc/meminfo, likewise.
//
// Thread-safety: a plain function; any thread.
#ifndef CCFS_UTIL_PROC_STATUS_H_
#define CCFS_UTIL_PROC_STATUS_H_

#include <sys/types.h>

#include <cstdint>
#include <string>

namespace ccfs {

// The value of the line starting with `key` (with its colon) times 1024, or 0 when the process or
// the line is not there.
uint64_t ProcStatusBytes(pid_t pid, const std::string& key);

// The value of the line of /proc/meminfo (or `path`) starting with `key` ("MemTotal:"), in bytes;
// 0 when it is not there.
uint64_t ProcMeminfoBytes(const std::string& key, const std::string& path = "/proc/meminfo");

// How many descriptors this process (or `pid`) has open (the entries of /proc/PID/fd, less the one
// that lists them when it is this process); 0 when it cannot be read.
uint64_t OpenDescriptorCount();
uint64_t OpenDescriptorCount(pid_t pid);

}  // namespace ccfs

#endif  // CCFS_UTIL_PROC_STATUS_H_
