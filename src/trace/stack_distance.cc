#include "trace/stack_distance.h"

#include <algorithm>
#include <cmath>

namespace ccfs {

StackDistanceCounter::StackDistanceCounter(uint64_t keys, uint64_t max_accesses)
    : tree_(max_accesses + 1, 0), last_(keys, 0) {}

void StackDistanceCounter::Add(uint64_t time, int32_t delta) {
  for (; time < tree_.size(); time += time & (~time + 1)) tree_[time] += delta;
}

uint64_t StackDistanceCounter::Prefix(uint64_t time) const {
  uint64_t sum = 0;
  for (; time > 0; time &= time - 1) sum += tree_[time];
  return sum;
}

uint64_t StackDistanceCounter::Access(uint64_t key) {
  const uint64_t now = ++now_;
  const uint64_t previous = last_[key];
  uint64_t distance = kCold;
  if (previous != 0) {
    // Each key has exactly one 1, at its latest access: the ones after `previous` (and before now,
    // which holds nothing yet) are the distinct keys accessed since.
    distance = Prefix(now - 1) - Prefix(previous);
    Add(previous, -1);
  }
  Add(now, 1);
  last_[key] = now;
  return distance;
}

void LruHitCurve::Add(uint64_t distance) {
  ++accesses_;
  dirty_ = true;
  if (distance == StackDistanceCounter::kCold) {
    ++cold_;
    return;
  }
  if (distance >= histogram_.size()) histogram_.resize(distance + 1, 0);
  ++histogram_[distance];
}

uint64_t LruHitCurve::Hits(uint64_t capacity) const {
  if (dirty_) {
    cumulative_.assign(histogram_.size() + 1, 0);
    for (size_t d = 0; d < histogram_.size(); ++d) cumulative_[d + 1] = cumulative_[d] + histogram_[d];
    dirty_ = false;
  }
  return cumulative_[std::min<uint64_t>(capacity, cumulative_.size() - 1)];
}

double LruHitCurve::HitRatio(double capacity) const {
  if (accesses_ == 0 || !(capacity > 0)) return 0.0;
  const double top = static_cast<double>(histogram_.size());
  if (capacity >= top) return static_cast<double>(Hits(histogram_.size())) / accesses_;
  const double low = std::floor(capacity);
  const double low_hits = static_cast<double>(Hits(static_cast<uint64_t>(low)));
  const double high_hits = static_cast<double>(Hits(static_cast<uint64_t>(low) + 1));
  return (low_hits + (capacity - low) * (high_hits - low_hits)) / accesses_;
}

}  // namespace ccfs
