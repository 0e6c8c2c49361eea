// Options: every setting of ccfs, in one struct.
//
// Filled from defaults, then the TOML config file, then `-o key=value` (see config.h); the engine
// and the daemon read it. Each field is one key, named like the field, spelled the same in the
// file, in -o and in .ccfs/control. The keys are listed once, in the key table in
// src/config/keys.cc (TOML table, type, range, live or not, one-line meaning, which field): it
// drives parsing, validation, rendering and "is this key live". conf/ccfs.toml documents every
// key with its unit, range and default; a test holds the table, that file and the README's key
// table in step.
//
// Adding a key: a field here, one entry in the key table, its paragraph in conf/ccfs.toml and its
// row in the README. Nothing else lists keys.
//
// Options{} is the engine alone (`ccfs replay`'s engine mode, `ccfs advise`, the engine's tests):
// raw pages in its own raw tier, since no kernel page cache sits above an in-process engine. A
// mount starts from MountDefaults() instead, the serving settings; the documented defaults
// (conf/ccfs.toml, `man ccfs.toml`, `ccfs mount --help`) are those.
//
// Options is a plain value: copy freely; no internal synchronization.
#ifndef CCFS_OPTIONS_H_
#define CCFS_OPTIONS_H_

#include <algorithm>
#include <cstdint>
#include <string>

#include "ccfs/codec.h"
#include "ccfs/status.h"

namespace ccfs {

// The values of Options::transport.
inline constexpr const char* kTransportNames[] = {"dev", "uring", "auto"};
// The values of Options::raw_tier.
inline constexpr const char* kRawTierNames[] = {"daemon", "kernel"};
// The values of Options::kernel_demote.
inline constexpr const char* kKernelDemoteNames[] = {"off", "exclusive", "mix"};

struct Options {
  // --- engine (PageCache) -----------------------------------------------------------------------
  // Total RAM for cached pages (raw frames + compressed blobs), bytes.
  uint64_t memory = 256ull << 20;
  // Share of `memory` given to the compressed tier, percent. With compressed_percent_auto (the key
  // written "auto") the engine chooses it live (src/cache/split_tuner.h) and this holds the share
  // in force, starting from the value it had.
  int compressed_percent = 25;
  bool compressed_percent_auto = false;
  // Bytes per cached page: a power of two.
  uint32_t page_size = 8192;
  // Where raw pages live. "daemon": in the daemon's raw tier; data files are opened with direct_io,
  // so every read reaches the daemon and is counted (the measurement mode). "kernel": in the
  // kernel's page cache (files opened with keep_cache): hot reads never wake the daemon, which
  // holds the compressed tier beneath it and a small raw staging tier, and keeps the kernel's
  // pages of the mount's files within kernel_budget() (src/fuse/kernel_cache.h). Checked against
  // kRawTierNames.
  std::string raw_tier = "daemon";
  // raw_tier = kernel: the daemon drops the kernel's oldest pages of the mount's files to hold
  // them within kernel_budget() whoever reads (true), or leaves that to a memory cgroup the
  // readers share with the daemon (false: the kernel's own reclaim then picks, by recency, which
  // the daemon cannot see).
  bool kernel_evict = true;
  // raw_tier = kernel with kernel_evict: what the compressed tier holds beneath the kernel.
  // "off": the pages the daemon served (a miss's page is compressed when it leaves the staging
  // tier while the compressed tier has room, then only pages the kernel asked for again).
  // "exclusive": the pages the kernel drops: before the daemon tells the kernel to drop a page it
  // fetches the page's bytes back (notify_retrieve) and compresses them; a compressed hit goes
  // back to the kernel and leaves the compressed tier. "mix": exclusive until the compressed tier
  // first fills, then only pages that came back (asked for again after the kernel dropped them).
  // Checked against kKernelDemoteNames (src/fuse/kernel_cache.h).
  std::string kernel_demote = "off";
  // Codec of the compressed tier and its level (ranges: codec.h CodecLevelRange).
  // compressor_auto (the key written "auto"): the engine chooses the codec live, as for
  // compressed_percent_auto; compressor then holds the codec in force.
  CodecKind compressor = kDefaultCodec;
  bool compressor_auto = false;
  int compression_level = kDefaultCodecLevel;
  // Threads compressing eviction victims; 0 = one per online CPU but one (at least one), leaving
  // a CPU to the readers.
  int compress_threads = 0;
  // A page is kept compressed only if it saves at least this much, percent.
  double min_savings_percent = 12.5;
  // Compress a raw victim only when it has shown reuse: it was read again after it was loaded,
  // or it comes back after an earlier eviction (or the compressed tier still has room). false =
  // compress every victim.
  bool admission_filter = true;
  // Victims taken in one sweep of the raw tier, percent of raw frames (at least one page).
  double evict_batch_percent = 2.0;
  // The evictor starts when free raw frames fall below this, percent of raw frames (at least one
  // page).
  double low_watermark_percent = 2.0;
  // A page loaded by a miss that had not been read lately (by the frequency sketch) is evicted
  // first, before the CLOCK hand moves, unless it is read again meanwhile (TinyLFU's doorkeeper;
  // src/cache/raw_tier.h). false = plain GCLOCK.
  bool probation = true;

