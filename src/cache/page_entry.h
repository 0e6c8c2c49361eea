// PageEntry: one cached page, and the state machine every tier agrees on.
//
// Design
// ------
// Each cached page has one PageEntry, reachable through the PageIndex (an RCU hash table). The
// entry's `state` word is the single source of truth about where the page lives. Every transition
// is a compare-and-swap on that word, so exactly one thread wins each transition; the winner owns
// what the transition hands over (a frame, a blob, the duty to free the entry).
//
// State word layout (64 bits):
//
//   63          33 32 31          16 15 14 13 12 11  9  8   7   6   5   4   3  0
//   +-------------+--+--------------+--+--+--+--+-----+---+---+---+---+---+----+
//   |   unused    | Q|  pin count   | P| M| A| D| use | U | H | W | S | R |kind|
//   +-------------+--+--------------+--+--+--+--+-----+---+---+---+---+---+----+
//   kind  kLoading / kRaw / kEvicting / kCompressed / kDead
//   R     the compressed tier's CLOCK reference bit (set by compressed hits, cleared by its hand)
//   use   the raw tier's CLOCK use count, 0..7 (GCLOCK): a raw hit adds one, each pass of the raw
//         hand takes one away, the hand evicts at zero; a miss starts it at the page's recent read
//         count (frequency.h), and a page loaded at zero goes on probation (raw_tier.h)
//   H     hit while compressed (cleared on entry to the compressed tier: counts wasted compressions)
//   S     stale: invalidated while loading or evicting; the owner must not publish it
//   W     a reader is waiting for a load to finish (the loader calls notify_all only then)
//   U     the page was read again after the miss that loaded it (a raw hit or a promotion), or a
//         warm-up wants it (loaded by one, or marked by one while raw): the admission filter
//         compresses such victims (admission.h)
//   D     the page came from the kernel (kernel_demote: demoted, not loaded by a miss) or from a
//         cache file (persist: restored); set at InitLoading, never changed. Such an entry has no
//         frame: it goes from kLoading (while it is published) straight to kCompressed.
//   A     the page was read ahead (no reader asked for it yet): set at InitLoading, cleared by the
//         first TryPin (which then counts neither a use nor U: that read is the one the read-ahead
//         stood in for) and on leaving the raw tier (TryPublishCompressed, TryDropEvicting)
//   M     loaded by a warm-up and not read since: set at InitLoading, cleared by TryPin. Under
//         kernel_demote a raw victim is dropped (the kernel holds its copy) unless it carries M:
//         no reader has read it, so the kernel has no copy, and it is compressed instead.
//   Q     loaded by a stream: read ahead, or in a run of at least kStreamRunBytes (what a random
//         reader of small blocks never asks for); set at InitLoading, never changed. Once the
//         compressed tier is full, such a victim displaces only a page read less often
//         (Evictor::Admit), so data scanned again and again keeps a share cached.
//   P     the page's file is pinned (`pin`): set at InitLoading (a miss or a demotion); cleared by
//         CompressedTier::Unpin, under the tier's mutex, so that the tier's count of pinned pages
//         never disagrees with the bits. Both CLOCKs pass P pages over while other pages are left.
//   pins  readers copying out of the frame right now
//
// Kinds and who owns what:
//   kLoading     a miss is reading the page into `frame`. The loader owns the frame. Readers of
//                the same page wait (inside an RCU read-side section) for the state to change.
//   kRaw         the page is in `frame`, readable. Hits pin, copy, unpin: no lock. The raw CLOCK
//                hand may move it to kEvicting (pins allowed: readers keep reading the frame).
//   kEvicting    a compression worker owns the page and reads `frame`; readers may still pin it.
//                The worker publishes kCompressed (or drops the page) only with pins == 0.
//   kCompressed  the page is in `blob` (nullptr for an all-zero page) and linked in the
//                compressed tier's CLOCK ring. Every transition into or out of kCompressed happens
//                under the compressed tier's mutex, together with the ring link/unlink, so the ring
//                and the states never disagree. Readers decompress without that lock.
//   kDead        removed (or being removed) from the index; its memory is freed after an RCU grace
//                period by whoever made it dead. Terminal.
//
// Memory: entries and blobs are freed only through call_rcu, so any pointer obtained inside an RCU
// read-side section stays valid until that section ends. Frames are never freed while pinned: the
// thread that takes a frame away (evict, invalidate) waits for pins to drain first.
//
// Transitions
// -----------
// Every write to `state` is one of the functions at the end of this file, named as in this table
// (no compare-and-swap on `state` is written anywhere else). "by" is who performs it and where;
// "order" is the memory order of the read-modify-write (the CAS's failure order is the same minus
// release). Kinds are written Loading, Raw, ... ; "+X"/"-X" sets/clears bit X.
//
// The picture: every arrow is a transition of the table; in parentheses, those that keep the kind.
//
//       (new)
//         | InitLoading
//         v
//      Loading     (TryMarkWaiter, TryMarkStale)     ---AbandonLoad, FinishLoad if S---> Dead
//         | FinishLoad                               ---TryPublishDemoted (D)----------> Compressed
//         v
//        Raw       (TryPin, Unpin, TryTakeUse,  <-+
//                   MarkWanted)                   |  ---TryKillRaw---------------------> Dead
//         | TryBeginEviction                      |
//         v                                       |
//      Evicting    (TryPin, Unpin, TryMarkStale,  |
//                   MarkWanted)                   |  ---TryDropEvicting-----------------> Dead
//         | TryPublishCompressed                  | TryPromote
//         v                                       |
//     Compressed   (MarkCompressedHit, ClearRef) -+  ---TryKillCompressed---------------> Dead
//
//   transition            from -> to                            by (where)                  order
//   --------------------  ------------------------------------  --------------------------  -------
//   InitLoading           new entry -> Loading (+D if demoted,  missing reader, read-ahead  relaxed
//                         +A if read ahead, +U +M if warmed up, or warm-up (LoadRun, each page of its
//                         +U +P if its file is pinned)
//                                                               run), or demoter; before the
//                                                               index insert that publishes it
//   TryPin                Raw|Evicting -> same, pins+1, use+1   reader (ReadPage)           acquire
//                         (max 7), +U, -M; if A: pins+1, -A only
//   TryPinToCopy          Raw|Evicting -> same, pins+1 (not a   persistence (SavePages)     acquire
//                         read: no use, no bit changes)
//   Unpin                 any -> pins-1 (a pin of TryPin,       reader (CopyPinned),        release
//                         TryPinToCopy or TryPromote)           persistence
//   TryMarkWaiter         Loading -> Loading +W                 reader (ReadPage)           acquire
//   FinishLoad            Loading -> Raw, use = the sketch's    loader (LoadRun, after the  acq_rel
//                         count, -W; Loading +S -> Dead         run's read), notifies if W
//                                                               was set
//   AbandonLoad           Loading -> Dead                       loader (LoadRun: the run's  acq_rel
//                                                               read failed, or end of
//                                                               file), demoter or restorer
//                                                               (stale, or no room)
//   TryPublishDemoted     Loading +D, not S -> Compressed, -W   demoter (a pool worker) or  acq_rel
//                         -R -H (blob stored first)             restorer, under the tier's
//                                                               mu_ (InsertDemoted,
//                                                               InsertRestored)
//   TryMarkStale          Loading|Evicting -> same +S           invalidator (Invalidate)    acq_rel
//   TryKillRaw            Raw -> Dead (pins drain afterwards)   invalidator (Invalidate)    acq_rel
//   TryTakeUse            Raw, use > 0 -> Raw, use-1            raw hand (RawTier::Sweep)   acq_rel
//   TryBeginEviction      Raw, use == 0 -> Evicting             raw hand, probation         acq_rel
//                                                               (RawTier::Sweep)
//   TryDropEvicting       Evicting, pins == 0 -> Dead, -A       evictor, worker             acq_rel
//                                                               (Evictor::DropEvicting)
//   TryPublishCompressed  Evicting, pins == 0, not S ->         worker, under the tier's    acq_rel
//                         Compressed, -R -H -A (blob stored     mu_
//                         first)                                (CompressedTier::Insert)
//   TryPromote            Compressed -> Raw, pins 1, use 1,     reader, under the tier's    acq_rel
//                         +U, -R -H (frame stored first)        mu_
//                                                               (CompressedTier::Promote)
//   MarkWanted            Raw|Evicting -> same +U               warm-up (Warm)              relaxed
//   ClearPin              any -> -P                             unpin, under the compressed acq_rel
//                                                               tier's mu_ (Unpin)
//   MarkCompressedHit     any -> +R +H (meant for Compressed;   reader (ReadCompressed)     relaxed
//                         on another kind the bits are
//                         ignored: R is read only in the tier,
//                         H is cleared on entry)
//   ClearRef              Compressed -> -R                      compressed hand, under mu_  acq_rel
//                                                               (EvictLocked)
//   TryKillCompressed     Compressed -> Dead                    invalidator (Kill),         acq_rel
//                                                               compressed hand
//                                                               (EvictLocked); under mu_
//
// The Try* functions are one compare-and-swap: on failure *s holds the state seen instead, and
// the caller decides what to do with it (retry, wait for pins, or give up). The others always
// succeed. Acquire on TryPin pairs with the release of FinishLoad/TryPromote (the frame's
// bytes are visible to whoever pins); release on Unpin pairs with the acquire loads of a thread
// waiting for pins == 0 before it frees the frame (its copy is done before the frame is reused).
#ifndef CCFS_CACHE_PAGE_ENTRY_H_
#define CCFS_CACHE_PAGE_ENTRY_H_

