// The engine's own figures for the models (model/engine_facts.h): the raw CLOCK's use counts, the
// frequency sketch's aging, and what the compressed tier charges for a page it keeps. Whoever
// evaluates a model of this engine (replay, `ccfs model`, `ccfs advise`, the split tuner) takes
// them from here.
//
// Thread-safety: pure functions.
#ifndef CCFS_CACHE_MODEL_FACTS_H_
#define CCFS_CACHE_MODEL_FACTS_H_

#include "model/engine_facts.h"

namespace ccfs::cache {

// kUseMax and kPromotedUses (page_entry.h), FrequencySketch::kAgingReadsPerPage (frequency.h).
ClockFacts EngineClockFacts();
// An all-zero page: its PageEntry; a blob: BlobCharge (blob.h).
TierCharges EngineTierCharges();

}  // namespace ccfs::cache

#endif  // CCFS_CACHE_MODEL_FACTS_H_
