// index_scale: the page index lookup cost from 10^4 to 10^7 pages, beside the cost of one
// dependent random memory access over the same number of bytes.
//
// "Flat" cannot mean equal nanoseconds at every size: at 10^4 pages the index (entries + bucket
// array, about 1 MiB) sits in the CPU caches, at 10^7 (about 1 GiB) nearly every access misses
// them and the TLB. So each size also times a same-run baseline, a pointer chase: one 8-byte slot
// per 64-byte line of a buffer as large as the index's entries and buckets, the slots linked in
// one random cycle (Sattolo's shuffle), each load's address being the previous load's value, so
// that nothing can be prefetched or overlapped. It runs for as many steps as there are lookups,
// with the same warm-up and the same time bound. lookup_ns / chase_ns is then what one lookup
// costs in dependent random accesses over memory of its own size (DRAM-miss equivalents once the
// buffer outgrows the last-level cache). A lookup that stays O(1) (hash, bucket node, one or two
// entries) keeps that figure from growing with N; a table whose chains grow does not.
// bench_report.py judges flatness on it and still prints the raw ns.
//
// For each size N it fills a PageIndex (src/cache/page_index.h, the liburcu lock-free hash table
// the engine uses, sized as the engine sizes it) with N entries keyed like the engine's (file id,
// page number over 64 files), lets the table's lazy resize settle, then times random lookups of
// present keys, each inside its own RCU read-side section as PageCache::Read does. The key of each
// lookup is computed from a random number, as the engine computes it from a request: reading it
// from a key array would add a random access of the benchmark's own. It also reports the mean
// hash-chain length, from the keys' hashes and the bucket count the table starts with. Bounded:
// filling one size stops after --insert-limit seconds, lookups and the chase after 5 s each.
// Prints one JSON line per N: lookup_ns, chase_ns, lookup_per_chase, index_bytes (entries +
// bucket nodes), buckets, chain_mean (entries per occupied bucket), probe_mean (entries a
// successful lookup visits), insert_ns, ratio_vs_first (raw ns against the first size), and what
// finding the 16 pages of one file costs among the N: file_pages_us by the file's span, walk_us
// by a walk of the whole table (how files were dropped before spans).
// Issue 6 target: flat from 10^4 to 10^7.
//
//   index_scale [--sizes 10000,100000,1000000,10000000] [--lookups 2000000]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>

#include "cache/page_index.h"
#include "cache/rcu.h"
#include "util/rng.h"

using Clock = std::chrono::steady_clock;
using ccfs::cache::PageEntry;
using ccfs::cache::PageIndex;
using ccfs::cache::PageKey;

