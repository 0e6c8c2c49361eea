// The phases of a replay: warm-up, measured run and report (see replay_phases.h).
#include "trace/replay_phases.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <thread>
#include <vector>

#include "cache/model_facts.h"
#include "ccfs/backing_store.h"
#include "model/cache_model.h"
#include "stats/counters.h"
#include "stats/rapl.h"
#include "trace/advise.h"
#include "util/thread_cpu.h"

namespace ccfs {

namespace {

using Clock = std::chrono::steady_clock;

// Pages of the data set sampled for the share the compressed tier can hold (the model's s), taken
// in chunks, each read, compressed and let go before the next: in raw_tier = kernel the replay
// runs in the mount's memory cgroup, where a chunk's bytes are charged beside the daemon's tiers,
// which the sample's reads fill, and the kernel's pages; a chunk of 128 pages (1 MiB of 8 KiB
// pages) keeps within the room the cgroup leaves the reader (mount_target.cc kReaderRoom); larger
// chunks, or the whole sample held at once, can push a small mount's daemon into its cgroup's OOM
// killer. The sample is large enough that its error on the share is well under the model's own
// (about half a point); a smaller one biases the share, and with it the hit ratio, low.
constexpr uint64_t kStorableSamplePages = 4096;
constexpr uint64_t kStorableChunkPages = 128;

uint64_t NsSince(Clock::time_point start) {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count());
}

// Hit ratio of the reads between two counter readings, -1 if unknown. The directory target counts
// only misses, so its hits are this client's reads less those; a mount with raw_tier = kernel
// counts only the reads that reached the daemon, the rest being the kernel's hits.
double HitRatioSince(const ReplayOptions& options, const CacheStats& now, const CacheStats& before,
                     uint64_t client_reads) {
  if (options.mode == ReplayMode::kDirectory) {
    uint64_t misses = now.misses - before.misses;
    return client_reads
               ? 1.0 - std::min<double>(1.0, static_cast<double>(misses) / client_reads)
               : -1;
  }
  CacheStats d = Minus(now, before);
  if (now.kernel_raw_tier) {
    if (client_reads == 0) return -1;
    const uint64_t kernel_hits = client_reads - std::min(client_reads, d.reads);
    return std::min(1.0, static_cast<double>(kernel_hits + d.raw_hits + d.compressed_hits) /
                             client_reads);
  }
  return d.reads ? d.hit_ratio() : -1;
}

// The transport's costs for the model (model.h), from the measured run through a mount: `d` is
// the daemon's counters over it. The trip is what the reader waited for a read that reached the
// daemon beyond the daemon's own time for it: the reader's mean for those reads less the daemon's
// mean per page served. So at the run's own hit ratios the model's sum is the reader's mean, and
// what is left of its error is the hit ratios it predicts and the thesis's compression charge.
// The other way to take the trip, a probe of null requests beside the run, predicts worse: a
// probe's request is not the run's (a short reply, at another moment of the load), so its mean
// is not the trip the run's reads paid.
// raw_tier = daemon: every read reaches the daemon. raw_tier = kernel: the runner asked before
// each read whether the kernel held its pages (cachestat(2)); those it held are the kernel's hits,
// whose mean is kernel_hit_us, the rest reached the daemon. Where the kernel would not say, the
// trip takes the kernel's hits' time as well and kernel_hit_us is left at 0 (unmeasured).
void MeasureTransport(const OpRunner& runner, const CacheStats& d, ReplayResult* r) {
  if (d.reads == 0) return;
  const double daemon_us = d.us_per_buffer();
  if (!r->kernel_raw_tier) {
    r->costs.trip_us = std::max(0.0, runner.read_latency().Snapshot().mean_us() - daemon_us);
    return;
  }
  HistogramSnapshot kernel = runner.kernel_read_latency().Snapshot();
  HistogramSnapshot daemon = runner.daemon_read_latency().Snapshot();
  if (kernel.count() + daemon.count() == r->reads) {
    r->kernel_hits_timed = true;
    r->costs.kernel_hit_us = kernel.mean_us();
    if (daemon.count()) r->costs.trip_us = std::max(0.0, daemon.mean_us() - daemon_us);
    return;
  }
  r->costs.kernel_hit_us = 0;
  const uint64_t reached = r->reads - r->kernel_hits;
  if (reached == 0) return;
  const double reader_ns = static_cast<double>(runner.read_latency().Snapshot().sum_ns());
  r->costs.trip_us = std::max(0.0, reader_ns / 1000.0 / reached - daemon_us);
}

}  // namespace

