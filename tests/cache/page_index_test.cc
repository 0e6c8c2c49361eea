// PageIndex on its own: lookups find exactly the entry of a key, insert keeps the first entry of
// a key, removal unlinks once, and lookups stay correct while other threads insert and remove
// (entries retired through RCU).
#include "cache/page_index.h"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <set>
#include <thread>
#include <vector>

#include "cache/blob.h"
#include "cache/page_entry.h"
#include "cache/rcu.h"

namespace ccfs::cache {
namespace {

PageEntry* NewEntry(uint64_t file, uint64_t page) {
  auto* e = new PageEntry;
  e->key = PageKey{file, page};
  return e;
}

TEST(PageIndexTest, InsertLookupAndRemoveOneKey) {
  PageIndex index(16);
  PageEntry* a = NewEntry(1, 5);
  PageEntry* twin = NewEntry(1, 5);
  {
    RcuReadLock rcu;
    EXPECT_EQ(index.Lookup(PageKey{1, 5}), nullptr);
    EXPECT_EQ(index.InsertUnique(a), a);
    EXPECT_EQ(index.Lookup(PageKey{1, 5}), a);
    EXPECT_EQ(index.Lookup(PageKey{1, 6}), nullptr);
    EXPECT_EQ(index.Lookup(PageKey{2, 5}), nullptr) << "keys differ by file too";
    EXPECT_EQ(index.InsertUnique(twin), a) << "the entry already there wins";
    EXPECT_EQ(index.Lookup(PageKey{1, 5}), a);
    EXPECT_TRUE(index.Remove(a));
    EXPECT_FALSE(index.Remove(a)) << "only one remover gets true";
    EXPECT_EQ(index.Lookup(PageKey{1, 5}), nullptr);
    EXPECT_EQ(index.InsertUnique(twin), twin) << "the key can be inserted again";
    EXPECT_TRUE(index.Remove(twin));
  }
  urcu_memb_synchronize_rcu();
  delete a;
  delete twin;
}

TEST(PageIndexTest, ManyKeysEachFindTheirOwnEntryAndForEachSeesThemAll) {
  PageIndex index(16);  // starts small: it grows as entries arrive
  std::vector<PageEntry*> entries;
  for (uint64_t file = 1; file <= 10; ++file) {
    for (uint64_t page = 0; page < 500; ++page) entries.push_back(NewEntry(file, page));
  }
  {
    RcuReadLock rcu;
    for (PageEntry* e : entries) ASSERT_EQ(index.InsertUnique(e), e);
    for (PageEntry* e : entries) ASSERT_EQ(index.Lookup(e->key), e);
    std::set<PageEntry*> seen;
    index.ForEach([&](PageEntry* e) { EXPECT_TRUE(seen.insert(e).second) << "seen twice"; });
    EXPECT_EQ(seen.size(), entries.size());
    // Removing during a walk is allowed (InvalidateFile does it): drop file 3.
    size_t removed = 0;
    index.ForEach([&](PageEntry* e) {
      if (e->key.file_id == 3) removed += index.Remove(e);
    });
    EXPECT_EQ(removed, 500u);
    for (PageEntry* e : entries) {
      ASSERT_EQ(index.Lookup(e->key), e->key.file_id == 3 ? nullptr : e) << e->key.page_no;
    }
    for (PageEntry* e : entries) {
      if (e->key.file_id != 3) {
        ASSERT_TRUE(index.Remove(e));
      }
    }
    for (PageEntry* e : entries) RetireEntry(e);  // freed after the grace period
  }
  urcu_memb_barrier();
}

// Readers look up while a writer keeps inserting, removing and retiring entries of the same keys:
// a lookup returns nullptr or an entry with exactly the key asked for (never a freed one: TSan and
// ASan builds check that), and keys that are never removed are always found.
TEST(PageIndexTest, LookupsStayCorrectWhileEntriesComeAndGo) {
  PageIndex index(64);
  constexpr uint64_t kStable = 64, kChurn = 64;
  std::vector<PageEntry*> stable;
  {
    RcuReadLock rcu;
    for (uint64_t p = 0; p < kStable; ++p) {
      stable.push_back(NewEntry(1, p));
      ASSERT_EQ(index.InsertUnique(stable.back()), stable.back());
    }
  }
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> bad{0};
  auto reader = [&] {
    uint64_t i = 0;
    while (!stop.load(std::memory_order_relaxed)) {
      RcuReadLock rcu;
      const PageKey stable_key{1, i % kStable};
      PageEntry* s = index.Lookup(stable_key);
      if (s == nullptr || !(s->key == stable_key)) bad.fetch_add(1);
      const PageKey churn_key{2, i % kChurn};
      PageEntry* c = index.Lookup(churn_key);
      if (c != nullptr && !(c->key == churn_key)) bad.fetch_add(1);
      ++i;
    }
  };
  std::thread r1(reader), r2(reader);
  for (int round = 0; round < 300; ++round) {
    std::vector<PageEntry*> batch;
    {
      RcuReadLock rcu;
      for (uint64_t p = 0; p < kChurn; ++p) {
        PageEntry* e = NewEntry(2, p);
        ASSERT_EQ(index.InsertUnique(e), e);
        batch.push_back(e);
      }
      for (PageEntry* e : batch) ASSERT_TRUE(index.Remove(e));
    }
    for (PageEntry* e : batch) RetireEntry(e);
  }
  stop = true;
  r1.join();
  r2.join();
  EXPECT_EQ(bad.load(), 0u);
  {
    RcuReadLock rcu;
    for (PageEntry* e : stable) ASSERT_TRUE(index.Remove(e));
  }
  for (PageEntry* e : stable) RetireEntry(e);
  urcu_memb_barrier();  // every retired entry is freed before the index goes
}

}  // namespace
}  // namespace ccfs::cache
