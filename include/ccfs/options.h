// Options: every setting of ccfs, in one struct.
//
// Filled from defaults, then the TOML config file, then `-o key=value` (see config.h); the engine
// and the daemon read it. Each field's key is the same in the file, in -o and in .ccfs/control.
// conf/ccfs.toml documents every key with its unit and default; keep the two in step.
//
// Validate() checks ranges and names the offending key. Options is a plain value: copy freely.
#ifndef CCFS_OPTIONS_H_
#define CCFS_OPTIONS_H_

#include <cstdint>
#include <string>

#include "ccfs/status.h"

namespace ccfs {

enum class CodecKind { kLz4 = 0, kZstd = 1 };

// "lz4" / "zstd"; nullptr-free: unknown kinds print as "?".
const char* CodecName(CodecKind kind);
// Parses "lz4" or "zstd" (case-sensitive).
bool ParseCodecKind(const std::string& name, CodecKind* kind);

struct Options {
  // --- engine ---------------------------------------------------------------------------------
  // Total RAM for cached pages (raw frames + compressed blobs), bytes. Key: memory.
  uint64_t memory = 256ull << 20;
  // Share of `memory` given to the compressed tier, 0..95. Key: compressed_percent.
  int compressed_percent = 25;
  // Bytes per cached page: a power of two in [4 KiB, 128 KiB]. Key: page_size.
  uint32_t page_size = 8192;
  // Codec for the compressed tier. Key: compressor.
  CodecKind compressor = CodecKind::kLz4;
  // Codec level: zstd 1..19 (negative = fast levels); lz4 1 = fast, 2..12 = LZ4HC. Key:
  // compression_level.
  int compression_level = 1;
  // Threads compressing eviction victims; 0 = one per online CPU but one (at least one), leaving
  // a CPU to the readers. Key: compress_threads.
  int compress_threads = 0;
  // A page is kept compressed only if it saves at least this much, percent. Key:
  // min_savings_percent.
  double min_savings_percent = 12.5;
  // Compress a raw victim only when it has shown reuse: it was read again after it was loaded,
  // or it comes back after an earlier eviction (or the compressed tier still has room). false =
  // compress every victim. Key: admission_filter.
  bool admission_filter = true;
  // Victims taken in one sweep of the raw tier, percent of raw frames (at least one page).
  // Key: evict_batch_percent.
  double evict_batch_percent = 2.0;
  // The evictor starts when free raw frames fall below this, percent of raw frames (at least one
  // page). Key: low_watermark_percent.
  double low_watermark_percent = 2.0;
  // A page loaded by a miss that had not been read lately (by the frequency sketch) is evicted
  // first, before the CLOCK hand moves, unless it is read again meanwhile (TinyLFU's doorkeeper;
  // src/cache/raw_tier.h). false = plain GCLOCK. Key: probation.
  bool probation = true;

  // --- daemon ---------------------------------------------------------------------------------
  // Threads serving FUSE requests. Key: request_threads.
  int request_threads = 2;
  // Let other users reach the mount (FUSE allow_other). Key: allow_other.
  bool allow_other = false;
  // Keep the request threads on the first CPUs and the compression workers on the last ones (see
  // src/util/cpus.h); run the application on the request CPUs for same-CPU round trips. Key:
  // pin_threads.
  bool pin_threads = false;
  // Seconds the kernel may cache names and attributes. Key: attr_timeout.
  double attr_timeout = 1.0;

  // Checks every field; the message names the key, the value and the allowed range.
  Status Validate() const;

  // Field-by-field equality (e.g. to tell whether a reload changed anything).
  bool operator==(const Options&) const = default;

  uint64_t compressed_budget() const { return memory / 100 * static_cast<uint64_t>(compressed_percent); }
  uint64_t raw_budget() const { return memory - compressed_budget(); }
};

}  // namespace ccfs

#endif  // CCFS_OPTIONS_H_
