// Replay: runs an access trace against a target and measures hit ratio and µs per buffer.
//
// Three kinds of target, one client:
//   engine     the PageCache in this process over a data set directory (no FUSE): the cache's
//              own cost. Counters come straight from PageCache::Stats().
//   mount      a ccfs mount: pages are read with pread through the mount; the daemon's counters
//              come from TARGET/.ccfs/stats.json, read before and after the measured phase.
//   directory  a plain directory: the kernel page cache, the baseline. With a memory limit the run
//              is confined to a fresh memory cgroup (v1, /sys/fs/cgroup/memory/ccfs-replay-PID)
//              that is removed afterwards, and the data set's cached pages are dropped first
//              (posix_fadvise DONTNEED), so the comparison is at equal RAM. Read-ahead is turned off
//              (POSIX_FADV_RANDOM) and misses are counted from the bytes this process made the
//              block layer read (/proc/self/io read_bytes), one page each.
// The client issues one pread per page (a trace record is cut at page boundaries) and times each
// with a steady clock; that is `us_per_buffer`. A write re-writes the page's current bytes (read
// first through the same path, untimed), so the data set is left as it was.
//
// Phases: warmup operations (not measured), then the measured operations (--ops) or time
// (--duration). Counters are the differences across the measured phase.
//
// CPU and energy per buffer, over the measured phase, per page operation of the client:
//   cpu_us_per_buffer          the cache's CPU time by path (stats/counters.h CpuTimes): engine,
//                              and mount (the daemon's, from its counters)
//   process_cpu_us_per_buffer  this process's CPU time, user and system: in engine mode the cache
//                              and the replay's own loop; against a mount or a directory the
//                              reader's side, the kernel's work on its behalf included (for the
//                              page cache baseline, the whole cost of a read)
//   joules_per_buffer          the processor packages' energy (stats/rapl.h): the whole machine's,
//                              where it has RAPL; otherwise energy_note says why not
//
// Where the parts are: replay.cc sets up and runs the phases of replay_phases.h (warm-up, measured
// run, report); the operations come from op_source.h (shared with the in-process benchmarks); the
// targets implement replay_target.h (engine_target.cc, mount_target.cc, directory_target.cc); the
// memory cgroup is memory_cgroup.h; a sweep over compressed_percent is replay_sweep.h.
//
// Thread-safety: RunReplay may be called from one thread at a time per target; it starts its own
// worker threads.
#ifndef CCFS_TRACE_REPLAY_H_
#define CCFS_TRACE_REPLAY_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ccfs/options.h"
#include "ccfs/stats.h"
#include "ccfs/status.h"
#include "model/cache_model.h"
#include "model/distribution.h"
#include "stats/counters.h"
#include "stats/rapl.h"
#include "trace/trace_file.h"