// ---- the workers --------------------------------------------------------------------------------

void OpRunner::Work(uint64_t end, bool measure) {
  const IoBuffer io = NewIoBuffer(page_size_);
  char* buf = io.get();
  for (;;) {
    uint64_t i = next_.fetch_add(1, std::memory_order_relaxed);
    if (i >= end || stop_.load(std::memory_order_relaxed)) break;
    PageOp op = source_.Get(i);
    Status st;
    if (recorder_ != nullptr) {
      TraceRecord rec{op.file, op.offset, op.length, op.op};
      st = recorder_->Append(rec);
    }
    if (st.ok() && op.op == TraceOp::kRead) {
      const int kernel_holds = measure ? target_->KernelHolds(op.file, op.offset, op.length) : -1;
      auto t0 = Clock::now();
      st = target_->Read(op.file, op.offset, op.length, buf);
      if (measure) {
        const uint64_t ns = NsSince(t0);
        read_latency_.Record(ns);
        if (kernel_holds == 1) kernel_read_latency_.Record(ns);
        if (kernel_holds == 0) daemon_read_latency_.Record(ns);
        reads_.fetch_add(1, std::memory_order_relaxed);
      }
    } else if (st.ok()) {
      st = target_->Read(op.file, op.offset, op.length, buf);  // the bytes to write back
      auto t0 = Clock::now();
      if (st.ok()) st = target_->Write(op.file, op.offset, buf, op.length);
      if (measure) {
        write_latency_.Record(NsSince(t0));
        writes_.fetch_add(1, std::memory_order_relaxed);
      }
    }
    if (!st.ok()) {
      MutexLock lock(&error_mu_);
      if (first_error_.ok()) first_error_ = st;
      stop_ = true;
    }
  }
}

Status OpRunner::Run(uint64_t begin, uint64_t end, bool measure) {
  if (turn_ops_ == 0) return RunRange(begin, end, measure);
  for (uint64_t at = begin; at < end;) {
    if (!holding_ || at >= turn_end_) {
      Status s = holding_ ? PassTurn() : Status::Ok();
      if (s.ok()) s = WaitTurn();
      if (!s.ok()) return s;
      turn_end_ = at + turn_ops_;
    }
    const uint64_t stop = std::min(end, turn_end_);
    Status s = RunRange(at, stop, measure);
    if (!s.ok()) return s;
    at = stop;
  }
  return Status::Ok();
}

Status OpRunner::WaitTurn() {
  char token;
  for (;;) {
    const ssize_t n = ::read(turn_in_, &token, 1);
    if (n == 1) break;
    if (n == 0) return Status::InvalidArgument("--turn-fds: the turn pipe closed before the run ended");
    if (errno != EINTR) return Status::FromErrno(errno, "--turn-fds: waiting for the turn");
  }
  holding_ = true;
  return Status::Ok();
}

