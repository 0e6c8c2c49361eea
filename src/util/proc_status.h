// One figure of a process's /proc/PID/status, in bytes: the memory lines ("VmRSS:", "RssAnon:",
// ...), which the kernel gives in kB.
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

}  // namespace ccfs

#endif  // CCFS_UTIL_PROC_STATUS_H_
