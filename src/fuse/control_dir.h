// ControlDir: the virtual directory MOUNTPOINT/.ccfs, the mount's own door for stats and settings.
//
// It holds two files, and is not listed by readdir of the root (it shadows a real ".ccfs"):
//   stats.json  read-only: the engine's counters and a "daemon" object, rendered by
//               RenderMountStatsJson (stats/stats_json.h) once per LOOKUP of the name: each
//               lookup makes a new node that holds its snapshot until the kernel forgets it, and
//               the name's entry is kept 0 s, so every open by name is a lookup, and one open
//               reads one consistent snapshot. Reading it is not a cache read.
//   control     mode 0600, writable by the daemon's user (and root): live settings.
//
// Both behave as regular files to the calls that copy files (cp, rsync, Python's shutil, dd):
//   - Size. stats.json's node is its snapshot, so fstat(fd) gives the size of what the open file
//     reads (what cp, shutil and rsync's sender ask before reading), and so does the size the
//     kernel keeps (which bounds copy_file_range and the page cache's reads); stat(path) looks
//     the name up, and gives the size of a fresh snapshot. st_blocks matches st_size: the files
//     have no holes. control reports size 0 (what a read returns belongs to each open file,
//     below).
//   - lseek: SEEK_SET, SEEK_CUR and SEEK_END are the kernel's (SEEK_END against the size above);
//     SEEK_DATA and SEEK_HOLE are answered against the open file's own bytes (stats.json's
//     snapshot, control's outcome line): all data, no hole before the end.
//   - copy_file_range: not implemented; the kernel falls back to reading (splice) within the
//     mount, and the caller (cp) to read/write across file systems.
//   Both are opened with direct_io: the kernel caches none of their bytes. A read-only mount in
//   kernel mode opens files without OPEN (fuse/read_handles.h); the kernel then caches what it
//   reads of a stats.json node, which never changes, and control has no outcome to read.
//
// The control protocol. A client opens control (O_WRONLY, or O_RDWR to read the outcome back) and
// writes one or more "key=value" lines in one write(2). Blank lines and lines starting with '#'
// are skipped; every line is checked before any is applied, so a write is applied whole or not at
// all. An unknown key, a bad value, or a key that needs a remount refuses the write:
//   - write(2) fails with EINVAL;
//   - a following read(2) from offset 0 on the SAME open file returns one line,
//       "error: <message>\n"
//     where <message> is the daemon's own message naming the key (and the line, as
//     ".ccfs/control:N") and the reason: the same text the daemon logs. After an accepted write the
//     read returns "ok\n"; on an open file with no write yet it returns nothing (end of file).
// Each open file keeps its own last outcome: concurrent clients never see each other's. Truncation
// (O_TRUNC, or `echo k=v > control`) is accepted and does nothing; nothing is stored but the outcome.
// Example: `exec 3<>MNT/.ccfs/control; echo bogus=1 >&3; head -1 <&3` prints
//   error: .ccfs/control:1: unknown key "bogus"
// A refused write leaves the file offset at 0; an accepted one moves it past what was written, so
// a client that wants the outcome in both cases reads it with pread(fd, buf, n, 0).
//
// The daemon's other doors to the same settings and counters also live here: SIGHUP's
// ApplyLiveOptions and SIGUSR1's StatsLine.
//
// Ownership: owns the virtual Inodes (the kernel names them by address; the InodeTable never counts
// or frees them; a stats.json node goes when the kernel forgets it) and every handle it gives the
// kernel for them; borrows the PageCache, which
// must outlive it. Destroy it only once no handler can run.
//
// Thread-safety: every method may run on any number of request threads at once. settings_mu_
// serializes settings changes (control writes and SIGHUP); it, stats_mu_ (the stats.json nodes),
// each control handle's own
// mutex and the handle registries' mutexes are each taken with no other lock held.
#ifndef CCFS_FUSE_CONTROL_DIR_H_
#define CCFS_FUSE_CONTROL_DIR_H_

