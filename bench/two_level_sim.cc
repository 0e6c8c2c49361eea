// two_level_sim: which policy ccfs's daemon should run beneath the kernel's page cache when the
// kernel holds the raw pages (kernel raw-tier mode), settled by simulating hit ratios on the
// replay's own trace. No I/O and no timing in the simulation: seconds per point.
//
// The model. Memory M is split as in daemon mode (Options::raw_budget / compressed_budget):
//   L1  the kernel's page cache of the mount's files: (100 - C)% of M as raw pages, K of them;
//   L2  the daemon's compressed tier: C% of M as compressed pages, J = C% of M / the mean
//       compressed size of a page. The mean comes from compressing a sample of the data set's
//       pages with the project's codecs (lz4 and zstd, level 1); a page that does not save
//       min_savings_percent is counted as a whole page. With --l2-size page, L2 is C% of M in
//       bytes instead, every page at its own compressed size and rejected pages never stored,
//       as the engine does (closer to it on data sets with incompressible and all-zero pages).
// L2 sees only L1's misses, as the daemon does: a read that hits L1 never reaches it.
//
// Two L1 models, after the two ways ccfs can hold the kernel's share of the budget:
//   lru   a memory cgroup: the kernel reclaims what was used least recently (its active and
//         inactive lists are approximated by one LRU list);
//   fifo  daemon-driven invalidation (notify_inval_inode): the daemon cannot see the kernel's hits,
//         so it evicts in the order it served pages.
// Four L2 policies:
//   inclusive  every L1 miss is stored in L2 (LRU), so L2 also holds copies of pages in L1;
//   repeat     admit on repeat: a page is stored when the daemon serves it while it is still in a
//              ghost list of pages served recently (ghost_factor x (K + J) page ids, LRU), that is
//              when the kernel evicted it and asked again; first requests are not stored;
//   exclusive  L1's victims move into L2 and an L2 hit moves the page back up to L1. Under lru it
//              is the upper bound of demoting pages found evicted by polling residency; under fifo
//              it is exactly what the daemon can do, since it picks the victims itself;
//   mix        exclusive until L2 first fills up; from then on a victim is demoted only if it came
//              back (served from L2, or a ghost hit when served), also into the room L2 hits free:
//              the engine's admission filter, using only what the daemon can see.
// Every policy is counted in compressions per read too, the CPU the daemon spends filling L2.
//
// Today's daemon mode (one exclusive raw + compressed cache of M) is, in this model, exclusive with
// L1 = lru. The real engine (PageCache) is also run on the same trace (--engine, on by default;
// misses read from the data set with O_DIRECT through bench/tiered_harness.h), once per
// configuration, for the daemon-only figure.
//
// The trace is bench/tiered_harness.h's Workload: trace/op_source.h's operations for --dist,
// --seed and --page-size, so page ids are those of `ccfs replay` and bench/tiered_compare. The
// first --warmup reads (default twice the data set's pages, as scripts/bench.sh) fill both levels
// and are not counted.
//
//   two_level_sim --data DIR [--dist pareto,uniform,zipf:0.9] [--ratio 2,8 | --memory 32MiB,...]
//                 [--percent 0,25,50,75] [--compressor lz4,zstd] [--json FILE] [--no-engine]
#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "ccfs/codec.h"
#include "ccfs/options.h"
#include "tiered_harness.h"

namespace {

constexpr uint32_t kNil = UINT32_MAX;

// A bounded list of page ids in recency (or arrival) order, front = newest: an intrusive doubly
// linked list over arrays indexed by page id, so every operation is O(1) without hashing. Each page
// takes one unit of the capacity, or cost[p] units when a cost table is given (L2 by bytes); a page
// of cost kNil is never stored.
class PageList {
 public:
  PageList(uint64_t pages, uint64_t capacity, const std::vector<uint32_t>* cost = nullptr)
      : prev_(pages, kNil), next_(pages, kNil), in_(pages, 0), capacity_(capacity), cost_(cost) {}

  bool Contains(uint32_t p) const { return in_[p] != 0; }
  // True if p can be stored at all (its cost is not kNil and not above the capacity).
  bool Storable(uint32_t p) const {
    return !(cost_ && (*cost_)[p] == kNil) && Cost(p) <= capacity_;
  }
  // True if p could be stored without pushing anything out.
  bool HasRoomFor(uint32_t p) const { return Storable(p) && used_ + Cost(p) <= capacity_; }

