// KernelCache's ledger without a session (before Start it records what it would tell the kernel):
// pages leave in the order they were served, except that a page asked for again after it was
// dropped gets one more turn, once.
#include "fuse/kernel_cache.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace ccfs {
namespace {

constexpr uint32_t kPage = 4096;
constexpr uint64_t kBudgetPages = 64;  // the slack is 1/32 of it: 2 pages

void Serve(KernelCache* k, uint64_t page) {
  k->Served(/*ino=*/1, /*file_id=*/7, page * kPage, kPage);
}

// True if the ledger still holds `page` (serving it again then counts a rerequest); serves it.
bool Held(KernelCache* k, uint64_t page) {
  const uint64_t before = k->counts().rerequests;
  Serve(k, page);
  return k->counts().rerequests > before;
}

TEST(KernelCacheTest, PagesLeaveInTheOrderServedOnceTheLedgerPassesItsSlack) {
  KernelCache k(kBudgetPages * kPage, kPage, /*evict=*/true);
  for (uint64_t p = 0; p < kBudgetPages + 2; ++p) Serve(&k, p);
  EXPECT_EQ(k.counts().evicted_pages, 0u) << "within the slack";
  Serve(&k, kBudgetPages + 2);
  EXPECT_EQ(k.counts().evicted_pages, 3u);
  EXPECT_EQ(k.counts().held_pages, kBudgetPages);
  EXPECT_TRUE(Held(&k, 3));
  EXPECT_FALSE(Held(&k, 2)) << "the oldest pages were dropped";
}

TEST(KernelCacheTest, APageAskedForAgainAfterItWasDroppedGetsOneMoreTurn) {
  KernelCache k(kBudgetPages * kPage, kPage, /*evict=*/true);
  for (uint64_t p = 0; p <= kBudgetPages + 2; ++p) Serve(&k, p);  // drops pages 0, 1 and 2
  Serve(&k, 0);                                                      // back again
  Serve(&k, 1);
  // More new pages than the ledger holds: every page served before them leaves (3..66 first), but
  // 0 and 1, when their turn comes, only go to the back.
  for (uint64_t p = 100; p < 110 + kBudgetPages; ++p) Serve(&k, p);
  EXPECT_TRUE(Held(&k, 0));
  EXPECT_TRUE(Held(&k, 1));
  // Asked for again while held is not a return after a drop: spared once already, they leave at
  // their next turn.
  for (uint64_t p = 200; p < 200 + 2 * kBudgetPages; ++p) Serve(&k, p);
  EXPECT_FALSE(Held(&k, 0));
  EXPECT_FALSE(Held(&k, 1));
}

}  // namespace
}  // namespace ccfs