Status OpRunner::PassTurn() {
  // The cache's background work of this turn (the compression pool's queue) is done in this turn,
  // not in the next replay's.
  target_->Quiesce();
  // A coordinator that has gone away is an error to report, not a SIGPIPE to die of: the signal is
  // blocked on this thread for the write, and the one a closed pipe raises is taken back.
  sigset_t pipe_signal, old_mask;
  sigemptyset(&pipe_signal);
  sigaddset(&pipe_signal, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_signal, &old_mask);
  const char token = 't';
  int error = 0;
  for (;;) {
    const ssize_t n = ::write(turn_out_, &token, 1);
    if (n == 1) break;
    if (n < 0 && errno != EINTR) {
      error = errno;
      break;
    }
  }
  if (error == EPIPE) {
    const timespec now = {0, 0};
    sigtimedwait(&pipe_signal, nullptr, &now);
  }
  pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  if (error == EPIPE) {
    return Status::InvalidArgument("--turn-fds: passing the turn: the other end was closed");
  }
  if (error != 0) return Status::FromErrno(error, "--turn-fds: passing the turn");
  holding_ = false;
  return Status::Ok();
}

Status OpRunner::RunRange(uint64_t begin, uint64_t end, bool measure) {
  next_ = begin;
  std::vector<std::thread> threads;
  for (int t = 0; t < threads_; ++t) threads.emplace_back([this, end, measure] { Work(end, measure); });
  for (std::thread& t : threads) t.join();
  MutexLock lock(&error_mu_);
  return first_error_;
}

// ---- warm-up ------------------------------------------------------------------------------------

Status WarmUp(const ReplayOptions& options, const Dataset& dataset, uint64_t memory_bytes,
              ReplayTarget* target, OpRunner* runner, uint64_t* warmup_ops) {
  const uint32_t page_size = dataset.page_size();
  uint64_t warmup = options.warmup >= 0
                        ? static_cast<uint64_t>(options.warmup)
                        : DefaultWarmupOps(memory_bytes, page_size, dataset.pages());
  *warmup_ops = warmup;
  if (warmup > 0) {
    Status s = runner->Run(0, warmup, false);
    if (!s.ok()) return s;
  }
  // The default warm-up goes on, a chunk at a time, while the cache is still filling: a compressed
  // tier holds two or three times the pages its memory would hold raw, and a measurement taken
  // while it fills reports a hit ratio too low. It stops once a chunk's hit ratio is no longer
  // above the previous chunk's (by half a point) and the compressed tier has stopped growing, or
  // at ten times the data set's pages. A recorded trace, or --warmup N, is replayed as asked.
  if (options.warmup < 0 && options.trace_path.empty() && options.mode != ReplayMode::kDirectory) {
    const uint64_t cap = 10 * dataset.pages();
    const uint64_t chunk = std::max<uint64_t>(20000, memory_bytes / page_size);
    CacheStats a;
    double previous = -1;
    while (warmup + chunk <= cap && target->Counters(&a)) {
      Status s = runner->Run(warmup, warmup + chunk, false);
      if (!s.ok()) return s;
      warmup += chunk;
      CacheStats b;
      if (!target->Counters(&b)) break;
      const uint64_t reads_in_chunk = b.reads - a.reads;
      const double hit = reads_in_chunk ? 1.0 - static_cast<double>(b.misses - a.misses) / reads_in_chunk : 0;
      const double budget = static_cast<double>(b.compressed_budget_bytes);
      const bool tier_settled =
          budget == 0 || b.compressed_bytes >= 0.9 * budget ||
          static_cast<double>(b.compressed_bytes) < static_cast<double>(a.compressed_bytes) + 0.01 * budget;
      if (previous >= 0 && hit < previous + 0.005 && tier_settled) break;
      previous = hit;
    }
    *warmup_ops = warmup;
  }
  target->Quiesce();
  return Status::Ok();
}

// ---- the measured run ---------------------------------------------------------------------------

