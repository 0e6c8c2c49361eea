#include "trace/op_source.h"

#include <algorithm>
#include <utility>

#include "util/rng.h"

namespace ccfs {

OpSource::OpSource(const Dataset& dataset, const AccessDistribution* dist, uint64_t seed,
                   double write_ratio)
    : dataset_(dataset), dist_(dist), seed_(seed), write_ratio_(write_ratio) {}

void OpSource::SetTrace(const std::vector<TraceRecord>& records) {
  const uint64_t page = dataset_.page_size();
  for (const TraceRecord& r : records) {
    uint64_t size = dataset_.files()[r.file].size;
    uint64_t end = std::min<uint64_t>(r.offset + r.length, size);
    for (uint64_t off = r.offset; off < end;) {
      uint64_t piece_end = std::min(end, (off / page + 1) * page);
      ops_.push_back({r.file, off, static_cast<uint32_t>(piece_end - off), r.op});
      off = piece_end;
    }
  }
}

void OpSource::SetPhases(uint64_t phase_ops, std::vector<const AccessDistribution*> laws) {
  phase_ops_ = phase_ops;
  laws_ = std::move(laws);
}

PageOp OpSource::Get(uint64_t i) const {
  if (!ops_.empty()) return ops_[i % ops_.size()];
  // A generator of its own per operation, seeded from (seed, i): no state shared between threads,
  // and the stream does not depend on who asks first.
  uint64_t state = seed_ ^ (i * 0x9e3779b97f4a7c15ull);
  Rng rng(SplitMix64(&state));
  uint64_t page;
  if (phase_ops_ == 0) {
    page = dist_->Next(rng);
  } else {
    const uint64_t phase = i / phase_ops_;
    const AccessDistribution* law = laws_[phase % laws_.size()];
    if (phase == 0) {
      page = law->Next(rng);
    } else {
      // A permutation per operation: six round keys from SplitMix64, far below a read's cost,
      // and no state shared between threads.
      PagePermutation moved(law->pages(), seed_ + phase * 0xd1b54a32d192ed03ull);
      page = moved.Forward(law->NextRank(rng));
    }
  }
  Dataset::PageRef ref = dataset_.Locate(page);
  const uint64_t size = dataset_.files()[ref.file].size;
  PageOp op;
  op.file = ref.file;
  op.offset = ref.offset;
  op.length = static_cast<uint32_t>(std::min<uint64_t>(dataset_.page_size(), size - ref.offset));
  op.op = write_ratio_ > 0 && rng.NextDouble() < write_ratio_ ? TraceOp::kWrite : TraceOp::kRead;
  return op;
}

uint64_t DefaultWarmupOps(uint64_t memory_bytes, uint32_t page_size, uint64_t dataset_pages) {
  return std::min<uint64_t>(3 * (memory_bytes / page_size), 10 * dataset_pages);
}

}  // namespace ccfs
