// The phases of a replay (trace/replay.h): warm-up, measured run, report. Internal to the replay;
// RunReplay (replay.cc) sets up the data set, the op source and the target, then calls these in
// order on one OpRunner.
//
// Thread-safety: one thread drives the phases; OpRunner starts and joins its own workers inside
// each Run, and the measured run its own monitor thread.
#ifndef CCFS_TRACE_REPLAY_PHASES_H_
#define CCFS_TRACE_REPLAY_PHASES_H_

#include <atomic>
#include <cstdint>
#include <mutex>

#include "ccfs/stats.h"
#include "ccfs/status.h"
#include "trace/dataset.h"
#include "trace/op_source.h"
#include "trace/replay.h"
#include "trace/replay_target.h"
#include "trace/trace_file.h"
#include "util/mutex.h"

namespace ccfs {

// Issues operations of an OpSource against a target on `threads` worker threads. Operation
// indices are handed out by one counter, so [begin, end) is run exactly once whatever the thread
// count. Each operation is appended to the recorder first, if there is one. A read is timed around
// the target's Read; a write re-writes the page's current bytes (read first, untimed) and is timed
// around the target's Write, so the data set is left as it was. Where the target can tell
// (ReplayTarget::KernelHolds, asked before the read and off the clock), a measured read's time is
// also kept apart by who answered it: the kernel's page cache or the daemon.
//
// Borrows the source, the target and the recorder, which must outlive it.
class OpRunner {
 public:
  OpRunner(const OpSource& source, ReplayTarget* target, TraceWriter* recorder, int threads,
           uint32_t page_size)
      : source_(source), target_(target), recorder_(recorder), threads_(threads),
        page_size_(page_size) {}

  // Runs operations [begin, end) (end may be UINT64_MAX: until Stop()). With `measure`, latencies
  // and the read and write counts are kept. The first error stops every worker and is returned,
  // now and by every later Run.
  Status Run(uint64_t begin, uint64_t end, bool measure);
  // From now on, Run takes turns (ReplayOptions::turn_in_fd): before each `turn_ops` operations it
  // reads one byte from `in_fd`, and once they are done, at the next Run that has operations left
  // for a new turn, it quiesces the target and writes one byte to `out_fd`. The last turn is kept
  // to the end of the process. Not for a time-bound run (Stop).
  void TakeTurns(int in_fd, int out_fd, uint64_t turn_ops) {
    turn_in_ = in_fd;
    turn_out_ = out_fd;
    turn_ops_ = turn_ops;
  }
  // Makes the workers of the current Run finish after their operation in progress. Any thread.
  void Stop() { stop_ = true; }

  // Measured so far (safe to read while a Run is going on).
  uint64_t reads() const { return reads_.load(); }
  uint64_t writes() const { return writes_.load(); }
  const LatencyHistogram& read_latency() const { return read_latency_; }
  const LatencyHistogram& write_latency() const { return write_latency_; }
  // The measured reads the kernel answered, and those that reached the daemon; both empty when
  // the target cannot tell.
  const LatencyHistogram& kernel_read_latency() const { return kernel_read_latency_; }
  const LatencyHistogram& daemon_read_latency() const { return daemon_read_latency_; }

 private:
  void Work(uint64_t end, bool measure);
  Status RunRange(uint64_t begin, uint64_t end, bool measure);
  Status WaitTurn();
  Status PassTurn();

  const OpSource& source_;
  ReplayTarget* target_;
  TraceWriter* recorder_;
  const int threads_;
  const uint32_t page_size_;
  LatencyHistogram read_latency_, write_latency_;
  LatencyHistogram kernel_read_latency_, daemon_read_latency_;
  std::atomic<uint64_t> next_{0};
  std::atomic<uint64_t> reads_{0}, writes_{0};
  std::atomic<bool> stop_{false};
  int turn_in_ = -1, turn_out_ = -1;
  uint64_t turn_ops_ = 0;   // 0: no turns
  bool holding_ = false;    // the turn is ours
  uint64_t turn_end_ = 0;   // where the turn we hold ends
  Mutex error_mu_;
  Status first_error_ GUARDED_BY(error_mu_);
};

// Warm-up: options.warmup operations (or, with -1, DefaultWarmupOps of `memory_bytes`), then, for
// the default on a cache target and a generated trace, chunk after chunk while the cache is still
// filling. Sets *warmup_ops to the operations run, where the measured run starts.
Status WarmUp(const ReplayOptions& options, const Dataset& dataset, uint64_t memory_bytes,
              ReplayTarget* target, OpRunner* runner, uint64_t* warmup_ops);

// What the measured run saw of the cache's counters.
struct MeasuredCounters {
  bool have = false;  // the target has counters, read before and after
  CacheStats before, after;
  // The kernel's pages of the data set at the start and the end (ReplayTarget::KernelCachedBytes).
  int64_t kernel_cached_before = -1, kernel_cached_after = -1;
  double seconds = 0;
  uint64_t process_cpu_ns = 0;  // this process's CPU time over the run
  double joules = -1;           // the packages' energy over the run (stats/rapl.h); -1: none
  std::string energy_note;      // why there is none, or which packages were read
};

// The measured run: options.ops operations from `begin` (or on until options.duration_s), with a
// monitor thread that calls options.on_progress and enforces the time limit.
Status MeasuredRun(const ReplayOptions& options, uint64_t begin, ReplayTarget* target,
                   OpRunner* runner, MeasuredCounters* counters);

// The report: fills the counters, latencies, per-path costs and the model's figures of *r, whose
// set-up fields (target, mode, data set, memory, compressed_percent, compressor, warmup_ops) are
// already filled.
void Report(const ReplayOptions& options, const Dataset& dataset, const OpRunner& runner,
            const MeasuredCounters& counters, ReplayResult* r);

}  // namespace ccfs

#endif  // CCFS_TRACE_REPLAY_PHASES_H_
