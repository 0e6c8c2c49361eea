// Filesystem: the FUSE low-level file system that serves a dataset directory through PageCache.
// This is the FUSE layer's public face; daemon.cc mounts it, the request loop runs its op table.
//
// A passthrough of DATASET: every op is one thin handler that performs the same system call on
// the backing directory, relative to descriptors of the backing inodes (*at calls; nothing is
// resolved by absolute path, symlinks are never followed on the daemon's side, so nothing outside
// DATASET is reachable), and answers with the errno the backing file system gave. Two differences:
//   - data reads go through the PageCache (file id = backing inode number); writes go through it
//     to the backing file before the reply, so cached pages of the written range are dropped.
//     In raw_tier = daemon mode files are opened with direct_io, so the kernel never answers a
//     read from its own cache; in raw_tier = kernel mode with keep_cache, and the kernel's page
//     cache is the raw tier (kernel_cache.h keeps it within its share of memory).
//   - a virtual directory ".ccfs" at the root (not listed by readdir; it shadows a real ".ccfs")
//     holds "stats.json" (the engine's counters, rendered fresh at each open; reading it is not a
//     cache read) and "control" (write "key=value" lines to change live settings; read the outcome
//     back from the same open file: the protocol is in control_dir.h).
//
// Files changed behind the mount's back: before each read the handler fstat()s the backing file
// and compares size, mtime and ctime with what it last recorded for that inode; any difference
// drops the file's cached pages first. Writes, truncates and fallocates through the mount record
// the signature they leave behind, so they do not drop more than they touched.
//
// Where things are (all in src/fuse/):
//   ops.h, entry_ops.cc, data_ops.cc, dir_ops.cc, xattr_ops.cc   the handlers, by kind
//   filesystem.cc          this class, INIT and the one op table (kOpTable)
//   inode_table.h          inodes, lookup counting, file ids
//   open_handles.h         what fi->fh names, and the registries that own it
//   change_detector.h      "changed underneath" by file signature
//   control_dir.h          the .ccfs directory: stats.json, control and its protocol
//   persister.h            the cache file kept across a restart (persist)
//
// Ownership: the Filesystem owns its descriptors of DATASET and every handle it gives the kernel
// (open files and directories); it borrows the PageCache, which must outlive it. Handles the
// kernel never released (files still open when the daemon stops or its connection ends) are
// closed when the Filesystem is destroyed, so destroy it only once no request thread can run a
// handler any more (the request loop has stopped).
//
// Thread-safety: the handlers run on any number of request threads at once; the inode table has
// one mutex (lock order: table mutex, then an inode's signature mutex, never the reverse); the
// registries of open handles have one mutex each, taken with no other lock held; settings changes
// are serialized by one mutex, taken with no other lock held; the public methods below may be
// called from any thread.
#ifndef CCFS_FUSE_FILESYSTEM_H_
#define CCFS_FUSE_FILESYSTEM_H_

#include <memory>
#include <string>
#include <vector>

#include "backing/sftp_store.h"
#include "ccfs/mount_protocol.h"
#include "ccfs/page_cache.h"
#include "ccfs/status.h"
#include "stats/request_stats.h"
#include "util/thread_cpu.h"

struct fuse_lowlevel_ops;
struct fuse_session;

namespace ccfs {

class ControlDir;
struct FsContext;

class Filesystem {
 public:
  struct Config {
    std::string dataset;     // absolute path of the backing directory
    std::string mountpoint;  // absolute path, only reported in stats.json
    double attr_timeout = 1.0;
    double entry_timeout = 1.0;     // seconds the kernel may keep a name
    double negative_timeout = 1.0;  // seconds the kernel may keep a name's absence
    bool readdirplus = true;
    bool close_to_open = true;  // Options::close_to_open
    bool passthrough = false;   // Options::passthrough (kernel mode; fuse/passthrough.h)
    bool read_only = false;  // mounted `ro`: in kernel mode, files open without OPEN (ops.h)
    // Descriptors the inode table keeps of files not in use (inode_table.h), >= 1.
    size_t max_open_files = 4096;
    // Reads finished off the request threads (fuse/miss_pool.h); 0 = none.
    int misses_in_flight = 0;
    // The /dev/fuse request threads: all but one of them may wait for the store themselves
    // (FsContext::inline_misses).
    int request_threads = 1;
    // persist: the directory of the cache file (fuse/persister.h); "" = off.
    std::string persist_dir;
    // sftp: the connections page reads of read-only opens go over (backing/sftp_store.h); null =
    // off. Held here, so it outlives every file that reads through it.
    std::shared_ptr<SftpPool> sftp;
  };

  // Opens the dataset directory. `cache` is borrowed and must outlive the Filesystem.
  static Status Create(const Config& config, PageCache* cache, std::unique_ptr<Filesystem>* fs);
  ~Filesystem();
  Filesystem(const Filesystem&) = delete;
  Filesystem& operator=(const Filesystem&) = delete;

  // The op table, and the userdata to pass with it to fuse_session_new.
  static const fuse_lowlevel_ops& Ops();
  void* userdata();
  // The group the threads that run the handlers join (RequestLoopConfig::cpu,
  // UringTransportConfig::cpu): their CPU time is stats.json's cpu_request_threads_ns.
  ThreadCpuGroup* request_cpu();

  // The .ccfs directory, which also holds the daemon's other doors to the same settings and
  // counters: ApplyControlText, SIGHUP's ApplyLiveOptions, SIGUSR1's StatsLine, the metrics
  // endpoint's Stats (their contracts are in control_dir.h).
  ControlDir& control();
  // The requests answered, by op of the op table, and their times (the metrics endpoint's
  // ccfs_fuse_* families).
  std::vector<RequestStats::Kind> Requests() const;

  // raw_tier = kernel: starts (stops) telling the kernel over `se` which pages to drop
  // (fuse/kernel_cache.h). Start once the session is mounted; Stop before fuse_session_destroy.
  // No-ops in daemon mode.
  void StartKernelCache(fuse_session* se);
  void StopKernelCache();
  // persist (fuse/persister.h): starts the reload of the cache file and the periodic writes once
  // the mount serves; at unmount or SIGTERM, once no request is served any more, stops them and
  // writes the cache file. No-ops with persist off.
  void StartPersistence();
  void FinishPersistence();
  // Waits for the reads being finished off the request threads (each replies) and stops their
  // threads; later reads are finished on the request threads. Call before the transports stop.
  // Logs the most that waited at once.
  void StopMissPool();

 private:
  explicit Filesystem(std::unique_ptr<FsContext> context);
  std::unique_ptr<FsContext> context_;
};

}  // namespace ccfs

#endif  // CCFS_FUSE_FILESYSTEM_H_