namespace {

constexpr auto kTimeBound = std::chrono::seconds(5);
constexpr uint64_t kWarmSteps = 200000;

PageKey KeyOf(uint64_t i) { return PageKey{1 + i % 64, i / 64}; }

// The bucket count PageIndex starts with for `entries` (src/cache/page_index.cc: the next power of
// two >= entries, between 1024 and 2^24). With CDS_LFHT_ACCOUNTING, liburcu grows a table of that
// size only once it holds 8 entries per bucket, so after the fill it still has this many buckets.
// Keep in step with page_index.cc.
uint64_t IndexBuckets(uint64_t entries) {
  uint64_t buckets = 1024;
  while (buckets < entries && buckets < (1ull << 24)) buckets <<= 1;
  return buckets;
}

double TimeLookups(const PageIndex& index, uint64_t present, uint64_t lookups, uint64_t seed,
                   uint64_t* found) {
  ccfs::Rng rng(seed);
  std::vector<uint32_t> order(lookups);
  for (auto& o : order) o = static_cast<uint32_t>(rng.Below(present));
  uint64_t hits = 0, done = 0;
  auto t0 = Clock::now();
  for (uint32_t i : order) {
    {
      ccfs::cache::RcuReadLock lock;
      hits += index.Lookup(KeyOf(i)) != nullptr;
    }
    // Bounded: a table whose chains grew long must not stall the whole benchmark.
    if ((++done & 1023) == 0 && Clock::now() - t0 > kTimeBound) break;
  }
  double ns = std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / done;
  *found = hits;
  return ns;
}

// ns per step of a dependent random walk over `bytes` (see the top of the file).
double TimeChase(uint64_t bytes, uint64_t steps, uint64_t seed) {
  constexpr uint64_t kSlotWords = 64 / sizeof(uint64_t);  // one slot per cache line
  const uint64_t lines = std::max<uint64_t>(bytes / 64, 2);
  std::unique_ptr<uint64_t[]> buf(new uint64_t[lines * kSlotWords]);
  {
    // Sattolo's shuffle of the identity gives a permutation that is one cycle through all lines.
    std::vector<uint32_t> next(lines);
    for (uint64_t i = 0; i < lines; ++i) next[i] = static_cast<uint32_t>(i);
    ccfs::Rng rng(seed);
    for (uint64_t i = lines - 1; i > 0; --i) std::swap(next[i], next[rng.Below(i)]);
    for (uint64_t i = 0; i < lines; ++i) buf[i * kSlotWords] = next[i];
  }
  auto walk = [&](uint64_t n) {
    uint64_t p = 0, done = 0;
    auto t0 = Clock::now();
    for (uint64_t s = 0; s < n; ++s) {
      p = buf[p * kSlotWords];
      if ((++done & 1023) == 0 && Clock::now() - t0 > kTimeBound) break;
    }
    double ns = std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / done;
    // Keep the chain's result alive so that the loads cannot be dropped.
    asm volatile("" : : "r"(p) : "memory");
    return ns;
  };
  walk(std::min(steps, kWarmSteps));  // warm, as the lookups are
  return walk(steps);
}

// Finding the pages of one small file (kFilePages pages) among the table's entries, as dropping
// a file does (PageCache InvalidateFile): *file_us by the file's span (PageIndex::ForEachOfFile),
// *walk_us by a walk of the whole table, the median of a few runs each.
void TimeFileDrop(PageIndex* index, double* file_us, double* walk_us) {
  constexpr uint64_t kFilePages = 16;
  constexpr uint64_t kFile = 1u << 20;  // no file of KeyOf's
  std::vector<PageEntry> file(kFilePages);
  for (uint64_t p = 0; p < kFilePages; ++p) {
    file[p].key = PageKey{kFile, p};
    ccfs::cache::RcuReadLock lock;
    index->InsertUnique(&file[p]);
  }
  auto median_us = [](auto&& run) {
    std::vector<double> us;
    for (int r = 0; r < 5; ++r) {
      auto t0 = Clock::now();
      uint64_t seen = 0;
      run(&seen);
      us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
      asm volatile("" : : "r"(seen) : "memory");
    }
    std::sort(us.begin(), us.end());
    return us[us.size() / 2];
  };
  *file_us = median_us([&](uint64_t* seen) {
    ccfs::cache::RcuReadLock lock;
    index->ForEachOfFile(kFile, 0, [&](PageEntry*) { ++*seen; });
  });
  *walk_us = median_us([&](uint64_t* seen) {
    ccfs::cache::RcuReadLock lock;
    index->ForEach([&](PageEntry* e) { *seen += e->key.file_id == kFile; });
  });
  {
    ccfs::cache::RcuReadLock lock;
    for (PageEntry& e : file) index->Remove(&e);
  }
  urcu_memb_synchronize_rcu();
}

}  // namespace

