// `ccfs stat MOUNTPOINT [--interval S] [--count N] [--json]`: a live view of a mount, one line per
// interval, in the manner of vmstat and arcstat.
//
// The first line, at once, summarizes the mount so far (the counters over the daemon's uptime).
// Every later line describes one interval only: the command keeps the previous stats.json and
// subtracts, histograms included, so p50/p99 are the percentiles of the interval's reads and not
// of the whole run. Intervals are timed against absolute deadlines on the monotonic clock, so
// lines do not drift, and rates use the measured time between the two reads of stats.json, not
// the nominal interval.
//
// CPU µs per buffer comes from the daemon's counters like the rest. Energy does not: the daemon
// and this command run on one machine (a FUSE mount is local), so the command reads the RAPL
// package counters itself at each interval (stats/rapl.h). Where there are none it says so once and
// shows CPU time only.
#include <fcntl.h>
#include <ftw.h>
#include <sys/stat.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <memory>
#include <string>

#include "ccfs/codec.h"
#include "ccfs/config.h"
#include "ccfs/mount_protocol.h"
#include "ccfs/stats.h"
#include "cli/command.h"
#include "client/mount_client.h"
#include "stats/rapl.h"
#include "stats/stat_interval.h"
#include "util/cachestat.h"
#include "util/proc_status.h"

namespace ccfs {
namespace {

constexpr int kLinesPerHeader = 20;

struct StatArgs {
  std::string mountpoint;
  double interval_s = 1.0;
  int64_t count = 0;  // 0 = until interrupted
  bool json = false;
  bool splits = false;
  std::string powercap = kPowercapRoot;
};

volatile sig_atomic_t g_interrupted = 0;
void OnInterrupt(int) { g_interrupted = 1; }

// Sleeps until `deadline` on the monotonic clock; false if Ctrl-C came first.
bool SleepUntil(const timespec& deadline) {
  while (!g_interrupted) {
    int rc = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, nullptr);
    if (rc == 0) return !g_interrupted;
    if (rc != EINTR) return !g_interrupted;
  }
  return false;
}

timespec Now() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts;
}

double Seconds(const timespec& from, const timespec& to) {
  return static_cast<double>(to.tv_sec - from.tv_sec) +
         static_cast<double>(to.tv_nsec - from.tv_nsec) / 1e9;
}

timespec AddSeconds(timespec t, double s) {
  int64_t ns = static_cast<int64_t>(t.tv_nsec) + static_cast<int64_t>(s * 1e9);
  t.tv_sec += ns / 1000000000;
  t.tv_nsec = ns % 1000000000;
  return t;
}

// --splits: the split estimator's whole prediction, once, from one read of stats.json.
// raw_tier = kernel: what the kernel's page cache holds of the mount's files now, measured with
// cachestat(2) over each regular file (the control directory left out; at most kMaxFiles files).
struct Residency {
  uint64_t bytes = 0;
  uint64_t files = 0;
  int error = 0;  // from cachestat: nothing measured
};
constexpr uint64_t kMaxResidencyFiles = 100000;
thread_local Residency* residency = nullptr;

int CountResident(const char* path, const struct stat* st, int type, FTW* ftw) {
  if (type == FTW_D && ftw->level == 1 && std::string(path + ftw->base) == kControlDirName) {
    return FTW_SKIP_SUBTREE;
  }
  if (type != FTW_F || !S_ISREG(st->st_mode)) return FTW_CONTINUE;
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return FTW_CONTINUE;
  uint64_t pages = 0;
  const int err = CachedPages(fd, 0, 0, &pages);
  close(fd);
  if (err != 0) {
    residency->error = err;
    return FTW_STOP;
  }
  residency->bytes += pages * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  return ++residency->files >= kMaxResidencyFiles ? FTW_STOP : FTW_CONTINUE;
}

Residency MeasureResidency(const std::string& mountpoint) {
  Residency r;
  residency = &r;
  nftw(mountpoint.c_str(), CountResident, 32, FTW_PHYS | FTW_MOUNT | FTW_ACTIONRETVAL);
  residency = nullptr;
  return r;
}

