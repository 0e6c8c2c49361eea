#include "trace/replay.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ccfs/backing_store.h"
#include "ccfs/page_cache.h"
#include "stats/counters.h"
#include "stats/stats_json.h"
#include "trace/dataset.h"
#include "trace/rng.h"

namespace ccfs {

namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

uint64_t NsSince(Clock::time_point start) {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count());
}

// ---- targets ------------------------------------------------------------------------------------

// Where the client's page reads go. Read/Write may be called from many threads.
class ReplayTarget {
 public:
  virtual ~ReplayTarget() = default;
  virtual Status Read(uint32_t file, uint64_t offset, size_t len, char* buf) = 0;
  virtual Status Write(uint32_t file, uint64_t offset, const char* buf, size_t len) = 0;
  // The cache's counters now; false if this target has none.
  virtual bool Counters(CacheStats* stats) = 0;
};

class EngineTarget final : public ReplayTarget {
 public:
  static Status Open(const Dataset& dataset, const Options& options, bool writable,
                     std::unique_ptr<EngineTarget>* target) {
    auto t = std::unique_ptr<EngineTarget>(new EngineTarget);
    std::unique_ptr<BackingStore> store = NewPosixBackingStore(dataset.root());
    for (const Dataset::File& f : dataset.files()) {
      std::unique_ptr<BackingFile> file;
      Status s = store->Open(f.path, writable ? O_RDWR : O_RDONLY, 0, &file);
      if (!s.ok()) return s;
      t->files_.push_back(std::move(file));
    }
    Status s = PageCache::Create(options, &t->cache_);
    if (!s.ok()) return s;
    *target = std::move(t);
    return Status::Ok();
  }

  Status Read(uint32_t file, uint64_t offset, size_t len, char* buf) override {
    size_t n = 0;
    return cache_->Read(file + 1, files_[file].get(), offset, len, buf, &n);
  }
  Status Write(uint32_t file, uint64_t offset, const char* buf, size_t len) override {
    return cache_->Write(file + 1, files_[file].get(), offset, buf, len);
  }
  bool Counters(CacheStats* stats) override {
    *stats = cache_->Stats();
    return true;
  }
  PageCache* cache() { return cache_.get(); }
  bool all_direct() const {
    for (const auto& f : files_) {
      if (!f->direct()) return false;
    }
    return true;
  }

 private:
  EngineTarget() = default;
  std::vector<std::unique_ptr<BackingFile>> files_;  // outlive cache_: declared first
  std::unique_ptr<PageCache> cache_;
};

// A memory cgroup (v1) that confines this process for the run, removed when destroyed.
class MemoryCgroup {
 public:
  static constexpr const char* kRoot = "/sys/fs/cgroup/memory";

  static Status Create(uint64_t limit, std::unique_ptr<MemoryCgroup>* cgroup) {
    if (!fs::exists(fs::path(kRoot) / "memory.limit_in_bytes")) {
      return Status::NotSupported(fmt::format(
          "--memory needs the cgroup v1 memory controller mounted at {}", kRoot));
    }
    auto g = std::unique_ptr<MemoryCgroup>(new MemoryCgroup);
    g->path_ = fmt::format("{}/ccfs-replay-{}", kRoot, ::getpid());
    if (::mkdir(g->path_.c_str(), 0755) != 0 && errno != EEXIST) {
      return Status::FromErrno(errno, g->path_ + ": cannot create the memory cgroup");
    }
    g->created_ = true;
    Status s = WriteValue(g->path_ + "/memory.limit_in_bytes", std::to_string(limit));
    if (!s.ok()) return s;
    s = WriteValue(g->path_ + "/cgroup.procs", std::to_string(::getpid()));
    if (!s.ok()) return s;
    g->joined_ = true;
    *cgroup = std::move(g);
    return Status::Ok();
  }

  ~MemoryCgroup() {
    if (joined_) WriteValue(std::string(kRoot) + "/cgroup.procs", std::to_string(::getpid()));
    if (created_) {
      WriteValue(path_ + "/memory.force_empty", "0");  // reclaim its page cache before removal
      ::rmdir(path_.c_str());
    }
  }

