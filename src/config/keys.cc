// The key table, and what can be done with a key's field without knowing which key it is.
//
// The table is data so that every consumer walks the same list: a key missing from it is unknown
// everywhere at once (file, -o, control, render, live), never known in one place and forgotten in
// another. Per-type behaviour is picked by the type of the field pointer (std::visit), so a new
// key of an existing type needs no code at all.
#include "config/keys.h"

#include <cmath>
#include <string>
#include <type_traits>

#include <fmt/format.h>

#include "ccfs/config.h"

namespace ccfs::config {

namespace {

constexpr bool kLive = true;
constexpr bool kRemount = false;

constexpr Rule Any() { return {Rule::kAny, 0, 0, {}}; }
constexpr Rule IntIn(int lo, int hi) { return {Rule::kIntRange, double(lo), double(hi), {}}; }
constexpr Rule PercentIn(double lo, double hi) { return {Rule::kPercent, lo, hi, {}}; }
constexpr Rule PercentAbove(double lo, double hi) { return {Rule::kAbovePercent, lo, hi, {}}; }
constexpr Rule Seconds() { return {Rule::kSeconds, 0, 0, {}}; }
constexpr Rule PositiveSeconds() { return {Rule::kPositiveSeconds, 0, 0, {}}; }
constexpr Rule PowerOfTwoIn(double lo, double hi) { return {Rule::kPowerOfTwo, lo, hi, {}}; }
constexpr Rule Memory(double at_least) { return {Rule::kMemory, at_least, 0, {}}; }
constexpr Rule SizeIn(double lo, double hi) { return {Rule::kSizeRange, lo, hi, {}}; }
constexpr Rule Codec() { return {Rule::kCodec, 0, 0, {}}; }
constexpr Rule CodecLevel() { return {Rule::kCodecLevel, 0, 0, {}}; }
constexpr Rule OneOf(std::span<const char* const> names) { return {Rule::kOneOf, 0, 0, names}; }
constexpr Rule ListenAddressOrOff() { return {Rule::kListenAddress, 0, 0, {}}; }
constexpr Rule PinPaths() { return {Rule::kPinPaths, 0, 0, {}}; }
constexpr Rule SftpTargetOrOff() { return {Rule::kSftpTarget, 0, 0, {}}; }

// A number as people read it: 2, 12.5, 0.333..., inf.
std::string Number(double v) { return fmt::format("{}", v); }

// A number TOML reads back as a float, not an integer: 2.0, not 2.
std::string TomlFloat(double v) {
  std::string s = Number(v);
  if (std::isfinite(v) && s.find_first_of(".eE") == std::string::npos) s += ".0";
  return s;
}

// A TOML basic string: quotes, backslashes and control characters escaped.
std::string TomlString(const std::string& v) {
  std::string out = "\"";
  for (char c : v) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      out += fmt::format("\\u{:04X}", static_cast<unsigned char>(c));
    } else {
      out += c;
    }
  }
  return out + "\"";
}

// A size in the largest binary unit that holds it exactly, so it reads well and parses back to
// the same number of bytes (FormatSize rounds).
std::string ExactSize(uint64_t bytes) {
  static const struct { uint64_t unit; const char* name; } kUnits[] = {
      {1ull << 40, "TiB"}, {1ull << 30, "GiB"}, {1ull << 20, "MiB"}, {1ull << 10, "KiB"}};
  if (bytes == 0) return "0B";
  for (const auto& u : kUnits) {
    if (bytes % u.unit == 0) return fmt::format("{}{}", bytes / u.unit, u.name);
  }
  return fmt::format("{}B", bytes);
}

}  // namespace