int PrintSplits(const StatArgs& args) {
  CacheStats s;
  Status st = ReadMountStats(args.mountpoint, &s);
  if (!st.ok()) {
    std::fprintf(stderr, "ccfs stat: %s\n", st.ToString().c_str());
    return 1;
  }
  const std::string codec = CodecName(static_cast<CodecKind>(s.compressor));
  std::printf("split in force: compressed_percent = %s%d, compressor = %s%s\n",
              s.compressed_percent_auto ? "auto, now " : "", s.compressed_percent,
              s.compressor_auto ? "auto, now " : "", codec.c_str());
  // What it waits for, said while there is no prediction, or no recommendation beside one.
  const std::string waiting = SplitWaitingText(s);
  if (s.predicted.empty()) {
    std::printf("no prediction yet: waiting for %s\n",
                waiting.empty() ? "a window of reads" : waiting.c_str());
    return 0;
  }
  std::printf("%4s %5s %7s %9s\n", "C%", "codec", "hit%", "us/buf");
  for (const SplitPrediction& p : s.predicted) {
    const bool current = p.percent == s.compressed_percent && (p.codec == s.compressor || p.percent == 0);
    const bool best = p.percent == s.recommended_percent && (p.codec == s.recommended_codec || p.percent == 0);
    std::printf("%4d %5s %7.1f %9.2f%s%s\n", p.percent,
                p.percent == 0 ? "-" : CodecName(static_cast<CodecKind>(p.codec)),
                100 * p.hit_ratio, p.us_per_buffer, current ? "  <- in force" : "",
                best ? "  <- recommended" : "");
  }
  if (s.recommended_percent < 0 && !waiting.empty()) {
    std::printf("no recommendation yet: waiting for %s\n", waiting.c_str());
  }
  return 0;
}

