// ListingWalk without the kernel: a walk is a small file read right after the one listed before
// it (among the last few so read), never a file read out of order; it goes into the next listing
// once; each file is queued once.
#include "fuse/listing_walk.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

namespace ccfs {
namespace {

InodeKey K(ino_t ino) { return {1, ino}; }

// A walk in listing order: the file after `ino` is ino + 1, by name ino + 100.
bool Started(ListingWalk* w, ino_t ino, ListingOrder* order = nullptr) {
  ListingOrder o = kListedOrder;
  const bool walk = w->Started(K(ino), K(1), {K(ino + 1), K(ino + 100)}, &o);
  if (order != nullptr) *order = o;
  return walk;
}

TEST(ListingWalkTest, AThirdFileReadEachRightAfterTheOneListedBeforeItStartsAWalk) {
  ListingWalk w;
  ListingOrder order = kNameOrder;
  EXPECT_FALSE(Started(&w, 10));  // the first file of a directory
  EXPECT_FALSE(Started(&w, 11));  // one step
  EXPECT_TRUE(Started(&w, 12, &order));  // two in a row
  EXPECT_EQ(order, kListedOrder);
  EXPECT_TRUE(Started(&w, 13));
  EXPECT_FALSE(Started(&w, 20));  // a jump
  EXPECT_FALSE(Started(&w, 40));
  // Two walkers at once (two directories, or two programs): each continues its own.
  EXPECT_TRUE(Started(&w, 14));
  EXPECT_FALSE(Started(&w, 21));
  EXPECT_TRUE(Started(&w, 15));
  EXPECT_TRUE(Started(&w, 22));
  // A file whose next is not known leaves nothing to follow.
  EXPECT_FALSE(w.Started(K(50), K(1), {K(0), K(0)}, &order));
  EXPECT_FALSE(w.Started(K(51), K(1), {K(0), K(0)}, &order));
  EXPECT_FALSE(w.Started(K(0), K(1), {K(0), K(0)}, &order));
}

TEST(ListingWalkTest, FilesThatEachFollowOneOfTheLastFewButNotInARowAreNoWalk) {
  // 1, 30, 2, 60, 31, 3: each of 2, 31 and 3 comes right after one read lately, none after one
  // that did so itself.
  ListingWalk w;
  for (ino_t ino : {1, 30, 2, 60, 31}) EXPECT_FALSE(Started(&w, ino)) << ino;
  EXPECT_TRUE(Started(&w, 3));  // 1, 2, 3: two steps in a row, with others between
}

TEST(ListingWalkTest, AFileReadRightAfterTheOneBeforeItByNameContinuesAWalkByName) {
  ListingWalk w;
  ListingOrder order = kListedOrder;
  EXPECT_FALSE(Started(&w, 1000));
  EXPECT_FALSE(Started(&w, 1100));
  EXPECT_TRUE(Started(&w, 1200, &order));
  EXPECT_EQ(order, kNameOrder);
}

TEST(ListingWalkTest, ReadingInReverseOrderIsNoWalk) {
  ListingWalk w;
  for (ino_t ino = 100; ino > 80; --ino) EXPECT_FALSE(Started(&w, ino)) << ino;
}

TEST(ListingWalkTest, AWalkGoesIntoOneListingAndOnFromItsFirstFile) {
  ListingWalk w;
  ListingOrder order = kNameOrder;
  ListingWalk::Place place;
  EXPECT_FALSE(w.Walking(&order, &place));
  for (ino_t ino : {10, 11}) EXPECT_FALSE(Started(&w, ino));
  EXPECT_FALSE(w.Walking(&order, &place));
  EXPECT_TRUE(Started(&w, 12));
  ASSERT_TRUE(w.Walking(&order, &place));
  EXPECT_EQ(order, kListedOrder);
  EXPECT_EQ(place.dir, K(1));  // where the walk is, for InodeTable::InTurn
  EXPECT_EQ(place.entry, K(12));
  // The next directory's listing takes the walk; its first file continues it.
  w.Into(K(500), kListedOrder);
  EXPECT_FALSE(w.Walking(&order, &place));  // a listing after it gets no walk
  EXPECT_TRUE(Started(&w, 500));
  EXPECT_TRUE(w.Walking(&order, &place));
  EXPECT_TRUE(Started(&w, 501));
  // A small file read out of turn ends the walk: no listing after it gets one.
  EXPECT_FALSE(Started(&w, 900));
  EXPECT_FALSE(w.Walking(&order, &place));
}

TEST(ListingWalkTest, AWalkByNameGoesIntoTheNextListingByName) {
  ListingWalk w;
  ListingOrder order = kListedOrder;
  ListingWalk::Place place;
  for (ino_t ino : {1000, 1100}) EXPECT_FALSE(Started(&w, ino));
  EXPECT_TRUE(Started(&w, 1200));
  ASSERT_TRUE(w.Walking(&order, &place));
  EXPECT_EQ(order, kNameOrder);
  w.Into(K(5000), order);
  EXPECT_TRUE(Started(&w, 5000, &order));
  EXPECT_EQ(order, kNameOrder);
}

TEST(ListingWalkTest, AFileIsQueuedOnceAmongTheLastQueued) {
  ListingWalk w;
  EXPECT_TRUE(w.FirstQueue(K(1)));
  EXPECT_FALSE(w.FirstQueue(K(1)));
  for (ino_t ino = 2; ino < 2 + ListingWalk::kQueuedMemory; ++ino) {
    EXPECT_TRUE(w.FirstQueue(K(ino)));
  }
  EXPECT_TRUE(w.FirstQueue(K(1)));  // forgotten by now
}

TEST(ListingWalkTest, AFileWhoseQueueingFailedMayBeQueuedAgain) {
  ListingWalk w;
  EXPECT_TRUE(w.FirstQueue(K(7)));
  EXPECT_TRUE(w.FirstQueue(K(8)));
  w.Unqueue(K(7));  // the read-ahead queue was full
  EXPECT_TRUE(w.FirstQueue(K(7)));
  EXPECT_FALSE(w.FirstQueue(K(8)));
  w.Unqueue(K(9));  // never queued: nothing to forget
  EXPECT_FALSE(w.FirstQueue(K(7)));
}

TEST(ListingWalkTest, CloseWaitsForThoseInsideAndTurnsTheLaterAway) {
  auto gate = std::make_shared<ListingWalk::Gate>();
  ASSERT_TRUE(gate->Enter());
  std::atomic<bool> closed{false};
  std::thread closer([&] {
    gate->Close();
    closed = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(closed.load());
  gate->Leave();
  closer.join();
  EXPECT_TRUE(closed.load());
  EXPECT_FALSE(gate->Enter());
}

}  // namespace
}  // namespace ccfs
