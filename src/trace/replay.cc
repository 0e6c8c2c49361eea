// RunReplay: sets up the data set, the operations and the target, then runs the phases of
// replay_phases.h. The targets are in *_target.cc, the op source in op_source.cc.
#include "trace/replay.h"

#include <fcntl.h>

#include <memory>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "client/mount_client.h"
#include "trace/dataset.h"
#include "trace/op_source.h"
#include "trace/replay_phases.h"
#include "trace/replay_target.h"

namespace ccfs {

namespace {

Status CheckOptions(const ReplayOptions& options) {
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
  if (options.turn_ops > 0) {
    if (options.duration_s > 0) {
      return Status::InvalidArgument("--turn-ops: turns are counted in operations; give --ops, "
                                     "not --duration");
    }
    // Each end must be open, for reading and for writing respectively.
    auto mode = [](int fd) { return fd < 0 ? -1 : ::fcntl(fd, F_GETFL); };
    const int in = mode(options.turn_in_fd), out = mode(options.turn_out_fd);
    if (in == -1 || (in & O_ACCMODE) == O_WRONLY) {
      return Status::InvalidArgument(
          fmt::format("--turn-fds: {} is not a descriptor open for reading", options.turn_in_fd));
    }
    if (out == -1 || (out & O_ACCMODE) == O_RDONLY) {
      return Status::InvalidArgument(
          fmt::format("--turn-fds: {} is not a descriptor open for writing", options.turn_out_fd));
    }
  }
  return Status::Ok();
}

// Opens the target of options.mode over `dataset` and fills what *r reports about its cache.
// `daemon`: the mount's counters read at start (mount mode).
Status OpenTarget(const ReplayOptions& options, const Dataset& dataset, const CacheStats& daemon,
                  bool writes, std::unique_ptr<ReplayTarget>* target, ReplayResult* r) {
  switch (options.mode) {
    case ReplayMode::kEngine: {
      Options engine_options = options.engine;
      engine_options.page_size = dataset.page_size();
      r->memory_bytes = engine_options.memory;
      r->compressed_percent = engine_options.compressed_percent;
      r->compressor = CodecName(engine_options.compressor);
      return OpenEngineTarget(dataset, engine_options, writes, target);
    }
    case ReplayMode::kMount:
      r->memory_bytes = daemon.memory_bytes;
      r->compressed_percent = daemon.compressed_percent;
      r->compressor = CodecName(static_cast<CodecKind>(daemon.compressor));
      r->kernel_raw_tier = daemon.kernel_raw_tier;
      r->kernel_evict = daemon.kernel_evict;
      return OpenMountTarget(dataset, writes, daemon, target);
    case ReplayMode::kDirectory:
      r->memory_bytes = options.cgroup_memory;
      return OpenDirectoryTarget(dataset, writes, options.cgroup_memory, target);  // drops cached pages
  }
  return Status::InvalidArgument("unknown replay mode");
}

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
  return IsCcfsMount(target) ? ReplayMode::kMount : ReplayMode::kDirectory;
}

Status RunReplay(const ReplayOptions& options, ReplayResult* result) {
  ReplayResult r;
  r.target = options.target;
  r.mode = ReplayModeName(options.mode);
  Status s = CheckOptions(options);
  if (!s.ok()) return s;

  // The page size: the engine's; a mount's own (its pages are what its counters count).
  uint32_t page_size = options.engine.page_size;
  CacheStats daemon;
  if (options.mode == ReplayMode::kMount) {
    s = ReadMountStatsFile(options.target, &daemon);
    if (!s.ok()) return s;
    if (daemon.page_size != 0) page_size = daemon.page_size;
  }

  Dataset dataset;
  s = Dataset::Open(options.target, page_size, &dataset);
  if (!s.ok()) return s;
  r.dataset_pages = dataset.pages();
  r.dataset_bytes = dataset.bytes();
  r.page_size = page_size;

  // The operations.
  std::unique_ptr<AccessDistribution> dist;
  s = NewAccessDistribution(options.dist, dataset.pages(), options.seed, &dist);
  if (!s.ok()) return s;
  OpSource source(dataset, dist.get(), options.seed, options.write_ratio);
  bool writes = options.write_ratio > 0;
  r.dist = options.dist.ToString();
  std::vector<std::unique_ptr<AccessDistribution>> next_laws;
  if (options.phase_ops > 0) {
    std::vector<const AccessDistribution*> laws = {dist.get()};
    for (const DistSpec& spec : options.next_laws) {
      next_laws.emplace_back();
      s = NewAccessDistribution(spec, dataset.pages(), options.seed, &next_laws.back());
      if (!s.ok()) return s;
      laws.push_back(next_laws.back().get());
      r.dist += "," + spec.ToString();
    }
    source.SetPhases(options.phase_ops, std::move(laws));
    r.dist += fmt::format(" (phases of {} ops)", options.phase_ops);
  }
  if (!options.trace_path.empty()) {
    std::vector<TraceRecord> records;
    s = ReadTraceFile(options.trace_path, dataset, options.trace_format, &records);
    if (!s.ok()) return s;
    for (const TraceRecord& rec : records) writes |= rec.op == TraceOp::kWrite;
    source.SetTrace(records);
    r.trace_ops = source.trace_ops();
    r.dist = "trace:" + options.trace_path;
  }

  std::unique_ptr<ReplayTarget> target;
  s = OpenTarget(options, dataset, daemon, writes, &target, &r);
  if (!s.ok()) return s;

  std::unique_ptr<TraceWriter> recorder;
  if (!options.record_path.empty()) {
    s = TraceWriter::Open(options.record_path, &dataset, &recorder);
    if (!s.ok()) return s;
  }

  OpRunner runner(source, target.get(), recorder.get(), options.threads, page_size);
  if (options.turn_ops > 0) runner.TakeTurns(options.turn_in_fd, options.turn_out_fd, options.turn_ops);
  s = WarmUp(options, dataset, r.memory_bytes, target.get(), &runner, &r.warmup_ops);
  if (!s.ok()) return s;
  MeasuredCounters counters;
  s = MeasuredRun(options, r.warmup_ops, target.get(), &runner, &counters);
  if (!s.ok()) return s;
  if (recorder) {
    s = recorder->Close();
    if (!s.ok()) return s;
  }
  Report(options, dataset, runner, counters, &r);
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
  if (r.trace_ops > 0) j["trace_ops"] = r.trace_ops;
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
  if (r.mode == "mount") j["raw_tier"] = r.kernel_raw_tier ? "kernel" : "daemon";
  if (r.have_counters) {
    j["hit_ratio"] = r.hit_ratio;
    j["raw_hits"] = r.raw_hits;
    j["compressed_hits"] = r.compressed_hits;
    j["misses"] = r.misses;
    j["cache_reads"] = r.cache_reads;
    if (r.kernel_raw_tier) j["kernel_hits"] = r.kernel_hits;
    j["compression_ratio"] = r.compression_ratio;
    j["storable_fraction"] = r.storable_fraction;
    // Victims compressed over the run (kept or not): what `ccfs advise` predicts per read.
    if (r.mode != "directory") j["compressions"] = r.delta.compressions;
    if (r.mode != "directory" && r.compressed_percent_end >= 0) {
      j["split_auto"] = r.split_auto;
      j["compressed_percent_end"] = r.compressed_percent_end;
      j["compressor_end"] = r.compressor_end;
      j["split_changes"] = r.split_changes;
      j["recommended_percent"] = r.recommended_percent;
      j["recommended_compressor"] = r.recommended_compressor;
      nlohmann::json predicted = nlohmann::json::array();
      for (const SplitPrediction& p : r.predicted) {
        predicted.push_back({{"compressed_percent", p.percent},
                             {"compressor", CodecName(static_cast<CodecKind>(p.codec))},
                             {"hit_ratio", p.hit_ratio},
                             {"us_per_buffer", p.us_per_buffer}});
      }
      j["predicted"] = std::move(predicted);
    }
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
  if (r.have_counters && r.mode != "directory") {
    j["cpu_us_per_buffer"] = r.cpu_us_per_buffer;
    nlohmann::json by_path;
    for (int i = 0; i < CpuTimes::kPaths; ++i) {
      by_path[CpuTimes::kNames[i]] = r.cpu.UsPerBuffer(i, r.ops);
    }
    j["cpu_us_per_buffer_by_path"] = std::move(by_path);
  }
  j["process_cpu_us_per_buffer"] = r.process_cpu_us_per_buffer;
  if (r.joules_per_buffer >= 0) {
    j["joules_per_buffer"] = r.joules_per_buffer;
  } else {
    j["joules_per_buffer"] = nullptr;
  }
  j["energy"] = r.energy_note;
  j["costs_us"] = {{"hit", r.costs.hit_us},
                   {"decompress", r.costs.decompress_us},
                   {"compress", r.costs.compress_us},
                   {"disk", r.costs.disk_us},
                   {"trip", r.costs.trip_us}};
  if (r.kernel_raw_tier && r.kernel_hits_timed) {
    j["costs_us"]["kernel_hit"] = r.costs.kernel_hit_us;
  } else {
    j["costs_us"]["kernel_hit"] = nullptr;  // daemon mode has none; kernel mode: not told apart
  }
  if (r.kernel_cached_bytes >= 0) {
    j["kernel_cached_bytes"] = r.kernel_cached_bytes;
  } else {
    j["kernel_cached_bytes"] = nullptr;
  }
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