namespace ccfs {

enum class ReplayMode { kEngine, kMount, kDirectory };
const char* ReplayModeName(ReplayMode mode);

struct ReplayOptions {
  ReplayMode mode = ReplayMode::kEngine;
  std::string target;          // data set directory (engine, directory) or mount point
  Options engine;              // engine mode: the cache's settings (page_size is used by all modes)
  DistSpec dist;
  // A phase-change trace (phase_ops > 0): the hot set moves every phase_ops operations, and the law
  // cycles through dist, then next_laws (see OpSource::SetPhases).
  uint64_t phase_ops = 0;
  std::vector<DistSpec> next_laws;
  uint64_t seed = 1;
  uint64_t ops = 200000;       // measured page operations (0 with duration_s > 0: time-bound)
  double duration_s = 0;       // if > 0, measure for this long instead of `ops`
  int threads = 1;
  // Operations before measuring. -1: three times the memory in pages, then (engine and mount,
  // generated traces) on until the cache is full and its hit ratio has stopped rising.
  int64_t warmup = -1;
  double write_ratio = 0;      // share of operations that are writes
  std::string trace_path;      // replay this trace instead of drawing from `dist`
  TraceFormat trace_format = TraceFormat::kAuto;
  std::string record_path;     // write the operations issued (warmup included) as ccfs CSV
  uint64_t cgroup_memory = 0;  // directory mode: memory limit for the run (0: none)
  // Taking turns with other replays (turn_ops > 0; bench/auto_compare.py --turn-ops): before each
  // turn_ops operations, warm-up and measured alike, one byte is read from turn_in_fd; after them
  // the cache is quiesced and one byte written to turn_out_fd; the last turn is kept until the
  // process exits (the pipe's end tells the others). Replays of several settings started at once
  // then run one at a time, a turn each, so a shared machine's slow spells fall on all of them
  // alike instead of on whichever ran then. The measured µs per buffer is the reads' own time and
  // leaves out the waits; `seconds` (wall time) does not. Not with duration_s.
  int turn_in_fd = -1;
  int turn_out_fd = -1;
  uint64_t turn_ops = 0;
  // Called about every `progress_interval_s` from a monitor thread during the measured phase.
  std::function<void(const struct ReplayProgress&)> on_progress;
  double progress_interval_s = 0.5;
  std::string powercap_root = kPowercapRoot;  // where RAPL is read (tests give a fake tree)
};

struct ReplayProgress {
  uint64_t done = 0;
  uint64_t total = 0;       // 0 when time-bound
  double elapsed_s = 0;
  double limit_s = 0;       // duration, when time-bound
  double ops_per_s = 0;
  double hit_ratio = -1;    // -1 unknown
  double us_per_buffer = 0;
};

struct ReplayResult {
  std::string target;
  std::string mode;
  std::string dist;              // the law, or "trace:PATH"
  uint64_t ops = 0;              // page operations measured (reads + writes)
  uint64_t reads = 0;
  uint64_t writes = 0;
  uint64_t warmup_ops = 0;
  uint64_t trace_ops = 0;        // --trace: page operations in one pass of it (ops beyond repeat it)
  double seconds = 0;
  uint64_t dataset_pages = 0;
  uint64_t dataset_bytes = 0;
  uint32_t page_size = 0;
  uint64_t memory_bytes = 0;     // the cache's memory (engine, mount) or the cgroup limit
  int compressed_percent = -1;   // -1: no ccfs cache (directory mode)
  std::string compressor;
  bool kernel_raw_tier = false;  // mount with raw_tier = kernel: the kernel's page cache on top
  bool kernel_evict = false;     // ...whose pages the daemon's ledger drops (a FIFO level)
  // compressed_percent or compressor = auto: the split at the end of the measured phase and the
  // changes auto made during it (compressed_percent above is the split at its start).
  bool split_auto = false;
  int compressed_percent_end = -1;
  std::string compressor_end;
  uint64_t split_changes = 0;
  // The split estimator's recommendation at the end (-1: none) and its predicted curve.
  int recommended_percent = -1;
  std::string recommended_compressor;
  std::vector<SplitPrediction> predicted;

  // Cache counters over the measured phase (what the cache or the kernel says).
  bool have_counters = false;
  uint64_t raw_hits = 0;
  uint64_t compressed_hits = 0;
  uint64_t misses = 0;
  uint64_t cache_reads = 0;      // reads the cache counted (mount: includes other clients)
  // raw_tier = kernel: this client's reads the kernel answered itself (reads less those that
  // reached the daemon). hit_ratio is then the whole stack's: kernel, raw and compressed hits.
  uint64_t kernel_hits = 0;
  double hit_ratio = 0;
  double compression_ratio = 1.0;
  // Share of a seeded sample of the data set's pages the compressed tier would keep (the others
  // do not save min_savings_percent): the model's storable_fraction. 1 without a compressed tier.
  double storable_fraction = 1.0;

  // Client-side latency of page reads.
  double us_per_buffer = 0;
  double p50_us = 0;
  double p99_us = 0;
  double write_us = 0;           // mean per page write

  // Per-path costs measured inside the cache (engine, mount) and the model fed with them. Through a
  // mount the costs hold the transport too, measured in the same run (replay_phases.cc
  // MeasureTransport): trip_us, and with raw_tier = kernel kernel_hit_us, if kernel_hits_timed
  // (the runner could tell the kernel's hits apart). The engine has no trip (0), the directory
  // target none of these: its model is the thesis's with the thesis's costs.
  PathCosts costs;
  bool kernel_hits_timed = false;
  // raw_tier = kernel: the bytes of the data set's files the kernel held, the mean of the counts at
  // the start and the end of the measured phase (cachestat(2)); the model's raw level. -1: unknown.
  double kernel_cached_bytes = -1;
  double cache_us_per_buffer = 0;
  ModelResult model;
  CacheStats delta;              // engine/mount: the counters' differences

  // CPU and energy per page operation over the measured phase (see the top of this file).
  CpuTimes cpu;                  // engine/mount (have_counters): the cache's, by path
  double cpu_us_per_buffer = 0;
  double process_cpu_us_per_buffer = 0;
  double joules_per_buffer = -1;  // -1: no RAPL (energy_note says why)
  std::string energy_note;       // "no RAPL: CPU time only", or which packages were read
};

Status RunReplay(const ReplayOptions& options, ReplayResult* result);

// Decides the mode for a TARGET given on the command line: a mount if it looks like a ccfs mount
// (IsCcfsMount: TARGET/.ccfs/stats.json exists), else a plain directory.
ReplayMode DetectReplayMode(const std::string& target);

// One line of --json.
std::string ReplayResultJson(const ReplayResult& result);

}  // namespace ccfs

#endif  // CCFS_TRACE_REPLAY_H_
