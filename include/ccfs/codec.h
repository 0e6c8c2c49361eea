// Codec: compresses and decompresses one page; and the facts about each codec (its name, its
// levels, its default) that configuration asks for instead of knowing them itself.
//
// A Codec owns its compression/decompression contexts, so one instance must be used by one thread
// at a time (the compression pool gives each worker its own; readers keep one per thread). Codecs
// are cheap to create (a few hundred KiB for zstd contexts) but not free: do not create one per page.
#ifndef CCFS_CODEC_H_
#define CCFS_CODEC_H_

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "ccfs/status.h"

namespace ccfs {

// The codecs of the compressed tier. Adding one: a kind here, its facts in src/compress/codec.cc
// (name, levels) and its class there; configuration (the `compressor` key) follows by itself.
enum class CodecKind { kLz4 = 0, kZstd = 1 };

// What a fresh Options uses (Options::compressor, Options::compression_level).
inline constexpr CodecKind kDefaultCodec = CodecKind::kLz4;
inline constexpr int kDefaultCodecLevel = 1;

// Every kind, in the order names are listed to users ("lz4" or "zstd").
const std::vector<CodecKind>& AllCodecKinds();

// "lz4" / "zstd"; never null: unknown kinds print as "?".
const char* CodecName(CodecKind kind);
// Parses a name CodecName returns (case-sensitive); leaves *kind alone on failure.
bool ParseCodecKind(const std::string& name, CodecKind* kind);

// The compression levels `kind` accepts, inclusive: lz4 1 (fast) .. 12 (LZ4HC); zstd
// ZSTD_minCLevel() (negative levels are the fast ones) .. ZSTD_maxCLevel(). An unknown kind gets
// lz4's range (NewCodec builds lz4 for it).
struct CodecLevels {
  int min;
  int max;
};
CodecLevels CodecLevelRange(CodecKind kind);

class Codec {
 public:
  virtual ~Codec() = default;

  virtual CodecKind kind() const = 0;
  virtual int level() const = 0;

  // Largest output Compress() may need for `n` input bytes.
  virtual size_t Bound(size_t n) const = 0;

  // Compresses src[0, n) into dst[0, cap). Returns the compressed size, or 0 if the output would not
  // fit in `cap` bytes (callers pass a cap below n to refuse pages that do not shrink enough).
  virtual size_t Compress(const void* src, size_t n, void* dst, size_t cap) = 0;

  // Decompresses src[0, n) into dst, which must receive exactly `out_n` bytes. A blob that is
  // corrupt or decodes to another length yields Corruption.
  virtual Status Decompress(const void* src, size_t n, void* dst, size_t out_n) = 0;
};

// Creates a codec of `kind` at `level` (see Options::compression_level). A level outside
// CodecLevelRange is still accepted: zstd clamps it; lz4 treats levels above 12 as 12 and levels
// below 1 as more acceleration. Never returns null.
std::unique_ptr<Codec> NewCodec(CodecKind kind, int level);

}  // namespace ccfs

#endif  // CCFS_CODEC_H_