  // Pages read from storage by the cgroup, for the report (memory.stat pgmajfault is for mmap).
  const std::string& path() const { return path_; }

 private:
  MemoryCgroup() = default;
  static Status WriteValue(const std::string& path, const std::string& value) {
    int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) return Status::FromErrno(errno, path);
    ssize_t n = ::write(fd, value.data(), value.size());
    int err = errno;
    ::close(fd);
    if (n != static_cast<ssize_t>(value.size())) return Status::FromErrno(err, path);
    return Status::Ok();
  }
  std::string path_;
  bool created_ = false;
  bool joined_ = false;
};

uint64_t ProcessReadBytes() {
  std::ifstream io("/proc/self/io");
  std::string key;
  uint64_t value;
  while (io >> key >> value) {
    if (key == "read_bytes:") return value;
  }
  return 0;
}

// A mount or a plain directory: pread/pwrite on ordinary descriptors.
class FileTarget final : public ReplayTarget {
 public:
  static Status Open(const Dataset& dataset, ReplayMode mode, bool writable,
                     std::unique_ptr<FileTarget>* target) {
    auto t = std::unique_ptr<FileTarget>(new FileTarget);
    t->mode_ = mode;
    t->page_size_ = dataset.page_size();
    t->stats_path_ = (fs::path(dataset.root()) / ".ccfs" / "stats.json").string();
    for (uint32_t i = 0; i < dataset.files().size(); ++i) {
      std::string path = dataset.FullPath(i);
      int fd = ::open(path.c_str(), (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC);
      if (fd < 0) return Status::FromErrno(errno, path);
      t->fds_.push_back(fd);
      if (mode == ReplayMode::kDirectory) {
        // Cold start, and no read-ahead: a miss reads the page asked for, as the cache would.
        ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
        ::posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
      }
    }
    *target = std::move(t);
    return Status::Ok();
  }
  ~FileTarget() override {
    for (int fd : fds_) ::close(fd);
  }

  Status Read(uint32_t file, uint64_t offset, size_t len, char* buf) override {
    size_t done = 0;
    while (done < len) {
      ssize_t n = ::pread(fds_[file], buf + done, len - done, static_cast<off_t>(offset + done));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return Status::FromErrno(errno, fmt::format("pread file #{} at {}", file, offset));
      if (n == 0) break;
      done += static_cast<size_t>(n);
    }
    return Status::Ok();
  }
  Status Write(uint32_t file, uint64_t offset, const char* buf, size_t len) override {
    size_t done = 0;
    while (done < len) {
      ssize_t n = ::pwrite(fds_[file], buf + done, len - done, static_cast<off_t>(offset + done));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return Status::FromErrno(errno, fmt::format("pwrite file #{} at {}", file, offset));
      done += static_cast<size_t>(n);
    }
    return Status::Ok();
  }
  bool Counters(CacheStats* stats) override {
    if (mode_ == ReplayMode::kMount) return ReadDaemonStats(stats).ok();
    // The kernel page cache keeps no per-process hit counter: misses are the pages this process
    // made the block layer read. Hits are worked out by the caller from its own read count.
    *stats = CacheStats();
    stats->misses = ProcessReadBytes() / page_size_;
    return true;
  }
  Status ReadDaemonStats(CacheStats* stats) {
    std::ifstream in(stats_path_);
    if (!in) return Status::FromErrno(errno, stats_path_);
    std::stringstream text;
    text << in.rdbuf();
    Status s = ParseStatsJson(text.str(), stats);
    if (!s.ok()) return Status::InvalidArgument(stats_path_ + ": " + s.message());
    return Status::Ok();
  }

 private:
  FileTarget() = default;
  ReplayMode mode_ = ReplayMode::kDirectory;
  uint32_t page_size_ = 8192;
  std::string stats_path_;
  std::vector<int> fds_;
};

// ---- operations ---------------------------------------------------------------------------------

struct PageOp {
  uint32_t file;
  uint64_t offset;
  uint32_t length;
  TraceOp op;
};

// Operation i of the run, whatever thread issues it: a pure function of (seed, i) for generated
// traces, entry i (wrapping) of a recorded trace cut into pages.
class OpSource {
 public:
  OpSource(const Dataset& dataset, const AccessDistribution* dist, uint64_t seed, double write_ratio)
      : dataset_(dataset), dist_(dist), seed_(seed), write_ratio_(write_ratio) {}

