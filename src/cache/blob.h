// Blob allocation: compressed pages are stored at their real size, and the compressed tier is
// charged what the allocator really hands out (jemalloc's size classes), not what was asked for.
//
// jemalloc rounds a request up to its next size class, and classes are a quarter of a power of
// two apart: a 4.5 KiB blob takes a 5 KiB class, 11% more than it holds. So when it saves memory
// a blob is cut in two: a head that fills the largest class that fits, and a tail of what is left,
// whose small class is finely spaced. The compressed tier then holds about a tenth more pages in
// the same budget; a reader pays one extra copy of the bytes to make them contiguous again.
#ifndef CCFS_CACHE_BLOB_H_
#define CCFS_CACHE_BLOB_H_

#include <cstddef>

#include "cache/page_entry.h"

namespace ccfs::cache {

// Allocates a blob holding the `size` bytes at `bytes`; sets *charged to the bytes the allocator
// actually reserved for it (both parts).
Blob* AllocBlob(const char* bytes, size_t size, size_t* charged);
// The blob's bytes, contiguous: its own when it is in one piece, else copied into `scratch`
// (room for blob->size bytes).
const char* BlobBytes(const Blob* blob, char* scratch);
// What AllocBlob charges for `size` bytes (exposed for tests): exactly, with jemalloc; in sanitizer
// builds (plain malloc) AllocBlob may charge up to a few bytes more, as the allocator reports.
size_t BlobCharge(size_t size);
void FreeBlob(Blob* blob);
// Frees the blob after an RCU grace period.
void RetireBlob(Blob* blob);
// Frees the entry (and its blob, if it still holds one) after an RCU grace period.
void RetireEntry(PageEntry* e);
// Returns memory of freed blobs to the system now (jemalloc keeps freed pages for reuse for a
// while; after the compressed tier shrinks they would otherwise count in the daemon's RSS beside
// the raw frames that replace them). REQUIRES: not inside an RCU read-side section.
void ReleaseFreedBlobs();
// Turns off the allocator's cache of freed memory for the calling thread (its frees go back to the
// arenas at once): for a pool of threads that may grow to dozens (the miss pool), where each
// thread's cache would add its own few MiB to the daemon's RSS (measured: 10-13 MiB for four miss
// threads under random reads, none with their caches off). No-op in sanitizer builds.
void NoThreadCache();

}  // namespace ccfs::cache

#endif  // CCFS_CACHE_BLOB_H_