Status MeasuredRun(const ReplayOptions& options, uint64_t begin, ReplayTarget* target,
                   OpRunner* runner, MeasuredCounters* counters) {
  std::unique_ptr<RaplReader> rapl;
  RaplSample energy_before;
  Status energy = RaplReader::Open(options.powercap_root, &rapl);
  if (energy.ok()) energy = rapl->Read(&energy_before);
  counters->energy_note =
      energy.ok() ? "RAPL " + rapl->Describe() : RaplReader::NoEnergyNote(energy);
  counters->have = target->Counters(&counters->before);
  counters->kernel_cached_before = target->KernelCachedBytes();
  const uint64_t cpu_before = ProcessCpuNs();
  const CacheStats& before = counters->before;
  const uint64_t end = options.duration_s > 0 ? UINT64_MAX : begin + options.ops;

  // The monitor: progress, and the time limit.
  std::mutex monitor_mu;
  std::condition_variable monitor_cv;
  bool finished = false;
  const auto start = Clock::now();
  std::thread monitor([&] {
    std::unique_lock<std::mutex> lock(monitor_mu);
    const auto interval = std::chrono::duration<double>(options.progress_interval_s > 0 ? options.progress_interval_s : 0.5);
    uint64_t last_done = 0;
    auto last_time = start;
    while (!finished) {
      auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(interval);
      if (options.duration_s > 0) {
        deadline = std::min(deadline, start + std::chrono::duration_cast<Clock::duration>(
                                                  std::chrono::duration<double>(options.duration_s)));
      }
      monitor_cv.wait_until(lock, deadline, [&] { return finished; });
      if (finished) break;
      double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
      if (options.duration_s > 0 && elapsed >= options.duration_s) runner->Stop();
      if (!options.on_progress) continue;
      ReplayProgress p;
      p.done = runner->reads() + runner->writes();
      p.total = options.duration_s > 0 ? 0 : options.ops;
      p.elapsed_s = elapsed;
      p.limit_s = options.duration_s;
      auto now = Clock::now();
      double dt = std::chrono::duration<double>(now - last_time).count();
      p.ops_per_s = dt > 0 ? (p.done - last_done) / dt : 0;
      last_done = p.done;
      last_time = now;
      p.us_per_buffer = runner->read_latency().Snapshot().mean_us();
      CacheStats now_stats;
      if (counters->have && target->Counters(&now_stats)) {
        p.hit_ratio = HitRatioSince(options, now_stats, before, runner->reads());
      }
      lock.unlock();
      options.on_progress(p);
      lock.lock();
    }
  });
  Status s = runner->Run(begin, end, true);
  counters->seconds = std::chrono::duration<double>(Clock::now() - start).count();
  {
    std::lock_guard<std::mutex> lock(monitor_mu);
    finished = true;
  }
  monitor_cv.notify_all();
  monitor.join();
  if (!s.ok()) return s;
  if (counters->have) counters->have = target->Counters(&counters->after);
  counters->kernel_cached_after = target->KernelCachedBytes();
  // Next to the counters, so that this process's CPU time and the cache's cover the same time.
  counters->process_cpu_ns = ProcessCpuNs() - cpu_before;
  RaplSample energy_after;
  if (energy.ok()) energy = rapl->Read(&energy_after);
  if (energy.ok()) {
    counters->joules = rapl->JoulesBetween(energy_before, energy_after);
  } else {
    counters->energy_note = RaplReader::NoEnergyNote(energy);
  }
  return Status::Ok();
}

// ---- the report ---------------------------------------------------------------------------------

