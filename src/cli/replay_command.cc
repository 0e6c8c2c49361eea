// `ccfs replay`: replays a Pareto/uniform/Zipf or recorded trace against a mount, a plain
// directory (the kernel page cache) or the engine in-process, with a live view, a summary beside
// the model, --json, and --sweep over compressed_percent with CSV and plots. Logic: trace/replay.h.
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "ccfs/config.h"
#include "cli/command.h"
#include "cli/plot_script.h"
#include "trace/replay.h"
#include "trace/replay_sweep.h"
#include "util/strings.h"

namespace ccfs {
namespace {

struct ReplayArgs {
  std::string target;
  std::string engine_dir;
  std::string config_file;
  std::vector<std::string> option_lists;
  std::string dist = kDefaultDist;
  double hot_fraction = 0.2;
  uint64_t phase_ops = 0;
  uint64_t seed = 1;
  uint64_t ops = 200000;
  double duration_s = 0;
  int threads = 1;
  int64_t warmup = -1;
  double write_ratio = 0;
  std::string page_size;
  std::string memory;
  std::string trace;
  std::string trace_format = "auto";
  std::string record;
  bool json = false;
  bool no_progress = false;
  std::string sweep;
  std::string baseline;
  std::string sweep_out = "sweep";
  std::string plot_script;
  std::string turn_fds;
  uint64_t turn_ops = 0;
};


// How far the model's µs per buffer is from the measured one, e.g. "-5%".
std::string ModelError(const ReplayResult& r) {
  if (r.us_per_buffer <= 0) return "-";
  return fmt::format("{:+.0f}%", 100.0 * (r.model.us_per_buffer / r.us_per_buffer - 1.0));
}

void PrintProgress(const ReplayProgress& p) {
  constexpr int kWidth = 24;
  double fraction = p.total ? static_cast<double>(p.done) / p.total
                            : (p.limit_s > 0 ? p.elapsed_s / p.limit_s : 0.0);
  fraction = std::min(1.0, std::max(0.0, fraction));
  int filled = static_cast<int>(fraction * kWidth);
  std::string bar(filled, '#');
  bar += std::string(kWidth - filled, '.');
  std::string hit = p.hit_ratio >= 0 ? PercentText(p.hit_ratio) : "-";
  fmt::print(stderr, "\r[{}] {:3.0f}%  {:>8.0f} ops/s  hit {:>6}  {:7.1f} µs/buffer\033[K", bar,
             100 * fraction, p.ops_per_s, hit, p.us_per_buffer);
}

// CPU and energy per buffer (trace/replay.h says what each covers).
void PrintCpu(const ReplayResult& r) {
  if (r.have_counters && r.mode != "directory") {
    std::string paths;
    for (int i = 0; i < CpuTimes::kPaths; ++i) {
      if (i == CpuTimes::kRequest && r.mode == "engine") continue;  // no request threads there
      paths += fmt::format("{}{} {:.1f}", paths.empty() ? "" : ", ", CpuTimes::kNames[i],
                           r.cpu.UsPerBuffer(i, r.ops));
    }
    fmt::print("  CPU per buffer {:>7.1f}  ({}); this process {:.1f} µs{}\n", r.cpu_us_per_buffer,
               paths, r.process_cpu_us_per_buffer,
               r.mode == "engine" ? " (the cache and the replay loop)" : " (the reader's side)");
  } else {
    fmt::print("  CPU per buffer {:>7.1f}  (this process, the kernel's work for its reads "
               "included)\n",
               r.process_cpu_us_per_buffer);
  }
  if (r.joules_per_buffer >= 0) {
    fmt::print("  energy         {:.3f} mJ per buffer ({}, the whole machine's)\n",
               r.joules_per_buffer * 1e3, r.energy_note);
  } else {
    fmt::print("  energy         {}\n", r.energy_note);
  }
}

void PrintSummary(const ReplayResult& r, int threads) {
  fmt::print("ccfs replay: {} {}  {}  {} pages in {:.1f} s ({:.0f} ops/s, {} thread{}), warmup {}\n",
             r.mode, r.target, r.dist, r.ops, r.seconds, r.seconds > 0 ? r.ops / r.seconds : 0.0,
             threads, threads == 1 ? "" : "s", r.warmup_ops);
  fmt::print("  data set       {} pages of {} ({})\n", r.dataset_pages, FormatSize(r.page_size),
             FormatSize(r.dataset_bytes));
  if (r.compressed_percent >= 0) {
    fmt::print("  cache          {}, compressed {}% ({}){}\n", FormatSize(r.memory_bytes),
               r.compressed_percent, r.compressor,
               r.kernel_raw_tier ? ", raw pages in the kernel's page cache (memory cgroup)" : "");
  } else if (r.memory_bytes > 0) {
    fmt::print("  page cache     confined to {} (memory cgroup)\n", FormatSize(r.memory_bytes));
  } else {
    fmt::print("  page cache     unconfined (give --memory SIZE to compare at equal RAM)\n");
  }
  // The model's figures beside the measured ones (the model needs the memory it is given).
  const bool model = r.memory_bytes > 0;
  if (r.have_counters) {
    double n = r.cache_reads ? static_cast<double>(r.cache_reads) : 1.0;
    std::string beside =
        model ? "  model " + fmt::format("{:>6}", PercentText(r.model.hit_ratio)) : "";
    if (r.kernel_raw_tier) {
      // Per level, as shares of this client's reads: the kernel's hits never reach the daemon.
      const double reads = r.reads ? static_cast<double>(r.reads) : 1.0;
      fmt::print("  hit ratio      {:>7}{}  (kernel {}, daemon raw {}, compressed {}, miss {})\n",
                 PercentText(r.hit_ratio), beside, PercentText(r.kernel_hits / reads),
                 PercentText(r.raw_hits / reads), PercentText(r.compressed_hits / reads),
                 PercentText(r.misses / reads));
    } else if (r.compressed_percent >= 0) {
      fmt::print("  hit ratio      {:>7}{}  (raw {}, compressed {}, miss {})\n",
                 PercentText(r.hit_ratio), beside, PercentText(r.raw_hits / n),
                 PercentText(r.compressed_hits / n), PercentText(r.misses / n));
    } else {
      fmt::print("  hit ratio      {:>7}{}  (misses counted from block reads)\n",
                 PercentText(r.hit_ratio), beside);
    }
  }
  std::string beside =
      model ? fmt::format("  model {:>6.1f} ({})", r.model.us_per_buffer, ModelError(r)) : "";
  fmt::print("  µs per buffer  {:>7.1f}{}  (p50 {:.1f}, p99 {:.1f})\n", r.us_per_buffer, beside,
             r.p50_us, r.p99_us);
  if (r.writes) fmt::print("  µs per write   {:>7.1f}  ({} writes)\n", r.write_us, r.writes);
  if (r.compressed_percent >= 0 && r.have_counters) {
    fmt::print("  inside cache   {:.1f} µs per buffer; hit {:.1f}, decompress {:.1f}, compress "
               "{:.1f}, disk {:.1f} µs; ratio {:.2f}x\n",
               r.cache_us_per_buffer, r.costs.hit_us, r.costs.decompress_us, r.costs.compress_us,
               r.costs.disk_us, r.compression_ratio);
  }
  if (r.have_counters && r.compressed_percent_end >= 0 &&
      (r.split_auto || r.recommended_percent >= 0)) {
    std::string rec = r.recommended_percent >= 0
                          ? fmt::format("recommended {}% {}", r.recommended_percent,
                                        r.recommended_compressor)
                          : "no recommendation yet";
    if (r.split_auto) {
      fmt::print("  auto split     {}% {} at the start, {}% {} at the end ({} change{}); {}\n",
                 r.compressed_percent, r.compressor, r.compressed_percent_end, r.compressor_end,
                 r.split_changes, r.split_changes == 1 ? "" : "s", rec);
    } else {
      fmt::print("  split estimate {}\n", rec);
    }
  }
  if (r.mode == "mount" && r.have_counters) {
    std::string kernel;
    if (r.kernel_raw_tier) {
      kernel = r.kernel_hits_timed
                   ? fmt::format(", kernel hit {:.1f} µs", r.costs.kernel_hit_us)
                   : ", kernel hits not told apart (no cachestat): the trip holds them";
      if (r.kernel_cached_bytes >= 0) {
        kernel += fmt::format(", the kernel held {:.1f} MiB of the data set (the model's raw level)",
                              r.kernel_cached_bytes / 1048576.0);
      }
    }
    fmt::print("  transport      trip {:.1f} µs per read that reaches the daemon{} (model: {:.1f} "
               "µs per buffer)\n",
               r.costs.trip_us, kernel, r.model.trip_us_per_buffer);
  }
  PrintCpu(r);
}

// "compressed_percent=0:90:10" -> {0, 10, ..., 90}.
Status ParseSweep(const std::string& text, std::vector<int>* values) {
  const std::string key = "compressed_percent=";
  if (text.rfind(key, 0) != 0) {
    return Status::InvalidArgument(fmt::format(
        "--sweep {}: only compressed_percent=FROM:TO:STEP can be swept", text));
  }
  int from, to, step;
  char extra;
  if (std::sscanf(text.c_str() + key.size(), "%d:%d:%d%c", &from, &to, &step, &extra) != 3) {
    return Status::InvalidArgument(fmt::format(
        "--sweep {}: expected compressed_percent=FROM:TO:STEP, e.g. 0:90:10", text));
  }
  if (from < 0 || to > 95 || from > to || step <= 0) {
    return Status::InvalidArgument(fmt::format(
        "--sweep {}: need 0 <= FROM <= TO <= 95 and STEP > 0", text));
  }
  values->clear();
  for (int c = from; c <= to; c += step) values->push_back(c);
  return Status::Ok();
}

std::string CsvRow(const std::string& mode, const ReplayResult& r) {
  return fmt::format(
      "{},{},{:.6f},{},{},{},{},{:.3f},{:.3f},{:.3f},{:.4f},{:.6f},{:.3f},{:.3f},{:.3f},{:.3f},"
      "{:.3f},{:.3f},{}\n",
      mode, r.compressed_percent >= 0 ? std::to_string(r.compressed_percent) : "", r.hit_ratio,
      r.raw_hits, r.compressed_hits, r.misses, r.ops, r.us_per_buffer, r.p50_us, r.p99_us,
      r.compression_ratio, r.model.hit_ratio, r.model.us_per_buffer, r.costs.hit_us,
      r.costs.decompress_us, r.costs.compress_us, r.costs.disk_us, r.costs.trip_us,
      r.kernel_hits_timed ? fmt::format("{:.3f}", r.costs.kernel_hit_us) : "");
}

// The run a sweep's CSV and lines give a point: its mode, or "baseline".
void PrintSweepPoint(const ReplayArgs& args, const SweepPoint& p, std::ofstream* csv) {
  const ReplayResult& r = p.result;
  if (p.percent < 0) {
    *csv << CsvRow("baseline", r);
    fmt::print("page cache ({} in a memory cgroup)  hit {:>6}  {:7.1f} µs/buffer\n",
               FormatSize(p.cgroup_memory), PercentText(r.hit_ratio), r.us_per_buffer);
  } else {
    *csv << CsvRow(r.mode, r);
    csv->flush();
    fmt::print("C={:>2}%  hit {:>6} (model {:>6})  {:7.1f} µs/buffer (model {:7.1f}, {:>4})  "
               "ratio {:.2f}x\n",
               p.percent, PercentText(r.hit_ratio), PercentText(r.model.hit_ratio), r.us_per_buffer,
               r.model.us_per_buffer, ModelError(r), r.compression_ratio);
  }
  if (args.json) fmt::print("{}\n", ReplayResultJson(r));
}

// PREFIX.png from PREFIX.csv (plot_sweep.py); the exit status.
int PlotSweep(const ReplayArgs& args, const std::string& csv_path) {
  std::string script = FindPlotScript(args.plot_script, "CCFS_PLOT_SCRIPT", "plot_sweep.py");
  if (script.empty()) {
    fmt::print(stderr, "ccfs replay: plot_sweep.py not found (give --plot-script); no plots\n");
    return 0;
  }
  std::string command;
  int rc = RunPlotScript(script, {csv_path, args.sweep_out}, &command);
  if (rc == kPlotNoMatplotlib) {
    fmt::print(stderr, "ccfs replay: no plots: python3-matplotlib is not installed (apt-get "
                       "install python3-matplotlib); the CSV is complete\n");
    return 0;
  }
  if (rc != 0) {
    fmt::print(stderr, "ccfs replay: plotting failed ({}); the CSV is complete\n", command);
    return 1;
  }
  return 0;
}

int SweepCommand(const ReplayArgs& args, SweepRequest req, bool tty) {
  std::string csv_path = args.sweep_out + ".csv";
  std::ofstream csv(csv_path);
  if (!csv) {
    fmt::print(stderr, "ccfs replay: {}: cannot write: {}\n", csv_path, std::strerror(errno));
    return 1;
  }
  csv << "mode,compressed_percent,hit_ratio,raw_hits,compressed_hits,misses,ops,us_per_buffer,"
         "p50_us,p99_us,compression_ratio,model_hit_ratio,model_us_per_buffer,cost_hit_us,"
         "cost_decompress_us,cost_compress_us,cost_disk_us,cost_trip_us,cost_kernel_hit_us\n";
  req.on_point = [&](const SweepPoint& p) {
    if (tty) fmt::print(stderr, "\r\033[K");
    PrintSweepPoint(args, p, &csv);
  };
  req.on_restore_failed = [](const Status& s) {
    fmt::print(stderr, "ccfs replay: restoring compressed_percent: {}\n", s.ToString());
  };
  SweepReport report;
  Status s = RunSweep(req, &report);
  if (!s.ok()) {
    if (tty && !report.failed_run.empty()) fmt::print(stderr, "\r\033[K");
    fmt::print(stderr, "ccfs replay: {}{}{}\n", report.failed_run,
               report.failed_run.empty() ? "" : ": ", s.ToString());
    return 1;
  }
  csv.close();
  fmt::print("wrote {}\n", csv_path);
  return PlotSweep(args, csv_path);
}

// ---- the arguments into ReplayOptions: each step says what is wrong with them -----------------

// The engine's keys (--config, -o, --page-size), --memory, and the target and its mode.
Status EngineAndTarget(const ReplayArgs& args, ReplayOptions* options) {
  Status s = LoadConfigAndOptionLists(args.config_file, args.option_lists, &options->engine);
  if (!s.ok()) return s;
  if (!args.page_size.empty() &&
      !(s = ApplyKeyValue("page_size", args.page_size, "--page-size", &options->engine)).ok()) {
    return s;
  }
  if (!args.memory.empty()) {
    uint64_t memory = 0;
    if (!(s = ParseSize(args.memory, &memory)).ok() || memory == 0) {
      return Status::InvalidArgument(fmt::format("--memory {}: {}", args.memory,
                                                 s.ok() ? "must be above 0" : s.ToString()));
    }
    options->cgroup_memory = memory;
  }
  if (!args.engine_dir.empty()) {
    if (!args.target.empty()) {
      return Status::InvalidArgument("give either TARGET or --engine DIR, not both");
    }
    options->mode = ReplayMode::kEngine;
    options->target = args.engine_dir;
    // No kernel page cache sits above an in-process engine: its raw pages are its own, whatever
    // a config file written for a mount says.
    if (options->engine.kernel_raw_tier()) {
      fmt::print(stderr, "ccfs replay --engine: raw_tier = daemon (an in-process engine has no "
                         "kernel page cache above it)\n");
      options->engine.raw_tier = "daemon";
      options->engine.kernel_demote = "off";
    }
    if (options->cgroup_memory) {  // the engine's memory, not a cgroup's
      s = ApplyKeyValue("memory", args.memory, "--memory", &options->engine);
      options->cgroup_memory = 0;
      if (!s.ok()) return s;
    }
  } else if (!args.target.empty()) {
    options->target = args.target;
    options->mode = DetectReplayMode(args.target);
    if (options->mode == ReplayMode::kMount && options->cgroup_memory && args.baseline.empty()) {
      return Status::InvalidArgument("--memory applies to a plain directory or --engine; a "
                                     "mount's memory is its own (set it when mounting)");
    }
  } else {
    return Status::InvalidArgument("give TARGET (a ccfs mount or a directory) or --engine DIR");
  }
  return options->engine.Validate();
}

// The operations: --dist's laws (several: a phase-change trace) or --trace, and how many.
Status Workload(const ReplayArgs& args, ReplayOptions* options) {
  std::vector<std::string> laws;
  for (size_t start = 0;;) {
    size_t comma = args.dist.find(',', start);
    laws.push_back(args.dist.substr(start, comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  Status s;
  if (!(s = ParseDistSpec(laws[0], args.hot_fraction, &options->dist)).ok() ||
      !(s = ParseTraceFormat(args.trace_format, &options->trace_format)).ok()) {
    return s;
  }
  for (size_t i = 1; i < laws.size(); ++i) {
    options->next_laws.emplace_back();
    if (!(s = ParseDistSpec(laws[i], args.hot_fraction, &options->next_laws.back())).ok()) return s;
  }
  if (laws.size() > 1 && args.phase_ops == 0) {
    return Status::InvalidArgument(fmt::format(
        "--dist {}: several laws make a phase-change trace; give --phase-ops N (operations per "
        "phase)", args.dist));
  }
  if (args.phase_ops > 0 && !args.trace.empty()) {
    return Status::InvalidArgument(fmt::format(
        "--phase-ops applies to a generated trace, not to --trace {}", args.trace));
  }
  options->phase_ops = args.phase_ops;
  options->seed = args.seed;
  options->ops = args.ops;
  options->duration_s = args.duration_s;
  options->threads = args.threads;
  options->warmup = args.warmup;
  options->write_ratio = args.write_ratio;
  options->trace_path = args.trace;
  options->record_path = args.record;
  return Status::Ok();
}

// --turn-fds IN,OUT with --turn-ops N: taking turns with other replays.
Status Turns(const ReplayArgs& args, ReplayOptions* options) {
  if (args.turn_fds.empty() && args.turn_ops == 0) return Status::Ok();
  int in = -1, out = -1;
  char rest = 0;
  if (args.turn_fds.empty() || args.turn_ops == 0 ||
      std::sscanf(args.turn_fds.c_str(), "%d,%d%c", &in, &out, &rest) != 2 || in < 0 || out < 0) {
    return Status::InvalidArgument(fmt::format(
        "--turn-fds IN,OUT (two open descriptors) and --turn-ops N (N > 0) go together; given "
        "--turn-fds '{}' --turn-ops {}", args.turn_fds, args.turn_ops));
  }
  if (!args.sweep.empty()) {
    return Status::InvalidArgument("--turn-fds applies to one replay, not to --sweep");
  }
  options->turn_in_fd = in;
  options->turn_out_fd = out;
  options->turn_ops = args.turn_ops;
  return Status::Ok();
}

// --sweep and --baseline over the replay of `options`.
Status Sweep(const ReplayArgs& args, ReplayOptions options, SweepRequest* req) {
  Status s = ParseSweep(args.sweep, &req->percents);
  if (!s.ok()) return s;
  if (options.mode == ReplayMode::kDirectory) {
    return Status::InvalidArgument(fmt::format(
        "--sweep needs a ccfs mount or --engine DIR; {} is a plain directory", options.target));
  }
  if (!args.baseline.empty() && options.cgroup_memory == 0) {
    if (options.mode != ReplayMode::kEngine) {
      return Status::InvalidArgument("--baseline needs --memory SIZE (the RAM the page cache "
                                     "gets, normally the mount's memory)");
    }
    options.cgroup_memory = options.engine.memory;
  }
  req->replay = std::move(options);
  req->baseline = args.baseline;
  return Status::Ok();
}

int Usage(const Status& s) {
  fmt::print(stderr, "ccfs replay: {}\n", s.ToString());
  return 2;
}

int ReplayCommand(const ReplayArgs& args) {
  ReplayOptions options;
  Status s;
  if (!(s = EngineAndTarget(args, &options)).ok() || !(s = Workload(args, &options)).ok() ||
      !(s = Turns(args, &options)).ok()) {
    return Usage(s);
  }
  const bool tty = ::isatty(STDERR_FILENO) && !args.no_progress;
  if (tty) options.on_progress = PrintProgress;
  if (!args.sweep.empty()) {
    SweepRequest req;
    if (!(s = Sweep(args, std::move(options), &req)).ok()) return Usage(s);
    return SweepCommand(args, std::move(req), tty);
  }
  if (!args.baseline.empty()) return Usage(Status::InvalidArgument("--baseline goes with --sweep"));
  ReplayResult result;
  s = RunReplay(options, &result);
  if (tty) fmt::print(stderr, "\r\033[K");
  if (!s.ok()) {
    fmt::print(stderr, "ccfs replay: {}\n", s.ToString());
    return 1;
  }
  if (args.json) {
    fmt::print("{}\n", ReplayResultJson(result));
  } else {
    PrintSummary(result, options.threads);
  }
  return 0;
}

CommandRegistrar reg_replay(
    "replay", "replay a Pareto/uniform/Zipf or recorded trace and measure hit ratio and µs per buffer",
    [](CLI::App* app) {
      auto args = std::make_shared<ReplayArgs>();
      app->footer(
          "TARGET is a ccfs mount (pages read through it; the daemon's counters from "
          ".ccfs/stats.json) or a plain directory (the kernel page cache; --memory SIZE confines "
          "the run to a memory cgroup after dropping the data set's cached pages). --engine DIR "
          "runs the cache in-process with the same config keys (--config, -o, --memory).");
      app->add_option("target", args->target,
                      "a ccfs mount point or a plain directory; this or --engine is required");
      app->add_option("--engine", args->engine_dir, "run the engine in-process over this data set");
      app->add_option("--config", args->config_file, "engine mode: TOML config file");
      app->add_option("-o", args->option_lists, "engine mode: key=value[,key=value...]");
      app->add_option("--dist", args->dist,
                      "pareto, pareto:H, uniform or zipf:THETA; a comma list (with --phase-ops) "
                      "changes the law at every phase")
          ->capture_default_str();
      app->add_option("--phase-ops", args->phase_ops,
                      "a phase-change trace: the hot set moves every N operations (and the law "
                      "cycles through --dist's list)");
      app->add_option("--hot-fraction", args->hot_fraction,
                      "pareto: the hottest fraction of pages, which gets 1-H of the accesses")
          ->capture_default_str();
      app->add_option("--seed", args->seed, "seed of the trace and of the hot-page scatter")
          ->capture_default_str();
      app->add_option("--ops", args->ops, "page operations to measure")->capture_default_str();
      app->add_option("--duration", args->duration_s, "measure for this many seconds instead");
      app->add_option("--threads", args->threads, "client threads")->capture_default_str();
      app->add_option("--warmup", args->warmup,
                      "operations before measuring (default: 3x the memory in pages, then on "
                      "until the cache is full and its hit ratio stops rising)");
      app->add_option("--write-ratio", args->write_ratio,
                      "share of writes (each re-writes a page's current bytes)")
          ->capture_default_str();
      app->add_option("--page-size", args->page_size, "page size (default: the cache's)");
      app->add_option("--memory", args->memory,
                      "engine: the cache's memory; directory: memory cgroup limit");
      app->add_option("--trace", args->trace, "replay a recorded trace (ccfs CSV, fio iolog v2/v3, "
                                              "MSR Cambridge CSV, CloudPhysics VSCSI CSV)");
      app->add_option("--trace-format", args->trace_format, TraceFormatChoices())
          ->capture_default_str();
      app->add_option("--record", args->record, "write the operations issued as a ccfs CSV trace");
      app->add_flag("--json", args->json, "print one JSON object instead of the summary");
      app->add_flag("--no-progress", args->no_progress, "no live progress line");
      app->add_option("--sweep", args->sweep, "compressed_percent=FROM:TO:STEP");
      app->add_option("--baseline", args->baseline,
                      "sweep: also replay on this plain directory in a memory cgroup of --memory");
      app->add_option("--sweep-out", args->sweep_out,
                      "sweep: prefix of the CSV and PNG files written")
          ->capture_default_str();
      app->add_option("--plot-script", args->plot_script, "sweep: path of plot_sweep.py");
      app->add_option("--turn-fds", args->turn_fds,
                      "IN,OUT: take turns with other replays (read a byte from IN before each "
                      "turn, write one to OUT after it; bench/auto_compare.py --turn-ops)");
      app->add_option("--turn-ops", args->turn_ops, "operations per turn (with --turn-fds)");
      return [args] { return ReplayCommand(*args); };
    });

}  // namespace
}  // namespace ccfs
