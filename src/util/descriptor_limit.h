// The process's descriptor limit, raised to what the administrator allows.
//
// Programs that may need many descriptors raise their soft RLIMIT_NOFILE to the hard limit at
// start (the soft limit stays low for programs that use select(2); ccfs never does), so that the
// limit an administrator set (LimitNOFILE=, limits.conf, ulimit -Hn) is the one that counts.
#ifndef CCFS_UTIL_DESCRIPTOR_LIMIT_H_
#define CCFS_UTIL_DESCRIPTOR_LIMIT_H_

#include <cstddef>
#include <string>

namespace ccfs {

// Raises the soft limit to the hard one (once per process is enough; later calls find it raised)
// and returns the soft limit now. *note (may be null) says what changed, e.g. " (raised from
// 1024)", or why it could not, or is left empty.
size_t RaiseDescriptorLimit(std::string* note = nullptr);

}  // namespace ccfs

#endif  // CCFS_UTIL_DESCRIPTOR_LIMIT_H_
