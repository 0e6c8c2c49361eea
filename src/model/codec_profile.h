// The data's compressibility, measured: each codec's ratio and share of pages kept over a sample of
// pages, and its µs per page both ways, compressed as the evictor compresses them. `ccfs advise`
// and replay measure a data set's pages (trace/advise.h SamplePages), the split tuner the raw
// tier's victims (cache/split_tuner.h). What the compressed tier is charged for a kept page is
// the engine's, handed in (engine_facts.h TierCharges).
//
// Thread-safety: pure functions and plain values.
#ifndef CCFS_MODEL_CODEC_PROFILE_H_
#define CCFS_MODEL_CODEC_PROFILE_H_

#include <cstdint>
#include <vector>

#include "ccfs/codec.h"
#include "ccfs/status.h"
#include "model/engine_facts.h"

namespace ccfs {

// Pages to measure on: a seeded sample of a data set's pages, read with O_DIRECT where the file
// system allows it (trace/advise.h SamplePages), or victims copied by the engine.
struct PageSample {
  std::vector<uint64_t> pages;         // global page indices, in the order read
  std::vector<std::vector<char>> data; // their bytes (the last page of a file may be short)
  double read_us = 0;                  // mean µs per page read
  std::vector<double> read_times_us;   // each page's read, in the order read
  bool direct = true;                  // every read bypassed the page cache
};

struct CodecProfile {
  CodecKind codec = CodecKind::kLz4;
  int level = 1;
  // Logical bytes / bytes the compressed tier is charged, over the pages it keeps (TierCharges:
  // the allocator's classes; an all-zero page costs its entry).
  double ratio = 1.0;
  double storable_fraction = 0;  // pages kept: all-zero, or saving at least min_savings_percent
  double zero_fraction = 0;
  double compress_us = 0;        // per victim, all sampled pages (rejects and zero checks too)
  double decompress_us = 0;      // per kept page
};

// Compresses and decompresses every sampled page with `codec` at `level`, repeating passes for at
// least `min_seconds` per direction, and checks each page decodes to its bytes (Corruption if not).
// `charges`: what the compressed tier is charged for a kept page (the engine's:
// cache/model_facts.h EngineTierCharges).
Status MeasureCodec(const PageSample& sample, CodecKind codec, int level,
                    double min_savings_percent, double min_seconds, const TierCharges& charges,
                    CodecProfile* profile);

// Mean µs to copy one sampled page (what a raw hit costs beyond its lookup).
double MeasureCopyUs(const PageSample& sample, double min_seconds);

}  // namespace ccfs

#endif  // CCFS_MODEL_CODEC_PROFILE_H_
