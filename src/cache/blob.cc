#include "cache/blob.h"

#include "cache/rcu.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

#include "util/sanitizers.h"

// Sanitizer runtimes own malloc; the jemalloc API is used only in normal builds.
#if defined(CCFS_SANITIZED)
#define CCFS_PLAIN_MALLOC 1
#include <malloc.h>
#else
#include <jemalloc/jemalloc.h>
#endif

#define CCFS_STR2(x) #x
#define CCFS_STR(x) CCFS_STR2(x)

namespace ccfs::cache {

namespace {

void* Allocate(size_t bytes, size_t* usable) {
#ifdef CCFS_PLAIN_MALLOC
  void* p = std::malloc(bytes);
  if (p == nullptr) throw std::bad_alloc();
  *usable = malloc_usable_size(p);
#else
  void* p = mallocx(bytes, 0);
  if (p == nullptr) throw std::bad_alloc();
  *usable = sallocx(p, 0);
#endif
  return p;
}

void Deallocate(void* p) {
#ifdef CCFS_PLAIN_MALLOC
  std::free(p);
#else
  dallocx(p, 0);
#endif
}

struct Plan {
  size_t head_bytes;  // compressed bytes that follow the header
  size_t charge;      // what both allocations take
};

#ifdef CCFS_PLAIN_MALLOC
// Sanitizer builds: the sanitizer's malloc (or glibc's) wastes at most a few bytes, so a blob is
// never worth splitting. The charge is what was asked; the allocator may report a little more.
Plan PlanFor(size_t size) { return Plan{size, sizeof(Blob) + size}; }
#else
// Splitting pays only when it saves more than this (the reader's extra copy, a second free).
constexpr size_t kMinSplitSaving = 64;

// jemalloc's size classes up to kMaxClass, ascending, read from the allocator itself.
constexpr size_t kMaxClass = 1 << 20;
const std::vector<size_t>& SizeClasses() {
  static const std::vector<size_t> classes = [] {
    std::vector<size_t> v;
    for (size_t x = 1; x <= kMaxClass;) {
      size_t c = nallocx(x, 0);
      if (c == 0) break;
      v.push_back(c);
      x = c + 1;
    }
    return v;
  }();
  return classes;
}

Plan PlanFor(size_t size) {
  const size_t total = sizeof(Blob) + size;
  const size_t whole = nallocx(total, 0);
  const std::vector<size_t>& classes = SizeClasses();
  auto it = std::upper_bound(classes.begin(), classes.end(), total);
  if (it == classes.begin() || total > kMaxClass) return Plan{size, whole};
  const size_t head = *(it - 1);  // the largest class that fits in total
  if (head <= sizeof(Blob) || head == total) return Plan{size, whole};
  const size_t split = head + nallocx(total - head, 0);
  if (split + kMinSplitSaving > whole) return Plan{size, whole};
  return Plan{head - sizeof(Blob), split};
}
#endif

}  // namespace

size_t BlobCharge(size_t size) { return PlanFor(size).charge; }

Blob* AllocBlob(const char* bytes, size_t size, size_t* charged) {
  const Plan plan = PlanFor(size);
  size_t head_usable = 0;
  Blob* b = static_cast<Blob*>(Allocate(sizeof(Blob) + plan.head_bytes, &head_usable));
  b->size = static_cast<uint32_t>(size);
  b->head = static_cast<uint32_t>(plan.head_bytes);
  b->tail = nullptr;
  std::memcpy(b->data, bytes, plan.head_bytes);
  *charged = head_usable;
  if (plan.head_bytes < size) {
    size_t tail_usable = 0;
    try {
      b->tail = static_cast<char*>(Allocate(size - plan.head_bytes, &tail_usable));
    } catch (...) {
      Deallocate(b);
      throw;
    }
    std::memcpy(b->tail, bytes + plan.head_bytes, size - plan.head_bytes);
    *charged += tail_usable;
  }
  return b;
}

const char* BlobBytes(const Blob* blob, char* scratch) {
  if (blob->tail == nullptr) return blob->data;
  std::memcpy(scratch, blob->data, blob->head);
  std::memcpy(scratch + blob->head, blob->tail, blob->size - blob->head);
  return scratch;
}

void ReleaseFreedBlobs() {
  urcu_memb_barrier();  // run the pending call_rcu frees first
#ifndef CCFS_PLAIN_MALLOC
  // MALLCTL_ARENAS_ALL: every arena.
  mallctl("arena." CCFS_STR(MALLCTL_ARENAS_ALL) ".purge", nullptr, nullptr, nullptr, 0);
#endif
}

void NoThreadCache() {
#ifndef CCFS_PLAIN_MALLOC
  bool off = false;
  mallctl("thread.tcache.enabled", nullptr, nullptr, &off, sizeof(off));
#endif
}

void FreeBlob(Blob* blob) {
  if (blob->tail != nullptr) Deallocate(blob->tail);
  Deallocate(blob);
}

namespace {

void FreeBlobCb(rcu_head* head) {
  CCFS_TSAN_ACQUIRE(&rcu_grace_token);
  Blob* blob = caa_container_of(head, Blob, rcu);
  CCFS_TSAN_ACQUIRE(blob);
  FreeBlob(blob);
}

void FreeEntryCb(rcu_head* head) {
  CCFS_TSAN_ACQUIRE(&rcu_grace_token);
  PageEntry* e = caa_container_of(head, PageEntry, rcu);
  CCFS_TSAN_ACQUIRE(e);
  Blob* b = e->blob.load(std::memory_order_relaxed);
  if (b != nullptr && KindOf(e->state.load(std::memory_order_relaxed)) == kDead) FreeBlob(b);
  delete e;
}

}  // namespace

void RetireBlob(Blob* blob) {
  if (blob == nullptr) return;
  CCFS_TSAN_RELEASE(blob);
  urcu_memb_call_rcu(&blob->rcu, FreeBlobCb);
}

void RetireEntry(PageEntry* e) {
  CCFS_TSAN_RELEASE(e);
  urcu_memb_call_rcu(&e->rcu, FreeEntryCb);
}

}  // namespace ccfs::cache
