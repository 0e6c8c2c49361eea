#include "cache/blob.h"

#include "cache/rcu.h"

#include <cstdlib>
#include <new>

// Sanitizer runtimes own malloc; the jemalloc API is used only in normal builds. GCC defines
// __SANITIZE_*__; clang (the fuzz build) only answers __has_feature.
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define CCFS_SANITIZER_BUILD 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__) || defined(CCFS_SANITIZER_BUILD)
#define CCFS_PLAIN_MALLOC 1
#include <malloc.h>
#else
#include <jemalloc/jemalloc.h>
#endif

#define CCFS_STR2(x) #x
#define CCFS_STR(x) CCFS_STR2(x)

namespace ccfs::cache {

Blob* AllocBlob(size_t size, size_t* charged) {
  size_t bytes = sizeof(Blob) + size;
#ifdef CCFS_PLAIN_MALLOC
  void* p = std::malloc(bytes);
  if (p == nullptr) throw std::bad_alloc();
  *charged = malloc_usable_size(p);
#else
  void* p = mallocx(bytes, 0);
  if (p == nullptr) throw std::bad_alloc();
  *charged = sallocx(p, 0);
#endif
  Blob* b = static_cast<Blob*>(p);
  b->size = static_cast<uint32_t>(size);
  return b;
}

void ReleaseFreedBlobs() {
  urcu_memb_barrier();  // run the pending call_rcu frees first
#ifndef CCFS_PLAIN_MALLOC
  // MALLCTL_ARENAS_ALL: every arena.
  mallctl("arena." CCFS_STR(MALLCTL_ARENAS_ALL) ".purge", nullptr, nullptr, nullptr, 0);
#endif
}

void FreeBlob(Blob* blob) {
#ifdef CCFS_PLAIN_MALLOC
  std::free(blob);
#else
  dallocx(blob, 0);
#endif
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
