// mrc_accuracy: how close the miss-ratio curve (cache/mrc.h, SHARDS) comes to the exact
// LRU curve on the replay's own traces, and what it costs per read: the measurement that chose it.
//
// For each law of --dist, the trace is trace/op_source.h's for --seed over a data set: a `ccfs
// mkdata` directory (--data, so pages and operations are exactly those of `ccfs replay` with the
// same --seed, --page-size and --warmup) or a synthetic one of --pages pages (no I/O). Pages are
// named as the engine names them (file index + 1, page number) and hashed with HashPageKey. Reads
// [0, warmup) only warm the structures; the curves cover the reads after.
//
// Curves, over the grid C x 2^(i/4), i = -24..8 (1/64 to 4x the capacity C, --capacity pages; by
// default --memory / page size):
//   exact   LRU, from the stack distance of every read (ExactLruCurve);
//   rate=R  MissRatioCurve at a fixed rate R (no bound on tracked pages), each of --rates;
//   keys=S  MissRatioCurve fixed-size: rate 1 lowered to keep at most S pages (each of
//           --max-keys);
//   engine  what the engine runs (Config::ForCache(C): 8192 keys, rate at most 1/2), not aged;
//   ghost   a ghost list: an LRU list of the 4C most recently read pages cut into segments at the
//           grid's sizes (ARC's ghost lists generalised to a curve), tracking every read: exact at
//           the grid's points, its cost is the question.
// Each line: the largest and the mean absolute error over the grid, in points of hit ratio (0-100),
// against exact; the same without SHARDS_adj (samples normalised by their own weight) for the
// sampled ones; ns per read on one thread (hash included; `hash` is the hash alone), samples, the
// final rate and tracked pages. --threads T also records the trace on T threads at once (each
// thread a share of it; lines "engine xT/S", aged as in the engine), back to back and with
// --spacing-ns between one thread's reads, to show the cost under contention and the samples
// dropped.
//
//   mrc_accuracy [--data DIR | --pages N] [--dist pareto,uniform,zipf:0.9] [--ops N] [--warmup N]
//                [--memory 32MiB | --capacity PAGES] [--rates 0.001,0.01,0.1]
//                [--max-keys 2048,8192,32768] [--threads 2] [--json FILE]
//
// With --engine-hit C1=H1,... (hit ratios measured by `ccfs replay --engine` at capacities of C
// pages on the same trace), each estimate is also compared with them (the engine is not LRU).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <list>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "cache/mrc.h"
#include "cache/page_entry.h"
#include "ccfs/config.h"
#include "model/distribution.h"
#include "trace/dataset.h"
#include "trace/op_source.h"