const std::vector<KeySpec>& AllKeys() {
  // Order: as documented in conf/ccfs.toml and rendered by RenderConfig. Tables group the keys by
  // the part of ccfs that reads them.
  static const std::vector<KeySpec> kKeys = {
      {"memory", "cache", &Options::memory, Memory(1 << 20), kRemount,
       "Total RAM for cached pages (raw frames + compressed blobs); bytes or a size such as \"256MiB\"."},
      {"compressed_percent", "cache", &Options::compressed_percent, IntIn(0, 95), kLive,
       "Share of memory given to the compressed tier, percent, 0..95 (0 = raw-only baseline), or "
       "\"auto\" (chosen live from the split estimator's prediction).",
       &Options::compressed_percent_auto},
      {"page_size", "cache", &Options::page_size, PowerOfTwoIn(4096, 131072), kRemount,
       "Bytes per cached page: a power of two from 4KiB to 128KiB."},
      {"raw_tier", "cache", &Options::raw_tier, OneOf(kRawTierNames), kRemount,
       "Where raw pages live: \"daemon\" (every read reaches the daemon and is counted) or "
       "\"kernel\" (the kernel's page cache; the daemon holds the compressed tier beneath it)."},
      {"kernel_evict", "cache", &Options::kernel_evict, Any(), kRemount,
       "raw_tier = kernel: the daemon drops the kernel's oldest pages to hold their share (true), "
       "or leaves it to a memory cgroup shared with the readers (false)."},
      {"kernel_demote", "cache", &Options::kernel_demote, OneOf(kKernelDemoteNames), kRemount,
       "raw_tier = kernel: what the compressed tier holds: \"off\" (pages the daemon served), "
       "\"exclusive\" (pages the kernel drops, fetched back first) or \"mix\" (exclusive until "
       "it fills, then only pages that came back)."},
      {"estimate_splits", "cache", &Options::estimate_splits, Any(), kRemount,
       "Estimate the hit ratio and µs per buffer of every split and codec while serving (ccfs stat, "
       "stats.json); needed by \"auto\"."},
      {"auto_interval", "cache", &Options::auto_interval, PositiveSeconds(), kLive,
       "auto: seconds between two decisions, > 0."},
      {"auto_max_step", "cache", &Options::auto_max_step, IntIn(1, 95), kLive,
       "auto: the most compressed_percent moves in one decision, percentage points, 1..95."},
      {"readahead", "cache", &Options::readahead, SizeIn(0, 64 << 20), kLive,
       "The most bytes read ahead of a sequential reader of a file, 0..64MiB, at most 1/8 of the "
       "raw tier (raw_tier = kernel: the kernel's window, at most 1/128 of its share, at least "
       "32KiB); 0 = off (kernel: one page)."},
      {"compressor", "compression", &Options::compressor, Codec(), kLive,
       "Codec of the compressed tier: \"lz4\" or \"zstd\", or \"auto\" (chosen live).",
       &Options::compressor_auto},
      {"compression_level", "compression", &Options::compression_level, CodecLevel(), kLive,
       "Codec level: lz4 1 = fast, 2..12 = LZ4HC; zstd its own range (negative = fast levels)."},
      {"compress_threads", "compression", &Options::compress_threads, IntIn(0, 256), kRemount,
       "Threads compressing eviction victims, 0..256; 0 = one per online CPU."},
      {"min_savings_percent", "compression", &Options::min_savings_percent, PercentIn(0, 99), kLive,
       "Keep a page compressed only if it saves at least this much, percent, 0..99."},
      {"admission_filter", "compression", &Options::admission_filter, Any(), kLive,
       "Compress a raw victim only if it was read again since it was loaded or comes back after an "
       "earlier eviction (while the compressed tier has room: every victim, but a page a stream "
       "loaded only if the store streams slower than the pool compresses), and, once the tier is "
       "full, a page a stream loaded only if it was read more often lately than the page it would "
       "displace (true); or every victim (false)."},
      {"evict_batch_percent", "eviction", &Options::evict_batch_percent, PercentAbove(0, 50), kLive,
       "Victims taken per sweep of the raw tier, percent of raw frames, (0, 50] (while a miss "
       "waits for a frame: at least 32 pages, or an eighth of the tier if that is fewer)."},
      {"low_watermark_percent", "eviction", &Options::low_watermark_percent, PercentAbove(0, 50), kLive,
       "The evictor starts when free raw frames fall below this, percent of raw frames, (0, 50]."},
      {"probation", "eviction", &Options::probation, Any(), kLive,
       "Evict first a page loaded by a miss that had not been read lately, unless it is read again "
       "before the next sweep (true), or leave every page to the CLOCK hand (false)."},
      {"request_threads", "daemon", &Options::request_threads, IntIn(1, 64), kRemount,
       "Threads serving FUSE requests, 1..64."},
      {"misses_in_flight", "daemon", &Options::misses_in_flight, IntIn(0, 1024), kRemount,
       "Reads waiting for the store on threads of their own, beside the request threads, 0..1024 "
       "(0: a miss waits on the request thread that met it)."},
      {"pin_threads", "daemon", &Options::pin_threads, Any(), kRemount,
       "Request threads on the first CPUs, compression workers on the last ones."},
      {"allow_other", "daemon", &Options::allow_other, Any(), kRemount,
       "Let other users reach the mount (FUSE allow_other)."},
      {"attr_timeout", "daemon", &Options::attr_timeout, Seconds(), kRemount,
       "Seconds the kernel may cache attributes, >= 0: a change made underneath shows this late."},
      {"entry_timeout", "daemon", &Options::entry_timeout, Seconds(), kRemount,
       "Seconds the kernel may keep a name, >= 0: a rename or removal underneath shows this late."},
      {"negative_timeout", "daemon", &Options::negative_timeout, Seconds(), kRemount,
       "Seconds the kernel may keep a name's absence, >= 0: a file made underneath shows this late."},
      {"close_to_open", "daemon", &Options::close_to_open, Any(), kRemount,
       "Check a file on the store at each open (raw_tier = kernel), so a change underneath shows to "
       "the next open; false: attributes read less than attr_timeout ago stand for the check."},
      {"passthrough", "daemon", &Options::passthrough, Any(), kRemount,
       "raw_tier = kernel: a file opened while the tiers hold none of it is read by the kernel "
       "straight from the store's file (FUSE passthrough: Linux 6.9+, the daemon as root); its "
       "next open is served by the tiers, which fill then."},
      {"readdirplus", "daemon", &Options::readdirplus, Any(), kRemount,
       "Listings carry each entry's attributes, so the kernel need not look names up one by one."},
      {"max_open_files", "daemon", &Options::max_open_files, IntIn(0, 1 << 30), kRemount,
       "Descriptors kept of files and directories not in use, 0..2^30; 0 = half the descriptor "
       "limit (the daemon raises its soft limit to the hard one)."},
      {"transport", "daemon", &Options::transport, OneOf(kTransportNames), kRemount,
       "How requests reach the daemon: \"dev\" (/dev/fuse), \"uring\" (FUSE over io_uring, "
       "Linux 6.14+ with enable_uring on) or \"auto\" (uring when the kernel offers it)."},
      {"metrics", "daemon", &Options::metrics, ListenAddressOrOff(), kRemount,
       "Serve Prometheus metrics over HTTP at [HOST:]PORT/metrics (a bare port = 127.0.0.1); "
       "\"\" = off."},
      {"pin", "daemon", &Options::pin, PinPaths(), kLive,
       "Paths of DATASET (files or directories, ':' between them) whose files' pages are evicted "
       "last; \"\" = none. Refused when their files hold more than pin_percent of memory."},
      {"pin_percent", "daemon", &Options::pin_percent, IntIn(1, 90), kLive,
       "The most of memory the files under pin may hold, percent, 1..90."},
      {"persist", "daemon", &Options::persist, Any(), kRemount,
       "A local directory where the cached pages are kept across a restart (written at unmount, "
       "SIGTERM and every persist_interval, reloaded at mount); \"\" = off."},
      {"persist_interval", "daemon", &Options::persist_interval, Seconds(), kLive,
       "persist: seconds between two writes of the cache file while serving, >= 0; 0 = only at "
       "unmount and SIGTERM."},
      {"sftp", "daemon", &Options::sftp, SftpTargetOrOff(), kRemount,
       "Read misses over SFTP in the daemon, not through the sshfs mount DATASET is on (a "
       "read-only mount only): \"auto\" (the server the mount names), "
       "sftp://[USER@]HOST[:PORT]/PATH or [USER@]HOST:PATH (DATASET's directory there); \"\" = off."},
      {"ssh_config", "daemon", &Options::ssh_config, Any(), kRemount,
       "sftp: an OpenSSH client configuration file read for the server (HostName, Port, User, "
       "IdentityFile, UserKnownHostsFile); \"\" = ~/.ssh/config and /etc/ssh/ssh_config."},
      {"sftp_connections", "daemon", &Options::sftp_connections, IntIn(1, 64), kRemount,
       "sftp: SSH connections to the server, 1..64, each carrying one read at a time."},
  };
  return kKeys;
}

