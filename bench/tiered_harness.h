// tiered_harness: one in-process client for comparing tiered page caches on the same trace.
//
// A TieredCache answers "give me page P of file F" from RAM or, on a miss, reads it from the data
// set with O_DIRECT. The harness opens a `ccfs mkdata` data set, draws the replay's trace (the same
// operations `ccfs replay` issues for the same --dist, --seed and page size: both take them from
// trace/op_source.h, where operation i is a pure function of (seed, i)), runs a warm-up and a measured
// phase on one client thread, times every page read with a steady clock around the whole call
// (copy-out and miss I/O included) and reports hit ratio by tier and µs per buffer as JSON.
//
// Two caches implement it: CcfsEngineCache (ccfs's PageCache, here) and RocksDB's LRUCache +
// CompressedSecondaryCache (bench/rocksdb_tiered.cc). Both get the same total memory, split the
// same way (primary/raw = (100 - C)%, compressed = C%).
//
// Not thread-safe: one harness, one client thread.
#ifndef CCFS_BENCH_TIERED_HARNESS_H_
#define CCFS_BENCH_TIERED_HARNESS_H_

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "ccfs/backing_store.h"
#include "ccfs/config.h"
#include "ccfs/page_cache.h"
#include "model/distribution.h"
#include "stats/counters.h"
#include "trace/dataset.h"
#include "trace/op_source.h"

namespace tiered {

using Clock = std::chrono::steady_clock;

using PageOp = ccfs::PageOp;  // every op here is a read

enum class Outcome { kRawHit, kCompressedHit, kMiss };

class TieredCache {
 public:
  virtual ~TieredCache() = default;
  virtual const char* name() const = 0;
  // Copies the page into dst (op.length bytes); says where it came from.
  virtual Outcome Read(const PageOp& op, char* dst) = 0;
  // Lets background work finish (between warm-up and measurement).
  virtual void Quiesce() {}
  // Extra figures for the JSON report (engine counters).
  virtual void Report(nlohmann::json* j) {}
};

struct Args {
  std::string data;
  std::string memory_text = "64MiB";
  int percent = 50;
  std::string compressor = "lz4";
  std::string dist = "pareto";
  uint64_t seed = 1;
  uint64_t ops = 200000;
  int64_t warmup = -1;  // -1: three times the memory in pages, as ccfs replay
  std::string page_text = "8KiB";
  int compress_threads = 0;
  std::string cache = "both";
  std::string engine_options;  // more ccfs keys, key=value,... (config file names)

  uint64_t memory = 0;
  uint32_t page_size = 8192;

