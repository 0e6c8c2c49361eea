// The table `ccfs model` prints: the thesis's model (cache_model.h) at each split of a list, its
// inputs completed with the thesis's figures for the codec wherever the caller gives none.
//
// Defaults, in the order they are applied: the ratio and the four path costs are the thesis's for
// the codec (ThesisRatio, ThesisCosts); the trip is the one `ccfs advise` assumes (the thesis's
// cache lived in the reader's process, ccfs's is behind FUSE); a kernel hit costs what a raw hit
// does (after a given raw hit cost: the thesis's copy out of a page). Each replacement but the
// oracle's is read for the raw level; the whole cache below a FIFO (the kernel's raw tier with
// kernel_evict) or the daemon's CLOCKs is an LRU.
//
// What the model needs of the engine is handed in (`clock`, from cache/model_facts.h), as is the
// data set's size: this room reads no directory.
//
// Thread-safety: pure functions and plain values.
#ifndef CCFS_MODEL_MODEL_TABLE_H_
#define CCFS_MODEL_MODEL_TABLE_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "ccfs/codec.h"
#include "model/cache_model.h"
#include "model/che.h"
#include "model/distribution.h"
#include "model/engine_facts.h"

namespace ccfs {

struct ModelRequest {
  uint64_t memory_bytes = 0;
  uint32_t page_size = 8192;
  uint64_t dataset_pages = 0;
  CodecKind codec = CodecKind::kLz4;
  DistSpec dist;
  RawTierMode raw_tier = RawTierMode::kDaemon;
  Replacement replacement = Replacement::kOracle;
  ClockFacts clock;           // the engine's CLOCK: what kGclock reads
  std::vector<int> percents;  // the splits C%, each 0..95; empty: 0, 10, ..., 90
  double assumed_trip_us = 0;  // the trip when `trip_us` is not given
  // Given rather than the defaults above.
  std::optional<double> ratio;
  std::optional<double> hit_us, decompress_us, compress_us, disk_us, trip_us, kernel_hit_us;
};

struct ModelRow {
  int percent = 0;
  ModelResult result;
};

struct ModelReport {
  ModelInputs inputs;  // as evaluated (compressed_fraction: the last row's)
  std::vector<ModelRow> rows;  // one per request.percents, in its order
};

ModelReport RunModel(const ModelRequest& request);

}  // namespace ccfs

#endif  // CCFS_MODEL_MODEL_TABLE_H_