int main(int argc, char** argv) {
  std::string sizes_text = "10000,100000,1000000,10000000";
  uint64_t lookups = 2000000;
  int settle_ms = 500;
  int insert_limit_s = 30;
  CLI::App app{"index_scale: page index lookup ns vs number of pages, beside a pointer chase"};
  app.add_option("--sizes", sizes_text, "comma-separated page counts")->capture_default_str();
  app.add_option("--lookups", lookups, "timed lookups (and chase steps) per size")
      ->capture_default_str();
  app.add_option("--settle-ms", settle_ms, "wait after filling, for the table's lazy resize")
      ->capture_default_str();
  app.add_option("--insert-limit", insert_limit_s, "seconds allowed to fill one size")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  std::vector<uint64_t> sizes;
  std::stringstream in(sizes_text);
  for (std::string item; std::getline(in, item, ',');) sizes.push_back(std::stoull(item));

  double base = 0;
  for (uint64_t n : sizes) {
    auto index = std::make_unique<PageIndex>(n);  // sized as the engine sizes it for n pages
    std::unique_ptr<PageEntry[]> entries(new PageEntry[n]);
    auto t0 = Clock::now();
    uint64_t inserted = 0;
    bool timed_out = false;
    for (uint64_t i = 0; i < n; ++i) {
      entries[i].key = KeyOf(i);
      {
        ccfs::cache::RcuReadLock lock;
        index->InsertUnique(&entries[i]);
      }
      inserted = i + 1;
      if ((inserted & 4095) == 0 &&
          Clock::now() - t0 > std::chrono::seconds(insert_limit_s)) {
        timed_out = true;  // chains too long to fill in time: report what was reached
        break;
      }
    }
    double insert_ns =
        std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / inserted;
    std::this_thread::sleep_for(std::chrono::milliseconds(settle_ms));  // lazy resize settles
    uint64_t found = 0;
    TimeLookups(*index, inserted, std::min(lookups, kWarmSteps), 7, &found);  // warm
    double ns = TimeLookups(*index, inserted, lookups, 11, &found);
    if (base == 0) base = ns;
    double file_us = 0, walk_us = 0;
    TimeFileDrop(index.get(), &file_us, &walk_us);

    // Chains: a lookup of a present key walks its bucket's entries (kept in hash order) up to its
    // own, so it visits (k + 1) / 2 entries on average in a bucket of k; probe_mean averages that
    // over the keys, chain_mean is the entries per occupied bucket.
    const uint64_t buckets = IndexBuckets(n);
    double chain_mean = 0, probe_mean = 0;
    {
      std::vector<uint32_t> per_bucket(buckets);
      for (uint64_t i = 0; i < inserted; ++i) {
        ++per_bucket[ccfs::cache::HashPageKey(KeyOf(i)) & (buckets - 1)];
      }
      uint64_t occupied = 0;
      double visits = 0;
      for (uint32_t k : per_bucket) {
        occupied += k != 0;
        visits += 0.5 * k * (k + 1.0);
      }
      chain_mean = occupied ? static_cast<double>(inserted) / occupied : 0;
      probe_mean = inserted ? visits / inserted : 0;
    }
    const uint64_t index_bytes =
        n * sizeof(PageEntry) + buckets * sizeof(cds_lfht_node);  // entries + bucket nodes

    if (timed_out) {
      // Emptying a table with chains this long takes as long as filling it: leave it to exit.
      (void)index.release();
      (void)entries.release();
    } else {
      for (uint64_t i = 0; i < inserted; ++i) {
        ccfs::cache::RcuReadLock lock;
        index->Remove(&entries[i]);
      }
      urcu_memb_synchronize_rcu();
      index.reset();
      entries.reset();
    }
    // The baseline runs after the index is gone, so that the two never share the memory.
    double chase_ns = TimeChase(index_bytes, lookups, 13);

    std::printf(
        "{\"pages\":%llu,\"inserted\":%llu,\"insert_timed_out\":%s,\"lookup_ns\":%.1f,"
        "\"ratio_vs_first\":%.3f,\"insert_ns\":%.1f,\"found\":%llu,\"entry_bytes\":%zu,"
        "\"buckets\":%llu,\"index_bytes\":%llu,\"chase_ns\":%.2f,\"lookup_per_chase\":%.3f,"
        "\"chain_mean\":%.3f,\"probe_mean\":%.3f,\"file_pages_us\":%.2f,\"walk_us\":%.1f}\n",
        (unsigned long long)n, (unsigned long long)inserted, timed_out ? "true" : "false", ns,
        ns / base, insert_ns, (unsigned long long)found, sizeof(PageEntry),
        (unsigned long long)buckets, (unsigned long long)index_bytes, chase_ns, ns / chase_ns,
        chain_mean, probe_mean, file_us, walk_us);
    std::fflush(stdout);
  }
  return 0;
}
