// BackingStore / BackingFile: where pages come from on a miss and where writes go through to.
//
// The engine reads whole pages at page-aligned offsets into page-aligned frames, so a POSIX
// implementation can use O_DIRECT: misses are then real device reads, never answered by the
// kernel's page cache. A run of consecutive missing pages is one ReadPages call, one trip to the
// store rather than one per page: the frames are not contiguous in memory, so the call takes one
// buffer per page and the store fills them with one scattering read (preadv).
// File systems that refuse O_DIRECT (tmpfs, some FUSE and network file systems) are detected at
// open; the file falls back to buffered reads and says so through direct() — callers report it,
// because such misses are not device reads.
//
// Thread-safety: a BackingFile may be used by many threads at once (pread/pwrite semantics).
// Ownership: the caller owns what Open() returns; it must outlive every engine call that names it.
#ifndef CCFS_BACKING_STORE_H_
#define CCFS_BACKING_STORE_H_

#include <sys/types.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <span>
#include <string>

#include "ccfs/status.h"

namespace ccfs {

// Buffers handed to BackingFile::ReadPages and ReadPage must be aligned to this many bytes.
inline constexpr size_t kIoAlignment = 4096;

// A buffer of at least `bytes` (at least one unit) aligned to kIoAlignment, its size rounded up to
// whole units, not zeroed: what a reader hands the store to read into.
using IoBuffer = std::unique_ptr<char, decltype(&std::free)>;
inline IoBuffer NewIoBuffer(size_t bytes) {
  const size_t units = std::max<size_t>((bytes + kIoAlignment - 1) / kIoAlignment, 1);
  return IoBuffer(static_cast<char*>(std::aligned_alloc(kIoAlignment, units * kIoAlignment)),
                  &std::free);
}

// The most buffers one ReadPages call may take (Linux's IOV_MAX).
inline constexpr size_t kMaxReadBuffers = 1024;

// ReadPages' known_size when the caller knows none.
inline constexpr uint64_t kUnknownSize = UINT64_MAX;

class BackingFile {
 public:
  virtual ~BackingFile() = default;

  // Reads up to bufs.size() * `len` bytes at `offset`, the first `len` into bufs[0], the next into
  // bufs[1], and so on, as one read of the store where it can (one preadv for the POSIX store).
  // REQUIRES: offset, len and every buffer aligned to kIoAlignment; 1 <= bufs.size() <=
  // kMaxReadBuffers. Sets *got to the bytes read in all: less than bufs.size() * len only at end
  // of file. Retries short reads and EINTR itself. A store whose file system lost its connection
  // (ENOTCONN, ECONNABORTED: a dead FUSE or network client) fails with EIO, here and in Write; on
  // an error the buffers' content is undefined. known_size: the file's size as the caller read it
  // from the store just before (kUnknownSize: none); a short read that ends there is taken for
  // the end of the file, where a store would otherwise be asked for the size (a round trip to a
  // network store's server) to tell the end from a read cut short.
  virtual Status ReadPages(uint64_t offset, size_t len, std::span<char* const> bufs,
                           uint64_t known_size, size_t* got) = 0;

  // ReadPages into one buffer of `len` bytes (len aligned, any multiple of kIoAlignment).
  Status ReadPage(uint64_t offset, size_t len, void* buf, size_t* got) {
    char* const one[] = {static_cast<char*>(buf)};
    return ReadPages(offset, len, one, kUnknownSize, got);
  }

  // Writes `len` bytes at `offset` (any alignment) through to the file before returning.
  virtual Status Write(uint64_t offset, const void* buf, size_t len) = 0;

  // Current size of the file in bytes.
  virtual Status Size(uint64_t* size) = 0;

  // Makes written data durable (fsync; fdatasync when datasync).
  virtual Status Sync(bool datasync) = 0;

  // True if page reads bypass the kernel page cache (O_DIRECT accepted by the file system). Known
  // once a page has been read: a POSIX file opens its O_DIRECT descriptor at the first page read.
  virtual bool direct() const = 0;
};

class BackingStore {
 public:
  virtual ~BackingStore() = default;

  // Opens `path` (relative to the store's root, or absolute for the POSIX store) with open(2)
  // `flags` and `mode`. O_DIRECT is added by the store for reads where the file system accepts it.
  virtual Status Open(const std::string& path, int flags, mode_t mode,
                      std::unique_ptr<BackingFile>* file) = 0;
};

// The real store: `root` is a directory; paths are resolved beneath it.
std::unique_ptr<BackingStore> NewPosixBackingStore(const std::string& root);

// How a POSIX BackingFile made by NewPosixBackingFile writes.
struct BackingFileOptions {
  // Write returns only once the bytes are on the backing device: written back from the backing
  // file system's page cache and waited for (sync_file_range), then dropped from that cache. What
  // an O_DIRECT write would give, at any offset and length. Metadata (a grown size) and the
  // device's own write cache still need fsync/fdatasync, as with O_DIRECT.
  bool write_through_to_device = false;
};

// Wraps an already-open descriptor (the FUSE layer opens files itself, with the caller's
// credentials and flags). Takes ownership of `fd`; opens a second O_DIRECT descriptor for page
// reads through /proc/self/fd when the file system allows it (with O_NOATIME when `fd` has it).
// A read-only `fd` opened with O_DIRECT serves the page reads itself; an ordinary descriptor is
// then opened the same way only if a read must be buffered.
Status NewPosixBackingFile(int fd, std::unique_ptr<BackingFile>* file,
                           const BackingFileOptions& options = {});

// An in-memory store for tests: files are byte strings; thread-safe. Failures can be injected.
class MemBackingStore : public BackingStore {
 public:
  // Creates or replaces the file at `path` with `data`.
  virtual void Put(const std::string& path, std::string data) = 0;
  // Returns the current content (empty if absent).
  virtual std::string Get(const std::string& path) = 0;
  // Every read after this fails with EIO while `fail` is true.
  virtual void FailReads(bool fail) = 0;
  // Number of read calls served so far (all files): one per ReadPages (or ReadPage), whatever
  // its length, as the POSIX store makes one preadv.
  virtual uint64_t page_reads() const = 0;
};
std::unique_ptr<MemBackingStore> NewMemBackingStore();

}  // namespace ccfs

#endif  // CCFS_BACKING_STORE_H_
