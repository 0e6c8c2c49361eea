// readahead_cost: what read-ahead adds to a read that is not part of a stream. After each read the
// daemon calls PageCache::ReadAhead (the stream check, and nothing queued when the read does not
// follow the last one); this times that call for random 8 KiB reads of a 1 GiB file, on one
// thread, and reports ns per call beside the pages it read ahead (none expected but the rare
// random read that follows its predecessor). Against a read that costs tens of µs through FUSE,
// it bounds what read-ahead can cost a random reader.
//
//   readahead_cost [--calls N]
#include <chrono>
#include <cstdio>
#include <memory>
#include <random>

#include <CLI/CLI.hpp>

#include "ccfs/backing_store.h"
#include "ccfs/options.h"
#include "ccfs/page_cache.h"

int main(int argc, char** argv) {
  CLI::App app{"readahead_cost: ns per ReadAhead call after a random 8 KiB read"};
  uint64_t calls = 20'000'000;
  app.add_option("--calls", calls, "calls timed");
  CLI11_PARSE(app, argc, argv);

  auto store = ccfs::NewMemBackingStore();
  store->Put("f", std::string(1 << 20, 'x'));
  std::unique_ptr<ccfs::BackingFile> f;
  if (!store->Open("f", 0, 0644, &f).ok()) return 1;
  std::shared_ptr<ccfs::BackingFile> file(std::move(f));
  ccfs::Options o;
  o.memory = 64 << 20;
  std::unique_ptr<ccfs::PageCache> cache;
  if (!ccfs::PageCache::Create(o, &cache).ok()) return 1;

  ccfs::PageCache::Stream stream;
  std::mt19937_64 rng(1);
  const uint64_t pages = (1ull << 30) / 8192;
  std::vector<uint64_t> offsets(1 << 16);
  for (uint64_t& off : offsets) off = rng() % pages * 8192;
  const auto t0 = std::chrono::steady_clock::now();
  for (uint64_t i = 0; i < calls; ++i) {
    cache->ReadAhead(&stream, 1, file, offsets[i & (offsets.size() - 1)], 8192, false);
  }
  const double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
  cache->Quiesce();
  std::printf("ReadAhead after a random 8 KiB read: %.1f ns per call (%llu calls); pages read "
              "ahead: %llu\n",
              ns / static_cast<double>(calls), static_cast<unsigned long long>(calls),
              static_cast<unsigned long long>(cache->Stats().readahead_pages));
  return 0;
}
