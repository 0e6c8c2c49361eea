// BackingStore / BackingFile: where pages come from on a miss and where writes go through to.
//
// The engine reads whole pages at page-aligned offsets into page-aligned frames, so a POSIX
// implementation can use O_DIRECT: misses are then real device reads, never answered by the
// kernel's page cache. File systems that refuse O_DIRECT (tmpfs, some FUSE and network file
// systems) are detected at open; the file falls back to buffered reads and says so through
// direct() — callers report it, because such misses are not device reads.
//
// Thread-safety: a BackingFile may be used by many threads at once (pread/pwrite semantics).
// Ownership: the caller owns what Open() returns; it must outlive every engine call that names it.
#ifndef CCFS_BACKING_STORE_H_
#define CCFS_BACKING_STORE_H_

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "ccfs/status.h"

namespace ccfs {

// Buffers handed to BackingFile::ReadPage must be aligned to this many bytes.
inline constexpr size_t kIoAlignment = 4096;

class BackingFile {
 public:
  virtual ~BackingFile() = default;

  // Reads up to `len` bytes at `offset` into `buf`. REQUIRES: offset, len and buf aligned to
  // kIoAlignment (len is a whole page). Sets *got to the bytes read: less than len only at end of
  // file. Retries short reads and EINTR itself. A store whose file system lost its connection
  // (ENOTCONN, ECONNABORTED: a dead FUSE or network client) fails with EIO, here and in Write.
  virtual Status ReadPage(uint64_t offset, size_t len, void* buf, size_t* got) = 0;

  // Writes `len` bytes at `offset` (any alignment) through to the file before returning.
  virtual Status Write(uint64_t offset, const void* buf, size_t len) = 0;

  // Current size of the file in bytes.
  virtual Status Size(uint64_t* size) = 0;

  // Makes written data durable (fsync; fdatasync when datasync).
  virtual Status Sync(bool datasync) = 0;

  // True if ReadPage bypasses the kernel page cache (O_DIRECT accepted by the file system).
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
Status NewPosixBackingFile(int fd, std::unique_ptr<BackingFile>* file,
                           const BackingFileOptions& options = {});

// An in-memory store for tests: files are byte strings; thread-safe. Failures can be injected.
class MemBackingStore : public BackingStore {
 public:
  // Creates or replaces the file at `path` with `data`.
  virtual void Put(const std::string& path, std::string data) = 0;
  // Returns the current content (empty if absent).
  virtual std::string Get(const std::string& path) = 0;
  // Every ReadPage after this fails with EIO while `fail` is true.
  virtual void FailReads(bool fail) = 0;
  // Number of ReadPage calls served so far (all files).
  virtual uint64_t page_reads() const = 0;
};
std::unique_ptr<MemBackingStore> NewMemBackingStore();

}  // namespace ccfs

#endif  // CCFS_BACKING_STORE_H_