  void SetTrace(const std::vector<TraceRecord>& records) {
    const uint64_t page = dataset_.page_size();
    for (const TraceRecord& r : records) {
      uint64_t size = dataset_.files()[r.file].size;
      uint64_t end = std::min<uint64_t>(r.offset + r.length, size);
      for (uint64_t off = r.offset; off < end;) {
        uint64_t piece_end = std::min(end, (off / page + 1) * page);
        ops_.push_back({r.file, off, static_cast<uint32_t>(piece_end - off), r.op});
        off = piece_end;
      }
    }
  }
  uint64_t trace_ops() const { return ops_.size(); }

  PageOp Get(uint64_t i) const {
    if (!ops_.empty()) return ops_[i % ops_.size()];
    uint64_t state = seed_ ^ (i * 0x9e3779b97f4a7c15ull);
    Rng rng(SplitMix64(&state));
    Dataset::PageRef ref = dataset_.Locate(dist_->Next(rng));
    const uint64_t size = dataset_.files()[ref.file].size;
    PageOp op;
    op.file = ref.file;
    op.offset = ref.offset;
    op.length = static_cast<uint32_t>(std::min<uint64_t>(dataset_.page_size(), size - ref.offset));
    op.op = write_ratio_ > 0 && rng.NextDouble() < write_ratio_ ? TraceOp::kWrite : TraceOp::kRead;
    return op;
  }

 private:
  const Dataset& dataset_;
  const AccessDistribution* dist_;
  uint64_t seed_;
  double write_ratio_;
  std::vector<PageOp> ops_;
};

}  // namespace

const char* ReplayModeName(ReplayMode mode) {
  switch (mode) {
    case ReplayMode::kEngine: return "engine";
    case ReplayMode::kMount: return "mount";
    case ReplayMode::kDirectory: return "directory";
  }
  return "?";
}

ReplayMode DetectReplayMode(const std::string& target) {
  std::error_code ec;
  return fs::exists(fs::path(target) / ".ccfs" / "stats.json", ec) ? ReplayMode::kMount
                                                                   : ReplayMode::kDirectory;
}

