// CompressedTier on its own: what is charged is what is given back, publish refuses pinned and
// stale pages, and over budget the CLOCK hand drops the coldest pages, giving referenced ones a
// second chance.
#include "cache/compressed_tier.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cache/blob.h"
#include "cache/page_entry.h"

namespace ccfs::cache {
namespace {

// A page the evictor owns (kEvicting, unpinned), as CompressChunk hands it to Insert.
void MakeVictim(PageEntry* e, uint64_t page, uint32_t length = 4096) {
  e->key = PageKey{7, page};
  e->frame.store(static_cast<uint32_t>(page));
  e->length.store(length);
  e->state.store(kEvicting);
}

TEST(CompressedTierTest, InsertChargesExactlyAndPromoteOrKillGivesItBack) {
  CompressedTier tier(100000);
  PageEntry a, b;
  MakeVictim(&a, 1, 4096);
  MakeVictim(&b, 2, 1000);  // a short last page
  a.state.fetch_or(kRefBit | kTierHitBit);  // left over from an earlier life in the tier
  std::string bytes(1500, 'z');
  size_t charged = 0;
  Blob* blob = AllocBlob(bytes.data(), bytes.size(), &charged);
  std::vector<PageEntry*> dropped;
  ASSERT_EQ(tier.Insert(&a, blob, static_cast<uint32_t>(charged), 4096, &dropped),
            CompressedTier::Publish::kPublished);
  ASSERT_EQ(tier.Insert(&b, nullptr, 64, 1000, &dropped), CompressedTier::Publish::kPublished);
  EXPECT_TRUE(dropped.empty());
  uint64_t s = a.state.load();
  EXPECT_EQ(KindOf(s), kCompressed);
  EXPECT_EQ(s & (kRefBit | kTierHitBit), 0u) << "a newcomer starts cold and unhit";
  EXPECT_EQ(a.blob.load(), blob);
  CompressedTier::Counts c = tier.counts();
  EXPECT_EQ(c.budget, 100000u);
  EXPECT_EQ(c.charged, charged + 64);
  EXPECT_EQ(c.pages, 2u);
  EXPECT_EQ(c.logical, 5096u);

  Blob* old = nullptr;
  ASSERT_TRUE(tier.Promote(&a, 42, &old));
  EXPECT_EQ(old, blob) << "the promoter retires the blob";
  s = a.state.load();
  EXPECT_EQ(KindOf(s), kRaw);
  EXPECT_EQ(PinsOf(s), 1u) << "pinned for the promoting reader's copy";
  EXPECT_EQ(UsesOf(s), 1u);
  EXPECT_NE(s & kSeenBit, 0u);
  EXPECT_EQ(a.frame.load(), 42u);
  c = tier.counts();
  EXPECT_EQ(c.charged, 64u);
  EXPECT_EQ(c.pages, 1u);
  EXPECT_EQ(c.logical, 1000u);
  EXPECT_FALSE(tier.Promote(&a, 43, &old)) << "no longer compressed";
  EXPECT_EQ(a.frame.load(), 42u);
  FreeBlob(blob);

  ASSERT_TRUE(tier.Kill(&b));
  EXPECT_EQ(KindOf(b.state.load()), kDead);
  EXPECT_FALSE(tier.Kill(&b));
  c = tier.counts();
  EXPECT_EQ(c.charged, 0u);
  EXPECT_EQ(c.pages, 0u);
  EXPECT_EQ(c.logical, 0u);
  EXPECT_EQ(c.evictions, 0u) << "invalidations are not evictions";
}

TEST(CompressedTierTest, InsertRefusesAPinnedOrStalePage) {
  CompressedTier tier(100000);
  PageEntry e;
  MakeVictim(&e, 1);
  e.state.fetch_add(kPinOne);  // a reader still copies out of the frame
  std::vector<PageEntry*> dropped;
  EXPECT_EQ(tier.Insert(&e, nullptr, 100, 4096, &dropped), CompressedTier::Publish::kPinned);
  EXPECT_EQ(KindOf(e.state.load()), kEvicting);
  Unpin(&e);
  e.state.fetch_or(kStaleBit);  // invalidated while being compressed
  EXPECT_EQ(tier.Insert(&e, nullptr, 100, 4096, &dropped), CompressedTier::Publish::kStale);
  EXPECT_EQ(KindOf(e.state.load()), kEvicting);
  EXPECT_EQ(tier.counts().charged, 0u);
  EXPECT_EQ(tier.counts().pages, 0u);
}

TEST(CompressedTierTest, OverBudgetTheHandDropsTheColdestAndSparesReferencedOnce) {
  CompressedTier tier(3000);
  PageEntry e[4];
  std::vector<PageEntry*> dropped;
  for (int i = 0; i < 3; ++i) {
    MakeVictim(&e[i], i);
    ASSERT_EQ(tier.Insert(&e[i], nullptr, 1000, 4096, &dropped), CompressedTier::Publish::kPublished);
  }
  EXPECT_TRUE(dropped.empty()) << "at the budget, not over it";
  MarkCompressedHit(&e[0]);  // the oldest page was read
  MakeVictim(&e[3], 3);
  ASSERT_EQ(tier.Insert(&e[3], nullptr, 1000, 4096, &dropped), CompressedTier::Publish::kPublished);
  // The hand starts at the oldest page: referenced, so its bit is cleared and it is passed over.
  EXPECT_EQ(dropped, (std::vector<PageEntry*>{&e[1]}));
  EXPECT_EQ(KindOf(e[1].state.load()), kDead);
  EXPECT_EQ(KindOf(e[0].state.load()), kCompressed);
  EXPECT_EQ(e[0].state.load() & kRefBit, 0u);
  EXPECT_NE(e[0].state.load() & kTierHitBit, 0u);
  CompressedTier::Counts c = tier.counts();
  EXPECT_EQ(c.charged, 3000u);
  EXPECT_EQ(c.evictions, 1u);
  EXPECT_EQ(c.wasted, 1u) << "page 1 was dropped before any hit";

  // Shrinking the budget drops more, continuing where the hand stopped.
  dropped.clear();
  tier.SetBudget(1000, &dropped);
  EXPECT_EQ(dropped, (std::vector<PageEntry*>{&e[2], &e[3]}));
  c = tier.counts();
  EXPECT_EQ(c.budget, 1000u);
  EXPECT_EQ(c.charged, 1000u);
  EXPECT_EQ(c.pages, 1u);
  EXPECT_EQ(c.evictions, 3u);
  EXPECT_EQ(c.wasted, 3u);
  // The survivor is the page that was read; with the budget at zero it goes too, as a hit page.
  dropped.clear();
  tier.SetBudget(0, &dropped);
  EXPECT_EQ(dropped, (std::vector<PageEntry*>{&e[0]}));
  c = tier.counts();
  EXPECT_EQ(c.pages, 0u);
  EXPECT_EQ(c.charged, 0u);
  EXPECT_EQ(c.evictions, 4u);
  EXPECT_EQ(c.wasted, 3u);
}

}  // namespace
}  // namespace ccfs::cache