namespace {

using Clock = std::chrono::steady_clock;
using ccfs::cache::MissRatioCurve;

std::vector<std::string> Split(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

// A ghost list giving a curve: the LRU order of the `sizes.back()` most recently read pages, cut
// into segments at each size. A read found in segment j hit every size above that segment's
// start. Every read is tracked (no sampling): a hash map lookup, a move to the front and a cascade
// of one page per segment boundary crossed.
class GhostCurve {
 public:
  explicit GhostCurve(const std::vector<uint64_t>& sizes)
      : sizes_(sizes), segments_(sizes.size()), hits_(sizes.size(), 0) {}

  void Record(uint64_t hash, bool count) {
    reads_ += count;
    auto it = map_.find(hash);
    size_t from = segments_.size();  // the segment it was found in (none: past the last)
    if (it != map_.end()) {
      from = it->second.segment;
      if (count) {
        // Found at depth < sizes_[from]: a hit at that size and every larger one.
        for (size_t j = from; j < hits_.size(); ++j) hits_[j]++;
      }
      segments_[from].erase(it->second.pos);
      counts_[from]--;
    } else {
      it = map_.emplace(hash, Where{}).first;
    }
    segments_[0].push_front(hash);
    it->second = Where{0, segments_[0].begin()};
    counts_[0]++;
    // Segment j holds the pages at depth [sizes_[j-1], sizes_[j]); push the overflow down.
    for (size_t j = 0; j < segments_.size() && j <= from; ++j) {
      const uint64_t width = sizes_[j] - (j == 0 ? 0 : sizes_[j - 1]);
      if (counts_[j] <= width) break;
      const uint64_t tail = segments_[j].back();
      segments_[j].pop_back();
      counts_[j]--;
      if (j + 1 == segments_.size()) {
        map_.erase(tail);
      } else {
        segments_[j + 1].push_front(tail);
        map_[tail] = Where{j + 1, segments_[j + 1].begin()};
        counts_[j + 1]++;
      }
    }
  }
  std::vector<double> HitRatios() const {
    std::vector<double> out;
    for (uint64_t h : hits_) out.push_back(reads_ ? static_cast<double>(h) / reads_ : 0.0);
    return out;
  }

 private:
  struct Where {
    size_t segment = 0;
    std::list<uint64_t>::iterator pos;
  };
  std::vector<uint64_t> sizes_;  // distinct, ascending
  std::vector<std::list<uint64_t>> segments_;
  std::vector<uint64_t> counts_ = std::vector<uint64_t>(sizes_.size(), 0);
  std::unordered_map<uint64_t, Where> map_;
  std::vector<uint64_t> hits_;
  uint64_t reads_ = 0;
};

// Absolute errors in points of hit ratio: the largest over the grid, the largest over the sizes
// from C/4 to 4C (where the split between tiers moves the effective size), the mean.
struct Error {
  double max = 0, max_mid = 0, mean = 0;
};
Error Compare(const std::vector<double>& est, const std::vector<double>& exact,
              const std::vector<uint64_t>& sizes, uint64_t capacity) {
  Error e;
  for (size_t i = 0; i < est.size(); ++i) {
    const double d = std::abs(est[i] - exact[i]) * 100;
    e.max = std::max(e.max, d);
    if (4 * sizes[i] >= capacity) e.max_mid = std::max(e.max_mid, d);
    e.mean += d / est.size();
  }
  return e;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"mrc_accuracy: the miss-ratio curve against exact LRU, and its cost"};
  std::string data, dists = "pareto,uniform,zipf:0.9", memory_text = "32MiB", page_text = "8KiB";
  std::string rates_text = "0.001,0.01,0.1", keys_text = "2048,8192,32768", json_path;
  std::string engine_hit_text;
  uint64_t pages = 16384, ops = 1000000, capacity = 0, seed = 1;
  int64_t warmup = -1;
  int threads = 2, spacing_ns = 1000;
  app.add_option("--data", data, "a `ccfs mkdata` data set (default: synthetic, --pages pages)");
  app.add_option("--pages", pages, "synthetic data set: pages")->capture_default_str();
  app.add_option("--dist", dists, "laws, comma-separated")->capture_default_str();
  app.add_option("--ops", ops, "reads after the warm-up")->capture_default_str();
  app.add_option("--warmup", warmup, "reads before (default: 3x the capacity, as ccfs replay)");
  app.add_option("--seed", seed, "trace seed")->capture_default_str();
  app.add_option("--memory", memory_text, "cache memory: C = memory / page size")
      ->capture_default_str();
  app.add_option("--capacity", capacity, "C in pages (instead of --memory)");
  app.add_option("--page-size", page_text, "page size")->capture_default_str();
  app.add_option("--rates", rates_text, "fixed sampling rates")->capture_default_str();
  app.add_option("--max-keys", keys_text, "fixed-size bounds (s_max)")->capture_default_str();
  app.add_option("--threads", threads, "threads for the contention run (0: none)")
      ->capture_default_str();
  app.add_option("--spacing-ns", spacing_ns, "contention run: ns between one thread's reads")
      ->capture_default_str();
  app.add_option("--engine-hit", engine_hit_text,
                 "PAGES=HIT,...: hit ratios `ccfs replay --engine` measured (first law only)");
  app.add_option("--json", json_path, "write the curves here");
  CLI11_PARSE(app, argc, argv);

  uint64_t memory = 0, page_size = 0;
  if (!ccfs::ParseSize(memory_text, &memory).ok() || !ccfs::ParseSize(page_text, &page_size).ok()) {
    fmt::print(stderr, "mrc_accuracy: bad --memory or --page-size\n");
    return 2;
  }
  if (capacity == 0) capacity = memory / page_size;
  const auto page_bytes = static_cast<uint32_t>(page_size);

  ccfs::Dataset dataset;
  if (!data.empty()) {
    ccfs::Status s = ccfs::Dataset::Open(data, page_bytes, &dataset);
    if (!s.ok()) {
      fmt::print(stderr, "mrc_accuracy: {}\n", s.ToString());
      return 1;
    }
  } else {
    dataset = ccfs::Dataset::FromFiles("synthetic", page_bytes, {{"pages", pages * page_size}});
  }
  const uint64_t warm = warmup >= 0 ? static_cast<uint64_t>(warmup)
                                    : ccfs::DefaultWarmupOps(capacity * page_size, page_bytes,
                                                             dataset.pages());

  std::vector<uint64_t> sizes;
  for (int i = -24; i <= 8; ++i) {
    const auto k = static_cast<uint64_t>(std::llround(capacity * std::exp2(i / 4.0)));
    if (k >= 1 && (sizes.empty() || k > sizes.back())) sizes.push_back(k);
  }
  std::vector<std::pair<uint64_t, double>> engine_hits;
  for (const std::string& item : Split(engine_hit_text)) {
    const size_t eq = item.find('=');
    if (eq == std::string::npos) {
      fmt::print(stderr, "mrc_accuracy: --engine-hit wants PAGES=HIT, got {}\n", item);
      return 2;
    }
    engine_hits.emplace_back(std::stoull(item.substr(0, eq)), std::stod(item.substr(eq + 1)));
  }

  fmt::print("data set {} pages ({}), C = {} pages, grid {}..{} ({} sizes), warm-up {}, {} reads "
             "measured\n",
             dataset.pages(), data.empty() ? "synthetic" : data, capacity, sizes.front(),
             sizes.back(), sizes.size(), warm, ops);
  fmt::print("{:<10} {:<12} {:>8} {:>8} {:>8} {:>9} {:>9} {:>8} {:>9} {:>6} {:>7}\n", "law",
             "estimator", "max_err", "C/4..4C", "mean_err", "max_noadj", "ns/read", "samples",
             "rate", "keys", "drops");
  nlohmann::json report = nlohmann::json::array();
  bool first_law = true;
  for (const std::string& law : Split(dists)) {
    ccfs::DistSpec spec;
    std::unique_ptr<ccfs::AccessDistribution> dist;
    ccfs::Status s = ccfs::ParseDistSpec(law, 0.2, &spec);
    if (s.ok()) s = ccfs::NewAccessDistribution(spec, dataset.pages(), seed, &dist);
    if (!s.ok()) {
      fmt::print(stderr, "mrc_accuracy: {}\n", s.ToString());
      return 2;
    }
    const ccfs::OpSource source(dataset, dist.get(), seed, 0);
    const uint64_t total = warm + ops;
    std::vector<ccfs::cache::PageKey> keys(total);
    std::vector<uint64_t> hashes(total);
    ccfs::cache::ExactLruCurve exact_lru(total);
    for (uint64_t i = 0; i < total; ++i) {
      const ccfs::PageOp op = source.Get(i);
      keys[i] = ccfs::cache::PageKey{op.file + 1ull, op.offset / page_size};
      hashes[i] = ccfs::cache::HashPageKey(keys[i]);
      exact_lru.Record(dataset.files()[op.file].first_page + op.offset / page_size, i >= warm);
    }
    const std::vector<double> exact = exact_lru.HitRatios(sizes);
    auto ns_per = [](Clock::time_point start, double reads) {
      return std::chrono::duration<double, std::nano>(Clock::now() - start).count() / reads;
    };

    // The hash alone, as the engine computes it on every read.
    auto start = Clock::now();
    uint64_t sink = 0;
    for (uint64_t i = 0; i < total; ++i) sink += ccfs::cache::HashPageKey(keys[i]);
    fmt::print("{:<10} {:<12} {:>8} {:>8} {:>8} {:>9} {:>9.1f}{}\n", law, "hash", "", "", "", "",
               ns_per(start, total), sink == 42 ? " " : "");

    nlohmann::json jl{{"law", law}, {"sizes", sizes}, {"exact", exact}};
    // One line of the table (and of the JSON); noadj_max < 0 and c == nullptr leave those out.
    auto line = [&](const std::string& name, const std::vector<double>& est, double noadj_max,
                    double ns, const MissRatioCurve::Counts* c) {
      const Error e = Compare(est, exact, sizes, capacity);
      fmt::print("{:<10} {:<12} {:>8.2f} {:>8.2f} {:>8.2f} {:>9} {:>9.1f}", law, name, e.max,
                 e.max_mid, e.mean, noadj_max >= 0 ? fmt::format("{:.2f}", noadj_max) : "", ns);
      if (c) fmt::print(" {:>8} {:>9.6f} {:>6} {:>7}", c->samples, c->rate, c->keys, c->drops);
      fmt::print("\n");
      nlohmann::json j{{"estimator", name}, {"max_err", e.max},   {"max_err_mid", e.max_mid},
                       {"mean_err", e.mean}, {"ns_per_read", ns}, {"curve", est}};
      if (c) j.update({{"samples", c->samples}, {"rate", c->rate}, {"keys", c->keys}});
      if (noadj_max >= 0) j["max_err_noadj"] = noadj_max;
      jl["estimates"].push_back(j);
      if (!first_law) return;
      // The estimate at the engine's sizes (interpolated on the grid in log size).
      for (const auto& [k, h] : engine_hits) {
        size_t i = 0;
        while (i + 1 < sizes.size() && sizes[i + 1] < k) ++i;
        double v = est[i];
        if (i + 1 < sizes.size() && sizes[i] < k) {
          const double f = std::log(static_cast<double>(k) / sizes[i]) /
                           std::log(static_cast<double>(sizes[i + 1]) / sizes[i]);
          v = est[i] + f * (est[i + 1] - est[i]);
        }
        fmt::print("{:<23}   at {} pages: estimate {:.4f}, engine {:.4f}, diff {:+.2f} points\n",
                   "", k, v, h, (v - h) * 100);
      }
    };
    line("exact", exact, -1, 0, nullptr);

    // An estimator fed the trace on one thread (hash included), counts reset after the warm-up;
    // then the same samples without SHARDS_adj, untimed.
    auto run = [&](const std::string& name, const MissRatioCurve::Config& config) {
      MissRatioCurve mrc(config);
      start = Clock::now();
      for (uint64_t i = 0; i < warm; ++i) mrc.Record(ccfs::cache::HashPageKey(keys[i]));
      mrc.ResetCounts();
      for (uint64_t i = warm; i < total; ++i) mrc.Record(ccfs::cache::HashPageKey(keys[i]));
      const std::vector<double> est = mrc.HitRatios(sizes);
      const double ns = ns_per(start, total);
      const MissRatioCurve::Counts c = mrc.counts();
      MissRatioCurve::Config plain_config = config;
      plain_config.normalize_by_samples = true;
      MissRatioCurve plain(plain_config);
      for (uint64_t i = 0; i < warm; ++i) plain.Record(hashes[i]);
      plain.ResetCounts();
      for (uint64_t i = warm; i < total; ++i) plain.Record(hashes[i]);
      line(name, est, Compare(plain.HitRatios(sizes), exact, sizes, capacity).max, ns, &c);
    };
    for (const std::string& r : Split(rates_text)) {
      MissRatioCurve::Config config;
      config.max_keys = 0;
      config.initial_rate = std::stod(r);
      run("rate=" + r, config);
    }
    for (const std::string& k : Split(keys_text)) {
      MissRatioCurve::Config config;
      config.max_keys = static_cast<uint32_t>(std::stoul(k));
      run("keys=" + k, config);
    }
    MissRatioCurve::Config engine = MissRatioCurve::Config::ForCache(capacity);
    engine.half_life_reads = 0;  // the exact curve covers every read after the warm-up
    run("engine", engine);
    {
      GhostCurve ghost(sizes);
      start = Clock::now();
      for (uint64_t i = 0; i < total; ++i) {
        ghost.Record(ccfs::cache::HashPageKey(keys[i]), i >= warm);
      }
      const double ns = ns_per(start, total);
      line("ghost", ghost.HitRatios(), -1, ns, nullptr);
    }
    for (int spacing : {0, spacing_ns}) {
      if (threads == 0) break;
      // Contention: T threads record interleaved shares of the trace into one estimator (the
      // engine's configuration), back to back (spacing 0: the ring fills and drops) or one read
      // every `spacing` ns per thread (a busy reader); the warm-up is not left out. ns/read is the
      // wall time per thread's read less the spacing.
      MissRatioCurve mrc(MissRatioCurve::Config::ForCache(capacity));
      start = Clock::now();
      std::vector<std::thread> workers;
      for (int t = 0; t < threads; ++t) {
        workers.emplace_back([&, t] {
          auto next = Clock::now();
          for (uint64_t i = t; i < total; i += threads) {
            if (spacing > 0) {
              next += std::chrono::nanoseconds(spacing);
              while (Clock::now() < next) {
              }
            }
            mrc.Record(ccfs::cache::HashPageKey(keys[i]));
          }
        });
      }
      for (auto& w : workers) w.join();
      const double ns = ns_per(start, static_cast<double>(total) / threads) - spacing;
      const MissRatioCurve::Counts c = mrc.counts();
      line(fmt::format("engine x{}/{}", threads, spacing), mrc.HitRatios(sizes), -1, ns, &c);
    }
    report.push_back(jl);
    first_law = false;
  }
  if (!json_path.empty()) std::ofstream(json_path) << report.dump(1) << "\n";
  return 0;
}
