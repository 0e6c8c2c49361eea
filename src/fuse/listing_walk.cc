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

bool ListingWalk::Started(InodeKey key, InodeKey parent,
                          const std::array<InodeKey, kListingOrders>& next, ListingOrder* order) {
  MutexLock lock(&mu_);
  // The longest run `key` continues (it may continue one in each order).
  const Expected* found = nullptr;
  for (const Expected& e : expected_) {
    if (key.second != 0 && e.key == key && (found == nullptr || e.steps > found->steps)) found = &e;
  }
  const int steps = found != nullptr ? found->steps : 0;
  walking_ = steps >= 2;
  if (walking_) {
    *order = found->order;
    walking_order_ = found->order;
    place_ = Place{parent, key};
  }
  for (int o = 0; o < kListingOrders; ++o) {
    if (next[o].second == 0) continue;
    // The file after this one continues this one's run in its own order, or starts one.
    const int run = steps > 0 && found->order == o ? steps + 1 : 1;
    ExpectLocked(Expected{next[o], static_cast<ListingOrder>(o), run});
  }
  return walking_;
}

void ListingWalk::At(const Place& place) {
  MutexLock lock(&mu_);
  place_ = place;
}

bool ListingWalk::Walking(ListingOrder* order, Place* place) {
  MutexLock lock(&mu_);
  if (walking_) {
    *order = walking_order_;
    *place = place_;
  }
  return walking_;
}

void ListingWalk::Into(InodeKey first, ListingOrder order) {
  MutexLock lock(&mu_);
  walking_ = false;
  ExpectLocked(Expected{first, order, 2});
}

void ListingWalk::ExpectLocked(const Expected& e) {
  expected_[expected_at_] = e;
  expected_at_ = (expected_at_ + 1) % expected_.size();
}

bool ListingWalk::FirstQueue(InodeKey key) {
  MutexLock lock(&mu_);
  if (std::find(queued_.begin(), queued_.end(), key) != queued_.end()) return false;
  queued_[queued_at_] = key;
  queued_at_ = (queued_at_ + 1) % kQueuedMemory;
  return true;
}

void ListingWalk::Unqueue(InodeKey key) {
  MutexLock lock(&mu_);
  auto it = std::find(queued_.begin(), queued_.end(), key);
  if (it != queued_.end()) *it = InodeKey{};
}

}  // namespace ccfs