  // Stores p at the front; returns the page pushed out of the back to make room (the last one if
  // several; a list without a cost table pushes out at most one), or kNil. A page that cannot be
  // stored at all (capacity 0, cost kNil) leaves the list as it was. REQUIRES: !Contains(p).
  uint32_t Insert(uint32_t p) {
    if (!Storable(p)) return kNil;
    uint32_t victim = kNil;
    while (used_ + Cost(p) > capacity_) {
      victim = tail_;
      Remove(victim);
    }
    prev_[p] = kNil;
    next_[p] = head_;
    if (head_ != kNil) prev_[head_] = p;
    head_ = p;
    if (tail_ == kNil) tail_ = p;
    in_[p] = 1;
    used_ += Cost(p);
    return victim;
  }
  // REQUIRES: Contains(p).
  void Remove(uint32_t p) {
    if (prev_[p] != kNil) next_[prev_[p]] = next_[p]; else head_ = next_[p];
    if (next_[p] != kNil) prev_[next_[p]] = prev_[p]; else tail_ = prev_[p];
    in_[p] = 0;
    used_ -= Cost(p);
  }
  void Touch(uint32_t p) {
    Remove(p);
    Insert(p);
  }
  // Touch if present, else Insert.
  void Record(uint32_t p) {
    if (Contains(p)) Touch(p); else Insert(p);
  }

 private:
  uint64_t Cost(uint32_t p) const { return cost_ ? (*cost_)[p] : 1; }

  std::vector<uint32_t> prev_, next_;
  std::vector<uint8_t> in_;
  uint64_t capacity_;
  const std::vector<uint32_t>* cost_;
  uint64_t used_ = 0;
  uint32_t head_ = kNil, tail_ = kNil;
};

enum class L1Model { kLru, kFifo };
enum class Policy { kInclusive, kRepeat, kExclusive, kMix };
constexpr L1Model kL1Models[] = {L1Model::kLru, L1Model::kFifo};
constexpr Policy kPolicies[] = {Policy::kInclusive, Policy::kRepeat, Policy::kExclusive,
                                Policy::kMix};

const char* Name(L1Model m) { return m == L1Model::kLru ? "lru" : "fifo"; }
const char* Name(Policy p) {
  switch (p) {
    case Policy::kInclusive: return "inclusive";
    case Policy::kRepeat: return "repeat";
    case Policy::kExclusive: return "exclusive";
    case Policy::kMix: return "mix";
  }
  return "?";
}

struct Geometry {
  uint64_t l1_pages;     // K
  uint64_t l2_pages;     // J (with per-page sizes: C% of M / the mean stored size, for the table)
  uint64_t ghost_pages;  // bound of the list of pages served recently (repeat, mix)
  // With per-page sizes: L2's capacity in bytes and each page's stored size (kNil: rejected).
  // Null: L2 holds l2_pages pages.
  const std::vector<uint32_t>* l2_cost = nullptr;
  uint64_t l2_bytes = 0;
};

struct Counts {
  uint64_t reads = 0;
  uint64_t l1_hits = 0;
  uint64_t l2_hits = 0;
  uint64_t compressions = 0;  // pages compressed to go into L2 (a rejected one counts too)