Status RunReplay(const ReplayOptions& options, ReplayResult* result) {
  ReplayResult r;
  r.target = options.target;
  r.mode = ReplayModeName(options.mode);
  if (options.threads < 1 || options.threads > 1024) {
    return Status::InvalidArgument(fmt::format("--threads {}: must be 1..1024", options.threads));
  }
  if (!(options.write_ratio >= 0 && options.write_ratio <= 1)) {
    return Status::InvalidArgument(
        fmt::format("--write-ratio {}: must be between 0 and 1", options.write_ratio));
  }
  if (options.ops == 0 && options.duration_s <= 0) {
    return Status::InvalidArgument("--ops must be at least 1 (or give --duration)");
  }

  // The page size: the engine's; a mount's own (its pages are what its counters count).
  uint32_t page_size = options.engine.page_size;
  std::unique_ptr<FileTarget> probe;
  CacheStats daemon;
  if (options.mode == ReplayMode::kMount) {
    Dataset tmp = Dataset::FromFiles(options.target, page_size, {});
    FileTarget::Open(tmp, ReplayMode::kMount, false, &probe);
    Status s = probe->ReadDaemonStats(&daemon);
    if (!s.ok()) return s;
    if (daemon.page_size != 0) page_size = daemon.page_size;
  }

  Dataset dataset;
  Status s = Dataset::Open(options.target, page_size, &dataset);
  if (!s.ok()) return s;
  r.dataset_pages = dataset.pages();
  r.dataset_bytes = dataset.bytes();
  r.page_size = page_size;

  std::unique_ptr<AccessDistribution> dist;
  s = NewAccessDistribution(options.dist, dataset.pages(), options.seed, &dist);
  if (!s.ok()) return s;
  OpSource source(dataset, dist.get(), options.seed, options.write_ratio);
  bool writes = options.write_ratio > 0;
  r.dist = options.dist.ToString();
  if (!options.trace_path.empty()) {
    std::vector<TraceRecord> records;
    s = ReadTraceFile(options.trace_path, dataset, options.trace_format, &records);
    if (!s.ok()) return s;
    for (const TraceRecord& rec : records) writes |= rec.op == TraceOp::kWrite;
    source.SetTrace(records);
    r.dist = "trace:" + options.trace_path;
  }

  // The target.
  std::unique_ptr<ReplayTarget> target;
  std::unique_ptr<MemoryCgroup> cgroup;
  EngineTarget* engine = nullptr;
  switch (options.mode) {
    case ReplayMode::kEngine: {
      Options engine_options = options.engine;
      engine_options.page_size = page_size;
      std::unique_ptr<EngineTarget> t;
      s = EngineTarget::Open(dataset, engine_options, writes, &t);
      if (!s.ok()) return s;
      engine = t.get();
      r.memory_bytes = engine_options.memory;
      r.compressed_percent = engine_options.compressed_percent;
      r.compressor = CodecName(engine_options.compressor);
      target = std::move(t);
      break;
    }
    case ReplayMode::kMount: {
      std::unique_ptr<FileTarget> t;
      s = FileTarget::Open(dataset, ReplayMode::kMount, writes, &t);
      if (!s.ok()) return s;
      r.memory_bytes = daemon.memory_bytes;
      r.compressed_percent = daemon.compressed_percent;
      r.compressor = CodecName(static_cast<CodecKind>(daemon.compressor));
      target = std::move(t);
      break;
    }
    case ReplayMode::kDirectory: {
      std::unique_ptr<FileTarget> t;
      s = FileTarget::Open(dataset, ReplayMode::kDirectory, writes, &t);  // drops cached pages
      if (!s.ok()) return s;
      if (options.cgroup_memory > 0) {
        s = MemoryCgroup::Create(options.cgroup_memory, &cgroup);
        if (!s.ok()) return s;
      }
      r.memory_bytes = options.cgroup_memory;
      target = std::move(t);
      break;
    }
  }

  std::unique_ptr<TraceWriter> recorder;
  if (!options.record_path.empty()) {
    s = TraceWriter::Open(options.record_path, &dataset, &recorder);
    if (!s.ok()) return s;
  }

  uint64_t warmup = options.warmup >= 0 ? static_cast<uint64_t>(options.warmup)
                                        : 3 * (r.memory_bytes / page_size);
  if (options.warmup < 0) warmup = std::min<uint64_t>(warmup, 10 * dataset.pages());
  r.warmup_ops = warmup;

  // The workers: op indices are handed out by one counter; [0, warmup) warm, then measured.
  LatencyHistogram read_latency, write_latency;
  std::atomic<uint64_t> next{0};
  std::atomic<uint64_t> reads{0}, writes_done{0};
  std::atomic<bool> stop{false};
  std::mutex error_mu;
  Status first_error;
  auto run_phase = [&](uint64_t begin, uint64_t end, bool measure) {
    next = begin;
    auto worker = [&] {
      char* buf = static_cast<char*>(std::aligned_alloc(kIoAlignment, (page_size + kIoAlignment - 1) / kIoAlignment * kIoAlignment));
      for (;;) {
        uint64_t i = next.fetch_add(1, std::memory_order_relaxed);
        if (i >= end || stop.load(std::memory_order_relaxed)) break;
        PageOp op = source.Get(i);
        Status st;
        if (recorder) {
          TraceRecord rec{op.file, op.offset, op.length, op.op};
          st = recorder->Append(rec);
        }
        if (st.ok() && op.op == TraceOp::kRead) {
          auto t0 = Clock::now();
          st = target->Read(op.file, op.offset, op.length, buf);
          if (measure) {
            read_latency.Record(NsSince(t0));
            reads.fetch_add(1, std::memory_order_relaxed);
          }
        } else if (st.ok()) {
          st = target->Read(op.file, op.offset, op.length, buf);  // the bytes to write back
          auto t0 = Clock::now();
          if (st.ok()) st = target->Write(op.file, op.offset, buf, op.length);
          if (measure) {
            write_latency.Record(NsSince(t0));
            writes_done.fetch_add(1, std::memory_order_relaxed);
          }
        }
        if (!st.ok()) {
          std::lock_guard<std::mutex> lock(error_mu);
          if (first_error.ok()) first_error = st;
          stop = true;
        }
      }
      std::free(buf);
    };
    std::vector<std::thread> threads;
    for (int t = 0; t < options.threads; ++t) threads.emplace_back(worker);
    for (std::thread& t : threads) t.join();
  };

  if (warmup > 0) run_phase(0, warmup, false);
  if (!first_error.ok()) return first_error;
  // The default warm-up goes on, a chunk at a time, while the cache is still filling: a compressed
  // tier holds two or three times the pages its memory would hold raw, and a measurement taken
  // while it fills reports a hit ratio too low. It stops once a chunk's hit ratio is no longer
  // above the previous chunk's (by half a point) and the compressed tier has stopped growing, or
  // at ten times the data set's pages. A recorded trace, or --warmup N, is replayed as asked.
  if (options.warmup < 0 && options.trace_path.empty() && options.mode != ReplayMode::kDirectory) {
    const uint64_t cap = 10 * dataset.pages();
    const uint64_t chunk = std::max<uint64_t>(20000, r.memory_bytes / page_size);
    CacheStats a;
    double previous = -1;
    while (warmup + chunk <= cap && target->Counters(&a)) {
      run_phase(warmup, warmup + chunk, false);
      if (!first_error.ok()) return first_error;
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
    r.warmup_ops = warmup;
  }
  if (engine != nullptr) engine->cache()->Quiesce();

  CacheStats before, after;
  r.have_counters = target->Counters(&before);
  const uint64_t end = options.duration_s > 0 ? UINT64_MAX : warmup + options.ops;

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
      if (options.duration_s > 0 && elapsed >= options.duration_s) stop = true;
      if (!options.on_progress) continue;
      ReplayProgress p;
      p.done = reads.load() + writes_done.load();
      p.total = options.duration_s > 0 ? 0 : options.ops;
      p.elapsed_s = elapsed;
      p.limit_s = options.duration_s;
      auto now = Clock::now();
      double dt = std::chrono::duration<double>(now - last_time).count();
      p.ops_per_s = dt > 0 ? (p.done - last_done) / dt : 0;
      last_done = p.done;
      last_time = now;
      p.us_per_buffer = read_latency.Snapshot().mean_us();
      CacheStats now_stats;
      if (r.have_counters && target->Counters(&now_stats)) {
        if (options.mode == ReplayMode::kDirectory) {
          uint64_t page_reads = reads.load();
          uint64_t misses = now_stats.misses - before.misses;
          p.hit_ratio = page_reads ? 1.0 - std::min<double>(1.0, static_cast<double>(misses) / page_reads) : -1;
        } else {
          CacheStats d = Minus(now_stats, before);
          p.hit_ratio = d.reads ? d.hit_ratio() : -1;
        }
      }
      lock.unlock();
      options.on_progress(p);
      lock.lock();
    }
  });
  run_phase(warmup, end, true);
  r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  {
    std::lock_guard<std::mutex> lock(monitor_mu);
    finished = true;
  }
  monitor_cv.notify_all();
  monitor.join();
  if (!first_error.ok()) return first_error;
  if (recorder) {
    s = recorder->Close();
    if (!s.ok()) return s;
  }

  // Results.
  r.reads = reads.load();
  r.writes = writes_done.load();
  r.ops = r.reads + r.writes;
  HistogramSnapshot rl = read_latency.Snapshot();
  r.us_per_buffer = rl.mean_us();
  r.p50_us = rl.PercentileUs(0.50);
  r.p99_us = rl.PercentileUs(0.99);
  r.write_us = write_latency.Snapshot().mean_us();
  if (r.have_counters) r.have_counters = target->Counters(&after);
  r.costs = ThesisCosts(r.compressor == "zstd" ? CodecKind::kZstd : CodecKind::kLz4);
  if (r.have_counters && options.mode == ReplayMode::kDirectory) {
    r.misses = std::min<uint64_t>(r.reads, after.misses - before.misses);
    r.raw_hits = r.reads - r.misses;
    r.cache_reads = r.reads;
    r.hit_ratio = r.reads ? static_cast<double>(r.raw_hits) / r.reads : 0;
    // The kernel's hit and miss costs cannot be told apart per read; the model uses the thesis's.
  } else if (r.have_counters) {
    CacheStats d = Minus(after, before);
    r.delta = d;
    r.raw_hits = d.raw_hits;
    r.compressed_hits = d.compressed_hits;
    r.misses = d.misses;
    r.cache_reads = d.reads;
    r.hit_ratio = d.hit_ratio();
    r.compression_ratio = after.compression_ratio();
    r.cache_us_per_buffer = d.us_per_buffer();
    if (d.raw_hit_latency.count()) r.costs.hit_us = d.raw_hit_latency.mean_us();
    if (d.compressed_hit_latency.count()) r.costs.decompress_us = d.compressed_hit_latency.mean_us();
    if (d.miss_latency.count()) r.costs.disk_us = d.miss_latency.mean_us();
    if (d.compressions) r.costs.compress_us = static_cast<double>(d.compress_ns) / d.compressions / 1000.0;
  }

  ModelInputs model;
  model.memory_bytes = r.memory_bytes;
  model.page_size = page_size;
  model.dataset_pages = dataset.pages();
  model.compressed_fraction = r.compressed_percent > 0 ? r.compressed_percent / 100.0 : 0.0;
  model.ratio = r.compression_ratio;
  if (options.trace_path.empty()) {
    model.dist = options.dist;
  } else {
    model.dist.kind = DistSpec::Kind::kUniform;  // a recorded trace has no known law
  }
  model.costs = r.costs;
  if (r.memory_bytes > 0) r.model = EvaluateModel(model);
  *result = std::move(r);
  return Status::Ok();
}