int RunStat(const StatArgs& args) {
  if (args.splits) return PrintSplits(args);
  // Ctrl-C ends the view normally (exit 0), after the line being printed, never mid-line.
  struct sigaction sa {};
  sa.sa_handler = OnInterrupt;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);

  // The energy counters first: a reading taken after stats.json would leave out the joules spent
  // between the two.
  std::unique_ptr<RaplReader> rapl;
  RaplSample energy_before;
  Status energy_status = RaplReader::Open(args.powercap, &rapl);
  if (energy_status.ok()) energy_status = rapl->Read(&energy_before);
  if (!energy_status.ok()) rapl.reset();

  CacheStats before;
  double uptime_s = 0;
  Status s = ReadMountStats(args.mountpoint, &before, &uptime_s);
  if (!s.ok()) {
    std::fprintf(stderr, "ccfs stat: %s\n", s.ToString().c_str());
    return 1;
  }
  if (before.kernel_raw_tier && !args.json) {
    const Residency r = MeasureResidency(args.mountpoint);
    const std::string measured =
        r.error != 0 ? std::string("not measurable here: cachestat: ") + strerror(r.error)
                     : FormatSize(r.bytes) + " in " + std::to_string(r.files) + " files by cachestat";
    std::printf("raw_tier = kernel: the kernel answers hot reads itself and the daemon cannot count "
                "them; the figures are of the reads that reached the daemon. \"raw\" includes the "
                "kernel's pages of the mount's files (now %s; the daemon's ledger: at most %s, "
                "budget %s).\n",
                measured.c_str(), FormatSize(before.kernel_held_bytes).c_str(),
                FormatSize(before.kernel_budget_bytes).c_str());
    if (before.kernel_retrieved > 0) {
      std::printf("kernel_demote: %llu pages asked back from the kernel before it dropped them, "
                  "%llu kept compressed, %llu not kept (changed since, cached again, "
                  "incompressible, or the pool busy).\n",
                  static_cast<unsigned long long>(before.kernel_retrieved),
                  static_cast<unsigned long long>(before.demotions),
                  static_cast<unsigned long long>(before.demote_drops));
    }
  }
  if (!args.json) {
    // The daemon's whole resident memory, beside what its tiers hold: a FUSE mount is local, so
    // its /proc entry is readable here (stats.json's daemon.rss_bytes has it too).
    const pid_t pid = ReadDaemonPid(args.mountpoint, std::chrono::milliseconds(2000));
    const uint64_t rss = pid > 0 ? ProcStatusBytes(pid, "VmRSS:") : 0;
    if (rss != 0) {
      std::printf("daemon pid %d: resident %s, of which its tiers hold %s raw + %s compressed "
                  "(memory = %s); %llu descriptors open\n",
                  static_cast<int>(pid), FormatSize(rss).c_str(),
                  FormatSize(before.raw_bytes).c_str(), FormatSize(before.compressed_bytes).c_str(),
                  FormatSize(before.memory_bytes).c_str(),
                  static_cast<unsigned long long>(OpenDescriptorCount(pid)));
    }
    if (before.pinned_pages != 0) {
      std::printf("pin: %llu pages of pinned files cached, taking %s\n",
                  static_cast<unsigned long long>(before.pinned_pages),
                  FormatSize(before.pinned_bytes).c_str());
    }
    const std::string note = rapl ? "energy: RAPL " + rapl->Describe() +
                                        ", the whole machine's package energy (mJ/buf)"
                                  : RaplReader::NoEnergyNote(energy_status);
    std::printf("%s\n", note.c_str());
  }
  const bool energy = rapl != nullptr;
  int64_t printed = 0;
  // One line (under a header every kLinesPerHeader lines); false once stdout is closed.
  auto print = [&](const StatInterval& iv) {
    std::time_t wall = std::time(nullptr);
    if (args.json) {
      std::fputs(FormatStatJson(iv, wall).c_str(), stdout);
    } else {
      if (printed % kLinesPerHeader == 0) std::fputs(StatHeader(energy).c_str(), stdout);
      std::fputs(FormatStatLine(iv, wall, energy).c_str(), stdout);
    }
    ++printed;
    return std::fflush(stdout) == 0;  // stdout closed: nobody is reading any more
  };
  // The first line covers the whole mount, as vmstat's covers the time since boot.
  if (!print(ComputeSinceMount(before, uptime_s))) return 1;
  bool have_energy_before = energy;
  timespec before_at = Now();
  timespec deadline = before_at;
  while (args.count == 0 || printed < args.count) {
    deadline = AddSeconds(deadline, args.interval_s);
    if (!SleepUntil(deadline)) return 0;
    CacheStats after;
    s = ReadMountStats(args.mountpoint, &after);
    if (!s.ok()) {
      std::fprintf(stderr, "ccfs stat: %s\n", s.ToString().c_str());
      return 1;
    }
    timespec after_at = Now();
    StatInterval iv = ComputeStatInterval(before, after, Seconds(before_at, after_at));
    // A counter that could not be read leaves this interval's energy unknown, and the next.
    RaplSample energy_after;
    const bool energy_read = energy && rapl->Read(&energy_after).ok();
    if (energy_read && have_energy_before) {
      iv.joules = rapl->JoulesBetween(energy_before, energy_after);
    }
    have_energy_before = energy_read;
    if (energy_read) energy_before = std::move(energy_after);
    if (!print(iv)) return 1;
    before = std::move(after);
    before_at = after_at;
  }
  return 0;
}

CommandRegistrar reg_stat(
    "stat", "live view of a mount: hit ratio, µs per buffer, tier sizes, per interval",
    [](CLI::App* app) {
      auto args = std::make_shared<StatArgs>();
      app->add_option("mountpoint", args->mountpoint, "a mounted ccfs file system")->required();
      app->add_option("-i,--interval", args->interval_s,
                      "seconds between lines (fractions allowed)")
          ->check(CLI::Range(0.01, 86400.0))
          ->capture_default_str();
      app->footer(
          "The first line (time `mount`) covers everything since the mount started: shares, "
          "means and percentiles of every read, rates over the daemon's uptime. Each later line "
          "covers one interval. Notes (the daemon's memory, energy, raw_tier = kernel) come once, "
          "above the first header.");
      app->add_option("-c,--count", args->count,
                      "lines to print, the since-mount line first; 0 = until Ctrl-C")
          ->check(CLI::NonNegativeNumber)
          ->capture_default_str();
      app->add_flag("--json", args->json, "one JSON object per line instead of columns");
      app->add_flag("--splits", args->splits,
                    "print the split estimator's predicted hit ratio and µs per buffer at every "
                    "split and codec, once");
      app->add_option("--powercap", args->powercap,
                      "where the RAPL energy counters are read (joules per buffer)")
          ->capture_default_str();
      return [args] { return RunStat(*args); };
    });

}  // namespace
}  // namespace ccfs
