// The libfuse low-level API at the version the FUSE layer is written against (3.14, as Debian 12
// ships it). The layer's own headers include this rather than <fuse3/fuse_lowlevel.h>, so every
// unit that sees a fuse_req_t agrees on FUSE_USE_VERSION.
#ifndef CCFS_FUSE_FUSE_API_H_
#define CCFS_FUSE_FUSE_API_H_

#ifndef FUSE_USE_VERSION
#define FUSE_USE_VERSION FUSE_MAKE_VERSION(3, 14)
#endif
#include <fuse3/fuse_lowlevel.h>

#endif  // CCFS_FUSE_FUSE_API_H_