// The inline (LGPL) read-side fast path; under ThreadSanitizer the library's out-of-line versions
// are used instead, since its internal synchronization is invisible to the sanitizer.
#include "util/sanitizers.h"
#if !defined(CCFS_TSAN)
#define _LGPL_SOURCE 1
#endif
#include <urcu/urcu-memb.h>
#include <urcu/rculfhash.h>

#include <atomic>
#include <cstdint>

namespace ccfs::cache {

struct PageKey {
  uint64_t file_id;
  uint64_t page_no;
  bool operator==(const PageKey&) const = default;
};

uint64_t HashPageKey(const PageKey& key);

enum Kind : uint64_t {
  kLoading = 1,
  kRaw = 2,
  kEvicting = 3,
  kCompressed = 4,
  kDead = 5,
};

inline constexpr uint64_t kKindMask = 0xF;
inline constexpr uint64_t kRefBit = 1u << 4;
inline constexpr uint64_t kStaleBit = 1u << 5;
inline constexpr uint64_t kWaiterBit = 1u << 6;
// Set by a hit while compressed; cleared on entry to the compressed tier (counts wasted compressions).
inline constexpr uint64_t kTierHitBit = 1u << 7;
// Set by a raw hit, a promotion or a warm-up; never cleared (a reloaded page gets a new entry).
inline constexpr uint64_t kSeenBit = 1u << 8;
// Set at InitLoading on a page with no frame: demoted from the kernel's page cache
// (kernel_demote) or restored from a cache file (persist).
inline constexpr uint64_t kDemotedBit = 1u << 12;
// Set at InitLoading on a page read ahead; cleared when a reader first reads it.
inline constexpr uint64_t kAheadBit = 1u << 13;
// Set at InitLoading on a page warmed up; cleared when a reader first reads it.
inline constexpr uint64_t kWarmBit = 1u << 14;
// Set at InitLoading on a page of a pinned file; cleared by CompressedTier::Unpin.
inline constexpr uint64_t kPinBit = 1u << 15;
// Set at InitLoading on a page loaded by a stream (Q above); never cleared.
inline constexpr uint64_t kStreamBit = 1ull << 32;
inline constexpr uint64_t kStreamRunBytes = 64 << 10;
inline constexpr int kUseShift = 9;
inline constexpr uint64_t kUseOne = 1ull << kUseShift;
inline constexpr uint64_t kUseMax = 7;
// The uses a page promoted from the compressed tier starts with on the raw CLOCK (TryPromote).
inline constexpr uint64_t kPromotedUses = 1;
inline constexpr uint64_t kUseMask = kUseMax << kUseShift;
inline constexpr int kPinShift = 16;
inline constexpr uint64_t kPinOne = 1ull << kPinShift;
inline constexpr uint64_t kPinMask = 0xFFFFull << kPinShift;

inline uint64_t KindOf(uint64_t s) { return s & kKindMask; }
inline uint64_t PinsOf(uint64_t s) { return (s & kPinMask) >> kPinShift; }
inline uint64_t UsesOf(uint64_t s) { return (s & kUseMask) >> kUseShift; }
inline uint64_t WithUses(uint64_t s, uint64_t n) {
  return (s & ~kUseMask) | ((n < kUseMax ? n : kUseMax) << kUseShift);
}
inline uint64_t WithKind(uint64_t s, uint64_t kind) { return (s & ~kKindMask) | kind; }

// A compressed page: header + bytes. The bytes may be split in two allocations (blob.h): the
// first `head` bytes follow the header, the rest are in `tail`. Freed with call_rcu (rcu), since
// readers may be decompressing it.
struct Blob {
  rcu_head rcu;
  uint32_t size;     // compressed bytes in all
  uint32_t head;     // bytes in data; size - head are in tail
  char* tail;        // nullptr when head == size
  uint8_t codec;     // CodecKind used
  char data[];
};

struct PageEntry {
  cds_lfht_node node;  // index link (PageIndex)
  PageKey key;
  std::atomic<uint64_t> state{0};
  // Valid while kLoading/kRaw/kEvicting; published by the state transition (release/acquire).
  std::atomic<uint32_t> frame{UINT32_MAX};
  // Valid bytes of the page (< page_size only for the last page of a file).
  std::atomic<uint32_t> length{0};
  // Valid while kCompressed; nullptr = all-zero page.
  std::atomic<Blob*> blob{nullptr};

