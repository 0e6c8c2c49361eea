// `ccfs advise`: predicts hit ratio and µs per buffer at every split C% and codec for a data set
// and a workload, offline, in seconds, without a mount; prints a table and one line of advice,
// writes a CSV and a PNG (scripts/plot_advise.py). Logic: trace/advise.h.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ccfs/config.h"
#include "cli/command.h"
#include "cli/plot_script.h"
#include "trace/advise.h"
#include "trace/trace_file.h"
#include "util/strings.h"

namespace ccfs {
namespace {

namespace fs = std::filesystem;

// The most memory advise accepts: far beyond any machine's RAM, so a value above it is a typo.
constexpr uint64_t kMaxMemory = 16ull << 40;
// Seconds each codec measurement runs at least (per direction).
constexpr double kMeasureSeconds = 0.05;
// Points of the hit-ratio curve in --json.
constexpr int kCurvePoints = 64;

struct AdviseArgs {
  std::string dataset;
  std::string trace;
  std::string trace_format = "auto";
  std::string dist = kDefaultDist;
  double hot_fraction = 0.2;
  bool exact = false;
  std::string memory;
  std::string page_size;
  std::string config_file;
  std::vector<std::string> option_lists;
  std::string raw_tier = "both";
  double trip_us = 0, kernel_hit_us = 0, disk_us = 0;
  const CLI::Option* trip_option = nullptr;
  const CLI::Option* kernel_hit_option = nullptr;
  const CLI::Option* disk_option = nullptr;
  const CLI::Option* dist_option = nullptr;
  int c_step = 10;
  int c_max = 90;
  uint64_t ops = 0;  // 0: the default (a law: replay's 200000; a trace: its length)
  int64_t warmup = -1;
  uint64_t seed = 1;
  uint64_t sample_pages = kDefaultSamplePages;
  bool json = false;
  std::string out;
  const CLI::Option* out_option = nullptr;
  std::string plot_script;
};

int Fail(const std::string& message) {
  fmt::print(stderr, "ccfs advise: {}\n", message);
  return 2;
}

// A cost given on the command line: a finite number of µs, 0 or more. False (after saying why) if
// it was given and is not; *out is left alone if it was not given.
bool GivenCost(const CLI::Option* option, double value, double* out) {
  if (option == nullptr || option->count() == 0) return true;
  if (!std::isfinite(value) || value < 0) {
    Fail(fmt::format("{} {}: must be a number of µs, 0 or more", option->get_name(), value));
    return false;
  }
  *out = value;
  return true;
}

// The engine settings the prediction depends on: --config, then -o, then the flags.
Status EngineOptions(const AdviseArgs& args, Options* o) {
  Status s = LoadConfigAndOptionLists(args.config_file, args.option_lists, o);
  if (!s.ok()) return s;
  if (!args.page_size.empty() &&
      !(s = ApplyKeyValue("page_size", args.page_size, "--page-size", o)).ok()) {
    return s;
  }
  if (!args.memory.empty()) {
    uint64_t bytes = 0;
    if (!(s = ParseSize(args.memory, &bytes)).ok()) {
      return Status::InvalidArgument("--memory " + args.memory + ": " + s.ToString());
    }
    if (bytes > kMaxMemory) {
      return Status::InvalidArgument(fmt::format("--memory {}: more than {} is no machine's RAM",
                                                 args.memory, FormatSize(kMaxMemory)));
    }
    if (!(s = ApplyKeyValue("memory", args.memory, "--memory", o)).ok()) return s;
  } else if (args.config_file.empty() &&
             std::none_of(args.option_lists.begin(), args.option_lists.end(),
                          [](const std::string& list) { return list.find("memory=") != std::string::npos; })) {
    return Status::InvalidArgument("give --memory SIZE (the cache's memory, e.g. 512MiB)");
  }
  return Status::Ok();
}


// A row's tier as the CSV and JSON name it; the page cache alone is the row with no tier.
std::string TierName(const AdviseRow& r, bool page_cache) {
  return page_cache ? "page_cache" : RawTierModeName(r.raw_tier);
}

nlohmann::json RowJson(const AdviseRow& r, double page_cache_us) {
  const ModelResult& m = r.model;
  return {{"compressed_percent", r.percent},
          {"codec", CodecName(r.codec)},
          {"raw_tier", RawTierModeName(r.raw_tier)},
          {"hit_ratio", m.hit_ratio},
          {"raw_hit_ratio", m.raw_hit_ratio},
          {"compressed_hit_ratio", m.compressed_hit_ratio},
          {"miss_ratio", m.miss_ratio},
          {"raw_capacity_pages", m.raw_capacity_pages},
          {"compressed_capacity_pages", m.compressed_capacity_pages},
          {"compressions_per_read", m.compressions_per_read},
          {"us_per_buffer", m.us_per_buffer},
          {"us_low", r.us_low},
          {"us_high", r.us_high},
          {"compress_us_per_buffer", m.compress_us_per_buffer},
          {"trip_us_per_buffer", m.trip_us_per_buffer},
          {"speedup", r.speedup},
          {"vs_page_cache", page_cache_us > 0 ? m.us_per_buffer / page_cache_us : 1.0}};
}

// The page cache alone first (raw_tier "page_cache", codec "-"), then every row.
Status WriteCsv(const std::string& path, const AdviseRow& page_cache, double page_cache_us,
                const std::vector<AdviseRow>& rows) {
  std::ofstream csv(path);
  if (!csv) return Status::IOError(errno, path + ": cannot write: " + std::strerror(errno));
  csv << "raw_tier,compressed_percent,codec,hit_ratio,raw_hit_ratio,compressed_hit_ratio,"
         "miss_ratio,compressions_per_read,us_per_buffer,us_low,us_high,compress_us_per_buffer,"
         "trip_us_per_buffer,speedup,vs_page_cache\n";
  auto line = [&](const AdviseRow& r, bool is_page_cache) {
    const ModelResult& m = r.model;
    csv << fmt::format("{},{},{},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{:.3f},{:.3f},{:.3f},{:.3f},"
                       "{:.3f},{:.4f},{:.4f}\n",
                       TierName(r, is_page_cache), r.percent,
                       is_page_cache ? "-" : CodecName(r.codec), m.hit_ratio, m.raw_hit_ratio,
                       m.compressed_hit_ratio, m.miss_ratio, m.compressions_per_read,
                       m.us_per_buffer, r.us_low, r.us_high, m.compress_us_per_buffer,
                       m.trip_us_per_buffer, r.speedup,
                       page_cache_us > 0 ? m.us_per_buffer / page_cache_us : 1.0);
  };
  line(page_cache, true);
  for (const AdviseRow& r : rows) line(r, false);
  csv.close();
  if (!csv) return Status::IOError(errno, path + ": write failed");
  return Status::Ok();
}

// The request from the arguments; false (after saying why) if they make none.
bool BuildRequest(const AdviseArgs& args, AdviseRequest* req) {
  Options& o = req->engine;
  Status s = EngineOptions(args, &o);
  if (!s.ok()) return Fail(s.ToString()), false;
  if (args.c_step < 1 || args.c_step > 95) {
    return Fail(fmt::format("--c-step {}: must be 1..95 (percent)", args.c_step)), false;
  }
  if (args.c_max < 0 || args.c_max > 95) {
    return Fail(fmt::format("--c-max {}: must be 0..95 (percent)", args.c_max)), false;
  }
  for (int c = 0; c <= args.c_max; c += args.c_step) req->percents.push_back(c);
  // The engine's rule for memory (the raw tier holds 16 pages) at the largest split evaluated.
  o.compressed_percent = req->percents.back();
  if (!(s = o.Validate()).ok()) {
    return Fail(fmt::format("--memory {} at C={}%: {}", FormatSize(o.memory),
                            req->percents.back(), s.ToString())),
           false;
  }
  if (args.raw_tier == "both") {
    req->tiers = {RawTierMode::kDaemon, RawTierMode::kKernel};
  } else {
    RawTierMode tier;
    if (!ParseRawTierMode(args.raw_tier, &tier)) {
      return Fail(fmt::format("--raw-tier {}: must be daemon, kernel or both", args.raw_tier)),
             false;
    }
    req->tiers = {tier};
  }
  double cost = 0;
  for (auto [option, value, out] :
       {std::tuple{args.trip_option, args.trip_us, &req->trip_us},
        std::tuple{args.kernel_hit_option, args.kernel_hit_us, &req->kernel_hit_us},
        std::tuple{args.disk_option, args.disk_us, &req->disk_us}}) {
    cost = -1;
    if (!GivenCost(option, value, &cost)) return false;
    if (cost >= 0) *out = cost;
  }
  if (!args.trace.empty() && args.dist_option->count() > 0) {
    return Fail("give --trace FILE or --dist LAW, not both"), false;
  }
  if (args.sample_pages < 1) return Fail("--sample-pages 0: must be at least 1"), false;
  if (!(s = ParseDistSpec(args.dist, args.hot_fraction, &req->dist)).ok()) {
    return Fail(s.ToString()), false;
  }
  if (!(s = ParseTraceFormat(args.trace_format, &req->trace_format)).ok()) {
    return Fail(s.ToString()), false;
  }
  req->dataset = args.dataset;
  req->trace = args.trace;
  req->exact = args.exact;
  req->ops = args.ops;
  req->warmup = args.warmup;
  req->seed = args.seed;
  req->sample_pages = args.sample_pages;
  req->measure_seconds = kMeasureSeconds;
  req->assumed_trip_us = kAssumedTripUs;
  return true;
}

std::string ChargeText(const AdviseRequest& req) {
  return req.engine.admission_filter
             ? "one compression per raw victim the admission filter lets through (read again "
               "while raw, promoted, or back while the ghost set remembers it), counted in full "
               "though ccfs compresses in the background"
             : "one compression per raw victim (admission_filter = false), counted in full though "
               "ccfs compresses in the background";
}

std::string CurveSource(const AdviseReport& r) {
  return r.exact ? "the exact LRU curve of the reads"
                 : "the law's share of the hottest pages (the oracle; --exact for the LRU curve)";
}

void PrintJson(const AdviseRequest& req, const AdviseReport& r, double seconds) {
  const double pc_us = r.prediction.page_cache.us_per_buffer;
  nlohmann::json codec_json = nlohmann::json::array();
  for (const CodecProfile& c : r.codecs) {
    codec_json.push_back({{"codec", CodecName(c.codec)},
                          {"level", c.level},
                          {"ratio", c.ratio},
                          {"storable_fraction", c.storable_fraction},
                          {"zero_fraction", c.zero_fraction},
                          {"compress_us", c.compress_us},
                          {"decompress_us", c.decompress_us}});
  }
  nlohmann::json curve = nlohmann::json::array();
  for (int i = 0; i <= kCurvePoints; ++i) {
    const double pages = static_cast<double>(r.dataset.pages()) * i / kCurvePoints;
    curve.push_back({{"pages", pages}, {"hit_ratio", r.HitRatio(pages)}});
  }
  nlohmann::json row_json = nlohmann::json::array();
  for (const AdviseRow& row : r.prediction.rows) row_json.push_back(RowJson(row, pc_us));
  nlohmann::json tier_names = nlohmann::json::array();
  nlohmann::json advice_json = nlohmann::json::array();
  for (const auto& [tier, a] : r.advice) {
    tier_names.push_back(RawTierModeName(tier));
    advice_json.push_back({{"raw_tier", RawTierModeName(tier)},
                           {"text", a.text},
                           {"compress", a.compress},
                           {"compressed_percent", a.best.percent},
                           {"codec", CodecName(a.best.codec)},
                           {"speedup", a.best.speedup}});
  }
  const Verdict& v = r.verdict;
  nlohmann::json j = {
      {"dataset", req.dataset},
      {"dataset_pages", r.dataset.pages()},
      {"page_size", req.engine.page_size},
      {"memory_bytes", req.engine.memory},
      {"raw_tiers", tier_names},
      {"workload",
       {{"source", r.workload},
        {"reads", r.reuse.reads()},
        {"warmup_ops", r.warmup},
        {"distinct_pages", r.reuse.distinct_pages()},
        {"exact", r.exact}}},
      {"sample_pages", r.sampled_pages},
      {"codecs", codec_json},
      {"costs_us",
       {{"hit", r.costs.hit_us},
        {"disk", r.costs.disk_us},
        {"trip", r.costs.trip_us},
        {"kernel_hit", r.costs.kernel_hit_us}}},
      {"miss_cost_us",
       {{"median", r.miss.median},
        {"p10", r.miss.p10},
        {"p90", r.miss.p90},
        {"mean", r.miss.mean},
        {"measured", !req.disk_us.has_value()}}},
      {"model_error", kModelError},
      {"assumptions", r.assumptions},
      {"compression_charge", ChargeText(req)},
      {"curve_source", CurveSource(r)},
      {"curve", curve},
      {"page_cache", RowJson(r.page_cache, pc_us)},
      {"rows", row_json},
      {"advice", advice_json},
      {"verdict",
       {{"answer", VerdictName(v.kind)},
        {"text", v.text},
        {"raw_tier", RawTierModeName(v.best.raw_tier)},
        {"compressed_percent", v.best.percent},
        {"codec", CodecName(v.best.codec)},
        {"vs_page_cache", v.ratio},
        {"vs_page_cache_fast_misses", v.ratio_fast},
        {"vs_page_cache_slow_misses", v.ratio_slow}}},
      {"seconds", seconds}};
  fmt::print("{}\n", j.dump());
}

void PrintText(const AdviseRequest& req, const AdviseReport& r, bool files) {
  const Options& o = req.engine;
  std::string tier_text;
  for (RawTierMode tier : req.tiers) {
    tier_text += fmt::format("{}{}", tier_text.empty() ? "" : " and ",
                             tier == RawTierMode::kKernel ? "in the kernel's page cache"
                                                          : "in the daemon");
  }
  fmt::print("ccfs advise: {}, {} pages of {} ({}); {} of memory ({:.0f} pages); raw tier {}, "
             "against the page cache alone\n",
             req.dataset, r.dataset.pages(), FormatSize(o.page_size), FormatSize(r.dataset.bytes()),
             FormatSize(o.memory), static_cast<double>(o.memory) / o.page_size, tier_text);
  fmt::print("workload: {}, {} reads after a warm-up of {} operations, {} distinct pages; hit "
             "ratios from {}\n",
             r.workload, r.reuse.reads(), r.warmup, r.reuse.distinct_pages(), CurveSource(r));
  fmt::print("data: {} sampled pages (seed {})", r.sampled_pages, req.seed);
  for (const CodecProfile& c : r.codecs) {
    fmt::print("; {} level {}: {:.2f}x, {} kept ({} zero), compress {:.1f} µs, decompress "
               "{:.1f} µs",
               CodecName(c.codec), c.level, c.ratio, PercentText(c.storable_fraction),
               PercentText(c.zero_fraction), c.compress_us, c.decompress_us);
  }
  fmt::print("\n");
  const std::string miss_text =
      req.disk_us ? fmt::format("{:.1f} µs (given)", r.miss.median)
                  : fmt::format("{:.1f} µs (median of {} O_DIRECT reads; 10th-90th percentile "
                                "{:.1f}-{:.1f}, mean {:.1f})",
                                r.miss.median, r.sampled_pages, r.miss.p10, r.miss.p90,
                                r.miss.mean);
  fmt::print("costs: miss {}; raw hit {:.2f} µs (a page copy); kernel hit {:.2f} µs{}; trip "
             "{:g} µs (raw_tier = daemon: every read; kernel: compressed hits and misses; the "
             "page cache alone: none)\n",
             miss_text, r.costs.hit_us, r.costs.kernel_hit_us,
             req.kernel_hit_us ? " (given)" : " (buffered re-reads of a memory file)", r.costs.trip_us);
  for (const std::string& a : r.assumptions) fmt::print("assumed: {}\n", a);
  fmt::print("charged: {}\n", ChargeText(req));
  fmt::print("band: the model's error (±{:.0f}%) around µs per buffer at the 10th and 90th "
             "percentile of the miss cost\n",
             100 * kModelError);
  fmt::print("{:>10} {:>4} {:>5} {:>7} {:>7} {:>7} {:>7} {:>10} {:>10} {:>15} {:>9}\n", "", "C%",
             "codec", "hit", "raw", "compr", "miss", "compr/read", "µs/buffer", "band",
             "vs page$");
  const double pc_us = r.prediction.page_cache.us_per_buffer;
  auto print_row = [pc_us](const std::string& name, const AdviseRow& row, bool codec_free) {
    const ModelResult& m = row.model;
    fmt::print("{:>10} {:>4} {:>5} {:>7} {:>7} {:>7} {:>7} {:>10.3f} {:>10.2f} {:>15} {:>8.2f}x\n",
               name, row.percent, codec_free ? "-" : CodecName(row.codec),
               PercentText(m.hit_ratio), PercentText(m.raw_hit_ratio),
               PercentText(m.compressed_hit_ratio), PercentText(m.miss_ratio),
               m.compressions_per_read, m.us_per_buffer,
               fmt::format("{:.1f}-{:.1f}", row.us_low, row.us_high),
               pc_us > 0 ? m.us_per_buffer / pc_us : 1.0);
  };
  print_row("page cache", r.page_cache, true);
  const std::vector<AdviseRow>& rows = r.prediction.rows;
  for (size_t i = 0; i < rows.size(); ++i) {
    // C = 0 is codec-free: one line per tier.
    if (rows[i].percent == 0 && i > 0 && rows[i - 1].percent == 0 &&
        rows[i - 1].raw_tier == rows[i].raw_tier) {
      continue;
    }
    print_row(RawTierModeName(rows[i].raw_tier), rows[i], rows[i].percent == 0);
  }
  fmt::print("(vs page$: µs per buffer against the page cache alone's; below 1x ccfs is faster)\n");
  for (const auto& [tier, a] : r.advice) {
    fmt::print("split, raw_tier = {}: {}\n", RawTierModeName(tier), a.text);
  }
  const Verdict& v = r.verdict;
  fmt::print("verdict: {}\n", v.text);
  if (v.kind == Verdict::Kind::kCcfs) {
    std::string opts = fmt::format("memory={},raw_tier={},compressed_percent={}",
                                   FormatSize(o.memory), RawTierModeName(v.best.raw_tier),
                                   v.best.percent);
    if (v.best.percent > 0) opts += fmt::format(",compressor={}", CodecName(v.best.codec));
    fmt::print("mount: ccfs mount -o {} {} MOUNTPOINT\n", opts, req.dataset);
  }
  if (!files) fmt::print("files: none (--out DIR writes DIR/advise.csv and DIR/advise.png)\n");
}

// DIR/advise.csv and DIR/advise.png (DIR exists); the exit status.
int WriteFiles(const AdviseArgs& args, const AdviseReport& r) {
  const std::string csv_path = args.out + "/advise.csv";
  Status s = WriteCsv(csv_path, r.page_cache, r.prediction.page_cache.us_per_buffer,
                      r.prediction.rows);
  if (!s.ok()) {
    fmt::print(stderr, "ccfs advise: {}\n", s.ToString());
    return 1;
  }
  fmt::print(args.json ? stderr : stdout, "wrote {}\n", csv_path);
  std::string script = FindPlotScript(args.plot_script, "CCFS_PLOT_ADVISE_SCRIPT", "plot_advise.py");
  if (script.empty()) {
    fmt::print(stderr, "ccfs advise: no plot: plot_advise.py was not found beside the binary "
                       "(give --plot-script); {} is complete\n", csv_path);
    return 0;
  }
  std::string command;
  std::fflush(stdout);
  const int plotted =
      RunPlotScript(script, {csv_path, args.out + "/advise", r.verdict.text}, &command);
  if (plotted == kPlotNoMatplotlib) {
    fmt::print(stderr, "ccfs advise: no plot: python3-matplotlib is not installed (apt-get install "
                       "python3-matplotlib); {} is complete\n", csv_path);
    return 0;
  }
  if (plotted != 0) {
    fmt::print(stderr, "ccfs advise: plotting failed ({}); {} is complete\n", command, csv_path);
    return 1;
  }
  return 0;
}

int AdviseCommand(const AdviseArgs& args) {
  const auto started = std::chrono::steady_clock::now();
  AdviseRequest req;
  if (!BuildRequest(args, &req)) return 2;
  const bool files = args.out_option->count() > 0;
  if (files) {
    std::error_code ec;
    fs::create_directories(args.out, ec);
    if (ec) return Fail(fmt::format("--out {}: cannot create: {}", args.out, ec.message()));
  }
  AdviseReport report;
  Status s = RunAdvise(req, &report);
  if (!s.ok()) {
    if (s.code() == Status::Code::kInvalidArgument || s.code() == Status::Code::kNotFound) {
      return Fail(s.ToString());
    }
    fmt::print(stderr, "ccfs advise: {}\n", s.ToString());
    return 1;
  }
  if (args.json) {
    PrintJson(req, report,
              std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  } else {
    PrintText(req, report, files);
  }
  return files ? WriteFiles(args, report) : 0;
}

CommandRegistrar reg_advise(
    "advise",
    "predict hit ratio and µs per buffer at every split and codec, offline, in seconds",
    [](CLI::App* app) {
      auto args = std::make_shared<AdviseArgs>();
      app->footer(
          "Measures a seeded sample of DATASET's pages (each codec's ratio and µs per page both "
          "ways; O_DIRECT reads for a miss's cost) and the workload's reuse (the exact LRU stack "
          "distance of every read: --trace, or --dist with --exact; else the law's share of the "
          "hottest pages), and evaluates the model of `ccfs model` at each C% from 0 to --c-max "
          "in steps of --c-step: raw capacity T(1-C)/B, compressed T C R/B (R over the pages that "
          "compress enough, the others spread it), compressions charged per raw victim the "
          "admission filter lets through; and the page cache alone with the same memory (no FUSE "
          "trip, no compressed tier). Prints a table with each configuration's band (the "
          "model's error at the 10th and 90th percentile of the miss cost), the best split per "
          "raw tier, and a verdict: yes (ccfs is faster by more than the model's error), close, "
          "or no (use the page cache alone). With --out DIR, writes DIR/advise.csv and "
          "DIR/advise.png (plot_advise.py, which needs python3-matplotlib). Engine settings "
          "(page_size, compression_level, min_savings_percent, admission_filter, memory) come "
          "from --config and -o as for `ccfs mount`.");
      app->add_option("dataset", args->dataset, "the data set directory")->required();
      app->add_option("--trace", args->trace,
                      "a recorded trace (ccfs CSV, fio iolog v2/v3, MSR Cambridge CSV, "
                      "CloudPhysics VSCSI CSV)");
      app->add_option("--trace-format", args->trace_format, TraceFormatChoices())
          ->capture_default_str();
      args->dist_option =
          app->add_option("--dist", args->dist, "or: an access law, pareto, pareto:H, uniform or "
                                                "zipf:THETA")
              ->capture_default_str();
      app->add_option("--hot-fraction", args->hot_fraction, "pareto: hot fraction H")
          ->capture_default_str();
      app->add_flag("--exact", args->exact,
                    "--dist: hit ratios from the exact LRU curve of the law's operations (those "
                    "`ccfs replay` issues) rather than from the law");
      app->add_option("--memory", args->memory,
                      "the cache's memory T (the key memory); required unless --config or -o set "
                      "memory");
      app->add_option("--page-size", args->page_size, "page size B (default: the config's, 8KiB)");
      app->add_option("--config", args->config_file, "a ccfs.toml with the engine's settings");
      app->add_option("-o", args->option_lists, "key=value[,key=value...] engine settings");
      app->add_option("--raw-tier", args->raw_tier,
                      "daemon (every read crosses FUSE), kernel (the kernel's page cache "
                      "answers raw hits) or both")
          ->capture_default_str();
      args->trip_option = app->add_option(
          "--trip-us", args->trip_us,
          fmt::format("µs per FUSE round trip (default {:g}, assumed: bench/fuse_rtt's null-FUSE "
                      "trip on a 2-vCPU VM)",
                      kAssumedTripUs));
      args->kernel_hit_option = app->add_option(
          "--kernel-hit-us", args->kernel_hit_us,
          "µs per read the kernel's page cache answers (default: measured)");
      args->disk_option = app->add_option(
          "--disk-us", args->disk_us, "µs per miss (default: measured, the median of the sample's O_DIRECT reads)");
      app->add_option("--c-step", args->c_step, "step of C%, 1..95")->capture_default_str();
      app->add_option("--c-max", args->c_max, "largest C%, 0..95")->capture_default_str();
      app->add_option("--ops", args->ops,
                      "reads to profile (default: a law 200000, as ccfs replay; a trace its "
                      "length)");
      app->add_option("--warmup", args->warmup,
                      "operations before them (default: as ccfs replay, 3x the memory in pages)");
      app->add_option("--seed", args->seed, "seed of the law's operations and of the page sample")
          ->capture_default_str();
      app->add_option("--sample-pages", args->sample_pages, "pages sampled for the codecs")
          ->capture_default_str();
      app->add_flag("--json", args->json,
                    "print one JSON object (with the hit-ratio curve)");
      args->out_option = app->add_option(
          "--out", args->out, "directory for advise.csv and advise.png (created; default: none)");
      app->add_option("--plot-script", args->plot_script, "path of plot_advise.py");
      return [args] { return AdviseCommand(*args); };
    });

}  // namespace
}  // namespace ccfs
