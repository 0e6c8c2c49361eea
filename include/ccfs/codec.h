// Codec: compresses and decompresses one page.
//
// A Codec owns its compression/decompression contexts, so one instance must be used by one thread
// at a time (the compression pool gives each worker its own; readers keep one per thread). Codecs
// are cheap to create (a few hundred KiB for zstd contexts) but not free: do not create one per page.
#ifndef CCFS_CODEC_H_
#define CCFS_CODEC_H_

#include <cstddef>
#include <memory>

#include "ccfs/options.h"
#include "ccfs/status.h"

namespace ccfs {

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

// Creates a codec of `kind` at `level` (see Options::compression_level). Never returns null.
std::unique_ptr<Codec> NewCodec(CodecKind kind, int level);

}  // namespace ccfs

#endif  // CCFS_CODEC_H_
