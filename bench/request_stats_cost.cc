// request_stats_cost: what counting and timing a FUSE request adds to it. The op table wraps every
// handler (fuse/filesystem.cc, Timed): one clock read before it, one after, and
// RequestStats::Record. This times exactly that around an empty handler, on 1 and on 2 threads
// (each on its own shard), and beside it an 8 KiB raw hit inside the engine, the cheapest read a
// request can carry; the whole request through FUSE costs several times that again.
//
//   request_stats_cost [--calls N]
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>

#include "ccfs/backing_store.h"
#include "ccfs/options.h"
#include "ccfs/page_cache.h"
#include "stats/request_stats.h"

namespace {

double NsPerCall(uint64_t calls, const std::chrono::steady_clock::time_point& t0) {
  return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() /
         static_cast<double>(calls);
}

// ns per timed request on each of `threads` threads at once.
double TimedRequests(ccfs::RequestStats* stats, uint64_t calls, int threads) {
  std::vector<double> ns(threads);
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      const auto t0 = std::chrono::steady_clock::now();
      for (uint64_t i = 0; i < calls; ++i) {
        const uint64_t start = ccfs::SteadyNowNs();
        stats->Record(16, ccfs::SteadyNowNs() - start);
      }
      ns[t] = NsPerCall(calls, t0);
    });
  }
  for (std::thread& w : workers) w.join();
  double sum = 0;
  for (double v : ns) sum += v;
  return sum / threads;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"request_stats_cost: ns to count and time one FUSE request"};
  uint64_t calls = 20'000'000;
  app.add_option("--calls", calls, "requests timed per thread");
  CLI11_PARSE(app, argc, argv);

  ccfs::RequestStats stats(std::vector<std::string>(32, "op"));
  const double one = TimedRequests(&stats, calls, 1);
  const double two = TimedRequests(&stats, calls, 2);

  auto store = ccfs::NewMemBackingStore();
  store->Put("f", std::string(1 << 20, 'x'));
  std::unique_ptr<ccfs::BackingFile> file;
  if (!store->Open("f", 0, 0644, &file).ok()) return 1;
  ccfs::Options o;
  o.memory = 64 << 20;
  std::unique_ptr<ccfs::PageCache> cache;
  if (!ccfs::PageCache::Create(o, &cache).ok()) return 1;
  std::vector<char> buf(8192);
  size_t n = 0;
  for (uint64_t off = 0; off < (1 << 20); off += 8192) {
    if (!cache->Read(1, file.get(), off, 8192, buf.data(), &n).ok()) return 1;
  }
  const uint64_t hits = calls / 10;
  const auto t0 = std::chrono::steady_clock::now();
  for (uint64_t i = 0; i < hits; ++i) {
    cache->Read(1, file.get(), (i & 127) * 8192, 8192, buf.data(), &n);
  }
  const double hit = NsPerCall(hits, t0);
  std::printf("timed request: %.1f ns (1 thread), %.1f ns per thread (2 threads); engine raw hit, "
              "8 KiB: %.1f ns (%llu calls)\n",
              one, two, hit, static_cast<unsigned long long>(calls));
  return 0;
}
