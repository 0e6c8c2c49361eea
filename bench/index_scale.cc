// index_scale: the page index lookup cost from 10^4 to 10^7 pages.
//
// For each size N it fills a PageIndex (src/cache/page_index.h, the liburcu lock-free hash table
// the engine uses) with N entries keyed like the engine's (file id, page number over 64 files),
// lets the table's lazy resize settle, then times random lookups of present keys, each inside its
// own RCU read-side section as PageCache::Read does. Bounded: filling one size stops after
// --insert-limit seconds and lookups after 5 s (a table that did not resize has long chains). Prints one JSON line per N with ns per lookup
// and the ratio against the smallest N. Issue 6 target: flat from 10^4 to 10^7.
//
//   index_scale [--sizes 10000,100000,1000000,10000000] [--lookups 2000000]
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
#include "trace/rng.h"

using Clock = std::chrono::steady_clock;
using ccfs::cache::PageEntry;
using ccfs::cache::PageIndex;
using ccfs::cache::PageKey;

namespace {

double TimeLookups(const PageIndex& index, const std::vector<PageKey>& keys, uint64_t lookups,
                   uint64_t seed, uint64_t* found) {
  ccfs::Rng rng(seed);
  std::vector<uint32_t> order(lookups);
  for (auto& o : order) o = static_cast<uint32_t>(rng.Next() % keys.size());
  uint64_t hits = 0, done = 0;
  auto t0 = Clock::now();
  for (uint32_t i : order) {
    {
      ccfs::cache::RcuReadLock lock;
      hits += index.Lookup(keys[i]) != nullptr;
    }
    // Bounded: a table whose chains grew long must not stall the whole benchmark.
    if ((++done & 1023) == 0 && Clock::now() - t0 > std::chrono::seconds(5)) break;
  }
  double ns = std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / done;
  *found = hits;
  return ns;
}

}  // namespace

int main(int argc, char** argv) {
  std::string sizes_text = "10000,100000,1000000,10000000";
  uint64_t lookups = 2000000;
  int settle_ms = 500;
  int insert_limit_s = 30;
  CLI::App app{"index_scale: page index lookup ns vs number of pages"};
  app.add_option("--sizes", sizes_text, "comma-separated page counts")->capture_default_str();
  app.add_option("--lookups", lookups, "timed lookups per size")->capture_default_str();
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
    std::vector<PageKey> keys(n);
    auto t0 = Clock::now();
    uint64_t inserted = 0;
    bool timed_out = false;
    for (uint64_t i = 0; i < n; ++i) {
      keys[i] = PageKey{1 + i % 64, i / 64};
      entries[i].key = keys[i];
      {
        ccfs::cache::RcuReadLock lock;
        index->InsertUnique(&entries[i]);
      }
      inserted = i + 1;
      if ((inserted & 4095) == 0 && Clock::now() - t0 > std::chrono::seconds(insert_limit_s)) {
        timed_out = true;  // chains too long to fill in time: report what was reached
        break;
      }
    }
    double insert_ns = std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / inserted;
    keys.resize(inserted);
    std::this_thread::sleep_for(std::chrono::milliseconds(settle_ms));  // lazy resize settles
    uint64_t found = 0;
    TimeLookups(*index, keys, std::min<uint64_t>(lookups, 200000), 7, &found);  // warm
    double ns = TimeLookups(*index, keys, lookups, 11, &found);
    if (base == 0) base = ns;
    std::printf("{\"pages\":%llu,\"inserted\":%llu,\"insert_timed_out\":%s,\"lookup_ns\":%.1f,"
                "\"ratio_vs_first\":%.3f,\"insert_ns\":%.1f,\"found\":%llu}\n",
                (unsigned long long)n, (unsigned long long)inserted, timed_out ? "true" : "false", ns,
                ns / base, insert_ns, (unsigned long long)found);
    std::fflush(stdout);
    if (timed_out) {
      // Emptying a table with chains this long takes as long as filling it: leave it to exit.
      (void)index.release();
      (void)entries.release();
      continue;
    }
    for (uint64_t i = 0; i < inserted; ++i) {
      ccfs::cache::RcuReadLock lock;
      index->Remove(&entries[i]);
    }
    urcu_memb_synchronize_rcu();
    index.reset();
  }
  return 0;
}
