// PageIndex on its own: lookups find exactly the entry of a key, insert keeps the first entry of
// a key, removal unlinks once, and lookups stay correct while other threads insert and remove
// (entries retired through RCU); each file's span counts its entries present and bounds their
// page numbers, and a file's entries are found from it.
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
TEST(PageIndexTest, AFilesSpanCountsItsEntriesPresentAndBoundsTheirPages) {
  PageIndex index(16);
  PageEntry* a = NewEntry(7, 3);
  PageEntry* b = NewEntry(7, 40);
  PageEntry* twin = NewEntry(7, 3);
  PageEntry* other = NewEntry(8, 100);
  {
    RcuReadLock rcu;
    EXPECT_EQ(index.SpanOf(7).entries, 0u);
    ASSERT_EQ(index.InsertUnique(a), a);
    ASSERT_EQ(index.InsertUnique(b), b);
    ASSERT_EQ(index.InsertUnique(twin), a);
    ASSERT_EQ(index.InsertUnique(other), other);
    PageIndex::FileSpan span = index.SpanOf(7);
    EXPECT_EQ(span.entries, 2u) << "a key already present is not counted twice";
    EXPECT_EQ(span.end_page, 41u);
    EXPECT_EQ(index.SpanOf(8).entries, 1u);
    EXPECT_EQ(index.SpanOf(8).end_page, 101u) << "files keep spans of their own";
    ASSERT_TRUE(index.Remove(b));
    EXPECT_FALSE(index.Remove(b));
    span = index.SpanOf(7);
    EXPECT_EQ(span.entries, 1u) << "a second removal of one entry counts once";
    EXPECT_GE(span.end_page, 4u);
    ASSERT_TRUE(index.Remove(a));
    span = index.SpanOf(7);
    EXPECT_EQ(span.entries, 0u);
    EXPECT_EQ(span.end_page, 0u) << "a file with no page present has no span left";
    ASSERT_TRUE(index.Remove(other));
  }
  urcu_memb_synchronize_rcu();
  delete a;
  delete b;
  delete twin;
  delete other;
}

TEST(PageIndexTest, AFilesEntriesFromAPageOnAreFoundByLookupsAndByAWalk) {
  PageIndex index(16);
  std::vector<PageEntry*> entries;
  for (uint64_t file = 1; file <= 3; ++file) {
    for (uint64_t page = 0; page < 200; page += 3) entries.push_back(NewEntry(file, page));
  }
  // A page far beyond the others makes file 4's span longer than the table: found by a walk.
  entries.push_back(NewEntry(4, 2));
  entries.push_back(NewEntry(4, 1ull << 40));
  auto found = [&](uint64_t file, uint64_t first) {
    std::set<uint64_t> pages;
    RcuReadLock rcu;
    index.ForEachOfFile(file, first, [&](PageEntry* e) {
      EXPECT_EQ(e->key.file_id, file);
      EXPECT_TRUE(pages.insert(e->key.page_no).second) << "each entry once";
    });
    return pages;
  };
  auto expected = [&](uint64_t file, uint64_t first) {
    std::set<uint64_t> pages;
    for (PageEntry* e : entries) {
      if (e->key.file_id == file && e->key.page_no >= first) pages.insert(e->key.page_no);
    }
    return pages;
  };
  {
    RcuReadLock rcu;
    for (PageEntry* e : entries) ASSERT_EQ(index.InsertUnique(e), e);
  }
  for (uint64_t file : {1, 2, 3, 4}) {
    for (uint64_t first : {0ull, 1ull, 99ull, 198ull, 199ull, 1000ull, 1ull << 40}) {
      EXPECT_EQ(found(file, first), expected(file, first)) << "file " << file << " from " << first;
    }
  }
  EXPECT_TRUE(found(5, 0).empty()) << "a file never cached";
  {
    RcuReadLock rcu;
    for (PageEntry* e : entries) ASSERT_TRUE(index.Remove(e));
  }
  for (uint64_t file : {1, 2, 3, 4}) EXPECT_TRUE(found(file, 0).empty());
  urcu_memb_synchronize_rcu();
  for (PageEntry* e : entries) delete e;
}

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
    EXPECT_EQ(index.SpanOf(1).entries, stable.size());
    EXPECT_EQ(index.SpanOf(2).entries, 0u) << "every churned entry went";
    for (PageEntry* e : stable) ASSERT_TRUE(index.Remove(e));
  }
  for (PageEntry* e : stable) RetireEntry(e);
  urcu_memb_barrier();  // every retired entry is freed before the index goes
}

}  // namespace
}  // namespace ccfs::cache
