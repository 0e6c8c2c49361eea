// The lz4 and zstd codecs behind ccfs/codec.h.
//
// Both keep their working memory for the codec's whole life: an lz4 state (or LZ4HC state) and a
// zstd CCtx/DCtx. Allocating those per page would cost more than compressing an 8 KiB page.
//
// "Never write past cap" is the property the compressed tier relies on when it passes a cap below
// the page size to refuse pages that do not shrink enough. Both libraries guarantee it for the
// calls used here (LZ4_compress_*_extState* take dstCapacity and return 0 when the output would
// not fit; ZSTD_compressCCtx returns dstSize_tooSmall). lz4 is exact; zstd needs a little slack,
// which ZstdCodec::Compress hides (see there).
//
// Decoding is bounds-checked by the libraries (LZ4_decompress_safe, ZSTD_decompressDCtx); on top of
// that we insist the blob decodes to exactly out_n bytes, because a blob that decodes to a shorter
// page is as wrong as one that fails outright.
#include <lz4.h>
#include <lz4hc.h>
#include <zstd.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "ccfs/codec.h"

namespace ccfs {
namespace {

// Owns a block from malloc (suitably aligned for the lz4 states, which need pointer alignment).
struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};
using MallocBlock = std::unique_ptr<void, FreeDeleter>;

MallocBlock AllocOrThrow(size_t n) {
  void* p = std::malloc(n);
  if (p == nullptr) throw std::bad_alloc();
  return MallocBlock(p);
}

// lz4 takes int sizes; a cap beyond INT_MAX is as good as INT_MAX.
int ClampToInt(size_t n) { return n > static_cast<size_t>(INT_MAX) ? INT_MAX : static_cast<int>(n); }

// level <= 1: the fast compressor, with acceleration 1 at level 1 and 0, and growing by one per
// level below 0 (level -1 = acceleration 2, ...), mirroring zstd's negative "fast" levels.
// level 2..12: LZ4HC at that level (levels above 12 are treated as 12).
class Lz4Codec final : public Codec {
 public:
  explicit Lz4Codec(int level) : level_(std::min(level, LZ4HC_CLEVEL_MAX)) {
    if (level_ <= 1) {
      acceleration_ = level_ >= 0 ? 1 : 1 - level_;
      state_ = AllocOrThrow(static_cast<size_t>(LZ4_sizeofState()));
      // Initialised once; each page then resets it cheaply (LZ4_resetStream_fast) instead of
      // LZ4_compress_fast_extState's 16 KiB memset per call.
      LZ4_initStream(state_.get(), static_cast<size_t>(LZ4_sizeofState()));
    } else {
      state_ = AllocOrThrow(static_cast<size_t>(LZ4_sizeofStateHC()));
    }
  }

  CodecKind kind() const override { return CodecKind::kLz4; }
  int level() const override { return level_; }

  size_t Bound(size_t n) const override {
    if (n > static_cast<size_t>(LZ4_MAX_INPUT_SIZE)) return 0;
    return static_cast<size_t>(LZ4_compressBound(static_cast<int>(n)));
  }

  size_t Compress(const void* src, size_t n, void* dst, size_t cap) override {
    if (n > static_cast<size_t>(LZ4_MAX_INPUT_SIZE) || cap == 0) return 0;
    const auto* in = static_cast<const char*>(src);
    auto* out = static_cast<char*>(dst);
    int written;
    if (level_ <= 1) {
      // A reset stream has no dictionary: the block decodes on its own (LZ4_decompress_safe).
      auto* stream = static_cast<LZ4_stream_t*>(state_.get());
      LZ4_resetStream_fast(stream);
      written = LZ4_compress_fast_continue(stream, in, out, static_cast<int>(n), ClampToInt(cap),
                                           acceleration_);
    } else {
      written = LZ4_compress_HC_extStateHC(state_.get(), in, out, static_cast<int>(n),
                                           ClampToInt(cap), level_);
    }
    return written > 0 ? static_cast<size_t>(written) : 0;
  }

  Status Decompress(const void* src, size_t n, void* dst, size_t out_n) override {
    if (n > static_cast<size_t>(INT_MAX) || out_n > static_cast<size_t>(INT_MAX)) {
      return Status::Corruption("lz4: blob of " + std::to_string(n) + " bytes for a page of " +
                                std::to_string(out_n) + " bytes is beyond lz4's size limit");
    }
    const int got = LZ4_decompress_safe(static_cast<const char*>(src), static_cast<char*>(dst),
                                        static_cast<int>(n), static_cast<int>(out_n));
    if (got < 0) {
      return Status::Corruption("lz4: blob of " + std::to_string(n) +
                                " bytes is corrupt or decodes to more than " +
                                std::to_string(out_n) + " bytes");
    }
    if (static_cast<size_t>(got) != out_n) {
      return Status::Corruption("lz4: blob of " + std::to_string(n) + " bytes decodes to " +
                                std::to_string(got) + " bytes, expected " + std::to_string(out_n));
    }
    return Status::Ok();
  }

