// The figures and layout of `ccfs stat`.
//
// Column widths are fixed so lines stay aligned under the header as values grow; large values are
// scaled with k/M/G (rates, decimal) and KiB/MiB/GiB/TiB (sizes, spelled as every ccfs command
// prints them), as vmstat -w and arcstat do, because a column that widens with the workload breaks
// the eye's scan down the column.
#include "stats/stat_interval.h"

#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ccfs/codec.h"

namespace ccfs {
namespace {

uint64_t Delta(uint64_t after, uint64_t before) { return after > before ? after - before : 0; }

double Pct(uint64_t part, uint64_t whole) {
  return whole ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

// A rate in at most 6 characters: 123.4, 12345, 123.4k, 12.3M.
std::string Rate(double v) {
  if (v < 1000) return fmt::format("{:.1f}", v);
  if (v < 100000) return fmt::format("{:.0f}", v);
  if (v < 1e8) return fmt::format("{:.1f}k", v / 1e3);
  if (v < 1e11) return fmt::format("{:.1f}M", v / 1e6);
  return fmt::format("{:.1f}G", v / 1e9);
}

// Bytes in at most 7 characters with a binary unit: 512B, 8.00KiB, 192MiB, 1.50GiB.
std::string Size(uint64_t bytes) {
  static const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 5) {
    v /= 1024;
    ++u;
  }
  if (u == 0) return fmt::format("{}B", bytes);
  if (v < 10) return fmt::format("{:.2f}{}", v, kUnits[u]);
  if (v < 100) return fmt::format("{:.1f}{}", v, kUnits[u]);
  return fmt::format("{:.0f}{}", v, kUnits[u]);
}

// Microseconds in at most 7 characters.
std::string Micros(double us) {
  if (us < 1000) return fmt::format("{:.1f}", us);
  if (us < 1e6) return fmt::format("{:.0f}", us);
  return fmt::format("{:.2f}s", us / 1e6);
}

std::string Clock(std::time_t now) {
  std::tm tm{};
  localtime_r(&now, &tm);
  return fmt::format("{:02}:{:02}:{:02}", tm.tm_hour, tm.tm_min, tm.tm_sec);
}

// time reads/s hit% raw% comp% miss% us/buf cpu/buf [mJ/buf] p50us p99us raw comp ratio evict/s
// comp/s ahead/s stalls. The energy column is there only where the machine has RAPL.
constexpr char kLineFormat[] =
    "{:>8} {:>7} {:>5} {:>5} {:>5} {:>5} {:>7} {:>7}{} {:>7} {:>7} {:>7} {:>7} {:>5} {:>7} {:>7} "
    "{:>7} {:>6} {:>7} {:>7} {:>7} {:>7}\n";

// The optional column, with its leading space.
std::string EnergyColumn(bool energy, const std::string& text) {
  return energy ? fmt::format(" {:>7}", text) : std::string();
}

double JoulesPerBuffer(const StatInterval& iv) {
  return iv.reads ? iv.joules / static_cast<double>(iv.reads) : 0.0;
}

}  // namespace

StatInterval ComputeStatInterval(const CacheStats& before_in, const CacheStats& after,
                                 double seconds) {
  // Fewer reads than last time means a new daemon now serves the mount: its counters started
  // from zero, so they are the interval (better than an interval of nothing, or of wrapped
  // differences).
  static const CacheStats kZero;
  const CacheStats& before = after.reads < before_in.reads ? kZero : before_in;
  StatInterval iv;
  iv.seconds = seconds;
  uint64_t raw = Delta(after.raw_hits, before.raw_hits);
  uint64_t comp = Delta(after.compressed_hits, before.compressed_hits);
  uint64_t miss = Delta(after.misses, before.misses);
  iv.reads = Delta(after.reads, before.reads);
  // The three outcomes add up to reads in each snapshot; the shares use their own sum so that a
  // snapshot taken mid-read (counters a page apart) cannot show more than 100%.
  uint64_t outcomes = raw + comp + miss;
  iv.hit_pct = Pct(raw + comp, outcomes);
  iv.raw_pct = Pct(raw, outcomes);
  iv.compressed_pct = Pct(comp, outcomes);
  iv.miss_pct = Pct(miss, outcomes);
  double per_s = seconds > 0 ? 1.0 / seconds : 0.0;
  iv.reads_per_s = static_cast<double>(iv.reads) * per_s;
  iv.evictions_per_s = static_cast<double>(Delta(after.evictions, before.evictions)) * per_s;
  iv.compressions_per_s =
      static_cast<double>(Delta(after.compressions, before.compressions)) * per_s;
  iv.stalls = Delta(after.stalls, before.stalls);
  iv.readahead_per_s =
      static_cast<double>(Delta(after.readahead_pages, before.readahead_pages)) * per_s;
  iv.readahead_hits_per_s =
      static_cast<double>(Delta(after.readahead_hits, before.readahead_hits)) * per_s;
  iv.readahead_wasted_per_s =
      static_cast<double>(Delta(after.readahead_wasted, before.readahead_wasted)) * per_s;

  HistogramSnapshot lat = after.all_latency().Since(before.all_latency());
  iv.us_mean = lat.mean_us();
  iv.us_p50 = lat.PercentileUs(0.50);
  iv.us_p99 = lat.PercentileUs(0.99);

  // The cpu counters only grow, and `before` is zero for a restarted daemon: Minus is safe.
  const CpuTimes cpu = CpuTimesOf(Minus(after, before));
  iv.cpu_us = cpu.TotalUsPerBuffer(iv.reads);
  for (int i = 0; i < CpuTimes::kPaths; ++i) iv.cpu_path_us[i] = cpu.UsPerBuffer(i, iv.reads);

  iv.kernel_bytes = after.kernel_held_bytes;
  iv.raw_bytes = after.raw_bytes + iv.kernel_bytes;
  iv.compressed_bytes = after.compressed_bytes;
  iv.compression_ratio = after.compression_ratio();
  auto split = [](int percent, int codec) {
    return fmt::format("{}{}", percent, CodecName(static_cast<CodecKind>(codec)));
  };
  iv.split = (after.compressed_percent_auto || after.compressor_auto ? "a" : "") +
             split(after.compressed_percent, after.compressor);
  iv.predicted_us = after.predicted_us_per_buffer;
  if (after.recommended_percent >= 0) {
    iv.recommended = split(after.recommended_percent, after.recommended_codec);
    for (const SplitPrediction& p : after.predicted) {
      if (p.percent == after.recommended_percent &&
          (p.codec == after.recommended_codec || p.percent == 0)) {
        iv.recommended_us = p.us_per_buffer;
        break;
      }
    }
  }
  return iv;
}

StatInterval ComputeSinceMount(const CacheStats& now, double uptime_s) {
  StatInterval iv = ComputeStatInterval(CacheStats(), now, uptime_s);
  iv.since_mount = true;
  return iv;
}

std::string StatHeader(bool energy) {
  return fmt::format(kLineFormat, "time", "reads/s", "hit%", "raw%", "comp%", "miss%", "us/buf",
                     "cpu/buf", EnergyColumn(energy, "mJ/buf"), "p50us", "p99us", "raw", "comp",
                     "ratio", "evict/s", "comp/s", "ahead/s", "stalls", "split", "pred", "best", "bestus");
}

std::string FormatStatLine(const StatInterval& iv, std::time_t now, bool energy) {
  auto pct = [&](double v) { return iv.reads ? fmt::format("{:.1f}", v) : std::string("-"); };
  auto us = [&](double v) { return iv.reads ? Micros(v) : std::string("-"); };
  const std::string mj = iv.reads && iv.joules >= 0
                             ? fmt::format("{:.3f}", JoulesPerBuffer(iv) * 1e3)
                             : std::string("-");
  return fmt::format(kLineFormat, iv.since_mount ? "mount" : Clock(now), Rate(iv.reads_per_s),
                     pct(iv.hit_pct), pct(iv.raw_pct), pct(iv.compressed_pct), pct(iv.miss_pct),
                     us(iv.us_mean), us(iv.cpu_us), EnergyColumn(energy, mj), us(iv.us_p50), us(iv.us_p99),
                     Size(iv.raw_bytes), Size(iv.compressed_bytes),
                     fmt::format("{:.2f}", iv.compression_ratio), Rate(iv.evictions_per_s),
                     Rate(iv.compressions_per_s), Rate(iv.readahead_per_s), iv.stalls, iv.split,
                     iv.predicted_us > 0 ? Micros(iv.predicted_us) : std::string("-"),
                     iv.recommended.empty() ? std::string("-") : iv.recommended,
                     iv.recommended_us > 0 ? Micros(iv.recommended_us) : std::string("-"));
}

std::string FormatStatJson(const StatInterval& iv, std::time_t now) {
  nlohmann::ordered_json j;
  j["time"] = Clock(now);
  j["unix_time"] = static_cast<int64_t>(now);
  j["since_mount"] = iv.since_mount;
  j["interval_s"] = iv.seconds;
  j["reads"] = iv.reads;
  j["reads_per_s"] = iv.reads_per_s;
  j["hit_pct"] = iv.hit_pct;
  j["raw_pct"] = iv.raw_pct;
  j["compressed_pct"] = iv.compressed_pct;
  j["miss_pct"] = iv.miss_pct;
  j["us_per_buffer"] = iv.us_mean;
  j["p50_us"] = iv.us_p50;
  j["p99_us"] = iv.us_p99;
  j["cpu_us_per_buffer"] = iv.cpu_us;
  nlohmann::ordered_json by_path;
  for (int i = 0; i < CpuTimes::kPaths; ++i) by_path[CpuTimes::kNames[i]] = iv.cpu_path_us[i];
  j["cpu_us_per_buffer_by_path"] = std::move(by_path);
  if (iv.joules >= 0) {
    j["joules"] = iv.joules;
    j["joules_per_buffer"] = JoulesPerBuffer(iv);
  } else {
    j["joules"] = nullptr;
    j["joules_per_buffer"] = nullptr;
  }
  j["raw_bytes"] = iv.raw_bytes;
  j["kernel_bytes"] = iv.kernel_bytes;
  j["compressed_bytes"] = iv.compressed_bytes;
  j["compression_ratio"] = iv.compression_ratio;
  j["evictions_per_s"] = iv.evictions_per_s;
  j["compressions_per_s"] = iv.compressions_per_s;
  j["readahead_per_s"] = iv.readahead_per_s;
  j["readahead_hits_per_s"] = iv.readahead_hits_per_s;
  j["readahead_wasted_per_s"] = iv.readahead_wasted_per_s;
  j["stalls"] = iv.stalls;
  j["split"] = iv.split;
  j["predicted_us_per_buffer"] = iv.predicted_us;
  j["recommended_split"] = iv.recommended;
  j["recommended_us_per_buffer"] = iv.recommended_us;
  return j.dump() + "\n";
}

std::string SplitWaitingText(const CacheStats& s) {
  namespace w = split_waiting;
  const std::string& what = s.split_waiting;
  if (what.empty()) return "";
  const std::string counts =
      fmt::format("{} of {}", s.split_waiting_have, s.split_waiting_need);
  if (what == w::kWindow) return "a window of reads to measure over (" + counts + " reads)";
  if (what == w::kReuses) {
    return "the hit-ratio curve to see pages read again (" + counts + " reuses sampled)";
  }
  if (what == w::kTrip) return "a measurement of the FUSE round trip (raw_tier = kernel)";
  if (what == w::kAfterChange) return "the window after a change of split to pass (tiers refilling)";
  if (what == w::kCodecs) return "pages evicted from the raw tier to profile the codecs on";
  if (what == w::kFit) {
    return "a split whose tiers fit the memory the daemon has (none fits: see `ccfs mount`'s "
           "memory check)";
  }
  if (what == w::kCurveSpan) {
    return "the hit-ratio curve to span the largest candidate cache twice over (" + counts +
           " reads)";
  }
  if (what == w::kAutoKeys) {
    return "compressed_percent or compressor = auto: under raw_tier = kernel the estimator sees "
           "the readers' reads only then";
  }
  if (what == w::kOff) return "estimate_splits = true (it is false)";
  return what;
}

}  // namespace ccfs