#include <sys/stat.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "backing/sftp_store.h"
#include "ccfs/options.h"
#include "ccfs/page_cache.h"
#include "ccfs/status.h"
#include "fuse/change_detector.h"
#include "fuse/fuse_api.h"
#include "fuse/inode_table.h"
#include "fuse/kernel_cache.h"
#include "fuse/open_file_watch.h"
#include "fuse/open_handles.h"
#include "fuse/passthrough.h"
#include "fuse/pins.h"
#include "util/thread_cpu.h"

namespace ccfs {

class ControlDir {
 public:
  // `cache` is borrowed; so is `kernel` (nullptr in daemon mode), whose figures join the engine's
  // and whose budget follows compressed_percent, and `request_cpu`, the request threads' CPU
  // time (cpu_request_threads_ns). `dataset` and `mountpoint` are only reported in stats.json;
  // attributes of the virtual nodes are given with `attr_timeout`.
  // `pins` (borrowed) checks and takes every change of `pin` and `pin_percent`. `watch` (borrowed,
  // nullptr in daemon mode): the open-file watch, whose counts join the figures. `sftp` (borrowed,
  // nullptr when off): the SFTP connections, whose counts join them too. `changes` (borrowed): the
  // change detector, whose count of answers from attribute records joins them. `passthrough`
  // (borrowed, nullptr when off): the opens passed through, counted too.
  ControlDir(PageCache* cache, KernelCache* kernel, const OpenFileWatch* watch,
             const ThreadCpuGroup* request_cpu, const std::string& dataset,
             const std::string& mountpoint, double attr_timeout, Pins* pins,
             const SftpPool* sftp, const ChangeDetector* changes,
             const PassthroughOpens* passthrough);
  ControlDir(const ControlDir&) = delete;
  ControlDir& operator=(const ControlDir&) = delete;

  // ---- the nodes --------------------------------------------------------------------------------

  Inode* dir() { return &dir_; }
  // The node `name` names inside .ccfs ("stats.json" or "control"), or null. For stats.json, a
  // new node with a fresh snapshot, counting one lookup: reply with it, or Forget it.
  Inode* Child(const char* name);
  // The kernel gave back `nlookup` lookups of `v`: a stats.json node goes with its last.
  void Forget(Inode* v, uint64_t nlookup);
  // Attributes of a virtual node (stats.json's size: its snapshot's).
  void Stat(const Inode* v, struct stat* st) const;
  // The entry of a virtual node for a LOOKUP reply.
  void Entry(Inode* v, fuse_entry_param* e) const;
  // How many control files are still open (for the closing log line).
  size_t open_files();

  // ---- handlers for the virtual nodes: each ends in exactly one fuse_reply_* ---------------------

  // REQUIRES (all): `v` is one of this directory's nodes (kind != NodeKind::kReal).
  void Open(fuse_req_t req, Inode* v, fuse_file_info* fi);
  void Read(fuse_req_t req, Inode* v, size_t size, off_t off, fuse_file_info* fi);
  void Write(fuse_req_t req, Inode* v, const char* buf, size_t size, fuse_file_info* fi);
  void Release(fuse_req_t req, Inode* v, fuse_file_info* fi);
  // `fi` is the open file the kernel named, or null.
  void Getattr(fuse_req_t req, Inode* v, fuse_file_info* fi);
  // SEEK_DATA and SEEK_HOLE (and SEEK_SET, SEEK_END) against the open file's own bytes.
  void Lseek(fuse_req_t req, Inode* v, off_t off, int whence, fuse_file_info* fi);
  // Only control may be "changed", and only by truncation and new times, which change nothing.
  void Setattr(fuse_req_t req, Inode* v, int valid);
  void Opendir(fuse_req_t req, Inode* v, fuse_file_info* fi);
  // Lists .ccfs; `parent_ino` is what ".." reports (the root's inode number). `plus`: as
  // READDIRPLUS entries.
  void Readdir(fuse_req_t req, size_t size, off_t off, ino_t parent_ino, bool plus = false);

