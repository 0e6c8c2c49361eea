// Blob allocation: compressed pages are stored at their real size, and the compressed tier is
// charged what the allocator really hands out (jemalloc's size class), not what was asked for.
#ifndef CCFS_CACHE_BLOB_H_
#define CCFS_CACHE_BLOB_H_

#include <cstddef>

#include "cache/page_entry.h"

namespace ccfs::cache {

// Allocates a blob with room for `size` compressed bytes; sets *charged to the bytes the allocator
// actually reserved for it.
Blob* AllocBlob(size_t size, size_t* charged);
void FreeBlob(Blob* blob);
// Frees the blob after an RCU grace period.
void RetireBlob(Blob* blob);
// Frees the entry (and its blob, if it still holds one) after an RCU grace period.
void RetireEntry(PageEntry* e);
// Returns memory of freed blobs to the system now (jemalloc keeps freed pages for reuse for a
// while; after the compressed tier shrinks they would otherwise count in the daemon's RSS beside
// the raw frames that replace them). REQUIRES: not inside an RCU read-side section.
void ReleaseFreedBlobs();

}  // namespace ccfs::cache

#endif  // CCFS_CACHE_BLOB_H_
