// SFTP page reads: a dataset on an sshfs mount read by the daemon over its own SFTP connections
// (libssh), without the second FUSE hop of sshfs's client.
//
// Over sshfs a miss of ccfs crosses FUSE twice: reader -> kernel -> ccfs -> kernel -> sshfs ->
// ssh -> the server, where the page cache's miss crosses it once. Read in the daemon's own process
// over SFTP, the same read skips sshfs, its FUSE hop and its pipe to `ssh`
// (results/miss-breakdown: 88-93 µs per 8 KiB read through libssh against 159-163 through the
// sshfs mount, on one sshd).
//
// What goes over SFTP: page reads of files opened read-only on a read-only mount (`ro`), from each
// file's third read on, nothing else (a file read whole in one or two reads would pay an SFTP open
// and close, two round trips, for them). Names, attributes, listings, opens and the change checks
// still go through the sshfs mount, so the tree the kernel sees, its permissions and the staleness
// bound of docs/STORES.md are sshfs's as before. Why only read-only mounts: sshfs acknowledges a
// write before its server has it (its writes are asynchronous unless `sshfs_sync`), and a read over
// another connection right after it could load the old bytes into the cache.
//
// The same file, or the store's bytes: sshfs names files by path, as SFTP does; the daemon opens
// the file over SFTP by the path the inode table knows for it, at its first page read. A file
// renamed or replaced underneath meanwhile is what the change checks catch for sshfs's own reads
// too (a new signature drops the handle and the pages). Any SFTP failure (the connection lost, a
// file it cannot open) sends that read through the sshfs mount instead (SftpCounts::fallbacks):
// the bytes are the store's either way, and a store that is really gone fails there with EIO.
//
// Connections: `connections` SSH sessions, each with one SFTP channel; a read takes a free one (the
// one it opened its file on first, where free), so that many readers have many reads in flight.
// A read of several pages sends one SFTP read per at most 64 KiB and then collects the answers
// (one round trip for the run, as the POSIX store's one preadv). A lost connection is made again
// at a later read, at most once a second.
//
// Thread-safety: SftpPool and the files it wraps may be used from any thread; each connection is
// used by one thread at a time (its mutex); libssh sessions are not shared between threads.
#ifndef CCFS_BACKING_SFTP_STORE_H_
#define CCFS_BACKING_SFTP_STORE_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ccfs/backing_store.h"
#include "ccfs/status.h"
#include "util/sftp_target.h"
#include "util/thread_annotations.h"

namespace ccfs {

struct SftpCounts {
  uint64_t reads = 0;      // SFTP reads made (one per run of pages, whatever its length)
  uint64_t bytes = 0;      // bytes they read
  uint64_t fallbacks = 0;  // page reads sent through the mount instead: an SFTP failure
  uint64_t connects = 0;   // connections made (the first ones included)
};

class SftpPool {
 public:
  // Connects `connections` (>= 1) sessions to `target` now: a server that cannot be reached, a key
  // it does not accept or a host key not known fails here (the message names the target and
  // libssh's reason). The server's key must be in the configuration's known hosts files: a key
  // never seen is refused, never trusted.
  // `warn` (may be empty) is told why reads went through the mount instead, at most once every
  // 10 s, with how many did since it was last told.
  static Status Open(const SftpTarget& target, int connections,
                     std::function<void(const std::string&)> warn, std::unique_ptr<SftpPool>* pool);
  ~SftpPool();
  SftpPool(const SftpPool&) = delete;
  SftpPool& operator=(const SftpPool&) = delete;

  // A file whose page reads go over SFTP from `path` (relative to the target's directory) and
  // everything else (size, writes, sync, the reads SFTP fails) through `local`, the same file
  // opened through the sshfs mount. The pool must outlive it.
  std::unique_ptr<BackingFile> Wrap(const std::string& path, std::unique_ptr<BackingFile> local);

  SftpCounts counts() const;
  const SftpTarget& target() const { return target_; }

 private:
  class File;
  struct Connection;
  SftpPool(const SftpTarget& target, std::function<void(const std::string&)> warn);
  // A read went through the mount instead, for `why` followed by `what`: counted, and told to
  // warn_ now and then (formatted only then: a file the server refuses falls back at every read).
  void FellBack(std::string_view why, std::string_view what = {});
  // A connection free now, preferring those in `preferred` (a bit per connection); waits for one
  // when none is. Returned locked (its mu): the caller unlocks it.
  Connection* Acquire(uint64_t preferred) NO_THREAD_SAFETY_ANALYSIS;

  const SftpTarget target_;
  const std::function<void(const std::string&)> warn_;
  std::atomic<int64_t> warned_at_ns_{INT64_MIN};  // steady clock; INT64_MIN: never
  std::atomic<uint64_t> unwarned_{0};             // fallbacks since warn_ was last told
  std::vector<std::unique_ptr<Connection>> connections_;
  std::atomic<uint32_t> next_{0};
  std::atomic<uint64_t> reads_{0}, bytes_{0}, fallbacks_{0}, connects_{0};
};

}  // namespace ccfs

#endif  // CCFS_BACKING_SFTP_STORE_H_
