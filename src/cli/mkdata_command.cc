// `ccfs mkdata DIR --size SIZE`: builds a reproducible data set (see datagen/mkdata.h).
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <memory>

#include <fmt/format.h>

#include "ccfs/config.h"
#include "cli/command.h"
#include "datagen/mkdata.h"

namespace ccfs {
namespace {

struct MkdataArgs {
  std::string dir;
  std::string size = "1GiB";
  std::string mix = kDefaultMix;
  uint64_t seed = 1;
  std::string page_size = kDefaultPageSize;
  bool force = false;
  int threads = 2;
};

int RunMkdata(const MkdataArgs& args) {
  MkdataOptions options;
  options.dir = args.dir;
  options.seed = args.seed;
  options.force = args.force;
  options.threads = args.threads;
  Status s = ParseSize(args.size, &options.size);
  if (!s.ok()) {
    fmt::print(stderr, "ccfs mkdata: --size {}: {}\n", args.size, s.ToString());
    return 2;
  }
  uint64_t page_size = 0;
  s = ParseSize(args.page_size, &page_size);
  if (!s.ok() || page_size > (128u << 10)) {
    fmt::print(stderr, "ccfs mkdata: --page-size {}: {}\n", args.page_size,
               s.ok() ? "must be at most 128 KiB" : s.ToString());
    return 2;
  }
  options.page_size = static_cast<uint32_t>(page_size);
  if (!(s = ParseMix(args.mix, &options.mix)).ok()) {
    fmt::print(stderr, "ccfs mkdata: {}\n", s.ToString());
    return 2;
  }
  const bool tty = ::isatty(STDERR_FILENO);
  uint64_t written = 0;
  options.on_file = [&](const std::string& path, uint64_t bytes) {
    written += bytes;
    if (tty) {
      fmt::print(stderr, "\r  {} of {} written ({})\033[K", FormatSize(written),
                 FormatSize(options.size), path);
    }
  };
  options.on_warning = [](const std::string& message) {
    fmt::print(stderr, "ccfs mkdata: warning: {}\n", message);
  };
  auto start = std::chrono::steady_clock::now();
  std::vector<KindReport> report;
  s = MakeDataset(options, &report);
  if (tty) fmt::print(stderr, "\r\033[K");
  if (!s.ok()) {
    fmt::print(stderr, "ccfs mkdata: {}\n", s.ToString());
    return 1;
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  fmt::print("{}: {} in {:.1f} s (seed {})\n", options.dir, FormatSize(options.size), seconds,
             options.seed);
  fmt::print("{:<8} {:>5} {:>11} {:>8} {:>9}  {}\n", "kind", "files", "size", "lz4", "zstd",
             "source");
  uint64_t in = 0;
  double lz4_out = 0, zstd_out = 0;
  for (const KindReport& r : report) {
    fmt::print("{:<8} {:>5} {:>11} {:>7.2f}x {:>8.2f}x  {}\n", DataKindName(r.kind), r.files,
               FormatSize(r.bytes), r.lz4_ratio, r.zstd_ratio, r.source);
    in += r.bytes;
    if (r.lz4_ratio > 0) lz4_out += r.bytes / r.lz4_ratio;
    if (r.zstd_ratio > 0) zstd_out += r.bytes / r.zstd_ratio;
  }
  fmt::print("{:<8} {:>5} {:>11} {:>7.2f}x {:>8.2f}x  ratios at {} pages (level 1), sampled\n",
             "all", "", FormatSize(in), lz4_out > 0 ? in / lz4_out : 0.0,
             zstd_out > 0 ? in / zstd_out : 0.0, FormatSize(options.page_size));
  return 0;
}

CommandRegistrar reg_mkdata(
    "mkdata", "build a reproducible data set of text, binaries, database pages, random and zeros",
    [](CLI::App* app) {
      auto args = std::make_shared<MkdataArgs>();
      app->footer(
          "Every kind but binary is generated from the seed alone: the same command gives the same "
          "bytes on any machine. binary copies ELF executables and libraries of this machine "
          "(/usr/bin, /usr/lib; sorted, picked by the seed), so it depends on the installed "
          "packages. The lz4/zstd ratios are measured on a sample of pages of each kind.");
      app->add_option("dir", args->dir, "directory to fill (created if missing)")->required();
      app->add_option("--size", args->size, "total size, e.g. 1GiB, 512MiB")->capture_default_str();
      app->add_option("--mix", args->mix, "percent of each kind: text, binary, db, random, zero")
          ->capture_default_str();
      app->add_option("--seed", args->seed, "seed of every generator")->capture_default_str();
      app->add_option("--page-size", args->page_size, "page size for the ratio measurement")
          ->capture_default_str();
      app->add_option("--threads", args->threads, "files written in parallel")
          ->capture_default_str()->check(CLI::Range(1, 64));
      app->add_flag("--force", args->force, "write into a non-empty directory, replacing files "
                                            "an earlier mkdata made");
      return [args] { return RunMkdata(*args); };
    });

}  // namespace
}  // namespace ccfs