void Report(const ReplayOptions& options, const Dataset& dataset, const OpRunner& runner,
            const MeasuredCounters& counters, ReplayResult* r) {
  r->seconds = counters.seconds;
  r->reads = runner.reads();
  r->writes = runner.writes();
  r->ops = r->reads + r->writes;
  HistogramSnapshot rl = runner.read_latency().Snapshot();
  r->us_per_buffer = rl.mean_us();
  r->p50_us = rl.PercentileUs(0.50);
  r->p99_us = rl.PercentileUs(0.99);
  r->write_us = runner.write_latency().Snapshot().mean_us();
  const double per_op = r->ops ? 1.0 / static_cast<double>(r->ops) : 0.0;
  r->process_cpu_us_per_buffer = static_cast<double>(counters.process_cpu_ns) / 1e3 * per_op;
  r->joules_per_buffer = counters.joules >= 0 ? counters.joules * per_op : -1;
  r->energy_note = counters.energy_note;
  r->have_counters = counters.have;
  const CacheStats& before = counters.before;
  const CacheStats& after = counters.after;
  r->costs = ThesisCosts(r->compressor == "zstd" ? CodecKind::kZstd : CodecKind::kLz4);
  if (r->have_counters && options.mode == ReplayMode::kDirectory) {
    // A hit is a read whose pages the kernel held just before it (cachestat), whatever the store;
    // /proc/self/io's read_bytes (the counters) only where cachestat was refused.
    const uint64_t held = runner.kernel_read_latency().Snapshot().count();
    const uint64_t not_held = runner.daemon_read_latency().Snapshot().count();
    if (held + not_held == r->reads) {
      r->misses = not_held;
    } else {
      r->misses = std::min<uint64_t>(r->reads, after.misses - before.misses);
    }
    r->raw_hits = r->reads - r->misses;
    r->cache_reads = r->reads;
    r->hit_ratio = r->reads ? static_cast<double>(r->raw_hits) / r->reads : 0;
    // The kernel's hit and miss costs cannot be told apart per read; the model uses the thesis's.
  } else if (r->have_counters) {
    CacheStats d = Minus(after, before);
    r->delta = d;
    r->raw_hits = d.raw_hits;
    r->compressed_hits = d.compressed_hits;
    r->misses = d.misses;
    r->cache_reads = d.reads;
    r->hit_ratio = d.hit_ratio();
    if (r->kernel_raw_tier && r->reads > 0) {
      // The daemon never sees the kernel's hits: they are the reads that did not reach it.
      r->kernel_hits = r->reads - std::min(r->reads, d.reads);
      r->hit_ratio = std::min(1.0, static_cast<double>(r->kernel_hits + d.raw_hits + d.compressed_hits) /
                                       r->reads);
    }
    r->compression_ratio = after.compression_ratio();
    r->compressed_percent = before.compressed_percent;
    r->split_auto = after.compressed_percent_auto || after.compressor_auto;
    r->compressed_percent_end = after.compressed_percent;
    r->compressor_end = CodecName(static_cast<CodecKind>(after.compressor));
    r->split_changes = d.split_changes;
    r->recommended_percent = after.recommended_percent;
    r->recommended_compressor = CodecName(static_cast<CodecKind>(after.recommended_codec));
    r->predicted = after.predicted;
    r->cache_us_per_buffer = d.us_per_buffer();
    r->cpu = CpuTimesOf(d);
    r->cpu_us_per_buffer = r->cpu.TotalUsPerBuffer(r->ops);
    if (d.raw_hit_latency.count()) r->costs.hit_us = d.raw_hit_latency.mean_us();
    if (d.compressed_hit_latency.count()) r->costs.decompress_us = d.compressed_hit_latency.mean_us();
    if (d.miss_latency.count()) r->costs.disk_us = d.miss_latency.mean_us();
    if (d.compressions) r->costs.compress_us = static_cast<double>(d.compress_ns) / d.compressions / 1000.0;
    if (options.mode == ReplayMode::kMount) MeasureTransport(runner, d, r);
  }

  ModelInputs model;
  model.memory_bytes = r->memory_bytes;
  model.page_size = r->page_size;
  model.dataset_pages = dataset.pages();
  model.compressed_fraction = r->compressed_percent > 0 ? r->compressed_percent / 100.0 : 0.0;
  model.ratio = r->compression_ratio;
  if (options.trace_path.empty()) {
    model.dist = options.dist;
    model.window.before = static_cast<double>(r->warmup_ops);
    model.window.measured = static_cast<double>(r->ops);
  } else {
    model.dist.kind = DistSpec::Kind::kUniform;  // a recorded trace has no known law
  }
  model.costs = r->costs;
  model.raw_tier = r->kernel_raw_tier ? RawTierMode::kKernel : RawTierMode::kDaemon;
  // The replacement each level really does (che.h), not the thesis's oracle: the daemon's two
  // CLOCKs with the sketch's credit (clock_model.h); the kernel raw tier is FIFO when the ledger
  // drops pages in the order they were sent, and close to LRU when a memory cgroup's reclaim holds
  // it, over the daemon's compressed tier (LRU-like).
  model.cache_replacement = Replacement::kLru;
  model.raw_replacement = !r->kernel_raw_tier ? Replacement::kGclock
                          : r->kernel_evict   ? Replacement::kFifo
                                              : Replacement::kLru;
  model.clock = cache::EngineClockFacts();
  // raw_tier = kernel: the raw level is what the kernel held, not the raw share (model.h raw_pages).
  // Under a memory cgroup the kernel keeps what the daemon and the reader leave: at twice memory,
  // zstd C = 75, the kernel answered 0.756 of the Pareto reads where the raw share gives 0.663,
  // and 0.133 of the uniform ones where it gives 0.125.
  if (r->kernel_raw_tier && counters.kernel_cached_before >= 0 &&
      counters.kernel_cached_after >= 0) {
    r->kernel_cached_bytes =
        (static_cast<double>(counters.kernel_cached_before) + counters.kernel_cached_after) / 2;
    model.raw_pages = r->kernel_cached_bytes / r->page_size;
  }
  if (r->have_counters && options.mode != ReplayMode::kDirectory && r->reads > 0) {
    model.compressions_per_read = static_cast<double>(r->delta.compressions) / r->reads;
    // The path costs above are this run's means, which hold what the pool's compressions cost the
    // reader (model.h, compress_share).
    model.compress_share = 0;
    // The share of the data set's pages the compressed tier can hold at all: pages that do not
    // save min_savings_percent (random bytes, most media) are dropped whatever its room, and only
    // the raw tier keeps them. From a seeded sample of pages compressed as the pool compresses
    // them (advise.h), not from the run's victims: a page that cannot be kept is evicted, missed
    // and offered again far more often than one the compressed tier holds, so the victims'
    // reject rate overstates the share (0.64 against 0.5 on half random data). A sample that
    // cannot be read (O_DIRECT refused) leaves every page storable, the thesis's assumption.
    // Chunk k is seeded with seed + k (a page may fall in two chunks: a sample with replacement).
    CodecKind kind;
    if (r->compressed_percent > 0 && ParseCodecKind(r->compressor, &kind)) {
      const uint64_t want = std::min<uint64_t>(kStorableSamplePages, dataset.pages());
      double kept = 0;
      uint64_t sampled = 0;
      bool read = true;
      for (uint64_t chunk = 0; read && sampled < want; ++chunk) {
        PageSample sample;
        CodecProfile profile;
        read = SamplePages(dataset, std::min(kStorableChunkPages, want - sampled),
                           options.seed + chunk, &sample).ok() &&
               !sample.pages.empty() &&
               MeasureCodec(sample, kind, options.engine.compression_level,
                            options.engine.min_savings_percent, 0, cache::EngineTierCharges(),
                            &profile).ok();
        if (read) {
          kept += profile.storable_fraction * static_cast<double>(sample.pages.size());
          sampled += sample.pages.size();
        }
      }
      if (read && sampled > 0) r->storable_fraction = kept / static_cast<double>(sampled);
    }
    model.storable_fraction = r->storable_fraction;
  }
  if (r->memory_bytes > 0) {
    if (options.phase_ops > 0 && options.trace_path.empty()) {
      std::vector<DistSpec> laws = {options.dist};
      laws.insert(laws.end(), options.next_laws.begin(), options.next_laws.end());
      r->model = EvaluatePhasedModel(model, laws, options.phase_ops, r->warmup_ops,
                                     r->warmup_ops + r->ops);
    } else {
      r->model = EvaluateModel(model);
    }
  }
}

}  // namespace ccfs
