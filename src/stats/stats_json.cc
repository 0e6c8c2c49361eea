// Stats JSON rendering and parsing (see stats_json.h for the document's shape).
//
// The counters are listed once, in kCounters, and both directions walk that table, so a counter
// added to CacheStats needs one line here to appear in the JSON and to read back.
#include "stats/stats_json.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "ccfs/options.h"

namespace ccfs {
namespace {

using Json = nlohmann::ordered_json;

struct Counter {
  const char* name;
  uint64_t CacheStats::*field;
};

// The headline counters come first in the document (after hit_ratio), in this order.
constexpr Counter kHeadline[] = {
    {"reads", &CacheStats::reads},
    {"raw_hits", &CacheStats::raw_hits},
    {"compressed_hits", &CacheStats::compressed_hits},
    {"misses", &CacheStats::misses},
};
constexpr Counter kTierSizes[] = {
    {"memory_bytes", &CacheStats::memory_bytes},
    {"raw_bytes", &CacheStats::raw_bytes},
    {"compressed_bytes", &CacheStats::compressed_bytes},
};
constexpr Counter kOthers[] = {
    {"read_errors", &CacheStats::read_errors},
    {"buffered_misses", &CacheStats::buffered_misses},
    {"page_writes", &CacheStats::page_writes},
    {"invalidations", &CacheStats::invalidations},
    {"evictions", &CacheStats::evictions},
    {"evict_sweeps", &CacheStats::evict_sweeps},
    {"compressions", &CacheStats::compressions},
    {"compressed_stored", &CacheStats::compressed_stored},
    {"rejects", &CacheStats::rejects},
    {"zero_pages", &CacheStats::zero_pages},
    {"admission_drops", &CacheStats::admission_drops},
    {"incompressible_skips", &CacheStats::incompressible_skips},
    {"pressure_drops", &CacheStats::pressure_drops},
    {"compressed_evictions", &CacheStats::compressed_evictions},
    {"promotions", &CacheStats::promotions},
    {"wasted_compressions", &CacheStats::wasted_compressions},
    {"stalls", &CacheStats::stalls},
    {"stall_ns", &CacheStats::stall_ns},
    {"compress_ns", &CacheStats::compress_ns},
    {"decompress_ns", &CacheStats::decompress_ns},
    {"raw_budget_bytes", &CacheStats::raw_budget_bytes},
    {"compressed_budget_bytes", &CacheStats::compressed_budget_bytes},
    {"raw_pages", &CacheStats::raw_pages},
    {"free_frames", &CacheStats::free_frames},
    {"compressed_pages", &CacheStats::compressed_pages},
    {"compressed_logical_bytes", &CacheStats::compressed_logical_bytes},
};

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

}  // namespace

std::string RenderStatsJson(const CacheStats& s) {
  Json j;
  j["hit_ratio"] = Round(s.hit_ratio(), 6);
  for (const Counter& c : kHeadline) j[c.name] = s.*c.field;
  j["us_per_buffer"] = Round3(s.us_per_buffer());
  j["compression_ratio"] = Round3(s.compression_ratio());
  j["compressed_percent"] = s.compressed_percent;
  for (const Counter& c : kTierSizes) j[c.name] = s.*c.field;
  for (const Counter& c : kOthers) j[c.name] = s.*c.field;
  j["compressor"] = CodecName(static_cast<CodecKind>(s.compressor));
  j["compression_level"] = s.compression_level;
  j["page_size"] = s.page_size;
  Json latency;
  for (const Path& p : kPaths) latency[p.name] = RenderHistogram(s.*p.field);
  latency["all"] = RenderHistogram(s.all_latency());
  j["latency"] = std::move(latency);
  return j.dump(2) + "\n";
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
  auto read_table = [&](const Counter* begin, const Counter* end) {
    for (const Counter* c = begin; c != end && st.ok(); ++c) {
      st = ReadUnsigned(j, "", c->name, &(out.*c->field));
    }
  };
  read_table(std::begin(kHeadline), std::end(kHeadline));
  read_table(std::begin(kTierSizes), std::end(kTierSizes));
  read_table(std::begin(kOthers), std::end(kOthers));
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

  if (auto it = j.find("compressor"); it != j.end()) {
    CodecKind kind;
    if (!it->is_string() || !ParseCodecKind(it->get<std::string>(), &kind)) {
      return Status::InvalidArgument("stats JSON: compressor must be \"lz4\" or \"zstd\", got " +
                                     it->dump());
    }
    out.compressor = static_cast<int>(kind);
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
