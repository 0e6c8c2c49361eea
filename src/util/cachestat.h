// cachestat(2) (Linux 6.5): how many pages of a file range the page cache holds, without touching
// them. The C library has no wrapper for it and Debian 12's kernel headers predate it, so the call
// and its structures are spelled in cachestat.cc.
//
// Thread-safety: a plain function; any thread.
#ifndef CCFS_UTIL_CACHESTAT_H_
#define CCFS_UTIL_CACHESTAT_H_

#include <cstdint>

namespace ccfs {

// Sets *pages to the number of the kernel's pages (of the system page size) of [off, off + len) of
// `fd` (len 0: to the end of the file) that are in the page cache. Returns 0 or the errno (ENOSYS
// before Linux 6.5; EPERM where the kernel keeps cachestat to files the caller may write).
int CachedPages(int fd, uint64_t off, uint64_t len, uint64_t* pages);

}  // namespace ccfs

#endif  // CCFS_UTIL_CACHESTAT_H_
