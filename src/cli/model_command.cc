// `ccfs model`: the thesis's hit-ratio and µs-per-buffer model (model/cache_model.h), with the FUSE
// trip of the raw-tier mode given, for given inputs, as a table over compressed_percent or for one
// split. Logic: model/model_table.h.
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cache/model_facts.h"
#include "ccfs/config.h"
#include "cli/command.h"
#include "model/cache_model.h"
#include "model/model_table.h"
#include "trace/dataset.h"

namespace ccfs {
namespace {

struct ModelArgs {
  std::string memory = "256MiB";
  std::string page_size = kDefaultPageSize;
  std::string dataset_size;
  std::string dataset_dir;
  std::string compressor = "lz4";
  double ratio = 0;  // unless given: the thesis's for the codec
  const CLI::Option* ratio_option = nullptr;
  std::string dist = kDefaultDist;
  double hot_fraction = 0.2;
  std::vector<int> percents;
  // Per-path costs and the transport; each option tells whether it was given.
  double hit_us = 0, decompress_us = 0, compress_us = 0, disk_us = 0;
  double trip_us = 0, kernel_hit_us = 0;
  const CLI::Option* hit_option = nullptr;
  const CLI::Option* decompress_option = nullptr;
  const CLI::Option* compress_option = nullptr;
  const CLI::Option* disk_option = nullptr;
  const CLI::Option* trip_option = nullptr;
  const CLI::Option* kernel_hit_option = nullptr;
  std::string raw_tier = "daemon";
  std::string replacement = "oracle";
  bool json = false;
};

int ModelFail(const std::string& message) {
  fmt::print(stderr, "ccfs model: {}\n", message);
  return 2;
}

// A cost, if given: a finite number of µs, 0 or more. False (after saying why) if it was given and
// is not; *out is left alone if it was not given.
bool GivenCost(const CLI::Option* option, double value, std::optional<double>* out) {
  if (option == nullptr || option->count() == 0) return true;
  if (!std::isfinite(value) || value < 0) {
    ModelFail(fmt::format("{} {}: must be a number of µs, 0 or more", option->get_name(), value));
    return false;
  }
  *out = value;
  return true;
}

// The sizes: memory, page and data set (counted in a directory, or given). False after saying why.
bool Sizes(const ModelArgs& args, ModelRequest* req) {
  Status s = ParseSize(args.memory, &req->memory_bytes);
  if (!s.ok()) return ModelFail("--memory " + args.memory + ": " + s.ToString()), false;
  uint64_t page = 0;
  s = ParseSize(args.page_size, &page);
  if (!s.ok() || page < 512 || page > (1u << 20)) {
    return ModelFail("--page-size " + args.page_size + ": " +
                (s.ok() ? "must be 512 B..1 MiB" : s.ToString())),
           false;
  }
  req->page_size = static_cast<uint32_t>(page);
  if (!args.dataset_dir.empty()) {
    Dataset dataset;
    if (!(s = Dataset::Open(args.dataset_dir, req->page_size, &dataset)).ok()) {
      return ModelFail(s.ToString()), false;
    }
    req->dataset_pages = dataset.pages();
  } else if (!args.dataset_size.empty()) {
    uint64_t bytes = 0;
    if (!(s = ParseSize(args.dataset_size, &bytes)).ok() || bytes == 0) {
      return ModelFail("--dataset-size " + args.dataset_size + ": " +
                  (s.ok() ? "must be above 0" : s.ToString())),
             false;
    }
    req->dataset_pages = (bytes + page - 1) / page;
  } else {
    return ModelFail("give --dataset-size SIZE or --dataset DIR"), false;
  }
  return true;
}

// The request from the arguments; false (after saying why) if they make none.
bool BuildRequest(const ModelArgs& args, ModelRequest* req) {
  if (!Sizes(args, req)) return false;
  if (!ParseCodecKind(args.compressor, &req->codec)) {
    return ModelFail("--compressor " + args.compressor + ": lz4 or zstd"), false;
  }
  if (args.ratio_option != nullptr && args.ratio_option->count() > 0) {
    if (!std::isfinite(args.ratio) || args.ratio < 1) {
      ModelFail(fmt::format("--ratio {}: must be 1 or more (uncompressed size over compressed)",
                            args.ratio));
      return false;
    }
    req->ratio = args.ratio;
  }
  req->assumed_trip_us = kAssumedTripUs;
  if (!ParseRawTierMode(args.raw_tier, &req->raw_tier)) {
    return ModelFail("--raw-tier " + args.raw_tier + ": daemon or kernel"), false;
  }
  if (!GivenCost(args.hit_option, args.hit_us, &req->hit_us) ||
      !GivenCost(args.decompress_option, args.decompress_us, &req->decompress_us) ||
      !GivenCost(args.compress_option, args.compress_us, &req->compress_us) ||
      !GivenCost(args.disk_option, args.disk_us, &req->disk_us) ||
      !GivenCost(args.trip_option, args.trip_us, &req->trip_us)) {
    return false;
  }
  if (args.kernel_hit_option != nullptr && args.kernel_hit_option->count() > 0 &&
      req->raw_tier != RawTierMode::kKernel) {
    return ModelFail("--kernel-hit-us: only --raw-tier kernel has kernel hits"), false;
  }
  if (!GivenCost(args.kernel_hit_option, args.kernel_hit_us, &req->kernel_hit_us)) return false;
  Status s = ParseDistSpec(args.dist, args.hot_fraction, &req->dist);
  if (!s.ok()) return ModelFail(s.ToString()), false;
  if (!ParseReplacement(args.replacement, &req->replacement)) {
    return ModelFail("--replacement " + args.replacement + ": oracle, lru, fifo or gclock"), false;
  }
  req->clock = cache::EngineClockFacts();
  for (int c : args.percents) {
    if (c < 0 || c > 95) {
      ModelFail(fmt::format("--compressed-percent {}: must be 0..95", c));
      return false;
    }
  }
  req->percents = args.percents;
  return true;
}

void PrintText(const ModelReport& report) {
  const ModelInputs& in = report.inputs;
  fmt::print("model: {} of memory, {} pages of {} ({}), {} access, ratio {:.2f}x\n",
             FormatSize(in.memory_bytes), in.dataset_pages, FormatSize(in.page_size),
             FormatSize(in.dataset_pages * in.page_size), in.dist.ToString(), in.ratio);
  fmt::print("costs: hit {:g} µs, decompress {:g} µs, compress {:g} µs, disk {:g} µs\n",
             in.costs.hit_us, in.costs.decompress_us, in.costs.compress_us, in.costs.disk_us);
  if (in.raw_tier == RawTierMode::kKernel) {
    fmt::print("transport: raw tier in the kernel's page cache: a raw hit is a kernel hit, {:g} "
               "µs, no trip; other reads pay a trip of {:g} µs\n",
               in.costs.kernel_hit_us, in.costs.trip_us);
  } else {
    fmt::print("transport: raw tier in the daemon: every read pays a trip of {:g} µs\n",
               in.costs.trip_us);
  }
  fmt::print("{:>4} {:>9} {:>8} {:>8} {:>8} {:>8} {:>10} {:>8}\n", "C%", "capacity", "hit",
             "raw", "compr", "miss", "µs/buffer", "of trip");
  for (const ModelRow& row : report.rows) {
    const ModelResult& m = row.result;
    fmt::print("{:>4} {:>8.1f}% {:>7.1f}% {:>7.1f}% {:>7.1f}% {:>7.1f}% {:>10.2f} {:>8.2f}\n",
               row.percent, 100 * m.capacity_fraction, 100 * m.hit_ratio, 100 * m.raw_hit_ratio,
               100 * m.compressed_hit_ratio, 100 * m.miss_ratio, m.us_per_buffer,
               m.trip_us_per_buffer);
  }
}

void PrintJson(const ModelReport& report) {
  const ModelInputs& in = report.inputs;
  nlohmann::json rows = nlohmann::json::array();
  for (const ModelRow& row : report.rows) {
    const ModelResult& m = row.result;
    rows.push_back({{"compressed_percent", row.percent},
                    {"capacity_fraction", m.capacity_fraction},
                    {"hit_ratio", m.hit_ratio},
                    {"raw_hit_ratio", m.raw_hit_ratio},
                    {"compressed_hit_ratio", m.compressed_hit_ratio},
                    {"miss_ratio", m.miss_ratio},
                    {"us_per_buffer", m.us_per_buffer},
                    {"trip_us_per_buffer", m.trip_us_per_buffer}});
  }
  nlohmann::json j = {{"memory_bytes", in.memory_bytes},
                      {"page_size", in.page_size},
                      {"dataset_pages", in.dataset_pages},
                      {"dist", in.dist.ToString()},
                      {"ratio", in.ratio},
                      {"raw_tier", RawTierModeName(in.raw_tier)},
                      {"replacement", ReplacementName(in.raw_replacement)},
                      {"costs_us",
                       {{"hit", in.costs.hit_us},
                        {"decompress", in.costs.decompress_us},
                        {"compress", in.costs.compress_us},
                        {"disk", in.costs.disk_us},
                        {"trip", in.costs.trip_us},
                        {"kernel_hit", in.raw_tier == RawTierMode::kKernel
                                           ? nlohmann::json(in.costs.kernel_hit_us)
                                           : nlohmann::json(nullptr)}}},
                      {"rows", rows}};
  fmt::print("{}\n", j.dump());
}

int ModelCommand(const ModelArgs& args) {
  ModelRequest req;
  if (!BuildRequest(args, &req)) return 2;
  const ModelReport report = RunModel(req);
  if (args.json) {
    PrintJson(report);
  } else {
    PrintText(report);
  }
  return 0;
}

CommandRegistrar reg_model(
    "model",
    "print the thesis's hit-ratio and µs-per-buffer model, FUSE trip included, for given inputs",
    [](CLI::App* app) {
      auto args = std::make_shared<ModelArgs>();
      app->footer(
          "hit ratio = S((T(1-C) + T C R) / B), S the share of accesses to that many hottest "
          "pages (the cached fraction under uniform access); µs per buffer = h_raw t_hit + "
          "h_comp (t_decompress + t_compress) + miss (t_disk + t_compress), no compression "
          "charged at C = 0; plus the FUSE trip: with --raw-tier daemon every read pays t_trip; "
          "with --raw-tier kernel the kernel's page cache holds the raw share T(1-C) and a raw hit "
          "costs t_kernel_hit and no trip, while compressed hits and misses pay t_trip. Costs and "
          "ratio default to the thesis's figures for the codec, a kernel hit costing a raw hit, and "
          "the trip to the one `ccfs advise` assumes (--trip-us 0: the thesis's cache, in the "
          "reader's process). `ccfs replay` through a mount measures all of them in one run (its "
          "--json costs_us).");
      app->add_option("--memory", args->memory, "cache memory T")->capture_default_str();
      app->add_option("--page-size", args->page_size, "page size B")->capture_default_str();
      app->add_option("--dataset-size", args->dataset_size,
                      "data set size (N = size / B); this or --dataset is required");
      app->add_option("--dataset", args->dataset_dir, "or: a data set directory to count");
      app->add_option("--compressor", args->compressor,
                      "lz4 or zstd, as the key compressor (default costs and ratio)")
          ->capture_default_str();
      args->ratio_option =
          app->add_option("--ratio", args->ratio, "compression ratio R (default: the thesis's)");
      app->add_option("--dist", args->dist, "pareto, pareto:H, uniform or zipf:THETA")
          ->capture_default_str();
      app->add_option("--hot-fraction", args->hot_fraction, "pareto: hot fraction H")
          ->capture_default_str();
      app->add_option("--compressed-percent", args->percents,
                      "split(s) to evaluate (default 0, 10, ..., 90)");
      // The --t-* names are the older spellings, kept working.
      args->hit_option = app->add_option("--hit-us,--t-hit", args->hit_us,
                                         "µs per raw hit (default: the codec's thesis cost)");
      args->decompress_option = app->add_option("--decompress-us,--t-decompress",
                                                args->decompress_us, "µs per decompression");
      args->compress_option =
          app->add_option("--compress-us,--t-compress", args->compress_us, "µs per compression");
      args->disk_option = app->add_option("--disk-us,--t-disk", args->disk_us,
                                          "µs per miss (the backing store's read)");
      app->add_option("--raw-tier", args->raw_tier,
                      "where raw pages live: daemon (every read crosses FUSE) or kernel (the "
                      "kernel's page cache answers raw hits)")
          ->capture_default_str();
      args->trip_option = app->add_option(
          "--trip-us", args->trip_us,
          fmt::format("µs per FUSE round trip beyond the daemon's own handling (default {:g}, "
                      "as ccfs advise: bench/fuse_rtt's null-FUSE trip on a 2-vCPU VM)",
                      kAssumedTripUs));
      args->kernel_hit_option = app->add_option(
          "--kernel-hit-us", args->kernel_hit_us,
          "--raw-tier kernel: µs per read the kernel's page cache answers (default: the raw "
          "hit's)");
      app->add_option("--replacement", args->replacement,
                      "how S(k) is read: oracle (the k hottest pages are cached: the thesis's), "
                      "lru (Che's approximation of LRU), fifo (a FIFO raw level over LRU: "
                      "raw_tier = kernel with kernel_evict) or gclock (ccfs's raw CLOCK with the "
                      "frequency sketch's credit and its compressed tier's second-hit promotion)")
          ->capture_default_str();
      app->add_flag("--json", args->json, "print JSON");
      return [args] { return ModelCommand(*args); };
    });

}  // namespace
}  // namespace ccfs