  // --- split estimation (src/cache/split_tuner.h) ----------------------------------------------
  // Estimate, while serving, the hit ratio and µs per buffer of every split and codec (a sampled
  // miss-ratio curve, a sample of evicted pages compressed off the read path, the paths' measured
  // costs); `ccfs stat` and stats.json show the prediction. Needed by "auto".
  bool estimate_splits = true;
  // auto: seconds between two decisions (each needs a window of reads behind it).
  double auto_interval = 1.0;
  // auto: the most compressed_percent moves in one decision, percentage points. 90: one decision
  // may reach any split; the rate is bounded by the decisions themselves (a change needs two
  // running that agree, and the window after it is skipped). Settled by a same-run comparison
  // (docs/MEASUREMENTS.md, auto: a phase-change trace 0.66x the best fixed split at 90, 0.90x
  // at 50, 1.35x at 20; the stationary laws alike within noise).
  int auto_max_step = 90;
  // Read-ahead: the most bytes read ahead of a sequential reader of a file (a window that starts
  // small and doubles as the reader keeps up; include/ccfs/page_cache.h, ReadAhead); 0 = off.
  uint64_t readahead = 2ull << 20;

  // --- daemon -----------------------------------------------------------------------------------
  // Threads serving FUSE requests.
  int request_threads = 2;
  // Reads the tiers cannot answer at once (a miss, a page still loading) are finished on up to
  // this many more threads (src/fuse/miss_pool.h), so a request thread never waits for the store
  // and that many misses are in flight beside the request threads'; 0 = misses wait on the
  // request thread that met them.
  int misses_in_flight = 32;
  // Let other users reach the mount (FUSE allow_other).
  bool allow_other = false;
  // Keep the request threads on the first CPUs and the compression workers on the last ones (see
  // src/util/cpus.h); run the application on the request CPUs for same-CPU round trips.
  bool pin_threads = false;
  // Seconds the kernel may cache attributes (and the pages they vouch for, raw_tier = kernel).
  double attr_timeout = 1.0;
  // Seconds the kernel may keep a name it looked up, and a name's absence (0: asks again each time).
  // The same for both, so a name made underneath shows no later than one removed: programs probe
  // for names that are not there on every transaction (SQLite's journal and WAL), and each probe
  // the kernel does not answer is a trip to the daemon.
  double entry_timeout = 1.0;
  double negative_timeout = 1.0;
  // raw_tier = kernel: each open (and each read the daemon answers through a kept read handle)
  // checks the file on the store, so a change made underneath shows to the next open (NFS's
  // close-to-open). false: attributes read from the store less than attr_timeout ago stand for
  // that check, and a file the tiers hold opens and reads with no trip to the store
  // (fuse/change_detector.h, attribute records).
  bool close_to_open = true;
  // raw_tier = kernel: a file opened while the tiers hold none of it is read by the kernel from the
  // store's file itself (FUSE passthrough, Linux 6.9+, the daemon with CAP_SYS_ADMIN), at the page
  // cache's speed; its next open is served by the tiers (src/fuse/passthrough.h).
  bool passthrough = false;
  // Listings carry each entry's attributes (READDIRPLUS), so the kernel need not look names up.
  bool readdirplus = true;
  // Descriptors the daemon keeps of files and directories not in use (src/fuse/inode_table.h); 0 =
  // half the descriptor limit the daemon runs with (it raises its soft limit to the hard one).
  int max_open_files = 0;
  // How requests reach the daemon: "dev" (read from /dev/fuse), "uring" (FUSE over io_uring: per-CPU
  // queues, src/fuse/uring_transport.h; the mount fails if the kernel does not allow it) or "auto"
  // (uring when the kernel offers it, else dev). Checked against kTransportNames.
  std::string transport = "dev";
  // Where the daemon serves Prometheus metrics over HTTP (GET /metrics): "[HOST:]PORT", a bare
  // port meaning 127.0.0.1 (src/config/listen_address.h); "" = no metrics endpoint.
  std::string metrics;
  // Paths of DATASET whose files' pages are evicted last, ':' between them (src/fuse/pins.h);
  // "" = none. They may hold at most pin_percent of memory (checked against their sizes).
  std::string pin;
  int pin_percent = 50;
  // Where the daemon keeps its cached pages across a restart (src/fuse/persister.h): a local
  // directory, written at unmount, at SIGTERM and every persist_interval, reloaded in the
  // background at mount; "" = off.
  std::string persist;
  // persist: seconds between two writes of the cache file while serving; 0 = only at unmount and
  // SIGTERM.
  double persist_interval = 600;
  // Where the daemon reads its misses over SFTP instead of through the sshfs mount DATASET is on
  // (src/backing/sftp_store.h; a read-only mount only): "" = off, "auto" = the server the sshfs
  // mount names, or sftp://[USER@]HOST[:PORT]/PATH or [USER@]HOST:PATH (src/util/sftp_target.h).
  std::string sftp;
  // sftp: an OpenSSH client configuration file read for its host; "" = ~/.ssh/config and
  // /etc/ssh/ssh_config.
  std::string ssh_config;
  // sftp: SSH connections, each carrying one read at a time.
  int sftp_connections = 4;

