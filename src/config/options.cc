// Options::Validate: the rules of the key table, checked in one place.
//
// Validation runs per key (CheckKey) so that the TOML loader can point at the line of the key that
// broke a rule, while Validate() simply runs every key in table order. Rules that involve two keys
// (memory needs room for 16 raw pages of page_size; compression_level depends on compressor) are
// reported under the key whose value is judged; RuleReads lists the other keys so the loader can
// fall back to one of their lines.
#include "ccfs/options.h"

#include <cmath>
#include <string>

#include <fmt/format.h>

#include "ccfs/config.h"
#include "config/keys.h"
#include "config/listen_address.h"
#include "util/sftp_target.h"
#include "util/strings.h"

namespace ccfs {

namespace config {

namespace {

Status Refuse(const KeySpec& key, const std::string& shown, const std::string& rule) {
  return Status::InvalidArgument(fmt::format("{} = {}: {}", key.name, shown, rule));
}

// The allowed range of an integer key, given the rest of `o` (a level depends on the codec).
void IntRange(const Options& o, const KeySpec& key, long long* lo, long long* hi) {
  if (key.rule.kind == Rule::kCodecLevel) {
    CodecLevels levels = CodecLevelRange(o.compressor);
    *lo = levels.min, *hi = levels.max;
  } else {
    *lo = static_cast<long long>(key.rule.lo), *hi = static_cast<long long>(key.rule.hi);
  }
}

// The rule in words, for a value of `key` that breaks it.
std::string RuleText(const Options& o, const KeySpec& key) {
  const Rule& r = key.rule;
  switch (r.kind) {
    case Rule::kIntRange:
    case Rule::kCodecLevel: {
      long long lo = 0, hi = 0;
      IntRange(o, key, &lo, &hi);
      return fmt::format("must be between {} and {}", lo, hi);
    }
    case Rule::kPercent:
      return fmt::format("must be between {} and {}", r.lo, r.hi);
    case Rule::kAbovePercent:
      return fmt::format("must be greater than {} and at most {}", r.lo, r.hi);
    case Rule::kSeconds:
      return "must be a finite number of seconds >= 0";
    case Rule::kPositiveSeconds:
      return "must be a finite number of seconds > 0";
    case Rule::kPowerOfTwo:
      return fmt::format("must be a power of two between {} and {}", static_cast<uint64_t>(r.lo),
                         static_cast<uint64_t>(r.hi));
    case Rule::kMemory:
      return fmt::format("must be at least {} ({})", FormatSize(static_cast<uint64_t>(r.lo)),
                         static_cast<uint64_t>(r.lo));
    case Rule::kSizeRange:
      return fmt::format("must be between {} and {}", FormatSize(static_cast<uint64_t>(r.lo)),
                         FormatSize(static_cast<uint64_t>(r.hi)));
    case Rule::kCodec:
      return "must be " + CodecChoices(false);
    case Rule::kOneOf: {
      std::string out = "must be ";
      for (size_t i = 0; i < r.names.size(); ++i) {
        if (i > 0) out += i + 1 == r.names.size() ? " or " : ", ";
        out += fmt::format("\"{}\"", r.names[i]);
      }
      return out;
    }
    case Rule::kListenAddress:
      return std::string("must be \"\" (off) or ") + kListenAddressForm;
    case Rule::kPinPaths:
      return "must be paths relative to DATASET, ':' between them, none with a \"..\" part";
    case Rule::kSftpTarget:
      return "must be \"\" (off), \"auto\", sftp://[USER@]HOST[:PORT]/PATH or [USER@]HOST:PATH";
    case Rule::kAny:
      break;
  }
  return "is not allowed";
}

template <typename T>
const T& Value(const Options& o, const KeySpec& key) {
  return o.*std::get<T Options::*>(key.field);
}

Status CheckMemory(const Options& o, const KeySpec& key) {
  if (o.memory < key.rule.lo) return Refuse(key, std::to_string(o.memory), RuleText(o, key));
  // Only judge the raw-page rule once page_size and compressed_percent are themselves valid, so
  // the message blames the right key.
  for (std::string_view other : RuleReads(key)) {
    if (other != key.name && !CheckKey(o, *FindKey(other)).ok()) return Status::Ok();
  }
  // The raw tier needs enough frames that a batch of victims and a watermark of at least one page
  // each still leave frames to serve hits; fewer than this and the evictor would thrash.
  const uint64_t need = kMinRawPages * o.page_size;
  if (o.raw_share() < need) {
    return Refuse(key, std::to_string(o.memory),
                  fmt::format("the raw tier ({}% of memory = {} bytes) must hold at least {} pages "
                              "of page_size {} ({} bytes)",
                              100 - o.compressed_percent, o.raw_share(), kMinRawPages, o.page_size,
                              need));
  }
  return Status::Ok();
}

}  // namespace

Status OutOfRange(const Options& options, const KeySpec& key, const std::string& shown) {
  return Refuse(key, shown, RuleText(options, key));
}

std::vector<std::string_view> RuleReads(const KeySpec& key) {
  switch (key.rule.kind) {
    case Rule::kMemory:
      return {key.name, "page_size", "compressed_percent"};
    case Rule::kCodecLevel:
      return {key.name, "compressor"};
    default:
      return {};
  }
}

static Status CheckRule(const Options& o, const KeySpec& key);

// "auto" (KeySpec::auto_flag set): what the split tuner needs to choose this key's value.
static Status CheckAuto(const Options& o, const KeySpec& key) {
  const std::string name(key.name);
  // compressed_percent is auto by default (MountDefaults), so this is what a mount that only turns
  // the estimator off meets: the message says what else to set.
  if (!o.estimate_splits) {
    return Refuse(key, "auto", "needs estimate_splits = true (set a fixed value to run without it)");
  }
  if (name == "compressor") {
    if (o.compressed_percent == 0 && !o.compressed_percent_auto) {
      return Refuse(key, "auto",
                    "compressed_percent = 0 leaves no compressed tier to choose a codec for");
    }
    std::string ranges;
    bool fits = true;
    for (CodecKind k : AllCodecKinds()) {
      CodecLevels levels = CodecLevelRange(k);
      fits = fits && o.compression_level >= levels.min && o.compression_level <= levels.max;
      ranges += fmt::format("{}{} {}..{}", ranges.empty() ? "" : ", ", CodecName(k), levels.min,
                            levels.max);
    }
    if (!fits) {
      return Refuse(key, "auto",
                    fmt::format("compression_level = {} must suit every codec it may choose ({})",
                                o.compression_level, ranges));
    }
  }
  return Status::Ok();
}

// kernel_demote: the daemon can demote only the pages it tells the kernel to drop.
static Status CheckDemote(const Options& o, const KeySpec& key) {
  if (o.kernel_demote == "off") return Status::Ok();
  if (!o.kernel_raw_tier()) {
    return Refuse(key, o.kernel_demote, "needs raw_tier = kernel (there is no kernel level above)");
  }
  if (!o.kernel_evict) {
    return Refuse(key, o.kernel_demote,
                  "needs kernel_evict = true (the daemon demotes the pages it tells the kernel to "
                  "drop; a memory cgroup's reclaim drops them unseen)");
  }
  return Status::Ok();
}

Status CheckKey(const Options& o, const KeySpec& key) {
  // Every value must be one RenderConfig can write and a config file read back: TOML is UTF-8.
  if (const auto* field = std::get_if<std::string Options::*>(&key.field);
      field != nullptr && !IsUtf8(o.**field)) {
    return Refuse(key, Printable(o.**field), "must be UTF-8 text (a config file holds no other)");
  }
  Status s = CheckRule(o, key);
  if (s.ok() && key.auto_flag != nullptr && o.*key.auto_flag) return CheckAuto(o, key);
  if (s.ok() && key.name == std::string_view("kernel_demote")) return CheckDemote(o, key);
  if (s.ok() && key.name == std::string_view("passthrough") && o.passthrough &&
      !o.kernel_raw_tier()) {
    return Refuse(key, "true", "needs raw_tier = kernel (the kernel reads the files it passes "
                               "through into its own page cache)");
  }
  return s;
}

static Status CheckRule(const Options& o, const KeySpec& key) {
  const Rule& r = key.rule;
  switch (r.kind) {
    case Rule::kAny:
      return Status::Ok();
    case Rule::kIntRange:
    case Rule::kCodecLevel: {
      const int v = Value<int>(o, key);
      long long lo = 0, hi = 0;
      IntRange(o, key, &lo, &hi);
      if (v >= lo && v <= hi) return Status::Ok();
      std::string rule = RuleText(o, key);
      if (r.kind == Rule::kCodecLevel) rule += fmt::format(" for compressor {}", CodecName(o.compressor));
      return Refuse(key, std::to_string(v), rule);
    }
    case Rule::kPercent:
    case Rule::kAbovePercent: {
      // NaN and infinities never pass.
      const double v = Value<double>(o, key);
      const bool low_ok = r.kind == Rule::kPercent ? v >= r.lo : v > r.lo;
      if (std::isfinite(v) && low_ok && v <= r.hi) return Status::Ok();
      return Refuse(key, fmt::format("{}", v), RuleText(o, key));
    }
    case Rule::kSeconds:
    case Rule::kPositiveSeconds: {
      const double v = Value<double>(o, key);
      const bool low_ok = r.kind == Rule::kSeconds ? v >= 0 : v > 0;
      if (std::isfinite(v) && low_ok) return Status::Ok();
      return Refuse(key, fmt::format("{}", v), RuleText(o, key));
    }
    case Rule::kPowerOfTwo: {
      const uint32_t v = Value<uint32_t>(o, key);
      const bool power_of_two = v != 0 && (v & (v - 1)) == 0;
      if (power_of_two && v >= r.lo && v <= r.hi) return Status::Ok();
      return Refuse(key, std::to_string(v), RuleText(o, key));
    }
    case Rule::kMemory:
      return CheckMemory(o, key);
    case Rule::kSizeRange: {
      const uint64_t v = Value<uint64_t>(o, key);
      if (v >= r.lo && v <= r.hi) return Status::Ok();
      return Refuse(key, std::to_string(v), RuleText(o, key));
    }
    case Rule::kCodec: {
      const CodecKind v = Value<CodecKind>(o, key);
      for (CodecKind k : AllCodecKinds()) {
        if (v == k) return Status::Ok();
      }
      return Refuse(key, CodecName(v), RuleText(o, key));
    }
    case Rule::kOneOf: {
      const std::string& v = Value<std::string>(o, key);
      for (const char* name : r.names) {
        if (v == name) return Status::Ok();
      }
      return Refuse(key, v, RuleText(o, key));
    }
    case Rule::kPinPaths: {
      const std::string& v = Value<std::string>(o, key);
      size_t at = 0;
      while (at <= v.size()) {
        size_t end = v.find(':', at);
        if (end == std::string::npos) end = v.size();
        const std::string part = v.substr(at, end - at);
        const bool absolute = !part.empty() && part[0] == '/';
        const bool up = part == ".." || part.rfind("../", 0) == 0 ||
                        part.find("/../") != std::string::npos ||
                        (part.size() >= 3 && part.compare(part.size() - 3, 3, "/..") == 0);
        bool control = false;
        for (char c : part) control |= static_cast<unsigned char>(c) < 0x20;
        if (absolute || up || control) return Refuse(key, v, RuleText(o, key));
        at = end + 1;
      }
      return Status::Ok();
    }
    case Rule::kSftpTarget: {
      const std::string& v = Value<std::string>(o, key);
      if (v.empty() || v == "auto") return Status::Ok();
      SftpTarget target;
      Status s = ParseSftpTarget(v, &target);
      return s.ok() ? s : Refuse(key, v, RuleText(o, key));
    }
    case Rule::kListenAddress: {
      const std::string& v = Value<std::string>(o, key);
      if (v.empty()) return Status::Ok();
      ListenAddress address;
      Status s = ParseListenAddress(v, &address);
      return s.ok() ? s : Refuse(key, v, s.message());  // the parser's words, without "" (off)
    }
  }
  return Refuse(key, "?", "has a rule this build does not know");
}

}  // namespace config

Options MountDefaults() {
  Options o;
  o.raw_tier = "kernel";
  o.compressor = CodecKind::kZstd;
  o.compression_level = 1;
  o.compressed_percent = 50;
  o.compressed_percent_auto = true;
  return o;
}

Status Options::Validate() const {
  for (const config::KeySpec& key : config::AllKeys()) {
    Status s = config::CheckKey(*this, key);
    if (!s.ok()) return s;
  }
  return Status::Ok();
}

}  // namespace ccfs
