// CPU placement of the daemon's threads (the pin_threads key).
//
// On a small VM a FUSE request that wakes a thread on another CPU pays an inter-processor
// interrupt both ways; a request served on the reader's own CPU does not, and its round trip is
// several times shorter (bench/fuse_rtt under `taskset -c 0` against unpinned). With
// pin_threads the request threads stay on the first CPUs and the compression workers on the last
// ones, so compression never runs where requests are served; an application pinned to the
// request CPUs (taskset) then gets same-CPU round trips.
#ifndef CCFS_UTIL_CPUS_H_
#define CCFS_UTIL_CPUS_H_

#include <vector>

#include "ccfs/status.h"

namespace ccfs {

// Compression workers for a compress_threads setting: 0 or less means one per online CPU but one
// (at least one), as CompressionPool starts them.
int ResolveCompressThreads(int compress_threads);

struct CpuSplit {
  std::vector<int> request;   // CPUs for the request threads (never empty)
  std::vector<int> compress;  // CPUs for the compression workers (never empty)
};

// From the CPUs this process may run on (sched_getaffinity, so taskset and cpusets are
// respected): the compression workers get the last min(workers, CPUs − 1) of them, the request
// threads the rest. With a single CPU both get it.
CpuSplit SplitCpus(int compress_threads);

// Restricts the calling thread to `cpus`.
Status PinThisThread(const std::vector<int>& cpus);

}  // namespace ccfs

#endif  // CCFS_UTIL_CPUS_H_