const KeySpec* FindKey(std::string_view name) {
  for (const KeySpec& key : AllKeys()) {
    if (key.name == name) return &key;
  }
  return nullptr;
}

const std::vector<std::string>& Tables() {
  static const std::vector<std::string> kTables = [] {
    std::vector<std::string> tables;
    for (const KeySpec& key : AllKeys()) {
      if (tables.empty() || tables.back() != key.table) tables.emplace_back(key.table);
    }
    return tables;
  }();
  return kTables;
}

KeyType TypeOf(const KeySpec& key) {
  return std::visit(
      [](auto member) {
        using T = std::remove_cvref_t<decltype(Options{}.*member)>;
        if constexpr (std::is_same_v<T, bool>) return KeyType::kBool;
        else if constexpr (std::is_same_v<T, CodecKind>) return KeyType::kCodec;
        else if constexpr (std::is_same_v<T, double>) return KeyType::kDouble;
        else if constexpr (std::is_same_v<T, int>) return KeyType::kInt;
        else if constexpr (std::is_same_v<T, std::string>) return KeyType::kString;
        else return KeyType::kSize;
      },
      key.field);
}

void CopyField(const KeySpec& key, const Options& from, Options* to) {
  std::visit([&](auto member) { to->*member = from.*member; }, key.field);
  if (key.auto_flag != nullptr) to->*key.auto_flag = from.*key.auto_flag;
}

