// The thesis's model of a split page cache: hit ratio and microseconds per buffer as functions of
// the share C of memory given to compressed pages.
//
//   T memory, B page size, N pages in the data set, R compression ratio.
//   raw capacity      K_raw  = T (1 - C) / B              pages
//   compressed        K_comp = T C R / B                  pages
//   hit ratio         g(C) = S(min(N, K_raw + K_comp))    where S(k) is the share of accesses that
//                                                         go to the k hottest pages: k / N under
//                                                         uniform access (g is then the thesis's
//                                                         (T(1-C) + TCR) / B / N, capped at 1),
//                                                         (k/N)^(1/E) under the h/(1-h) law, and
//                                                         the Zipf partial sums under zipf.
//   raw hits          S(min(N, K_raw)) — the raw tier is taken to hold the hottest pages;
//   compressed hits   g(C) - raw hits;   misses  1 - g(C).
//   µs per buffer     h_raw t_hit + h_comp (t_decomp + t_comp) + miss (t_disk + t_comp)
// The thesis charges one compression per restoration and per miss (a raw victim must be compressed
// to make room); with C = 0 victims are dropped, so no compression is charged.
//
// Thread-safety: pure functions.
#ifndef CCFS_TRACE_MODEL_H_
#define CCFS_TRACE_MODEL_H_

#include <cstdint>
#include <string>

#include "ccfs/options.h"
#include "trace/distribution.h"

namespace ccfs {

// Costs of each path, microseconds per page.
struct PathCosts {
  double hit_us = 1.0;         // raw hit: copy out of a frame
  double decompress_us = 1.0;  // compressed hit: decompress (and copy)
  double compress_us = 2.0;    // compressing one victim
  double disk_us = 110.0;      // miss: read from the backing device
};

// The thesis's figures for 8 KiB pages: lz4 2.13x, compress 2 µs, decompress 1 µs; zstd 2.97x,
// 8 µs, 3 µs; SSD page fault 110 µs; a raw hit is taken as 1 µs.
PathCosts ThesisCosts(CodecKind codec);
double ThesisRatio(CodecKind codec);

struct ModelInputs {
  uint64_t memory_bytes = 0;
  uint32_t page_size = 8192;
  uint64_t dataset_pages = 0;
  double compressed_fraction = 0;  // C, 0..0.95
  double ratio = 1.0;              // R
  DistSpec dist;
  PathCosts costs;
};

struct ModelResult {
  double raw_capacity_pages = 0;
  double compressed_capacity_pages = 0;
  double capacity_fraction = 0;  // min(1, (K_raw + K_comp) / N)
  double raw_hit_ratio = 0;
  double compressed_hit_ratio = 0;
  double hit_ratio = 0;
  double miss_ratio = 0;
  double us_per_buffer = 0;
};

ModelResult EvaluateModel(const ModelInputs& inputs);

}  // namespace ccfs

#endif  // CCFS_TRACE_MODEL_H_