 private:
  int level_;
  int acceleration_ = 1;
  MallocBlock state_;  // LZ4_stream_t or LZ4_streamHC_t, depending on level_
};

// Levels are clamped to what the linked libzstd accepts; 0 means zstd's default level (3).
class ZstdCodec final : public Codec {
 public:
  explicit ZstdCodec(int level)
      : level_(std::clamp(level, ZSTD_minCLevel(), ZSTD_maxCLevel())),
        cctx_(ZSTD_createCCtx()),
        dctx_(ZSTD_createDCtx()) {
    if (cctx_ == nullptr || dctx_ == nullptr) {
      ZSTD_freeCCtx(cctx_);
      ZSTD_freeDCtx(dctx_);
      throw std::bad_alloc();
    }
  }
  ~ZstdCodec() override {
    ZSTD_freeCCtx(cctx_);
    ZSTD_freeDCtx(dctx_);
  }
  ZstdCodec(const ZstdCodec&) = delete;
  ZstdCodec& operator=(const ZstdCodec&) = delete;

  CodecKind kind() const override { return CodecKind::kZstd; }
  int level() const override { return level_; }

  size_t Bound(size_t n) const override {
    const size_t bound = ZSTD_compressBound(n);
    return ZSTD_isError(bound) ? 0 : bound;
  }

  // zstd wants a few bytes of slack beyond its output (up to 9 measured with 1.5.4): given a cap
  // exactly equal to the compressed size it reports dstSize_tooSmall. So that "fits in cap" means
  // exactly that, a cap below the bound compresses into scratch_ and copies the blob out when it
  // fits; the copy is well under 1% of the compression itself.
  //
  // Any zstd error (dstSize_tooSmall above all; an allocation failure inside the context too)
  // means "not compressed": the caller keeps the page raw or drops it, which is always safe.
  size_t Compress(const void* src, size_t n, void* dst, size_t cap) override {
    const size_t bound = Bound(n);
    if (bound == 0) return 0;
    if (cap >= bound) {
      const size_t written = ZSTD_compressCCtx(cctx_, dst, cap, src, n, level_);
      return ZSTD_isError(written) ? 0 : written;
    }
    if (scratch_.size() < bound) scratch_.resize(bound);
    const size_t written = ZSTD_compressCCtx(cctx_, scratch_.data(), bound, src, n, level_);
    if (ZSTD_isError(written) || written > cap) return 0;
    std::memcpy(dst, scratch_.data(), written);
    return written;
  }

  Status Decompress(const void* src, size_t n, void* dst, size_t out_n) override {
    const size_t got = ZSTD_decompressDCtx(dctx_, dst, out_n, src, n);
    if (ZSTD_isError(got)) {
      return Status::Corruption("zstd: blob of " + std::to_string(n) + " bytes for a page of " +
                                std::to_string(out_n) + " bytes: " + ZSTD_getErrorName(got));
    }
    if (got != out_n) {
      return Status::Corruption("zstd: blob of " + std::to_string(n) + " bytes decodes to " +
                                std::to_string(got) + " bytes, expected " + std::to_string(out_n));
    }
    return Status::Ok();
  }

 private:
  int level_;
  ZSTD_CCtx* cctx_;
  ZSTD_DCtx* dctx_;
  std::vector<char> scratch_;  // output for caps below Bound(); grows to the largest page seen
};

}  // namespace

const std::vector<CodecKind>& AllCodecKinds() {
  static const std::vector<CodecKind> kKinds = {CodecKind::kLz4, CodecKind::kZstd};
  return kKinds;
}

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
  for (CodecKind k : AllCodecKinds()) {
    if (name == CodecName(k)) {
      *kind = k;
      return true;
    }
  }
  return false;
}

// lz4: level 1 is the fast compressor, 2..LZ4HC_CLEVEL_MAX (12) select LZ4HC. Lz4Codec also takes
// levels below 1 (more acceleration), but configuration offers only the documented range.
CodecLevels CodecLevelRange(CodecKind kind) {
  if (kind == CodecKind::kZstd) return {ZSTD_minCLevel(), ZSTD_maxCLevel()};
  return {1, LZ4HC_CLEVEL_MAX};
}

std::unique_ptr<Codec> NewCodec(CodecKind kind, int level) {
  switch (kind) {
    case CodecKind::kZstd:
      return std::make_unique<ZstdCodec>(level);
    case CodecKind::kLz4:
      break;
  }
  // lz4 is also the answer for an out-of-range kind: the contract promises a codec, never null.
  return std::make_unique<Lz4Codec>(level);
}

}  // namespace ccfs
