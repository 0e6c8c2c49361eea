// compress_scale: compression throughput of the engine's CompressionPool vs compress_threads.
//
// Reads a sample of pages from a data set (a `ccfs mkdata` directory: every file, pages taken in
// file order up to --sample), then for each thread count K in 1..--max-threads (default: online
// CPUs) submits the pages to a CompressionPool(K) in tasks of --batch pages, as the evictor does,
// and times the wall clock until the pool is idle. Prints one JSON line per K: pages/s, MiB/s and
// the speed-up over K = 1. Issue 6 target: throughput scales with compress_threads up to the cores.
//
//   compress_scale --data DIR [--compressor lz4] [--sample 64MiB] [--rounds 3]
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>

#include "ccfs/codec.h"
#include "ccfs/config.h"
#include "compress/compression_pool.h"
#include "trace/dataset.h"

using Clock = std::chrono::steady_clock;

int main(int argc, char** argv) {
  std::string data, codec_name = "lz4", sample_text = "64MiB", page_text = "8KiB";
  int max_threads = static_cast<int>(std::thread::hardware_concurrency());
  int batch = 32, rounds = 3, level = 1;
  CLI::App app{"compress_scale: CompressionPool pages/s vs compress_threads"};
  app.add_option("--data", data, "data set directory")->required();
  app.add_option("--compressor", codec_name, "lz4 or zstd")->capture_default_str();
  app.add_option("--level", level, "compression level")->capture_default_str();
  app.add_option("--sample", sample_text, "bytes of pages to compress per round")->capture_default_str();
  app.add_option("--page-size", page_text, "page size")->capture_default_str();
  app.add_option("--max-threads", max_threads, "largest thread count")->capture_default_str();
  app.add_option("--batch", batch, "pages per task")->capture_default_str();
  app.add_option("--rounds", rounds, "rounds per thread count (best kept)")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  uint64_t sample = 0, page = 0;
  ccfs::CodecKind kind;
  if (!ccfs::ParseSize(sample_text, &sample).ok() || !ccfs::ParseSize(page_text, &page).ok() ||
      !ccfs::ParseCodecKind(codec_name, &kind)) {
    std::fprintf(stderr, "compress_scale: bad arguments\n");
    return 2;
  }
  ccfs::Dataset ds;
  ccfs::Status s = ccfs::Dataset::Open(data, static_cast<uint32_t>(page), &ds);
  if (!s.ok()) {
    std::fprintf(stderr, "compress_scale: %s\n", s.ToString().c_str());
    return 1;
  }
  // Pages spread over every file: take every k-th page so each kind of data is represented.
  const uint64_t want = sample / page;
  const uint64_t stride = std::max<uint64_t>(1, ds.pages() / want);
  std::vector<char> pages;
  pages.reserve(want * page);
  std::vector<int> fds;
  for (uint32_t i = 0; i < ds.files().size(); ++i) fds.push_back(open(ds.FullPath(i).c_str(), O_RDONLY));
  for (uint64_t p = 0; p < ds.pages() && pages.size() / page < want; p += stride) {
    auto ref = ds.Locate(p);
    size_t at = pages.size();
    pages.resize(at + page);
    ssize_t n = pread(fds[ref.file], pages.data() + at, page, static_cast<off_t>(ref.offset));
    if (n < static_cast<ssize_t>(page)) pages.resize(at);  // skip short last pages
  }
  for (int fd : fds) close(fd);
  const uint64_t count = pages.size() / page;

  double base = 0;
  for (int k = 1; k <= max_threads; ++k) {
    double best = 1e300;
    uint64_t out_total = 0;
    for (int r = 0; r < rounds; ++r) {
      ccfs::CompressionPool pool(k, kind, level);
      std::atomic<uint64_t> out_bytes{0};
      auto t0 = Clock::now();
      for (uint64_t first = 0; first < count; first += batch) {
        uint64_t last = std::min<uint64_t>(count, first + batch);
        pool.Submit([&, first, last](ccfs::Codec& codec) {
          std::vector<char> out(codec.Bound(page));
          uint64_t sum = 0;
          for (uint64_t p = first; p < last; ++p) {
            sum += codec.Compress(pages.data() + p * page, page, out.data(), page - page / 8);
          }
          out_bytes += sum;
        });
      }
      pool.Wait();
      double sec = std::chrono::duration<double>(Clock::now() - t0).count();
      best = std::min(best, sec);
      out_total = out_bytes.load();
    }
    double pps = count / best;
    if (base == 0) base = pps;
    std::printf("{\"compressor\":\"%s\",\"threads\":%d,\"pages\":%llu,\"pages_per_s\":%.0f,"
                "\"mib_per_s\":%.1f,\"us_per_page_wall\":%.2f,\"speedup_vs_1\":%.3f,"
                "\"kept_bytes\":%llu}\n",
                codec_name.c_str(), k, (unsigned long long)count, pps, pps * page / 1048576.0,
                1e6 / pps, pps / base, (unsigned long long)out_total);
    std::fflush(stdout);
  }
  return 0;
}
