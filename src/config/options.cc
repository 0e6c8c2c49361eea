// Options::Validate and the codec names.
//
// Validation is split per key (ValidateOptionKey in options_internal.h) so that the TOML loader can
// point at the line of the key that broke a rule, while Validate() simply runs every key in the
// order the keys are documented. Rules that involve two keys (memory needs room for 16 raw pages
// of page_size; compression_level depends on compressor) are reported under the key whose value
// is judged, and list the other keys so the loader can fall back to one of their lines.
#include "ccfs/options.h"

#include <zstd.h>

#include <cmath>
#include <string>

#include <fmt/format.h>

#include "config/options_internal.h"

namespace ccfs {

const char* CodecName(CodecKind kind) {
  switch (kind) {
    case CodecKind::kLz4:
      return "lz4";
    case CodecKind::kZstd:
      return "zstd";
  }
  return "?";
}

bool ParseCodecKind(const std::string& name, CodecKind* kind) {
  if (name == "lz4") {
    *kind = CodecKind::kLz4;
    return true;
  }
  if (name == "zstd") {
    *kind = CodecKind::kZstd;
    return true;
  }
  return false;
}

namespace config_internal {

namespace {

// The raw tier needs enough frames that a batch of victims and a watermark of at least one page
// each still leave frames to serve hits; fewer than this and the evictor would thrash.
constexpr uint64_t kMinRawPages = 16;
constexpr uint64_t kMinMemory = 1ull << 20;
constexpr uint32_t kMinPageSize = 4096;
constexpr uint32_t kMaxPageSize = 131072;
// LZ4 level 1 is the fast compressor; 2..12 select LZ4HC levels (LZ4HC_CLEVEL_MAX is 12).
constexpr int kLz4MinLevel = 1;
constexpr int kLz4MaxLevel = 12;

Status OutOfRange(const std::string& key, const std::string& value, const std::string& rule) {
  return Status::InvalidArgument(fmt::format("{} = {}: {}", key, value, rule));
}

Status CheckIntKey(const Options& o, const std::string& key, long long value) {
  long long lo = 0, hi = 0;
  IntKeyRange(o, key, &lo, &hi);
  if (value < lo || value > hi) {
    std::string rule = fmt::format("must be between {} and {}", lo, hi);
    if (key == "compression_level") rule += fmt::format(" for compressor {}", CodecName(o.compressor));
    return OutOfRange(key, std::to_string(value), rule);
  }
  return Status::Ok();
}

// Percentages in (0, hi] or [0, hi]; NaN and infinities never pass.
Status CheckPercent(const char* key, double value, bool zero_allowed, double hi) {
  bool ok = std::isfinite(value) && value <= hi && (zero_allowed ? value >= 0 : value > 0);
  if (!ok) {
    return OutOfRange(key, fmt::format("{}", value),
                      zero_allowed ? fmt::format("must be between 0 and {}", hi)
                                   : fmt::format("must be greater than 0 and at most {}", hi));
  }
  return Status::Ok();
}

}  // namespace

void CodecLevelRange(CodecKind kind, int* lo, int* hi) {
  if (kind == CodecKind::kZstd) {
    *lo = ZSTD_minCLevel();
    *hi = ZSTD_maxCLevel();
  } else {
    *lo = kLz4MinLevel;
    *hi = kLz4MaxLevel;
  }
}

bool IntKeyRange(const Options& o, const std::string& key, long long* lo, long long* hi) {
  if (key == "compressed_percent") {
    *lo = 0, *hi = 95;
  } else if (key == "compression_level") {
    int l, h;
    CodecLevelRange(o.compressor, &l, &h);
    *lo = l, *hi = h;
  } else if (key == "compress_threads") {
    *lo = 0, *hi = 256;
  } else if (key == "request_threads") {
    *lo = 1, *hi = 64;
  } else {
    return false;
  }
  return true;
}

const std::vector<std::string>& RelatedKeys(const std::string& key) {
  static const std::vector<std::string> kMemory = {"memory", "page_size", "compressed_percent"};
  static const std::vector<std::string> kLevel = {"compression_level", "compressor"};
  static const std::vector<std::string> kNone = {};
  if (key == "memory") return kMemory;
  if (key == "compression_level") return kLevel;
  return kNone;
}

Status ValidateOptionKey(const Options& o, const std::string& key) {
  if (key == "memory") {
    if (o.memory < kMinMemory) {
      return OutOfRange(key, std::to_string(o.memory), fmt::format("must be at least 1MiB ({})", kMinMemory));
    }
    // Only judge the raw-page rule once page_size and compressed_percent are themselves valid,
    // so the message blames the right key.
    if (!ValidateOptionKey(o, "page_size").ok() || !ValidateOptionKey(o, "compressed_percent").ok()) {
      return Status::Ok();
    }
    uint64_t need = kMinRawPages * o.page_size;
    if (o.raw_budget() < need) {
      return OutOfRange(key, std::to_string(o.memory),
                        fmt::format("the raw tier ({}% of memory = {} bytes) must hold at least {} "
                                    "pages of page_size {} ({} bytes)",
                                    100 - o.compressed_percent, o.raw_budget(), kMinRawPages,
                                    o.page_size, need));
    }
    return Status::Ok();
  }
  if (key == "compressed_percent") return CheckIntKey(o, key, o.compressed_percent);
  if (key == "page_size") {
    bool power_of_two = o.page_size != 0 && (o.page_size & (o.page_size - 1)) == 0;
    if (!power_of_two || o.page_size < kMinPageSize || o.page_size > kMaxPageSize) {
      return OutOfRange(key, std::to_string(o.page_size),
                        fmt::format("must be a power of two between {} and {}", kMinPageSize, kMaxPageSize));
    }
    return Status::Ok();
  }
  if (key == "compressor") {
    if (o.compressor != CodecKind::kLz4 && o.compressor != CodecKind::kZstd) {
      return OutOfRange(key, CodecName(o.compressor), "must be lz4 or zstd");
    }
    return Status::Ok();
  }
  if (key == "compression_level") return CheckIntKey(o, key, o.compression_level);
  if (key == "compress_threads") return CheckIntKey(o, key, o.compress_threads);
  if (key == "min_savings_percent") return CheckPercent("min_savings_percent", o.min_savings_percent, true, 99);
  if (key == "evict_batch_percent") return CheckPercent("evict_batch_percent", o.evict_batch_percent, false, 50);
  if (key == "low_watermark_percent") {
    return CheckPercent("low_watermark_percent", o.low_watermark_percent, false, 50);
  }
  if (key == "request_threads") return CheckIntKey(o, key, o.request_threads);
  if (key == "allow_other" || key == "admission_filter" || key == "pin_threads" || key == "probation") {
    return Status::Ok();
  }
  if (key == "attr_timeout") {
    if (!std::isfinite(o.attr_timeout) || o.attr_timeout < 0) {
      return OutOfRange(key, fmt::format("{}", o.attr_timeout), "must be a finite number of seconds >= 0");
    }
    return Status::Ok();
  }
  return Status::InvalidArgument("unknown key '" + key + "'");
}

Status ValidateAllKeys(const Options& options, std::string* failed_key) {
  for (const KeyInfo& info : AllKeys()) {
    Status s = ValidateOptionKey(options, info.name);
    if (!s.ok()) {
      if (failed_key != nullptr) *failed_key = info.name;
      return s;
    }
  }
  return Status::Ok();
}

const std::vector<KeyInfo>& AllKeys() {
  // Order: as documented in conf/ccfs.toml and rendered by RenderConfig. Tables group the keys by
  // the part of ccfs that reads them.
  static const std::vector<KeyInfo> kKeys = {
      {"memory", "cache", KeyType::kSize, false,
       "Total RAM for cached pages (raw frames + compressed blobs); bytes or a size such as \"256MiB\"."},
      {"compressed_percent", "cache", KeyType::kInt, true,
       "Share of memory given to the compressed tier, percent, 0..95 (0 = raw-only baseline)."},
      {"page_size", "cache", KeyType::kSize, false,
       "Bytes per cached page: a power of two from 4KiB to 128KiB."},
      {"compressor", "compression", KeyType::kCodec, true, "Codec of the compressed tier: \"lz4\" or \"zstd\"."},
      {"compression_level", "compression", KeyType::kInt, true,
       "Codec level: lz4 1 = fast, 2..12 = LZ4HC; zstd its own range (negative = fast levels)."},
      {"compress_threads", "compression", KeyType::kInt, false,
       "Threads compressing eviction victims, 0..256; 0 = one per online CPU."},
      {"min_savings_percent", "compression", KeyType::kDouble, true,
       "Keep a page compressed only if it saves at least this much, percent, 0..99."},
      {"admission_filter", "compression", KeyType::kBool, true,
       "Compress a raw victim only if it was read again since it was loaded or comes back after an "
       "earlier eviction (true), or every victim (false)."},
      {"evict_batch_percent", "eviction", KeyType::kDouble, true,
       "Victims taken per sweep of the raw tier, percent of raw frames, (0, 50] (at least one page)."},
      {"low_watermark_percent", "eviction", KeyType::kDouble, true,
       "The evictor starts when free raw frames fall below this, percent of raw frames, (0, 50]."},
      {"probation", "eviction", KeyType::kBool, true,
       "Evict first a page loaded by a miss that had not been read lately, unless it is read again "
       "before the next sweep (true), or leave every page to the CLOCK hand (false)."},
      {"request_threads", "daemon", KeyType::kInt, false, "Threads serving FUSE requests, 1..64."},
      {"pin_threads", "daemon", KeyType::kBool, false,
       "Request threads on the first CPUs, compression workers on the last ones."},
      {"allow_other", "daemon", KeyType::kBool, false, "Let other users reach the mount (FUSE allow_other)."},
      {"attr_timeout", "daemon", KeyType::kDouble, false,
       "Seconds the kernel may cache names and attributes, >= 0."},
  };
  return kKeys;
}

const KeyInfo* FindKey(std::string_view name) {
  for (const KeyInfo& info : AllKeys()) {
    if (info.name == name) return &info;
  }
  return nullptr;
}

}  // namespace config_internal

Status Options::Validate() const { return config_internal::ValidateAllKeys(*this, nullptr); }

}  // namespace ccfs
