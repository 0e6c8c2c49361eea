// ListingWalk without the kernel: a walk is a small file read right after the one listed before
// it (among the last few so read), never a file read out of order, and each file is queued once.
#include "fuse/listing_walk.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

namespace ccfs {
namespace {

InodeKey K(ino_t ino) { return {1, ino}; }

TEST(ListingWalkTest, AFileReadRightAfterTheOneListedBeforeItContinuesAWalk) {
  ListingWalk w;
  EXPECT_FALSE(w.Started(K(10), K(11)));  // the first file of a directory
  EXPECT_TRUE(w.Started(K(11), K(12)));
  EXPECT_TRUE(w.Started(K(12), K(13)));
  EXPECT_FALSE(w.Started(K(20), K(21)));  // a jump
  EXPECT_FALSE(w.Started(K(40), K(41)));
  EXPECT_FALSE(w.Started(K(30), K(31)));
  // Two walkers at once (two directories, or two programs): each continues its own.
  EXPECT_TRUE(w.Started(K(13), K(14)));
  EXPECT_TRUE(w.Started(K(21), K(22)));
  EXPECT_TRUE(w.Started(K(14), K(15)));
  // A file whose next is not known leaves nothing to follow.
  EXPECT_FALSE(w.Started(K(50), K(0)));
  EXPECT_FALSE(w.Started(K(0), K(0)));
}

TEST(ListingWalkTest, ReadingInReverseOrderIsNoWalk) {
  ListingWalk w;
  for (ino_t ino = 100; ino > 80; --ino) EXPECT_FALSE(w.Started(K(ino), K(ino + 1))) << ino;
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
