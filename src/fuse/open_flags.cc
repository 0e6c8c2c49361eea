#include "fuse/open_flags.h"

#include <fcntl.h>

namespace ccfs {

int BackingOpenFlags(int caller_flags) { return caller_flags & ~O_DIRECT; }

BackingFileOptions BackingFileOptionsFor(int caller_flags) {
  BackingFileOptions options;
  // Why written back rather than written with O_DIRECT from an aligned bounce buffer: FUSE passes
  // O_DIRECT writes at any offset, so a bounce buffer would need a read-modify-write of the
  // partial blocks at both ends, racing every other writer of those blocks. A buffered write
  // followed by a wait for its write-back puts the same bytes on the same device before the reply,
  // at any alignment, with no such race.
  options.write_through_to_device = (caller_flags & O_DIRECT) != 0;
  return options;
}

}  // namespace ccfs