  // Compressed tier ring; guarded by CompressedTier's mutex.
  PageEntry* cprev = nullptr;
  PageEntry* cnext = nullptr;
  uint32_t charged = 0;     // bytes charged to the compressed budget while linked

  rcu_head rcu;
};

// ---- the transitions (see the table above) ------------------------------------------------------

// A new entry, not yet in the index: the index insert publishes it.
inline void InitLoading(PageEntry* e, bool demoted = false, bool ahead = false,
                        bool wanted = false, bool pinned = false, bool streamed = false) {
  e->state.store(kLoading | (demoted ? kDemotedBit : 0) | (ahead ? kAheadBit : 0) |
                     (wanted ? kSeenBit | kWarmBit : 0) | (pinned ? kPinBit | kSeenBit : 0) |
                     (ahead || streamed ? kStreamBit : 0),
                 std::memory_order_relaxed);
}

// A warm-up wants this cached page: the admission filter compresses it when it is evicted, as if
// it had been read again. REQUIRES: KindOf(state) is kRaw or kEvicting (on kEvicting the
// filter's decision is taken already, and the bit is harmless).
inline void MarkWanted(PageEntry* e) { e->state.fetch_or(kSeenBit, std::memory_order_relaxed); }

// The page's file is no longer pinned. Returns the state before. Only CompressedTier::Unpin calls
// it (under its mutex: see P above).
inline uint64_t ClearPin(PageEntry* e) {
  return e->state.fetch_and(~kPinBit, std::memory_order_acq_rel);
}

// Pins a readable page and counts the read on the raw CLOCK; the first read of a page read ahead
// counts as the read that loaded it (no use, no U). A page warmed up is read from now on (-M). On
// success *s is the state before (test kAheadBit). REQUIRES: KindOf(*s) is kRaw or kEvicting.
inline bool TryPin(PageEntry* e, uint64_t* s) {
  uint64_t next;
  if (*s & kAheadBit) {
    next = (*s + kPinOne) & ~kAheadBit;
  } else {
    next = ((*s + kPinOne) | kSeenBit) & ~kWarmBit;
    if (UsesOf(*s) < kUseMax) next += kUseOne;
  }
  return e->state.compare_exchange_weak(*s, next, std::memory_order_acquire);
}

// Pins a readable page to copy it out for persistence: not a read, so nothing but the pin count
// changes (no use, no U; an A or M page stays unread). REQUIRES: KindOf(*s) is kRaw or kEvicting.
inline bool TryPinToCopy(PageEntry* e, uint64_t* s) {
  return e->state.compare_exchange_weak(*s, *s + kPinOne, std::memory_order_acquire);
}

// Releases a pin taken by TryPin, TryPinToCopy or TryPromote, after the copy out of the frame.
inline void Unpin(PageEntry* e) { e->state.fetch_sub(kPinOne, std::memory_order_release); }

// Announces a reader that will wait for the load to finish. REQUIRES: KindOf(*s) == kLoading.
inline bool TryMarkWaiter(PageEntry* e, uint64_t* s) {
  return e->state.compare_exchange_weak(*s, *s | kWaiterBit, std::memory_order_acquire);
}

// The loader publishes its page as kRaw with `uses` on the CLOCK, or kills it if it was made
// stale meanwhile. Returns the state before (test kStaleBit, kWaiterBit). Loader only.
inline uint64_t FinishLoad(PageEntry* e, uint64_t uses) {
  uint64_t s = e->state.load(std::memory_order_relaxed);
  uint64_t next;
  do {
    next = (s & kStaleBit) ? WithKind(s, kDead) : WithUses(WithKind(s & ~kWaiterBit, kRaw), uses);
  } while (!e->state.compare_exchange_weak(s, next, std::memory_order_acq_rel));
  return s;
}

// The loader found nothing to publish (read error, end of file). Returns the state before.
inline uint64_t AbandonLoad(PageEntry* e) {
  uint64_t s = e->state.load(std::memory_order_relaxed);
  while (!e->state.compare_exchange_weak(s, WithKind(s, kDead), std::memory_order_acq_rel)) {
  }
  return s;
}

// Tells the owner of a kLoading/kEvicting page not to publish it. REQUIRES: KindOf(*s) is kLoading
// or kEvicting.
inline bool TryMarkStale(PageEntry* e, uint64_t* s) {
  return e->state.compare_exchange_weak(*s, *s | kStaleBit, std::memory_order_acq_rel);
}

// Kills a raw page; the caller then waits for pins to drain before freeing the frame.
// REQUIRES: KindOf(*s) == kRaw.
inline bool TryKillRaw(PageEntry* e, uint64_t* s) {
  return e->state.compare_exchange_weak(*s, WithKind(*s, kDead), std::memory_order_acq_rel);
}

// The raw hand passes over a page with uses left, taking one away.
// REQUIRES: KindOf(*s) == kRaw and UsesOf(*s) > 0.
inline bool TryTakeUse(PageEntry* e, uint64_t* s) {
  return e->state.compare_exchange_weak(*s, *s - kUseOne, std::memory_order_acq_rel);
}

// The raw hand (or the probation sweep) takes a victim; the winner owns it as kEvicting.
// REQUIRES: KindOf(*s) == kRaw and UsesOf(*s) == 0.
inline bool TryBeginEviction(PageEntry* e, uint64_t* s) {
  return e->state.compare_exchange_weak(*s, WithKind(*s, kEvicting), std::memory_order_acq_rel);
}

// The owner of a kEvicting page drops it. REQUIRES: KindOf(*s) == kEvicting, PinsOf(*s) == 0.
inline bool TryDropEvicting(PageEntry* e, uint64_t* s) {
  return e->state.compare_exchange_weak(*s, WithKind(*s & ~kAheadBit, kDead),
                                        std::memory_order_acq_rel);
}

// The owner of a kEvicting page publishes it compressed in `blob` (nullptr = zero page).
// REQUIRES: the compressed tier's mutex; KindOf(*s) == kEvicting, PinsOf(*s) == 0, no kStaleBit.
inline bool TryPublishCompressed(PageEntry* e, Blob* blob, uint64_t* s) {
  e->blob.store(blob, std::memory_order_relaxed);
  uint64_t next = WithKind(*s & ~(kRefBit | kTierHitBit | kAheadBit), kCompressed);
  return e->state.compare_exchange_weak(*s, next, std::memory_order_acq_rel);
}

// Moves a compressed page back into `frame`, pinned once for the promoting reader's copy.
// REQUIRES: the compressed tier's mutex; KindOf(*s) == kCompressed; the page's bytes are in frame.
inline bool TryPromote(PageEntry* e, uint32_t frame, uint64_t* s) {
  e->frame.store(frame, std::memory_order_relaxed);
  uint64_t next = WithKind(*s, kRaw) + kPinOne;
  next = WithUses(next | kSeenBit, kPromotedUses) & ~(kRefBit | kTierHitBit);
  return e->state.compare_exchange_weak(*s, next, std::memory_order_acq_rel);
}

// A demoted page (InitLoading with D), compressed off the read path, is published in `blob`
// (nullptr = zero page). Returns the state before (test kWaiterBit). REQUIRES: the compressed
// tier's mutex; KindOf(*s) == kLoading, no kStaleBit.
inline bool TryPublishDemoted(PageEntry* e, Blob* blob, uint64_t* s) {
  e->blob.store(blob, std::memory_order_relaxed);
  uint64_t next = WithKind(*s & ~(kRefBit | kTierHitBit | kWaiterBit), kCompressed);
  return e->state.compare_exchange_weak(*s, next, std::memory_order_acq_rel);
}

// A read served from the compressed tier without promotion: referenced, and hit while compressed.
inline void MarkCompressedHit(PageEntry* e) {
  e->state.fetch_or(kRefBit | kTierHitBit, std::memory_order_relaxed);
}

// The compressed hand gives a referenced page another turn. REQUIRES: the compressed tier's mutex.
inline void ClearRef(PageEntry* e) { e->state.fetch_and(~kRefBit, std::memory_order_acq_rel); }

// Kills a compressed page (invalidation, or the compressed hand). Strong: a false return means the
// state really changed (a reader set kRefBit, or the page left the tier).
// REQUIRES: the compressed tier's mutex; KindOf(*s) == kCompressed.
inline bool TryKillCompressed(PageEntry* e, uint64_t* s) {
  return e->state.compare_exchange_strong(*s, WithKind(*s, kDead), std::memory_order_acq_rel);
}

}  // namespace ccfs::cache

#endif  // CCFS_CACHE_PAGE_ENTRY_H_