std::string ReplayResultJson(const ReplayResult& r) {
  nlohmann::json j;
  j["target"] = r.target;
  j["mode"] = r.mode;
  j["dist"] = r.dist;
  j["ops"] = r.ops;
  j["reads"] = r.reads;
  j["writes"] = r.writes;
  j["warmup_ops"] = r.warmup_ops;
  j["seconds"] = r.seconds;
  j["ops_per_s"] = r.seconds > 0 ? r.ops / r.seconds : 0.0;
  j["page_size"] = r.page_size;
  j["dataset_pages"] = r.dataset_pages;
  j["dataset_bytes"] = r.dataset_bytes;
  j["memory_bytes"] = r.memory_bytes;
  if (r.compressed_percent >= 0) {
    j["compressed_percent"] = r.compressed_percent;
    j["compressor"] = r.compressor;
  }
  if (r.have_counters) {
    j["hit_ratio"] = r.hit_ratio;
    j["raw_hits"] = r.raw_hits;
    j["compressed_hits"] = r.compressed_hits;
    j["misses"] = r.misses;
    j["cache_reads"] = r.cache_reads;
    j["compression_ratio"] = r.compression_ratio;
  } else {
    j["hit_ratio"] = nullptr;
    j["raw_hits"] = nullptr;
    j["compressed_hits"] = nullptr;
    j["misses"] = nullptr;
  }
  j["us_per_buffer"] = r.us_per_buffer;
  j["p50_us"] = r.p50_us;
  j["p99_us"] = r.p99_us;
  if (r.writes) j["write_us"] = r.write_us;
  if (r.mode != "directory") j["cache_us_per_buffer"] = r.cache_us_per_buffer;
  j["costs_us"] = {{"hit", r.costs.hit_us},
                   {"decompress", r.costs.decompress_us},
                   {"compress", r.costs.compress_us},
                   {"disk", r.costs.disk_us}};
  if (r.memory_bytes > 0) {
    j["model_hit_ratio"] = r.model.hit_ratio;
    j["model_raw_hit_ratio"] = r.model.raw_hit_ratio;
    j["model_compressed_hit_ratio"] = r.model.compressed_hit_ratio;
    j["model_us_per_buffer"] = r.model.us_per_buffer;
  } else {
    j["model_hit_ratio"] = nullptr;
    j["model_us_per_buffer"] = nullptr;
  }
  return j.dump();
}

}  // namespace ccfs
