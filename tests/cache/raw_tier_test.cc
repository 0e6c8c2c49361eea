// RawTier on its own: frames are handed out once and come back, capacity parks and unparks
// frames, a miss waits for a free frame, and the CLOCK hand and probation pick victims in the
// order raw_tier.h promises.
#include "cache/raw_tier.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <set>
#include <thread>
#include <vector>

#include "cache/page_entry.h"
#include "cache/rcu.h"

namespace ccfs::cache {
namespace {

constexpr uint32_t kPage = 4096;

// A raw page of `frame` with `uses` on the CLOCK, published as owner(frame).
// Takes the next frame, as a miss does, which must be `frame` (frames are handed out lowest
// first), and publishes `e` in it. The hand sweeps only frames that have been handed out.
void Publish(RawTier* raw, PageEntry* e, uint32_t frame, uint64_t uses) {
  uint32_t got = 0;
  ASSERT_TRUE(raw->TryAlloc(&got));
  ASSERT_EQ(got, frame);
  e->key = PageKey{1, frame};
  e->frame.store(frame);
  e->state.store(WithUses(kRaw, uses));
  raw->owner(frame).store(e);
}

TEST(RawTierTest, FramesAreHandedOutOnceLowestFirstAndComeBack) {
  RawTier raw(kPage, 8, 8);
  EXPECT_EQ(raw.free_count(), 8u);
  EXPECT_EQ(raw.active(), 8u);
  std::vector<uint32_t> got;
  uint32_t f;
  while (raw.TryAlloc(&f)) got.push_back(f);
  EXPECT_EQ(got, (std::vector<uint32_t>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(raw.free_count(), 0u);
  // Each frame is its own page-aligned page of memory.
  for (uint32_t frame : got) {
    EXPECT_EQ(reinterpret_cast<uintptr_t>(raw.data(frame)) % kPage, 0u);
    std::memset(raw.data(frame), static_cast<int>(frame), kPage);
  }
  for (uint32_t frame : got) {
    EXPECT_EQ(raw.data(frame)[0], static_cast<char>(frame));
    EXPECT_EQ(raw.data(frame)[kPage - 1], static_cast<char>(frame));
  }
  raw.Free(5);
  raw.Free(2);
  EXPECT_EQ(raw.free_count(), 2u);
  ASSERT_TRUE(raw.TryAlloc(&f));
  EXPECT_EQ(f, 2u) << "the last frame returned is the next handed out";
  ASSERT_TRUE(raw.TryAlloc(&f));
  EXPECT_EQ(f, 5u);
  EXPECT_FALSE(raw.TryAlloc(&f));
  uint64_t waited = 1;
  raw.Free(7);
  EXPECT_EQ(raw.Alloc(&waited, [] { FAIL() << "a free frame was there"; }), 7u);
  EXPECT_EQ(waited, 0u);
}

TEST(RawTierTest, CapacityParksFramesAsTheyComeFreeAndUnparksThem) {
  RawTier raw(kPage, 8, 4);
  EXPECT_EQ(raw.capacity(), 4u);
  EXPECT_EQ(raw.active(), 4u);
  EXPECT_EQ(raw.free_count(), 4u);
  std::set<uint32_t> held;
  uint32_t f;
  while (raw.TryAlloc(&f)) held.insert(f);
  EXPECT_EQ(held, (std::set<uint32_t>{0, 1, 2, 3})) << "parked frames are not handed out";

  raw.SetCapacity(8);
  EXPECT_EQ(raw.active(), 8u);
  EXPECT_EQ(raw.free_count(), 4u);
  while (raw.TryAlloc(&f)) held.insert(f);
  EXPECT_EQ(held.size(), 8u);

  // Shrinking with every frame in use parks nothing now: frames are parked as they come free.
  raw.SetCapacity(2);
  EXPECT_EQ(raw.active(), 8u);
  for (uint32_t frame : {0u, 1u, 2u, 3u, 4u, 5u}) {
    raw.Free(frame);
    EXPECT_EQ(raw.free_count(), 0u) << "frame " << frame << " should have been parked";
  }
  EXPECT_EQ(raw.active(), 2u);
  raw.Free(6);
  raw.Free(7);
  EXPECT_EQ(raw.free_count(), 2u);
  EXPECT_EQ(raw.active(), 2u);
  // A larger capacity than the mapping is capped at it.
  raw.SetCapacity(100);
  EXPECT_EQ(raw.capacity(), 8u);
  EXPECT_EQ(raw.active(), 8u);
  EXPECT_EQ(raw.free_count(), 8u);
}

TEST(RawTierTest, AllocWaitsForAFrameAndReportsTheWait) {
  RawTier raw(kPage, 2, 1);
  uint32_t only;
  ASSERT_TRUE(raw.TryAlloc(&only));
  std::atomic<int> kicks{0};
  std::atomic<bool> done{false};
  uint64_t waited_ns = 0;
  uint32_t got = UINT32_MAX;
  std::thread t([&] {
    got = raw.Alloc(&waited_ns, [&] { kicks.fetch_add(1); });
    done = true;
  });
  while (raw.waiters() == 0) std::this_thread::yield();
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  EXPECT_FALSE(done.load()) << "Alloc returned with no free frame";
  EXPECT_GE(kicks.load(), 1) << "on_wait is called before waiting (it wakes the evictor)";
  raw.Free(only);
  t.join();
  EXPECT_EQ(got, only);
  EXPECT_GE(waited_ns, 20'000'000u);
  EXPECT_EQ(raw.waiters(), 0u);
  EXPECT_EQ(raw.free_count(), 0u);
}

TEST(RawTierTest, TheHandTakesUsesAwayAndEvictsAtZeroInFrameOrder) {
  RawTier raw(kPage, 4, 4);
  PageEntry e[4];
  const uint64_t uses[4] = {0, 2, 0, 1};
  for (uint32_t f = 0; f < 4; ++f) Publish(&raw, &e[f], f, uses[f]);
  RcuReadLock rcu;
  std::vector<PageEntry*> victims;
  EXPECT_EQ(raw.Sweep(2, &victims), 2u);
  EXPECT_EQ(victims, (std::vector<PageEntry*>{&e[0], &e[2]}));
  EXPECT_EQ(KindOf(e[0].state.load()), kEvicting);
  EXPECT_EQ(KindOf(e[2].state.load()), kEvicting);
  EXPECT_EQ(UsesOf(e[1].state.load()), 1u) << "passed over once";
  EXPECT_EQ(KindOf(e[1].state.load()), kRaw);

  // The hand continues at frame 3: 1 -> 0, wraps, frame 1: 1 -> 0, then frame 3 is taken.
  victims.clear();
  EXPECT_EQ(raw.Sweep(1, &victims), 1u);
  EXPECT_EQ(victims, (std::vector<PageEntry*>{&e[3]}));
  EXPECT_EQ(UsesOf(e[1].state.load()), 0u);

  // Pages being evicted, loading or without an owner are never taken; a sweep gives up after
  // kUseMax + 1 turns rather than spinning.
  raw.owner(2).store(nullptr);
  e[1].state.store(kLoading);
  victims.clear();
  EXPECT_EQ(raw.Sweep(4, &victims), 0u);
  e[1].state.store(WithUses(kRaw, kUseMax));
  EXPECT_EQ(raw.Sweep(4, &victims), 1u) << "a page at the maximum count still goes eventually";
  EXPECT_EQ(victims, (std::vector<PageEntry*>{&e[1]}));
}

TEST(RawTierTest, ProbationPagesGoFirstAfterASweepUnlessReadAgain) {
  RawTier raw(kPage, 16, 16);  // probation holds up to 16 / 4 pages
  PageEntry e[16];
  for (uint32_t f = 0; f < 14; ++f) Publish(&raw, &e[f], f, kUseMax);  // read often
  Publish(&raw, &e[14], 14, 0);  // loaded by misses the sketch had not seen
  Publish(&raw, &e[15], 15, 0);
  raw.Probation(14, &e[14], /*ahead=*/false);
  raw.Probation(15, &e[15], /*ahead=*/false);
  RcuReadLock rcu;
  std::vector<PageEntry*> victims;
  // A page waits one sweep on probation (the second half of a page read in two pieces).
  EXPECT_EQ(raw.Sweep(0, &victims), 0u);
  // Page 15 is read again meanwhile (a raw hit: pin, copy, unpin).
  uint64_t s = e[15].state.load();
  ASSERT_TRUE(TryPin(&e[15], &s));
  Unpin(&e[15]);

  EXPECT_EQ(raw.Sweep(1, &victims), 1u);
  EXPECT_EQ(victims, (std::vector<PageEntry*>{&e[14]}));
  for (uint32_t f = 0; f < 14; ++f) {
    ASSERT_EQ(UsesOf(e[f].state.load()), kUseMax) << "the hand moved before probation was used";
  }
  // Page 15 was read again: it is not taken from probation but waits for the hand like any other.
  victims.clear();
  EXPECT_EQ(raw.Sweep(1, &victims), 1u);
  EXPECT_EQ(victims, (std::vector<PageEntry*>{&e[15]}));
  EXPECT_LT(UsesOf(e[0].state.load()), kUseMax) << "it was the hand that reached page 15";
}

TEST(RawTierTest, APageReadAheadAndNotReadYetOutlivesThePagesItsStreamHasRead) {
  RawTier raw(kPage, 16, 16);  // probation holds up to 16 / 4 pages
  PageEntry e[16];
  for (uint32_t f = 0; f < 12; ++f) Publish(&raw, &e[f], f, kUseMax);  // read often
  // Read-ahead of two streams, loaded in this order: pages 13 and 14 have been read since (the
  // first read clears A), pages 12 and 15 not yet.
  for (uint32_t f = 12; f < 16; ++f) {
    Publish(&raw, &e[f], f, 0);
    e[f].state.fetch_or(kAheadBit);
    raw.Probation(f, &e[f], /*ahead=*/true);
  }
  auto read = [&](uint32_t f) {
    uint64_t s = e[f].state.load();
    ASSERT_TRUE(TryPin(&e[f], &s));
    Unpin(&e[f]);
  };
  read(13);
  read(14);
  RcuReadLock rcu;
  std::vector<PageEntry*> victims;
  EXPECT_EQ(raw.Sweep(0, &victims), 0u);  // a page waits one sweep on probation
  EXPECT_EQ(raw.Sweep(2, &victims), 2u);
  EXPECT_EQ(victims, (std::vector<PageEntry*>{&e[13], &e[14]}))
      << "the pages read go first, though page 12 was loaded before them";
  EXPECT_EQ(KindOf(e[12].state.load()), kRaw);
  EXPECT_EQ(KindOf(e[15].state.load()), kRaw);
  for (uint32_t f = 0; f < 12; ++f) {
    ASSERT_EQ(UsesOf(e[f].state.load()), kUseMax) << "the hand moved before probation was used";
  }
  // Page 12 is read now; page 15 is still ahead of its reader and stays.
  read(12);
  victims.clear();
  EXPECT_EQ(raw.Sweep(1, &victims), 1u);
  EXPECT_EQ(victims, (std::vector<PageEntry*>{&e[12]}));
  EXPECT_EQ(KindOf(e[15].state.load()), kRaw);
}
TEST(RawTierTest, PagesReadAheadBeyondAQuarterOfTheTierStillWaitForTheirReaders) {
  // Several readers' read-ahead in a small tier (kernel mode's staging tier): eight pages read
  // ahead, twice what a quarter of the frames holds on probation, beside eight pages read once.
  RawTier raw(kPage, 16, 16);
  PageEntry e[16];
  for (uint32_t f = 0; f < 8; ++f) Publish(&raw, &e[f], f, 1);
  for (uint32_t f = 8; f < 16; ++f) {
    Publish(&raw, &e[f], f, 0);
    e[f].state.fetch_or(kAheadBit);
    raw.Probation(f, &e[f], /*ahead=*/true);
  }
  RcuReadLock rcu;
  std::vector<PageEntry*> victims;
  EXPECT_EQ(raw.Sweep(0, &victims), 0u);  // a page waits one sweep on probation
  EXPECT_EQ(raw.Sweep(4, &victims), 4u);
  EXPECT_EQ(victims, (std::vector<PageEntry*>{&e[0], &e[1], &e[2], &e[3]}))
      << "the hand took pages whose readers had not come yet";
  for (uint32_t f = 8; f < 16; ++f) EXPECT_EQ(KindOf(e[f].state.load()), kRaw) << f;
  // A reader that does not come: once half the tier's frames' worth of pages went on probation
  // after them, the pages read ahead go like any other.
  PageEntry other[8];
  // Not frame 0's owner: only counted.
  for (PageEntry& o : other) raw.Probation(0, &o, /*ahead=*/false);
  victims.clear();
  EXPECT_EQ(raw.Sweep(8, &victims), 8u);
  for (uint32_t f = 8; f < 16; ++f) EXPECT_EQ(KindOf(e[f].state.load()), kEvicting) << f;
}

}  // namespace
}  // namespace ccfs::cache
