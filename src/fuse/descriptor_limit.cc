// The descriptor limit: see descriptor_limit.h.
#include "fuse/descriptor_limit.h"

#include <algorithm>

#include <fmt/format.h>

#include "util/descriptor_limit.h"

namespace ccfs {

Status ChooseDescriptorBound(int configured, size_t* bound, std::string* report) {
  std::string raised;
  const size_t limit = RaiseDescriptorLimit(&raised);
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