bool SameField(const KeySpec& key, const Options& a, const Options& b) {
  if (key.auto_flag != nullptr) {
    if (a.*key.auto_flag != b.*key.auto_flag) return false;
    if (a.*key.auto_flag) return true;  // "auto" both: the value in force is the engine's
  }
  return std::visit([&](auto member) { return a.*member == b.*member; }, key.field);
}

std::string FormatValue(const KeySpec& key, const Options& o, ValueStyle style) {
  const bool toml = style == ValueStyle::kToml;
  if (key.auto_flag != nullptr && o.*key.auto_flag) return toml ? "\"auto\"" : "auto";
  return std::visit(
      [&](auto member) -> std::string {
        const auto& v = o.*member;
        using T = std::remove_cvref_t<decltype(v)>;
        if constexpr (std::is_same_v<T, bool>) {
          return v ? "true" : "false";
        } else if constexpr (std::is_same_v<T, CodecKind>) {
          return toml ? fmt::format("\"{}\"", CodecName(v)) : CodecName(v);
        } else if constexpr (std::is_same_v<T, double>) {
          return toml ? TomlFloat(v) : Number(v);
        } else if constexpr (std::is_same_v<T, int>) {
          return std::to_string(v);
        } else if constexpr (std::is_same_v<T, std::string>) {
          if (toml) return TomlString(v);
          return v.empty() ? "(off)" : v;
        } else {
          return toml ? "\"" + ExactSize(v) + "\"" : FormatSize(v);
        }
      },
      key.field);
}

std::string CodecChoices(bool quoted) {
  std::string out;
  const std::vector<CodecKind>& kinds = AllCodecKinds();
  for (size_t i = 0; i < kinds.size(); ++i) {
    if (i > 0) out += i + 1 == kinds.size() ? " or " : ", ";
    out += quoted ? fmt::format("\"{}\"", CodecName(kinds[i])) : CodecName(kinds[i]);
  }
  return out;
}

}  // namespace ccfs::config