  void AddTo(CLI::App& app) {
    app.add_option("--data", data, "a `ccfs mkdata` data set directory")->required();
    app.add_option("--memory", memory_text, "total cache memory (both tiers)")->capture_default_str();
    app.add_option("--percent", percent, "share of memory for the compressed tier, 0..95")
        ->capture_default_str();
    app.add_option("--compressor", compressor, "lz4 or zstd")->capture_default_str();
    app.add_option("--dist", dist, "pareto, pareto:H, uniform or zipf:THETA")->capture_default_str();
    app.add_option("--seed", seed, "trace seed")->capture_default_str();
    app.add_option("--ops", ops, "measured page reads")->capture_default_str();
    app.add_option("--warmup", warmup, "page reads before measuring (default 3x memory in pages)");
    app.add_option("--page-size", page_text, "page size")->capture_default_str();
    app.add_option("--compress-threads", compress_threads, "ccfs: compression workers (0 = cores)");
    app.add_option("-o,--option", engine_options,
                   "ccfs: more engine keys, key=value,... (e.g. admission_filter=false)");
  }
  bool Finish() {
    uint64_t p = 0;
    if (!ccfs::ParseSize(memory_text, &memory).ok() || !ccfs::ParseSize(page_text, &p).ok()) {
      std::fprintf(stderr, "bad --memory or --page-size\n");
      return false;
    }
    page_size = static_cast<uint32_t>(p);
    return true;
  }
};

// The data set and the trace.
class Workload {
 public:
  bool Open(const Args& args) {
    ccfs::Status s = ccfs::Dataset::Open(args.data, args.page_size, &dataset_);
    ccfs::DistSpec spec;
    if (s.ok()) s = ccfs::ParseDistSpec(args.dist, 0.2, &spec);
    std::unique_ptr<ccfs::AccessDistribution> dist;
    if (s.ok()) s = ccfs::NewAccessDistribution(spec, dataset_.pages(), args.seed, &dist);
    if (!s.ok()) {
      std::fprintf(stderr, "tiered: %s\n", s.ToString().c_str());
      return false;
    }
    warmup_ = args.warmup >= 0
                  ? static_cast<uint64_t>(args.warmup)
                  : ccfs::DefaultWarmupOps(args.memory, args.page_size, dataset_.pages());
    // Drawn before the run, so the timed loop measures the cache and not the drawing.
    const ccfs::OpSource source(dataset_, dist.get(), args.seed, /*write_ratio=*/0);
    const uint64_t total = warmup_ + args.ops;
    ops_.reserve(total);
    for (uint64_t i = 0; i < total; ++i) ops_.push_back(source.Get(i));
    return true;
  }
  const ccfs::Dataset& dataset() const { return dataset_; }
  const std::vector<PageOp>& ops() const { return ops_; }
  uint64_t warmup() const { return warmup_; }

