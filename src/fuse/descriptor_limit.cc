// The descriptor limit: see descriptor_limit.h.
#include "fuse/descriptor_limit.h"

#include <sys/resource.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace ccfs {

Status ChooseDescriptorBound(int configured, size_t* bound, std::string* report) {
  struct rlimit lim;
  if (getrlimit(RLIMIT_NOFILE, &lim) != 0) return Status::FromErrno(errno, "getrlimit(NOFILE)");
  const rlim_t was = lim.rlim_cur;
  std::string raised;
  if (lim.rlim_cur < lim.rlim_max) {
    struct rlimit want = lim;
    want.rlim_cur = lim.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &want) == 0) {
      lim = want;
      raised = fmt::format(" (raised from {})", was);
    } else {
      raised = fmt::format(" (could not raise it to the hard limit {}: {})", lim.rlim_max,
                           std::strerror(errno));
    }
  }
  // RLIM_INFINITY is not given for NOFILE by Linux; treat anything huge as the kernel's nr_open.
  const size_t limit = static_cast<size_t>(std::min<rlim_t>(lim.rlim_cur, 1u << 30));
  if (limit <= kDescriptorReserve) {
    return Status::InvalidArgument(fmt::format(
        "the daemon's descriptor limit is {}: at least {} are needed (raise LimitNOFILE= or "
        "ulimit -n)", limit, kDescriptorReserve + 1));
  }
  const size_t room = limit - kDescriptorReserve;
  if (configured > 0 && static_cast<size_t>(configured) > room) {
    return Status::InvalidArgument(fmt::format(
        "max_open_files = {}: the daemon's descriptor limit is {}, and {} of it stay free for open "
        "files: at most {} (or raise the hard limit: LimitNOFILE=, ulimit -Hn)",
        configured, limit, kDescriptorReserve, room));
  }
  *bound = configured > 0 ? static_cast<size_t>(configured) : std::max<size_t>(limit / 2, 16);
  *report = fmt::format("descriptors: limit {}{}; at most {} kept of files not in use "
                        "(max_open_files{})", limit, raised, *bound,
                        configured > 0 ? "" : " = 0: half the limit");
  return Status::Ok();
}

}  // namespace ccfs