  // ---- settings and stats -----------------------------------------------------------------------
  // The daemon reaches these through Filesystem::control().

  // Applies "key=value" lines (blank lines and lines starting with '#' are skipped) as a write to
  // control does: every line is checked before any is applied; an unknown key, a bad value or a
  // key that needs a remount is InvalidArgument naming the key, and changes nothing. A refusal is
  // logged, and its message is what a read of control returns.
  Status ApplyControlText(const std::string& text);
  // Applies the live keys of `wanted` (SIGHUP). Keys that differ but need a remount are listed in
  // *needs_remount and left alone. Logs each change.
  Status ApplyLiveOptions(const Options& wanted, const std::string& source,
                          std::vector<std::string>* needs_remount);
  // The stats.json document: the engine's counters plus a "daemon" object (pid, dataset,
  // mountpoint, uptime_s).
  std::string RenderStats() const;
  // One line for the log (SIGUSR1).
  std::string StatsLine() const;
  // The counters stats.json renders: the engine's, with the kernel level's (kernel_held_bytes,
  // ...) in kernel mode and the request threads' CPU time.
  CacheStats Stats() const;

  // ---- raw_tier = kernel: the split tuner's side (PageCache::KernelSide) ------------------------

  // One FUSE round trip to this daemon as a reader sees it, in µs: the median of kTripProbes
  // stat(2)s of control through the mount (each one a GETATTR: its attributes are never cached);
  // 0 if the mount cannot be reached. Holds no descriptor, so it never keeps an unmount waiting.
  double MeasureTripUs() const;
  // The tuner applied a split: the kernel's share and read-ahead window follow it, as after a
  // settings change.
  void SplitApplied();
  static constexpr int kTripProbes = 9;

 private:
  // One open control file: the outcome of its last write, as a read returns it.
  struct ControlHandle {
    Mutex mu;
    std::string outcome GUARDED_BY(mu);  // "", "ok\n" or "error: <message>\n"
  };

  Status Refuse(const std::string& message);
  // One stats.json node: the document rendered at the LOOKUP that made it, never changed.
  struct StatsSnapshot : Inode {
    std::string text;
    uint64_t lookups = 0;  // under stats_mu_: the kernel's references, as Inode::nlookup
  };
  // The snapshot of the stats.json node `v`.
  static const std::string& TextOf(const Inode* v);
  // After the engine took new options: the kernel's share follows compressed_percent, and its
  // read-ahead window the `readahead` key.
  void FollowBudget() REQUIRES(settings_mu_);

  PageCache* const cache_;
  KernelCache* const kernel_;
  const OpenFileWatch* const watch_;
  const ChangeDetector* const changes_;
  const PassthroughOpens* const passthrough_;
  const SftpPool* const sftp_;
  Pins* const pins_;
  const ThreadCpuGroup* const request_cpu_;
  const std::string dataset_;
  const std::string mountpoint_;
  const double attr_timeout_;
  const std::chrono::steady_clock::time_point start_;

  Inode dir_;
  Inode control_file_;

  OpenHandles<ControlHandle> controls_;

  mutable Mutex stats_mu_;
  std::unordered_map<const Inode*, std::unique_ptr<StatsSnapshot>> snapshots_ GUARDED_BY(stats_mu_);

  Mutex settings_mu_;  // one settings change at a time (control writes, SIGHUP)
  // raw_tier = kernel: the read-ahead window the mount's bdi was given (the daemon sets the key's
  // value once INIT is answered).
  uint64_t kernel_readahead_ GUARDED_BY(settings_mu_);
};

}  // namespace ccfs

#endif  // CCFS_FUSE_CONTROL_DIR_H_