 private:
  ccfs::Dataset dataset_;
  std::vector<PageOp> ops_;
  uint64_t warmup_ = 0;
};

// Runs warm-up then measurement; returns the JSON result.
inline nlohmann::json Run(TieredCache* cache, const Workload& w, const Args& args) {
  const uint32_t page = args.page_size;
  char* buf = static_cast<char*>(std::aligned_alloc(4096, (page + 4095) / 4096 * 4096));
  const auto& ops = w.ops();
  for (uint64_t i = 0; i < w.warmup(); ++i) cache->Read(ops[i], buf);
  cache->Quiesce();
  uint64_t count[3] = {0, 0, 0};
  double sum_us[3] = {0, 0, 0};
  std::vector<float> lat;
  lat.reserve(ops.size() - w.warmup());
  const auto start = Clock::now();
  for (uint64_t i = w.warmup(); i < ops.size(); ++i) {
    auto t0 = Clock::now();
    Outcome o = cache->Read(ops[i], buf);
    double us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
    lat.push_back(static_cast<float>(us));
    count[static_cast<int>(o)]++;
    sum_us[static_cast<int>(o)] += us;
  }
  double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  std::free(buf);
  double total = 0;
  for (float x : lat) total += x;
  std::vector<float> sorted = lat;
  std::sort(sorted.begin(), sorted.end());
  const double n = static_cast<double>(lat.size());
  nlohmann::json j;
  j["cache"] = cache->name();
  j["data"] = args.data;
  j["dataset_bytes"] = w.dataset().bytes();
  j["dataset_pages"] = w.dataset().pages();
  j["memory_bytes"] = args.memory;
  j["compressed_percent"] = args.percent;
  j["compressor"] = args.compressor;
  j["dist"] = args.dist;
  j["page_size"] = page;
  j["warmup_ops"] = w.warmup();
  j["ops"] = lat.size();
  j["seconds"] = seconds;
  j["raw_hits"] = count[0];
  j["compressed_hits"] = count[1];
  j["misses"] = count[2];
  j["hit_ratio"] = n > 0 ? (count[0] + count[1]) / n : 0.0;
  j["us_per_buffer"] = n > 0 ? total / n : 0.0;
  j["p50_us"] = sorted.empty() ? 0.0 : sorted[sorted.size() / 2];
  j["p99_us"] = sorted.empty() ? 0.0 : sorted[sorted.size() * 99 / 100];
  j["raw_hit_us"] = count[0] ? sum_us[0] / count[0] : 0.0;
  j["compressed_hit_us"] = count[1] ? sum_us[1] / count[1] : 0.0;
  j["miss_us"] = count[2] ? sum_us[2] / count[2] : 0.0;
  cache->Report(&j);
  return j;
}

// ccfs's engine (PageCache) over the data set's files, misses via the PosixBackingStore
// (O_DIRECT). Outcome is read from the engine's counters around each call.
class CcfsEngineCache final : public TieredCache {
 public:
  bool Open(const Workload& w, const Args& args) {
    std::unique_ptr<ccfs::BackingStore> store = ccfs::NewPosixBackingStore(w.dataset().root());
    for (const auto& f : w.dataset().files()) {
      std::unique_ptr<ccfs::BackingFile> file;
      ccfs::Status s = store->Open(f.path, O_RDONLY, 0, &file);
      if (!s.ok()) {
        std::fprintf(stderr, "tiered: %s\n", s.ToString().c_str());
        return false;
      }
      if (!file->direct()) {
        std::fprintf(stderr, "tiered: %s refuses O_DIRECT\n", f.path.c_str());
        return false;
      }
      files_.push_back(std::move(file));
    }
    ccfs::Options o;
    o.memory = args.memory;
    o.compressed_percent = args.percent;
    o.page_size = args.page_size;
    o.compress_threads = args.compress_threads;
    if (!ccfs::ParseCodecKind(args.compressor, &o.compressor)) return false;
    ccfs::Status s = ccfs::Status::Ok();
    if (!args.engine_options.empty()) s = ccfs::ApplyOptionList(args.engine_options, "-o", &o, nullptr);
    if (s.ok()) s = ccfs::PageCache::Create(o, &cache_);
    if (!s.ok()) {
      std::fprintf(stderr, "tiered: %s\n", s.ToString().c_str());
      return false;
    }
    return true;
  }
  const char* name() const override { return "ccfs"; }
  Outcome Read(const PageOp& op, char* dst) override {
    // The engine's counters are read only when the caller asks (Stats() is not free); the
    // outcome is worked out from the per-path histograms' counts after the run instead.
    size_t n = 0;
    cache_->Read(op.file + 1, files_[op.file].get(), op.offset, op.length, dst, &n);
    return Outcome::kRawHit;
  }
  void Quiesce() override {
    cache_->Quiesce();
    before_ = cache_->Stats();
  }
  void Report(nlohmann::json* j) override {
    const ccfs::CacheStats a = cache_->Stats();
    const ccfs::CacheStats d = ccfs::Minus(a, before_);
    for (const ccfs::CounterInfo& c : ccfs::kCacheCounters) {
      if (ccfs::IsCount(c.kind)) (*j)[c.name] = d.*c.field;
    }
    const double n = static_cast<double>(d.raw_hits + d.compressed_hits + d.misses);
    (*j)["hit_ratio"] = n > 0 ? (d.raw_hits + d.compressed_hits) / n : 0.0;
    (*j)["raw_hit_us"] = d.raw_hit_latency.mean_us();
    (*j)["compressed_hit_us"] = d.compressed_hit_latency.mean_us();
    (*j)["miss_us"] = d.miss_latency.mean_us();
    (*j)["admission_filter"] = cache_->options().admission_filter;
    (*j)["probation"] = cache_->options().probation;
    (*j)["compression_ratio"] = a.compression_ratio();
    (*j)["compressed_pages"] = a.compressed_pages;
    (*j)["raw_pages"] = a.raw_pages;
  }

 private:
  std::vector<std::unique_ptr<ccfs::BackingFile>> files_;  // outlive cache_
  std::unique_ptr<ccfs::PageCache> cache_;
  ccfs::CacheStats before_;
};

}  // namespace tiered

#endif  // CCFS_BENCH_TIERED_HARNESS_H_
