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
//   63            32 31          16 15  12 11  9  8   7   6   5   4   3  0
//   +---------------+--------------+------+-----+---+---+---+---+---+----+
//   |    unused     |  pin count   |unused| use | U | H | W | S | R |kind|
//   +---------------+--------------+------+-----+---+---+---+---+---+----+
//   kind  kLoading / kRaw / kEvicting / kCompressed / kDead
//   R     the compressed tier's CLOCK reference bit (set by compressed hits, cleared by its hand)
//   use   the raw tier's CLOCK use count, 0..7 (GCLOCK): a raw hit adds one, each pass of the raw
//         hand takes one away, the hand evicts at zero; a miss starts it at the page's recent read
//         count (frequency.h), and a page loaded at zero goes on probation (raw_tier.h)
//   H     hit while compressed (cleared on entry to the compressed tier: counts wasted compressions)
//   S     stale: invalidated while loading or evicting; the owner must not publish it
//   W     a reader is waiting for a load to finish (the loader calls notify_all only then)
//   U     the page was read again after the miss that loaded it (a raw hit or a promotion): the
//         admission filter compresses such victims (admission.h)
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
#ifndef CCFS_CACHE_PAGE_ENTRY_H_
#define CCFS_CACHE_PAGE_ENTRY_H_

// The inline (LGPL) read-side fast path; under ThreadSanitizer the library's out-of-line versions
// are used instead, since its internal synchronization is invisible to the sanitizer.
#if !defined(__SANITIZE_THREAD__)
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
// Set by a raw hit or a promotion; never cleared (a reloaded page gets a new entry).
inline constexpr uint64_t kSeenBit = 1u << 8;
inline constexpr int kUseShift = 9;
inline constexpr uint64_t kUseOne = 1ull << kUseShift;
inline constexpr uint64_t kUseMax = 7;
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

}  // namespace ccfs::cache

#endif  // CCFS_CACHE_PAGE_ENTRY_H_
