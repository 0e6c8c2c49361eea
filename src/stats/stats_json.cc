// Stats JSON rendering and parsing (see stats_json.h for the document's shape).
//
// Both directions walk the counter table (stats/counters.h, from CCFS_CACHE_COUNTERS), so a
// counter added to CacheStats appears in the JSON and reads back with no change here.
#include "stats/stats_json.h"


#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "ccfs/mount_protocol.h"
#include "ccfs/options.h"
#include "stats/counters.h"
#include "util/proc_status.h"

namespace ccfs {
namespace {

using Json = nlohmann::ordered_json;

// The counters are written in groups, each in the order of CCFS_CACHE_COUNTERS: the read
// outcomes first (after hit_ratio), then the derived figures, the three tier sizes, the other
// events and the other sizes.
void RenderCounters(const CacheStats& s, CounterKind kind, Json* j) {
  for (const CounterInfo& c : kCacheCounters) {
    if (c.kind == kind) (*j)[c.name] = s.*c.field;
  }
}

// Latency paths: JSON name and the CacheStats member (null for the merged "all").
struct Path {
  const char* name;
  HistogramSnapshot CacheStats::*field;
};
constexpr Path kPaths[] = {
    {"raw_hit", &CacheStats::raw_hit_latency},
    {"compressed_hit", &CacheStats::compressed_hit_latency},
    {"miss", &CacheStats::miss_latency},
};

// Rounds to `digits` decimals so the document shows the resolution that exists (ns for µs
// figures) without binary-fraction noise.
double Round(double v, int digits) {
  double scale = std::pow(10.0, digits);
  return std::round(v * scale) / scale;
}
double Round3(double v) { return Round(v, 3); }

Json RenderHistogram(const HistogramSnapshot& h) {
  Json j;
  j["count"] = h.count();
  j["sum_ns"] = h.sum_ns();
  j["min_ns"] = h.min_ns();
  j["max_ns"] = h.max_ns();
  j["mean_us"] = Round3(h.mean_us());
  j["p50_us"] = Round3(h.PercentileUs(0.50));
  j["p90_us"] = Round3(h.PercentileUs(0.90));
  j["p99_us"] = Round3(h.PercentileUs(0.99));
  j["p999_us"] = Round3(h.PercentileUs(0.999));
  j["max_us"] = Round3(static_cast<double>(h.max_ns()) / 1000.0);
  Json buckets = Json::array();
  for (const auto& [upper, n] : h.Buckets()) buckets.push_back(Json::array({upper, n}));
  j["buckets"] = std::move(buckets);
  return j;
}

// --- parsing helpers: each names the key path it complains about ---

Status ReadUnsigned(const Json& obj, const std::string& where, const char* key, uint64_t* out) {
  auto it = obj.find(key);
  if (it == obj.end()) return Status::Ok();
  if (it->is_number_unsigned()) {
    *out = it->get<uint64_t>();
  } else if (it->is_number_integer() && it->get<int64_t>() >= 0) {
    *out = static_cast<uint64_t>(it->get<int64_t>());
  } else {
    return Status::InvalidArgument("stats JSON: " + where + key +
                                   " must be a non-negative integer, got " + it->dump());
  }
  return Status::Ok();
}

Status ReadInt(const Json& obj, const char* key, int* out) {
  auto it = obj.find(key);
  if (it == obj.end()) return Status::Ok();
  bool fits = it->is_number_unsigned() ? it->get<uint64_t>() <= INT32_MAX
                                        : it->is_number_integer() &&
                                              it->get<int64_t>() >= INT32_MIN &&
                                              it->get<int64_t>() <= INT32_MAX;
  if (!fits) {
    return Status::InvalidArgument(std::string("stats JSON: ") + key + " must be an integer, got " +
                                   it->dump());
  }
  *out = static_cast<int>(it->get<int64_t>());
  return Status::Ok();
}

Status ParseHistogram(const Json& j, const std::string& where, HistogramSnapshot* out) {
  if (!j.is_object()) {
    return Status::InvalidArgument("stats JSON: " + where + " must be an object, got " + j.dump());
  }
  uint64_t sum_ns = 0, min_ns = 0, max_ns = 0;
  std::string prefix = where + ".";
  Status st = ReadUnsigned(j, prefix, "sum_ns", &sum_ns);
  if (st.ok()) st = ReadUnsigned(j, prefix, "min_ns", &min_ns);
  if (st.ok()) st = ReadUnsigned(j, prefix, "max_ns", &max_ns);
  if (!st.ok()) return st;
  std::vector<std::pair<uint64_t, uint64_t>> buckets;
  auto it = j.find("buckets");
  if (it != j.end()) {
    if (!it->is_array()) {
      return Status::InvalidArgument("stats JSON: " + prefix + "buckets must be an array");
    }
    for (size_t i = 0; i < it->size(); ++i) {
      const Json& b = (*it)[i];
      if (!b.is_array() || b.size() != 2 || !b[0].is_number_unsigned() ||
          !b[1].is_number_unsigned()) {
        return Status::InvalidArgument("stats JSON: " + prefix + "buckets[" + std::to_string(i) +
                                       "] must be [upper_ns, count], got " + b.dump());
      }
      buckets.emplace_back(b[0].get<uint64_t>(), b[1].get<uint64_t>());
    }
  }
  *out = HistogramSnapshot::FromBuckets(sum_ns, min_ns, max_ns, buckets);
  return Status::Ok();
}

// "split_estimate": {recommended_percent, recommended_compressor, predicted_us_per_buffer, trip_us,
// waiting_for, waiting_have, waiting_need,
// predicted: [{compressed_percent, compressor, hit_ratio, us_per_buffer}, ...]}.
Status ParseSplitEstimate(const Json& j, CacheStats* out) {
  auto bad = [](const std::string& what, const Json& got) {
    return Status::InvalidArgument("stats JSON: split_estimate." + what + ", got " + got.dump());
  };
  if (!j.is_object()) return bad("must be an object", j);
  auto codec = [&](const Json& v, const std::string& name, int* kind) {
    CodecKind k;
    if (!v.is_string() || !ParseCodecKind(v.get<std::string>(), &k)) {
      return bad(name + " must be \"lz4\" or \"zstd\"", v);
    }
    *kind = static_cast<int>(k);
    return Status::Ok();
  };
  if (auto it = j.find("recommended_percent"); it != j.end()) {
    if (!it->is_number_integer()) return bad("recommended_percent must be an integer", *it);
    out->recommended_percent = it->get<int>();
  }
  if (auto it = j.find("recommended_compressor"); it != j.end()) {
    Status st = codec(*it, "recommended_compressor", &out->recommended_codec);
    if (!st.ok()) return st;
  }
  if (auto it = j.find("predicted_us_per_buffer"); it != j.end()) {
    if (!it->is_number()) return bad("predicted_us_per_buffer must be a number", *it);
    out->predicted_us_per_buffer = it->get<double>();
  }
  if (auto it = j.find("trip_us"); it != j.end()) {
    if (!it->is_number()) return bad("trip_us must be a number", *it);
    out->predicted_trip_us = it->get<double>();
  }
  if (auto it = j.find("waiting_for"); it != j.end()) {
    if (!it->is_string()) return bad("waiting_for must be a string", *it);
    out->split_waiting = it->get<std::string>();
  }
  for (auto [name, field] : {std::pair{"waiting_have", &out->split_waiting_have},
                             std::pair{"waiting_need", &out->split_waiting_need}}) {
    if (auto it = j.find(name); it != j.end()) {
      if (!it->is_number_unsigned()) return bad(std::string(name) + " must be a count", *it);
      *field = it->get<uint64_t>();
    }
  }
  if (auto it = j.find("predicted"); it != j.end()) {
    if (!it->is_array()) return bad("predicted must be an array", *it);
    for (size_t i = 0; i < it->size(); ++i) {
      const Json& r = (*it)[i];
      const std::string at = "predicted[" + std::to_string(i) + "]";
      if (!r.is_object() || !r.contains("compressed_percent") || !r.contains("compressor") ||
          !r.contains("hit_ratio") || !r.contains("us_per_buffer") ||
          !r["compressed_percent"].is_number_integer() || !r["hit_ratio"].is_number() ||
          !r["us_per_buffer"].is_number()) {
        return bad(at + " must be {compressed_percent, compressor, hit_ratio, us_per_buffer}", r);
      }
      SplitPrediction p;
      p.percent = r["compressed_percent"].get<int>();
      Status st = codec(r["compressor"], at + ".compressor", &p.codec);
      if (!st.ok()) return st;
      p.hit_ratio = r["hit_ratio"].get<double>();
      p.us_per_buffer = r["us_per_buffer"].get<double>();
      out->predicted.push_back(p);
    }
  }
  return Status::Ok();
}

// The counters' document as an object, for RenderStatsJson and RenderMountStatsJson.
Json StatsObject(const CacheStats& s) {
  Json j;
  j["hit_ratio"] = Round(s.hit_ratio(), 6);
  RenderCounters(s, CounterKind::kOutcome, &j);
  j["us_per_buffer"] = Round3(s.us_per_buffer());
  j["cpu_us_per_buffer"] = Round3(s.cpu_us_per_buffer());
  j["compression_ratio"] = Round3(s.compression_ratio());
  j["compressed_percent"] = s.compressed_percent;
  j["raw_tier"] = s.kernel_raw_tier ? "kernel" : "daemon";
  j["kernel_evict"] = s.kernel_evict;
  RenderCounters(s, CounterKind::kTierSize, &j);
  RenderCounters(s, CounterKind::kEvent, &j);
  RenderCounters(s, CounterKind::kLevel, &j);
  j["compressor"] = CodecName(static_cast<CodecKind>(s.compressor));
  j["compression_level"] = s.compression_level;
  j["page_size"] = s.page_size;
  j["compressed_percent_auto"] = s.compressed_percent_auto;
  j["compressor_auto"] = s.compressor_auto;
  Json split = Json::object();
  split["recommended_percent"] = s.recommended_percent;
  split["recommended_compressor"] = CodecName(static_cast<CodecKind>(s.recommended_codec));
  split["predicted_us_per_buffer"] = Round3(s.predicted_us_per_buffer);
  split["trip_us"] = Round3(s.predicted_trip_us);
  split["waiting_for"] = s.split_waiting;
  split["waiting_have"] = s.split_waiting_have;
  split["waiting_need"] = s.split_waiting_need;
  Json curve = Json::array();
  for (const SplitPrediction& p : s.predicted) {
    curve.push_back({{"compressed_percent", p.percent},
                     {"compressor", CodecName(static_cast<CodecKind>(p.codec))},
                     {"hit_ratio", Round(p.hit_ratio, 6)},
                     {"us_per_buffer", Round3(p.us_per_buffer)}});
  }
  split["predicted"] = std::move(curve);
  j["split_estimate"] = std::move(split);
  const CpuTimes cpu = CpuTimesOf(s);
  Json cpu_us;
  for (int i = 0; i < CpuTimes::kPaths; ++i) cpu_us[CpuTimes::kNames[i]] = Round3(cpu.ns[i] / 1e3);
  cpu_us["total"] = Round3(cpu.total_ns() / 1e3);
  j["cpu_us"] = std::move(cpu_us);
  Json latency;
  for (const Path& p : kPaths) latency[p.name] = RenderHistogram(s.*p.field);
  latency["all"] = RenderHistogram(s.all_latency());
  j["latency"] = std::move(latency);
  return j;
}

}  // namespace

std::string RenderStatsJson(const CacheStats& s) { return StatsObject(s).dump(2) + "\n"; }

DaemonIdentity DaemonIdentity::Now(const std::string& dataset, const std::string& mountpoint,
                                   std::chrono::steady_clock::time_point started) {
  DaemonIdentity d;
  d.pid = getpid();
  d.dataset = dataset;
  d.mountpoint = mountpoint;
  d.uptime_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  d.rss_bytes = ProcStatusBytes(getpid(), "VmRSS:");
  d.open_fds = OpenDescriptorCount();
  rlimit nofile{};
  if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur != RLIM_INFINITY) {
    d.max_fds = nofile.rlim_cur;
  }
  d.start_time_s =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count() -
      d.uptime_s;
  return d;
}

