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

}  // namespace ccfs::cache

#endif  // CCFS_CACHE_BLOB_H_
