// Blobs: bytes survive the split into head and tail, and the charge stays close to the bytes held.
#include "cache/blob.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cache/rcu.h"

namespace ccfs::cache {
namespace {

std::string Pattern(size_t n, size_t seed) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>((i * 131 + seed * 7) % 251);
  return s;
}

TEST(BlobTest, BytesComeBackWhateverTheSize) {
  std::vector<char> scratch(1 << 16);
  for (size_t size = 1; size <= 20000; size += (size < 300 ? 1 : 37)) {
    const std::string bytes = Pattern(size, size);
    size_t charged = 0;
    Blob* b = AllocBlob(bytes.data(), size, &charged);
    ASSERT_EQ(b->size, size);
    ASSERT_LE(b->head, size);
    ASSERT_EQ(b->tail == nullptr, b->head == size) << "size " << size;
    // Exactly BlobCharge with jemalloc; a sanitizer's malloc may report a few bytes more.
    EXPECT_GE(charged, BlobCharge(size)) << "size " << size;
    EXPECT_LE(charged, BlobCharge(size) + 32) << "size " << size;
    EXPECT_GE(charged, sizeof(Blob) + size) << "size " << size;
    const char* got = BlobBytes(b, scratch.data());
    ASSERT_EQ(std::string(got, size), bytes) << "size " << size;
    FreeBlob(b);
  }
}

// The point of splitting: jemalloc's classes are a quarter of a power of two apart, so a whole
// 4.5 KiB blob would be charged 5 KiB (11% more). Held to a sixteenth plus the header and 64 bytes.
TEST(BlobTest, ChargeStaysCloseToTheBytesHeld) {
  for (size_t size = 1024; size <= 16384; size += 13) {
    const size_t total = sizeof(Blob) + size;
    EXPECT_LE(BlobCharge(size), total + total / 16 + 64) << "size " << size;
  }
}

TEST(BlobTest, RetiredSplitBlobsAreFreed) {
  // Under LeakSanitizer a tail left behind would be reported at exit.
  const std::string bytes = Pattern(4600, 1);
  for (int i = 0; i < 100; ++i) {
    size_t charged = 0;
    RetireBlob(AllocBlob(bytes.data(), bytes.size(), &charged));
  }
  urcu_memb_barrier();
}

}  // namespace
}  // namespace ccfs::cache
