#include "fuse/listing_walk.h"

#include <algorithm>

namespace ccfs {

bool ListingWalk::Gate::Enter() {
  MutexLock lock(&mu_);
  if (closed_) return false;
  ++inside_;
  return true;
}

void ListingWalk::Gate::Leave() {
  MutexLock lock(&mu_);
  if (--inside_ == 0) left_.SignalAll();
}

void ListingWalk::Gate::Close() {
  MutexLock lock(&mu_);
  closed_ = true;
  while (inside_ > 0) left_.Wait(&mu_);
}

bool ListingWalk::Started(InodeKey key, InodeKey next) {
  MutexLock lock(&mu_);
  const bool walk =
      key.second != 0 && std::find(expected_.begin(), expected_.end(), key) != expected_.end();
  if (next.second != 0) {
    expected_[expected_at_] = next;
    expected_at_ = (expected_at_ + 1) % kRecent;
  }
  return walk;
}

bool ListingWalk::FirstQueue(InodeKey key) {
  MutexLock lock(&mu_);
  if (std::find(queued_.begin(), queued_.end(), key) != queued_.end()) return false;
  queued_[queued_at_] = key;
  queued_at_ = (queued_at_ + 1) % kQueuedMemory;
  return true;
}

}  // namespace ccfs
