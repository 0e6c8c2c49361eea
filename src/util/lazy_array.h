// LazyArray<T>: a fixed array of n T's, every one zero at the start, whose memory the kernel
// provides only as its pages are first written.
//
// The tables the cache sizes from its budget (raw frame owners, the frequency sketch, ghost
// fingerprints) are sized for a full cache, but a large budget over a small data set fills a
// sliver of them. An anonymous MAP_NORESERVE mapping costs address space, not memory: a page is
// made resident by its first write, and a read of a page never written maps the kernel's shared
// zero page (which no RSS counts). So RSS follows the slots written, not n. Clear() gives every
// page back (MADV_DONTNEED), after which the array reads zero again.
//
// T must be valid with all bits zero and need no construction or destruction: integers, raw
// pointers, and std::atomic of those (whose representation is that of the value when lock-free,
// as every use here is; checked below).
//
// Thread-safety: as a plain array of T; Clear() needs the same exclusion as writing every slot.
#ifndef CCFS_UTIL_LAZY_ARRAY_H_
#define CCFS_UTIL_LAZY_ARRAY_H_

#include <sys/mman.h>

#include <atomic>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <type_traits>

namespace ccfs {

template <typename T>
struct LazyArrayOk : std::is_trivially_destructible<T> {};
template <typename U>
struct LazyArrayOk<std::atomic<U>>
    : std::bool_constant<std::atomic<U>::is_always_lock_free && sizeof(std::atomic<U>) == sizeof(U)> {};

template <typename T>
class LazyArray {
  static_assert(LazyArrayOk<T>::value, "LazyArray needs a type whose zero bits are its zero value");

 public:
  LazyArray() = default;
  explicit LazyArray(size_t n) : n_(n) {
    if (n == 0) return;
    void* p = mmap(nullptr, bytes(), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {
      std::perror("ccfs: mmap of a cache table");
      std::abort();
    }
    data_ = static_cast<T*>(p);
  }
  ~LazyArray() {
    if (data_ != nullptr) munmap(data_, bytes());
  }
  LazyArray(const LazyArray&) = delete;
  LazyArray& operator=(const LazyArray&) = delete;
  LazyArray(LazyArray&& other) noexcept : data_(other.data_), n_(other.n_) {
    other.data_ = nullptr;
    other.n_ = 0;
  }
  LazyArray& operator=(LazyArray&& other) noexcept {
    if (this != &other) {
      this->~LazyArray();
      data_ = other.data_;
      n_ = other.n_;
      other.data_ = nullptr;
      other.n_ = 0;
    }
    return *this;
  }

  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }
  size_t size() const { return n_; }

  // Every slot reads zero again, and the memory goes back to the kernel.
  void Clear() {
    if (data_ != nullptr) madvise(data_, bytes(), MADV_DONTNEED);
  }

 private:
  size_t bytes() const { return n_ * sizeof(T); }

  T* data_ = nullptr;
  size_t n_ = 0;
};

}  // namespace ccfs

#endif  // CCFS_UTIL_LAZY_ARRAY_H_
