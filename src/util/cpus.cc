#include "util/cpus.h"

#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace ccfs {

int ResolveCompressThreads(int compress_threads) {
  if (compress_threads > 0) return compress_threads;
  // One CPU is left to the readers: on small machines a pool as wide as the machine takes the
  // CPU from the very requests it works for (measured by scripts/bench.sh on 2 vCPUs).
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  return online > 1 ? static_cast<int>(online) - 1 : 1;
}

CpuSplit SplitCpus(int compress_threads) {
  std::vector<int> allowed;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    for (int c = 0; c < CPU_SETSIZE; ++c) {
      if (CPU_ISSET(c, &set)) allowed.push_back(c);
    }
  }
  if (allowed.empty()) allowed.push_back(0);
  CpuSplit split;
  if (allowed.size() == 1) {
    split.request = split.compress = allowed;
    return split;
  }
  const size_t workers = static_cast<size_t>(ResolveCompressThreads(compress_threads));
  const size_t n_compress = std::min(workers, allowed.size() - 1);
  split.request.assign(allowed.begin(), allowed.end() - static_cast<long>(n_compress));
  split.compress.assign(allowed.end() - static_cast<long>(n_compress), allowed.end());
  return split;
}

Status PinThisThread(const std::vector<int>& cpus) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : cpus) CPU_SET(c, &set);
  int err = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
  if (err != 0) return Status::FromErrno(err, "pin_threads: cannot restrict a thread to its CPUs");
  return Status::Ok();
}

}  // namespace ccfs
