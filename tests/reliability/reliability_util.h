// Helpers for the reliability tests: run length from the environment, checksummed block contents,
// daemon memory, and a child process runner that never leaves a process behind.
//
// CCFS_RELIABILITY_SCALE (default 1) multiplies durations and cycle counts: CI runs the short
// version, scripts/reliability.sh runs the long one.
#ifndef CCFS_TESTS_RELIABILITY_RELIABILITY_UTIL_H_
#define CCFS_TESTS_RELIABILITY_RELIABILITY_UTIL_H_

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "util/proc_status.h"

namespace ccfs::testing {

inline double ReliabilityScale() {
  const char* s = getenv("CCFS_RELIABILITY_SCALE");
  double v = s != nullptr ? atof(s) : 1.0;
  return v > 0 ? v : 1.0;
}

// 64-bit mix (splitmix64 finaliser).
inline uint64_t Mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// The bytes of block `block` of file `file` at generation `gen`: a 32-byte header
// "CCFS f=FF b=BBBBBB g=GGGGGGGG\n" then compressible text derived from (file, block, gen), so the
// compressed tier takes part and a stale or misplaced block is recognised by its header.
inline void FillBlock(char* out, size_t size, uint32_t file, uint32_t block, uint32_t gen) {
  static const char* const kWords[] = {"alpha ", "beta ", "gamma ", "delta ", "page ", "tier ",
                                       "cache ", "block\n"};
  char head[64];
  snprintf(head, sizeof(head), "CCFS f=%02u b=%06u g=%08u\n", file % 100, block % 1000000,
           gen % 100000000);
  size_t pos = 0;
  for (; head[pos] != '\0' && pos < size; ++pos) out[pos] = head[pos];
  uint64_t state = Mix((uint64_t{file} << 52) ^ (uint64_t{block} << 24) ^ gen);
  while (pos < size) {
    state = Mix(state);
    const char* w = kWords[state & 7];
    for (size_t k = 0; w[k] != '\0' && pos < size; ++k) out[pos++] = w[k];
    if ((state >> 8) % 5 == 0 && pos + 6 < size) {
      pos += snprintf(out + pos, 7, "%06u", static_cast<unsigned>((state >> 16) % 1000000));
    }
  }
}

// Resident set of a process in bytes (VmRSS), or 0.
inline uint64_t RssBytes(pid_t pid) { return ProcStatusBytes(pid, "VmRSS:"); }

// Its anonymous part (RssAnon): what the process allocated, without the file pages of its binary
// and libraries, which are shared with other processes and do not grow with the cache.
inline uint64_t AnonRssBytes(pid_t pid) { return ProcStatusBytes(pid, "RssAnon:"); }

// Forks a child that runs `body` and _exits with its return value. The caller must Wait it.
template <typename F>
pid_t ForkChild(F body) {
  pid_t pid = fork();
  if (pid == 0) {
    int code = body();
    _exit(code);
  }
  return pid;
}

// Waits for a child up to timeout_s (then SIGKILLs it); returns its exit code or 128+signal.
inline int WaitChild(pid_t pid, double timeout_s) {
  int status = 0;
  for (int waited_ms = 0;; waited_ms += 5) {
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) break;
    if (r < 0) return -1;
    if (waited_ms > timeout_s * 1000) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      break;
    }
    usleep(5000);
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

}  // namespace ccfs::testing

#endif  // CCFS_TESTS_RELIABILITY_RELIABILITY_UTIL_H_