std::string RenderMountStatsJson(const CacheStats& s, const DaemonIdentity& daemon) {
  Json j = StatsObject(s);
  Json d;
  d[kStatsDaemonPidKey] = daemon.pid;
  d["dataset"] = daemon.dataset;
  d["mountpoint"] = daemon.mountpoint;
  d[kStatsDaemonUptimeKey] = Round3(daemon.uptime_s);
  d["rss_bytes"] = daemon.rss_bytes;
  d["open_fds"] = daemon.open_fds;
  d["start_time_s"] = Round3(daemon.start_time_s);
  j[kStatsDaemonKey] = std::move(d);
  return j.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

Status ParseStatsJson(const std::string& text, CacheStats* s) {
  Json j;
  try {
    j = Json::parse(text);
  } catch (const Json::parse_error& e) {
    return Status::InvalidArgument("stats JSON: not valid JSON at byte " + std::to_string(e.byte) +
                                   ": " + e.what());
  }
  if (!j.is_object()) return Status::InvalidArgument("stats JSON: the document must be an object");

  CacheStats out;
  Status st;
  for (const CounterInfo& c : kCacheCounters) {
    if (st.ok()) st = ReadUnsigned(j, "", c.name, &(out.*c.field));
  }
  if (st.ok()) st = ReadInt(j, "compressed_percent", &out.compressed_percent);
  if (st.ok()) st = ReadInt(j, "compression_level", &out.compression_level);
  if (st.ok()) {
    uint64_t page_size = 0;
    st = ReadUnsigned(j, "", "page_size", &page_size);
    if (st.ok() && page_size > UINT32_MAX) {
      st = Status::InvalidArgument("stats JSON: page_size " + std::to_string(page_size) +
                                   " is out of range");
    }
    out.page_size = static_cast<uint32_t>(page_size);
  }
  if (!st.ok()) return st;

  if (auto it = j.find("raw_tier"); it != j.end()) {
    if (!it->is_string() || (*it != "daemon" && *it != "kernel")) {
      return Status::InvalidArgument("stats JSON: raw_tier must be \"daemon\" or \"kernel\", got " +
                                     it->dump());
    }
    out.kernel_raw_tier = *it == "kernel";
  }
  if (auto it = j.find("kernel_evict"); it != j.end()) {
    if (!it->is_boolean()) {
      return Status::InvalidArgument("stats JSON: kernel_evict must be true or false, got " +
                                     it->dump());
    }
    out.kernel_evict = it->get<bool>();
  }
  if (auto it = j.find("compressor"); it != j.end()) {
    CodecKind kind;
    if (!it->is_string() || !ParseCodecKind(it->get<std::string>(), &kind)) {
      return Status::InvalidArgument("stats JSON: compressor must be \"lz4\" or \"zstd\", got " +
                                     it->dump());
    }
    out.compressor = static_cast<int>(kind);
  }

  for (auto [key, field] : {std::pair{"compressed_percent_auto", &CacheStats::compressed_percent_auto},
                             std::pair{"compressor_auto", &CacheStats::compressor_auto}}) {
    if (auto it = j.find(key); it != j.end()) {
      if (!it->is_boolean()) {
        return Status::InvalidArgument(std::string("stats JSON: ") + key +
                                       " must be true or false, got " + it->dump());
      }
      out.*field = it->get<bool>();
    }
  }
  if (auto it = j.find("split_estimate"); it != j.end()) {
    st = ParseSplitEstimate(*it, &out);
    if (!st.ok()) return st;
  }

  if (auto it = j.find("latency"); it != j.end()) {
    if (!it->is_object()) return Status::InvalidArgument("stats JSON: latency must be an object");
    for (const Path& p : kPaths) {
      auto h = it->find(p.name);
      if (h == it->end()) continue;
      st = ParseHistogram(*h, std::string("latency.") + p.name, &(out.*p.field));
      if (!st.ok()) return st;
    }
  }
  *s = std::move(out);
  return Status::Ok();
}

}  // namespace ccfs
