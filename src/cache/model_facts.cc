#include "cache/model_facts.h"

#include "cache/blob.h"
#include "cache/frequency.h"
#include "cache/page_entry.h"

namespace ccfs::cache {

ClockFacts EngineClockFacts() {
  ClockFacts f;
  f.use_max = static_cast<int>(kUseMax);
  f.promoted_uses = static_cast<int>(kPromotedUses);
  f.aging_reads_per_page = static_cast<double>(FrequencySketch::kAgingReadsPerPage);
  return f;
}

TierCharges EngineTierCharges() {
  TierCharges c;
  c.zero_page = sizeof(PageEntry);
  c.blob = BlobCharge;
  return c;
}

}  // namespace ccfs::cache
