// `ccfs warmup MOUNTPOINT PATH...`: loads files into a mount's cache on purpose (client/warmup.h
// does the work), says how much of them is cached (--check), or drops them (--evict).
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "ccfs/config.h"
#include "cli/command.h"
#include "client/mount_client.h"
#include "client/warmup.h"

namespace ccfs {
namespace {

struct WarmupArgs {
  std::string mountpoint;
  std::vector<std::string> paths;
  WarmupOptions options;
  bool check = false;
  bool evict = false;
  bool quiet = false;
};

std::string Mib(uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  return buf;
}

std::string Duration(double s) {
  char buf[32];
  if (!std::isfinite(s) || s < 0) return "?";
  if (s < 60) std::snprintf(buf, sizeof(buf), "%.0fs", s);
  else std::snprintf(buf, sizeof(buf), "%.0fm%02.0fs", std::floor(s / 60), std::fmod(s, 60));
  return buf;
}

// "cached: X of Y (raw A, kernel B, compressed C in D of RAM)".
void PrintCached(const char* label, const CachedBytes& c) {
  std::printf("%s %s of %s in %llu file%s", label, Mib(std::min(c.cached(), c.bytes)).c_str(),
              Mib(c.bytes).c_str(), static_cast<unsigned long long>(c.files),
              c.files == 1 ? "" : "s");
  std::printf(" (raw %s", Mib(c.raw_bytes).c_str());
  if (c.kernel_tier) {
    if (c.kernel_errno == 0) std::printf(", kernel's page cache %s", Mib(c.kernel_bytes).c_str());
    else std::printf(", kernel's page cache unknown: %s", std::strerror(c.kernel_errno));
  }
  std::printf(", compressed %s in %s of RAM); RAM %s\n", Mib(c.compressed_bytes).c_str(),
              Mib(c.compressed_ram).c_str(), Mib(c.footprint()).c_str());
}

int ReportErrors(uint64_t errors, const std::string& first) {
  if (errors == 0) return 0;
  std::fprintf(stderr, "ccfs warmup: %llu error(s), the first: %s\n",
               static_cast<unsigned long long>(errors), first.c_str());
  return 1;
}

int RunWarmup(const WarmupArgs& args) {
  if (args.check && args.evict) {
    std::fprintf(stderr, "ccfs warmup: --check and --evict exclude each other\n");
    return 2;
  }
  Status s = CheckMount(args.mountpoint);
  if (!s.ok()) {
    std::fprintf(stderr, "ccfs warmup: %s\n", s.ToString().c_str());
    return 1;
  }
  WarmupPlan plan;
  s = PlanWarmup(args.mountpoint, args.paths, &plan);
  if (!s.ok()) {
    std::fprintf(stderr, "ccfs warmup: %s\n", s.message().c_str());
    return s.code() == Status::Code::kInvalidArgument ? 2 : 1;
  }
  if (args.check || args.evict) {
    CachedBytes c;
    uint64_t errors = plan.errors;
    std::string first = plan.first_error;
    s = args.check ? CheckCached(plan, &c, &errors, &first) : EvictCached(plan, &c, &errors, &first);
    if (!s.ok()) {
      std::fprintf(stderr, "ccfs warmup: %s\n", s.ToString().c_str());
      return 1;
    }
    PrintCached(args.check ? "cached:" : "evicted: held", c);
    return ReportErrors(errors, first);
  }

  WarmupProgress progress;
  const bool tty = ::isatty(STDERR_FILENO) && !args.quiet;
  const auto started = std::chrono::steady_clock::now();
  double last_line = 0;
  auto tick = [&] {
    if (args.quiet) return;
    const double t =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (t - last_line < (tty ? 0.25 : 10)) return;  // a log gets a line every 10 s
    last_line = t;
    const uint64_t done = progress.bytes_done.load();
    const double rate = t > 0 ? static_cast<double>(done) / t : 0;
    const double eta = rate > 0 ? static_cast<double>(plan.bytes - done) / rate : NAN;
    std::fprintf(stderr, "%swarmup: %s of %s (%.0f%%), %llu/%zu files, %.1f MiB/s, from the store "
                 "%s, ETA %s%s",
                 tty ? "\r" : "", Mib(done).c_str(), Mib(plan.bytes).c_str(),
                 plan.bytes > 0 ? 100.0 * static_cast<double>(done) / static_cast<double>(plan.bytes) : 100.0,
                 static_cast<unsigned long long>(progress.files_done.load()), plan.files.size(),
                 rate / (1 << 20), Mib(progress.bytes_loaded.load()).c_str(), Duration(eta).c_str(),
                 tty ? "   " : "\n");
    std::fflush(stderr);
  };
  WarmupResult result;
  s = Warmup(plan, args.options, &progress, tick, &result);
  if (tty) std::fputc('\n', stderr);
  if (!s.ok()) {
    std::fprintf(stderr, "ccfs warmup: %s\n", s.ToString().c_str());
    return 1;
  }
  const uint64_t loaded = progress.bytes_loaded.load();
  std::printf("warmed %llu of %zu files, %s: %s read from the store in %.1f s (%.1f MiB/s)\n",
              static_cast<unsigned long long>(result.cached.files), plan.files.size(),
              Mib(plan.bytes - result.skipped_bytes).c_str(), Mib(loaded).c_str(), result.seconds,
              result.seconds > 0 ? static_cast<double>(loaded) / result.seconds / (1 << 20) : 0);
  PrintCached("cached now:", result.cached);
  if (result.skipped_files > 0) {
    std::printf("not warmed: %llu files, %s: %s\n",
                static_cast<unsigned long long>(result.skipped_files),
                Mib(result.skipped_bytes).c_str(),
                result.at_limit
                    ? ("the files reached --max " + Mib(result.limit_bytes) + " of memory " +
                       Mib(result.memory_bytes)).c_str()
                    : "the cache is full (pages warmed earlier were being pushed out)");
  }
  return ReportErrors(progress.errors.load() + plan.errors,
                      plan.first_error.empty() ? result.first_error : plan.first_error);
}

CommandRegistrar reg_warmup(
    "warmup", "load files into a mount's cache on purpose, show how much of them is cached, or drop them",
    [](CLI::App* app) {
      auto args = std::make_shared<WarmupArgs>();
      app->add_option("mountpoint", args->mountpoint, "a mounted ccfs file system")->required();
      app->add_option("paths", args->paths,
                      "files or directories (recursive) to load; relative ones are taken inside "
                      "MOUNTPOINT")
          ->required();
      app->add_option("-j,--jobs", args->options.jobs, "ranges of 2 MiB loaded at once")
          ->check(CLI::Range(1, 256))
          ->capture_default_str();
      app->add_option("--max", args->options.max_percent,
                      "stop once the files take this share of the mount's memory, in percent "
                      "(default: what fits)")
          ->check(CLI::Range(1.0, 100.0));
      app->add_flag("--check", args->check, "print how much of PATH is cached now, per tier; load "
                                            "nothing");
      app->add_flag("--evict", args->evict,
                    "drop PATH's pages from the cache (the daemon's user and root only)");
      app->add_flag("-q,--quiet", args->quiet, "no progress line");
      return [args] { return RunWarmup(*args); };
    });

}  // namespace
}  // namespace ccfs
