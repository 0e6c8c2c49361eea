// The descriptor limit: see descriptor_limit.h.
#include "util/descriptor_limit.h"

#include <sys/resource.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace ccfs {

size_t RaiseDescriptorLimit(std::string* note) {
  struct rlimit lim;
  if (getrlimit(RLIMIT_NOFILE, &lim) != 0) return 1024;
  const rlim_t was = lim.rlim_cur;
  std::string what;
  if (lim.rlim_cur < lim.rlim_max) {
    struct rlimit want = lim;
    want.rlim_cur = lim.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &want) == 0) {
      lim = want;
      what = fmt::format(" (raised from {})", was);
    } else {
      what = fmt::format(" (could not raise it to the hard limit {}: {})", lim.rlim_max,
                         std::strerror(errno));
    }
  }
  if (note != nullptr) *note = what;
  // Linux caps NOFILE at fs.nr_open (2^20 by default); never RLIM_INFINITY.
  return static_cast<size_t>(std::min<rlim_t>(lim.rlim_cur, 1u << 30));
}

}  // namespace ccfs