  double Share(uint64_t n) const { return reads ? static_cast<double>(n) / reads : 0.0; }
  nlohmann::json ToJson() const {
    const uint64_t l1_misses = reads - l1_hits;
    return {{"l1_hit_ratio", Share(l1_hits)},
            {"l2_hit_ratio", Share(l2_hits)},
            {"hit_ratio", Share(l1_hits + l2_hits)},
            {"l2_hits_per_l1_miss", l1_misses ? static_cast<double>(l2_hits) / l1_misses : 0.0},
            {"compressions_per_read", Share(compressions)},
            {"l1_hits", l1_hits},
            {"l2_hits", l2_hits},
            {"misses", l1_misses - l2_hits},
            {"compressions", compressions}};
  }
};

// Runs one (L1 model, L2 policy) over the trace `pages`; reads before `warmup` are not counted.
Counts Simulate(const std::vector<uint32_t>& pages, uint64_t warmup, uint64_t dataset_pages,
                L1Model model, Policy policy, const Geometry& g) {
  const bool uses_ghost = policy == Policy::kRepeat || policy == Policy::kMix;
  const bool demotes = policy == Policy::kExclusive || policy == Policy::kMix;
  const bool has_l2 = g.l2_cost ? g.l2_bytes > 0 : g.l2_pages > 0;
  PageList l1(dataset_pages, g.l1_pages);
  PageList l2(dataset_pages, g.l2_cost ? g.l2_bytes : g.l2_pages, g.l2_cost);
  PageList ghost(dataset_pages, uses_ghost ? g.ghost_pages : 0);
  // mix: whether the page came back the last time it was served (the demotion filter).
  std::vector<uint8_t> came_back(policy == Policy::kMix ? dataset_pages : 0, 0);
  Counts c;
  // mix: set once a victim first finds L2 full. From then on only pages that came back are
  // demoted, also into the room an L2 hit frees, which first-time pages would otherwise take.
  bool l2_filled = false;
  for (uint64_t i = 0; i < pages.size(); ++i) {
    const uint32_t p = pages[i];
    const bool counted = i >= warmup;
    c.reads += counted;
    if (l1.Contains(p)) {
      if (model == L1Model::kLru) l1.Touch(p);
      c.l1_hits += counted;
      continue;
    }
    // An L1 miss: the daemon serves p, from L2 or from the store.
    const bool l2_hit = l2.Contains(p);
    const bool served_before = uses_ghost && ghost.Contains(p);
    c.l2_hits += counted && l2_hit;
    switch (policy) {
      case Policy::kInclusive:
      case Policy::kRepeat:
        if (l2_hit) {
          l2.Touch(p);
        } else if (policy == Policy::kInclusive || served_before) {
          l2.Insert(p);
          c.compressions += counted && has_l2;
        }
        break;
      case Policy::kExclusive:
      case Policy::kMix:
        if (l2_hit) l2.Remove(p);
        break;
    }
    if (uses_ghost) ghost.Record(p);
    if (policy == Policy::kMix) came_back[p] = l2_hit || served_before;
    const uint32_t victim = l1.Insert(p);
    if (demotes && victim != kNil && l2.Storable(victim) && !l2.HasRoomFor(victim)) {
      l2_filled = true;
    }
    if (demotes && victim != kNil && has_l2 &&
        (policy == Policy::kExclusive || !l2_filled || came_back[victim])) {
      l2.Insert(victim);
      c.compressions += counted;
    }
  }
  return c;
}

// What a page costs in L2 with one codec, from a sample of the data set's pages.
struct CodecSize {
  ccfs::CodecKind kind;
  double mean_bytes = 0;      // per page, incompressible pages counted whole
  double ratio = 0;           // page bytes / stored bytes
  double rejected_share = 0;  // pages that do not save min_savings_percent
  double kept_mean_bytes = 0; // per page that is not rejected
  uint64_t sampled = 0;
  // With every page sampled: page id -> compressed size, kNil for a rejected page.
  std::vector<uint32_t> per_page;
};

// Compresses `sample` pages drawn at random (0 or more than the data set: every page, and then
// fills per_page) with each codec at level 1, as the engine does (a page is rejected when it does
// not save min_savings_percent).
bool MeasureCodecs(const ccfs::Dataset& d, uint64_t sample, uint64_t seed,
                   std::vector<CodecSize>* sizes) {
  std::vector<uint64_t> picks;
  const bool every_page = sample == 0 || sample >= d.pages();
  if (every_page) {
    for (uint64_t p = 0; p < d.pages(); ++p) picks.push_back(p);
  } else {
    std::mt19937_64 rng(seed);
    for (uint64_t i = 0; i < sample; ++i) picks.push_back(rng() % d.pages());
  }
  std::vector<int> fds;
  for (uint32_t f = 0; f < d.files().size(); ++f) {
    int fd = ::open(d.FullPath(f).c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      std::perror(d.FullPath(f).c_str());
      return false;
    }
    fds.push_back(fd);
  }
  const double min_savings = ccfs::Options{}.min_savings_percent;
  std::vector<std::unique_ptr<ccfs::Codec>> codecs;
  for (CodecSize& s : *sizes) codecs.push_back(ccfs::NewCodec(s.kind, 1));
  std::vector<double> stored(sizes->size(), 0), rejected(sizes->size(), 0);
  std::vector<double> rejected_bytes(sizes->size(), 0);
  for (CodecSize& s : *sizes) s.per_page.assign(every_page ? d.pages() : 0, kNil);
  std::vector<char> page(d.page_size()), out;
  double page_bytes = 0;
  bool ok = true;
  for (uint64_t p : picks) {
    const ccfs::Dataset::PageRef ref = d.Locate(p);
    ssize_t n = ::pread(fds[ref.file], page.data(), page.size(), static_cast<off_t>(ref.offset));
    if (n <= 0) {
      std::fprintf(stderr, "two_level_sim: cannot read %s at %llu\n", d.FullPath(ref.file).c_str(),
                   static_cast<unsigned long long>(ref.offset));
      ok = false;
      break;
    }
    page_bytes += n;
    for (size_t k = 0; k < codecs.size(); ++k) {
      out.resize(codecs[k]->Bound(n));
      const size_t cap = static_cast<size_t>(n * (1.0 - min_savings / 100.0));
      const size_t size = codecs[k]->Compress(page.data(), n, out.data(), cap);
      stored[k] += size > 0 ? size : n;
      rejected[k] += size == 0;
      rejected_bytes[k] += size == 0 ? n : 0;
      if (every_page && size > 0) (*sizes)[k].per_page[p] = static_cast<uint32_t>(size);
    }
  }
  for (int fd : fds) ::close(fd);
  if (!ok) return false;
  for (size_t k = 0; k < sizes->size(); ++k) {
    CodecSize& s = (*sizes)[k];
    s.sampled = picks.size();
    s.mean_bytes = stored[k] / picks.size();
    s.ratio = page_bytes / stored[k];
    s.rejected_share = rejected[k] / picks.size();
    s.kept_mean_bytes = rejected[k] < picks.size()
                            ? (stored[k] - rejected_bytes[k]) / (picks.size() - rejected[k])
                            : 0;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"two_level_sim: L2 policies beneath the kernel's page cache, hit ratios on the "
               "replay trace"};
  std::string data, page_text = "8KiB", json_path, l2_size = "mean";
  std::vector<std::string> dists = {"pareto", "uniform", "zipf:0.9"};
  std::vector<std::string> memories;
  std::vector<double> ratios = {2, 8};
  std::vector<int> percents = {0, 25, 50, 75};
  std::vector<std::string> codec_names = {"lz4", "zstd"};
  uint64_t seed = 1, ops = 200000, sample = 4096;
  int64_t warmup = -1;
  double ghost_factor = 1.0;
  bool engine = true;
  int compress_threads = 1;
  app.add_option("--data", data, "a `ccfs mkdata` data set directory")->required();
  app.add_option("--dist", dists, "access laws: pareto, pareto:H, uniform, zipf:THETA")
      ->delimiter(',')->capture_default_str();
  app.add_option("--ratio", ratios, "data set size / memory M, one point each")
      ->delimiter(',')->capture_default_str();
  app.add_option("--memory", memories, "memory M per point instead of --ratio (e.g. 32MiB,128MiB)")
      ->delimiter(',');
  app.add_option("--percent", percents, "C: share of M for L2, 0..95")
      ->delimiter(',')->check(CLI::Range(0, 95))->capture_default_str();
  app.add_option("--compressor", codec_names, "lz4, zstd")->delimiter(',')->capture_default_str();
  app.add_option("--page-size", page_text, "page size")->capture_default_str();
  app.add_option("--seed", seed, "trace seed (and page sample seed)")->capture_default_str();
  app.add_option("--ops", ops, "measured reads per point")->capture_default_str();
  app.add_option("--warmup", warmup, "reads before measuring (default 2x the data set's pages)");
  app.add_option("--sample", sample, "pages compressed to size L2 (0 = every page)")
      ->capture_default_str();
  app.add_option("--l2-size", l2_size,
                 "mean: L2 holds C% of M / the mean compressed page; page: L2 holds C% of M in "
                 "bytes, each page at its own compressed size, rejected pages never (compresses "
                 "every page; --sample is ignored)")
      ->check(CLI::IsMember({"mean", "page"}))->capture_default_str();
  app.add_option("--ghost-factor", ghost_factor,
                 "repeat, mix: pages remembered as served, x (K + J)")->capture_default_str();
  app.add_flag("--engine,!--no-engine", engine,
               "also run the real engine (daemon mode, O_DIRECT misses) on each point")
      ->capture_default_str();
  app.add_option("--compress-threads", compress_threads, "engine: compression workers")
      ->capture_default_str();
  app.add_option("--json", json_path, "also write every figure as JSON to this file");
  CLI11_PARSE(app, argc, argv);

  uint64_t page_size = 0;
  if (!ccfs::ParseSize(page_text, &page_size).ok() || page_size == 0) {
    std::fprintf(stderr, "two_level_sim: bad --page-size %s\n", page_text.c_str());
    return 2;
  }
  std::vector<CodecSize> codecs;
  for (const std::string& name : codec_names) {
    CodecSize s;
    if (!ccfs::ParseCodecKind(name, &s.kind)) {
      std::fprintf(stderr, "two_level_sim: --compressor %s: expected lz4 or zstd\n", name.c_str());
      return 2;
    }
    codecs.push_back(s);
  }
  for (const std::string& dist : dists) {
    ccfs::DistSpec spec;
    ccfs::Status s = ccfs::ParseDistSpec(dist, 0.2, &spec);
    if (!s.ok()) {
      std::fprintf(stderr, "two_level_sim: %s\n", s.ToString().c_str());
      return 2;
    }
  }
  ccfs::Dataset dataset;
  ccfs::Status st = ccfs::Dataset::Open(data, static_cast<uint32_t>(page_size), &dataset);
  if (!st.ok()) {
    std::fprintf(stderr, "two_level_sim: %s\n", st.ToString().c_str());
    return 1;
  }
  if (dataset.pages() >= kNil) {
    std::fprintf(stderr, "two_level_sim: %s has %llu pages, more than page ids can name\n",
                 data.c_str(), static_cast<unsigned long long>(dataset.pages()));
    return 2;
  }
  std::vector<uint64_t> memory;  // M per point
  if (!memories.empty()) {
    for (const std::string& m : memories) {
      uint64_t bytes = 0;
      if (!ccfs::ParseSize(m, &bytes).ok() || bytes < page_size) {
        std::fprintf(stderr, "two_level_sim: bad --memory %s\n", m.c_str());
        return 2;
      }
      memory.push_back(bytes);
    }
  } else {
    for (double r : ratios) {
      if (!(r > 0)) {
        std::fprintf(stderr, "two_level_sim: --ratio %g: expected > 0\n", r);
        return 2;
      }
      memory.push_back(static_cast<uint64_t>(dataset.bytes() / r) / page_size * page_size);
    }
  }
  const bool per_page = l2_size == "page";
  if (!MeasureCodecs(dataset, per_page ? 0 : sample, seed, &codecs)) return 1;

  const uint64_t warmup_ops = warmup >= 0 ? static_cast<uint64_t>(warmup) : 2 * dataset.pages();
  nlohmann::json out;
  out["data"] = data;
  out["dataset_bytes"] = dataset.bytes();
  out["dataset_pages"] = dataset.pages();
  out["page_size"] = page_size;
  out["seed"] = seed;
  out["ops"] = ops;
  out["warmup_ops"] = warmup_ops;
  out["ghost_factor"] = ghost_factor;
  out["l2_size"] = l2_size;
  std::printf("data %s: %.0f MiB, %llu pages of %llu B; %llu reads measured after %llu warm-up\n",
              data.c_str(), dataset.bytes() / 1048576.0,
              static_cast<unsigned long long>(dataset.pages()),
              static_cast<unsigned long long>(page_size), static_cast<unsigned long long>(ops),
              static_cast<unsigned long long>(warmup_ops));
  for (const CodecSize& s : codecs) {
    std::printf("%-4s level 1: mean %.0f B per page (ratio %.2fx), %.1f%% of pages rejected "
                "(mean counts them whole; %.0f B per page kept), %llu pages sampled\n",
                ccfs::CodecName(s.kind), s.mean_bytes, s.ratio, 100 * s.rejected_share,
                s.kept_mean_bytes, static_cast<unsigned long long>(s.sampled));
    out["codecs"][ccfs::CodecName(s.kind)] = {{"mean_bytes", s.mean_bytes},
                                              {"kept_mean_bytes", s.kept_mean_bytes},
                                              {"ratio", s.ratio},
                                              {"rejected_share", s.rejected_share},
                                              {"sampled_pages", s.sampled}};
  }
  std::printf("\nTotal hit ratio (L1 + L2) per L2 policy; L1 = the kernel's share as LRU (memory "
              "cgroup) or FIFO of serves (daemon-driven invalidation).\n"
              "daemon: today's daemon mode at the same M and C, the real engine (PageCache) on the "
              "same trace.\ncompressions per 100 reads on the right.\n\n");
  std::printf("%-9s %4s %-4s %3s %-4s %5s %5s %6s | %6s %6s %6s %6s | %6s | %5s %5s %5s %5s\n",
              "dist", "D/M", "cdc", "C%", "L1", "K", "J", "L1 hit", "incl", "repeat", "excl", "mix",
              "daemon", "incl", "rep", "excl", "mix");

  std::map<std::pair<std::string, uint64_t>, nlohmann::json> engine_c0;  // C=0 needs no codec
  for (const std::string& dist : dists) {
    tiered::Args args;
    args.data = data;
    args.dist = dist;
    args.seed = seed;
    args.ops = ops;
    args.warmup = static_cast<int64_t>(warmup_ops);
    args.page_size = static_cast<uint32_t>(page_size);
    args.compress_threads = compress_threads;
    tiered::Workload w;
    if (!w.Open(args)) return 1;
    std::vector<uint32_t> pages;
    pages.reserve(w.ops().size());
    for (const ccfs::PageOp& op : w.ops()) {
      pages.push_back(static_cast<uint32_t>(dataset.files()[op.file].first_page +
                                            op.offset / page_size));
    }
    for (uint64_t m : memory) {
      for (const CodecSize& codec : codecs) {
        for (int c : percents) {
          ccfs::Options o;
          o.memory = m;
          o.compressed_percent = c;
          Geometry g;
          g.l1_pages = o.raw_budget() / page_size;
          g.l2_pages = static_cast<uint64_t>(
              o.compressed_budget() / (per_page ? codec.kept_mean_bytes : codec.mean_bytes));
          if (per_page) {
            g.l2_cost = &codec.per_page;
            g.l2_bytes = o.compressed_budget();
          }
          g.ghost_pages = static_cast<uint64_t>(ghost_factor * (g.l1_pages + g.l2_pages));
          if (g.l1_pages == 0) {
            std::fprintf(stderr, "two_level_sim: memory %llu at C=%d leaves L1 no page\n",
                         static_cast<unsigned long long>(m), c);
            return 2;
          }
          nlohmann::json eng;
          if (engine) {
            auto key = std::make_pair(dist, m);
            if (c == 0 && engine_c0.count(key)) {
              eng = engine_c0[key];
            } else {
              args.memory = m;
              args.percent = c;
              args.compressor = ccfs::CodecName(codec.kind);
              tiered::CcfsEngineCache cache;
              if (!cache.Open(w, args)) return 1;
              eng = tiered::Run(&cache, w, args);
              if (c == 0) engine_c0[key] = eng;
            }
          }
          const double d_over_m = static_cast<double>(dataset.bytes()) / m;
          for (L1Model model : kL1Models) {
            nlohmann::json row = {{"dist", dist},
                                  {"memory_bytes", m},
                                  {"data_over_memory", d_over_m},
                                  {"compressor", ccfs::CodecName(codec.kind)},
                                  {"compressed_percent", c},
                                  {"l1_model", Name(model)},
                                  {"l1_pages", g.l1_pages},
                                  {"l2_pages", g.l2_pages},
                                  {"ghost_pages", g.ghost_pages}};
            double l1_hit = 0, hit[4], cmp[4];
            for (int k = 0; k < 4; ++k) {
              Counts r = Simulate(pages, w.warmup(), dataset.pages(), model, kPolicies[k], g);
              row["policies"][Name(kPolicies[k])] = r.ToJson();
              l1_hit = r.Share(r.l1_hits);  // the same for every policy: L2 does not change L1
              row["l1_hit_ratio"] = l1_hit;
              hit[k] = r.Share(r.l1_hits + r.l2_hits);
              cmp[k] = 100 * r.Share(r.compressions);
            }
            if (!eng.is_null()) row["daemon_engine"] = eng;
            std::printf("%-9s %4.1f %-4s %3d %-4s %5llu %5llu %6.3f | %6.3f %6.3f %6.3f %6.3f | ",
                        dist.c_str(), d_over_m, ccfs::CodecName(codec.kind), c, Name(model),
                        static_cast<unsigned long long>(g.l1_pages),
                        static_cast<unsigned long long>(g.l2_pages), l1_hit, hit[0], hit[1],
                        hit[2], hit[3]);
            if (eng.is_null()) std::printf("%6s", "-");
            else std::printf("%6.3f", eng["hit_ratio"].get<double>());
            std::printf(" | %5.1f %5.1f %5.1f %5.1f\n", cmp[0], cmp[1], cmp[2], cmp[3]);
            std::fflush(stdout);
            out["rows"].push_back(row);
          }
        }
      }
    }
  }
  if (!json_path.empty()) {
    std::ofstream f(json_path);
    f << out.dump(1) << "\n";
    if (!f) {
      std::fprintf(stderr, "two_level_sim: cannot write %s\n", json_path.c_str());
      return 1;
    }
  }
  return 0;
}
