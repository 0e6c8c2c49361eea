// Prometheus text rendering (see prometheus.h for the names).
//
// Why fixed histogram bounds rather than the engine's own buckets: the engine has ~7,400 buckets
// of which any scrape shows the non-empty ones, and a series that appears and disappears between
// scrapes breaks rate() and histogram_quantile(). 24 fixed bounds from 250ns to 10s cover a raw
// hit (well under a microsecond) to a miss on a slow disk, at the resolution dashboards use.
//
// Why the names are derived rather than listed: the counter table is the one list of counters,
// so the exporter must not become a second one. An Event row is a count (ccfs_NAME_total) unless
// its name ends in _ns, which the table uses for accumulated time (exported in seconds, the base
// unit); TierSize and Level rows are values now (gauges) and already carry their unit in the
// name where they have one (_bytes) or count things (_pages, _frames).
#include "stats/prometheus.h"

#include <iterator>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ccfs/codec.h"

namespace ccfs {
namespace {

constexpr std::string_view kNsSuffix = "_ns";

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

bool IsNanoseconds(const CounterInfo& c) { return EndsWith(c.name, kNsSuffix); }

// The three read outcomes: label, count, bytes and latency. The Outcome rows other than `reads`
// (their sum) are these three; tests/stats/prometheus_test.cc checks it.
struct ReadPath {
  const char* label;
  uint64_t CacheStats::*count;
  uint64_t CacheStats::*bytes;
  HistogramSnapshot CacheStats::*latency;
};
constexpr ReadPath kReadPaths[] = {
    {"raw", &CacheStats::raw_hits, &CacheStats::raw_hit_bytes, &CacheStats::raw_hit_latency},
    {"compressed", &CacheStats::compressed_hits, &CacheStats::compressed_hit_bytes,
     &CacheStats::compressed_hit_latency},
    {"miss", &CacheStats::misses, &CacheStats::miss_bytes, &CacheStats::miss_latency},
};

// A row exported as ccfs_read_bytes_total{path} rather than under its own name.
bool IsPathBytes(const CounterInfo& c) {
  for (const ReadPath& p : kReadPaths) {
    if (c.field == p.bytes) return true;
  }
  return false;
}

double Seconds(uint64_t ns) { return static_cast<double>(ns) / 1e9; }

// HELP text: backslash and newline escaped.
std::string EscapeHelp(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '\\') out += "\\\\";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

// A label value: UTF-8 (invalid bytes become U+FFFD, as stats.json shows them), then backslash,
// double quote and newline escaped.
std::string LabelValue(std::string_view raw) {
  using Json = nlohmann::json;
  std::string utf8 =
      Json::parse(Json(std::string(raw)).dump(-1, ' ', false, Json::error_handler_t::replace))
          .get<std::string>();
  std::string out;
  for (char c : utf8) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

class Writer {
 public:
  // Starts a family: its HELP and TYPE lines.
  void Family(std::string_view name, std::string_view type, std::string_view help) {
    fmt::format_to(std::back_inserter(out_), "# HELP {} {}\n# TYPE {} {}\n", name, EscapeHelp(help),
                   name, type);
  }
  // One sample; `labels` is "" or the inside of the braces, already escaped.
  template <typename T>
  void Sample(std::string_view name, std::string_view labels, T value) {
    if (labels.empty()) {
      fmt::format_to(std::back_inserter(out_), "{} {}\n", name, value);
    } else {
      fmt::format_to(std::back_inserter(out_), "{}{{{}}} {}\n", name, labels, value);
    }
  }
  template <typename T>
  void Single(std::string_view name, std::string_view type, std::string_view help, T value) {
    Family(name, type, help);
    Sample(name, "", value);
  }
  std::string Take() { return std::move(out_); }

 private:
  std::string out_;
};

void WriteReadHistograms(const CacheStats& s, Writer* w) {
  constexpr char kName[] = "ccfs_read_seconds";
  w->Family(kName, "histogram",
            "Time the engine took to serve one page read, seconds, by path (raw = raw hit, "
            "compressed = compressed hit, miss = read from the backing file)");
  const std::string bucket = std::string(kName) + "_bucket";
  for (const ReadPath& p : kReadPaths) {
    const HistogramSnapshot& h = s.*p.latency;
    const std::vector<std::pair<uint64_t, uint64_t>> buckets = h.Buckets();
    const std::string path = fmt::format("path=\"{}\"", p.label);
    uint64_t total = 0;
    for (const auto& b : buckets) total += b.second;
    // Cumulative: walk the engine's buckets (ascending) once, across the fixed bounds.
    size_t next = 0;
    uint64_t cumulative = 0;
    for (uint64_t bound : kLatencyBoundsNs) {
      while (next < buckets.size() && buckets[next].first <= bound) {
        cumulative += buckets[next++].second;
      }
      w->Sample(bucket, fmt::format("{},le=\"{}\"", path, Seconds(bound)), cumulative);
    }
    w->Sample(bucket, path + ",le=\"+Inf\"", total);
    w->Sample(std::string(kName) + "_sum", path, Seconds(h.sum_ns()));
    w->Sample(std::string(kName) + "_count", path, total);
  }
}

// The ccfs_fuse_* families, ops asked for at least once (prometheus.h, section 4).
void WriteRequests(const std::vector<RequestStats::Kind>& requests, Writer* w) {
  std::vector<const RequestStats::Kind*> seen;
  for (const RequestStats::Kind& k : requests) {
    if (k.count() > 0) seen.push_back(&k);
  }
  if (seen.empty()) return;
  w->Family("ccfs_fuse_requests_total", "counter", "FUSE requests the daemon answered, by op");
  for (const RequestStats::Kind* k : seen) {
    w->Sample("ccfs_fuse_requests_total", fmt::format("op=\"{}\"", LabelValue(k->name)),
              k->count());
  }
  constexpr char kName[] = "ccfs_fuse_request_seconds";
  w->Family(kName, "histogram",
            "Time the daemon took to answer one FUSE request, seconds, by op: from the handler's "
            "entry to its reply");
  const std::string bucket = std::string(kName) + "_bucket";
  for (const RequestStats::Kind* k : seen) {
    const std::string op = fmt::format("op=\"{}\"", LabelValue(k->name));
    uint64_t cumulative = 0;
    for (size_t i = 0; i < std::size(kLatencyBoundsNs); ++i) {
      cumulative += k->buckets[i];
      w->Sample(bucket, fmt::format("{},le=\"{}\"", op, Seconds(kLatencyBoundsNs[i])),
                cumulative);
    }
    w->Sample(bucket, op + ",le=\"+Inf\"", k->count());
    w->Sample(std::string(kName) + "_sum", op, Seconds(k->sum_ns));
    w->Sample(std::string(kName) + "_count", op, k->count());
  }
}

}  // namespace

std::string PrometheusName(const CounterInfo& c) {
  std::string_view name = c.name;
  if (!IsCount(c.kind)) return fmt::format("ccfs_{}", name);
  if (IsNanoseconds(c)) {
    return fmt::format("ccfs_{}_seconds_total", name.substr(0, name.size() - kNsSuffix.size()));
  }
  return fmt::format("ccfs_{}_total", name);
}

std::string RenderPrometheus(const CacheStats& s, const DaemonIdentity& daemon,
                             std::string_view version,
                             const std::vector<RequestStats::Kind>& requests) {
  Writer w;
  w.Family("ccfs_build_info", "gauge", "Always 1; the version label is the ccfs release");
  w.Sample("ccfs_build_info", fmt::format("version=\"{}\"", LabelValue(version)), 1);
  w.Family("ccfs_mount_info", "gauge", "Always 1; the labels name the mount this daemon serves");
  w.Sample("ccfs_mount_info",
           fmt::format("dataset=\"{}\",mountpoint=\"{}\"", LabelValue(daemon.dataset),
                       LabelValue(daemon.mountpoint)),
           1);
  w.Single("ccfs_uptime_seconds", "gauge", "Seconds since the daemon started serving",
           daemon.uptime_s);
  // The name every Prometheus client's process collector uses, so existing dashboards find it.
  w.Single("process_resident_memory_bytes", "gauge",
           "Resident memory of the daemon process (VmRSS): its tiers' pages and its own memory",
           daemon.rss_bytes);
  w.Single("process_open_fds", "gauge", "Descriptors the daemon process has open", daemon.open_fds);
  w.Single("process_max_fds", "gauge",
           "Descriptors the daemon process may have open (its soft RLIMIT_NOFILE)", daemon.max_fds);
  w.Single("process_start_time_seconds", "gauge",
           "When the daemon started serving, seconds since the Unix epoch", daemon.start_time_s);

  w.Family("ccfs_reads_total", "counter",
           "Page reads by outcome: raw = raw hit, compressed = compressed hit, miss = read from "
           "the backing file");
  for (const ReadPath& p : kReadPaths) {
    w.Sample("ccfs_reads_total", fmt::format("path=\"{}\"", p.label), s.*p.count);
  }
  WriteReadHistograms(s, &w);
  w.Family("ccfs_read_bytes_total", "counter",
           "Bytes page reads copied to readers, by path as ccfs_reads_total; their sum is every "
           "byte served");
  for (const ReadPath& p : kReadPaths) {
    w.Sample("ccfs_read_bytes_total", fmt::format("path=\"{}\"", p.label), s.*p.bytes);
  }
  WriteRequests(requests, &w);

  for (const CounterInfo& c : kCacheCounters) {
    // ccfs_reads_total and ccfs_read_bytes_total above
    if (c.kind == CounterKind::kOutcome || IsPathBytes(c)) continue;
    const std::string name = PrometheusName(c);
    const uint64_t v = s.*c.field;
    if (IsNanoseconds(c)) {
      w.Single(name, "counter", fmt::format("{}, seconds", c.help), Seconds(v));
    } else {
      w.Single(name, IsCount(c.kind) ? "counter" : "gauge", c.help, v);
    }
  }

  w.Single("ccfs_compression_ratio", "gauge",
           "Bytes the compressed pages hold once decompressed / bytes charged for them (1 when "
           "empty)",
           s.compression_ratio());
  w.Single("ccfs_compressed_share", "gauge",
           "Setting compressed_percent as a fraction: share of memory given to the compressed "
           "tier, 0-1",
           s.compressed_percent / 100.0);
  w.Single("ccfs_compressed_percent", "gauge",
           "Setting compressed_percent: share of memory given to the compressed tier, percent "
           "(deprecated: ccfs_compressed_share is the same as a fraction; this name goes in the "
           "next release)",
           s.compressed_percent);
  w.Single("ccfs_page_size_bytes", "gauge", "Setting page_size: bytes per cached page",
           s.page_size);
  w.Single("ccfs_compression_level", "gauge", "Setting compression_level: level of the codec",
           s.compression_level);
  w.Family("ccfs_compressor_info", "gauge", "Always 1; the compressor label is the codec now");
  w.Sample("ccfs_compressor_info",
           fmt::format("compressor=\"{}\"",
                       LabelValue(CodecName(static_cast<CodecKind>(s.compressor)))),
           1);
  return w.Take();
}

}  // namespace ccfs