  // The one place the rules of every key are checked (ranges, and the rules between keys: the raw
  // tier must hold 16 pages; compression_level must suit compressor). The message reads
  // "key = value: rule", e.g. "compressed_percent = 120: must be between 0 and 95". The config
  // entry points (config.h) return only validated options, so the daemon does not check again;
  // PageCache::Create and Reconfigure call this at the engine's door.
  Status Validate() const;

  // Field-by-field equality (e.g. to tell whether a reload changed anything).
  bool operator==(const Options&) const = default;

  bool kernel_raw_tier() const { return raw_tier == "kernel"; }
  // Pages the kernel drops are demoted into the compressed tier (kernel_demote != "off").
  bool demotes() const { return kernel_raw_tier() && kernel_evict && kernel_demote != "off"; }
  uint64_t compressed_budget() const { return memory / 100 * static_cast<uint64_t>(compressed_percent); }
  // The raw share of memory, wherever raw pages live.
  uint64_t raw_share() const { return memory - compressed_budget(); }
  // The daemon's raw tier: the whole raw share in daemon mode; in kernel mode only a staging tier
  // (pages just read, on their way into the compressed tier): 1/64 of memory, at least 64 pages
  // (so that eviction can free frames in batches ahead of the misses; fewer make most misses wait
  // for a compression), at most the raw share.
  uint64_t raw_budget() const {
    if (!kernel_raw_tier()) return raw_share();
    const uint64_t staging = std::max<uint64_t>(memory / 64, 64ull * page_size);
    return std::min(staging, raw_share());
  }
  // Kernel mode: what the kernel's page cache may hold of the mount's files (the rest of the raw
  // share). 0 in daemon mode.
  uint64_t kernel_budget() const { return kernel_raw_tier() ? raw_share() - raw_budget() : 0; }
  // Kernel mode: the kernel's read-ahead window for the mount (its bdi's read_ahead_kb,
  // fuse/mount_readahead.h). The kernel also reads a whole window around every page fault that
  // misses on a mapping (read-around), and a window ahead of most random read(2) misses, so each
  // such miss pushes up to a window of pages no one asked for into the kernel's share: the window
  // is `readahead` but at most kernel_budget() / kKernelReadaheadShare (wide enough that a stream's
  // requests reach max_pages at a few hundred MiB of memory, narrow enough that random readers,
  // mapped or not, read no more: docs/MEASUREMENTS.md, fsx), and at least
  // kMinKernelReadahead (four of the kernel's pages a fault reads around, two of ccfs's pages);
  // whole 4 KiB pages (sysfs counts KiB, the kernel pages). `readahead = 0` (nothing ahead) is one
  // ccfs page, not 0: with no window the kernel asks for a read(2)'s pages one 4 KiB request at a
  // time, and an 8 KiB read costs two trips to the daemon instead of one.
  static constexpr uint64_t kKernelReadaheadShare = 128;
  static constexpr uint64_t kMinKernelReadahead = 32 << 10;
  uint64_t kernel_readahead() const {
    if (readahead == 0) return (page_size + 4095) / 4096 * 4096;
    const uint64_t cap =
        std::max<uint64_t>(kernel_budget() / kKernelReadaheadShare, kMinKernelReadahead);
    return std::min<uint64_t>(readahead, cap) / 4096 * 4096;
  }
};

// What `ccfs mount` starts from before the config file and -o: Options{} with raw pages in the
// kernel's page cache, where a hot read costs what it costs without ccfs (raw_tier = daemon makes
// every read cross FUSE; it stays the measurement mode, named where a tool needs it), and a
// zstd-compressed tier (level 1, which keeps more pages per byte than lz4 on mixed data) whose
// share starts at half of memory and is then moved by the split tuner (compressed_percent =
// auto): no fixed share serves both a store whose misses are dear, where a larger compressed tier
// turns more of them into hits, and one whose misses are cheap, where every compressed hit is a
// trip the kernel's share would have saved. Setting compressed_percent fixes it (and ends the
// trip that a read of one of the pages auto keeps out of the kernel's cache costs).
Options MountDefaults();

}  // namespace ccfs

#endif  // CCFS_OPTIONS_H_
