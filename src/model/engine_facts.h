// The engine's facts that the models take as inputs. The model room sits below the engine and does
// not include it: whoever evaluates a model of ccfs's engine hands these in, filled by the engine
// itself (cache/model_facts.h), so the figures have one home.
//
// Thread-safety: plain values.
#ifndef CCFS_MODEL_ENGINE_FACTS_H_
#define CCFS_MODEL_ENGINE_FACTS_H_

#include <cstddef>
#include <functional>

namespace ccfs {

// The raw CLOCK and the frequency sketch, for the clock model (clock_model.h). Zero until set:
// where the clock model is evaluated, REQUIRES use_max >= 1 and 0 <= promoted_uses <= use_max.
struct ClockFacts {
  int use_max = 0;                  // a raw page's uses saturate here
  int promoted_uses = 0;            // the uses a page promoted from the compressed tier starts with
  double aging_reads_per_page = 0;  // the sketch halves its counts every this many reads per page
                                    // of memory
};

// What the compressed tier is charged for a page it keeps, for the codec measurement
// (codec_profile.h).
struct TierCharges {
  size_t zero_page = 0;                    // an all-zero page: its entry, no blob
  std::function<size_t(size_t)> blob;      // a blob of n bytes, as its allocator charges it.
                                           // REQUIRES: set where a codec is measured
};

}  // namespace ccfs

#endif  // CCFS_MODEL_ENGINE_FACTS_H_
