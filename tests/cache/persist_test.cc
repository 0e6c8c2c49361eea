// Persistence in the engine (page_cache.h, section 7): pages saved from one cache and restored into
// another are read back as compressed hits with the right bytes, in both raw tiers; a restore
// never replaces a cached page, never goes past the compressed budget, and is refused after a
// write or an invalidation since its epoch; saving a page is not a read; a restored blob that
// does not decode is read from the store instead.
#include <fcntl.h>
#include <gtest/gtest.h>

#include <cstring>
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "cache/engine_files.h"
#include "ccfs/backing_store.h"
#include "ccfs/codec.h"
#include "ccfs/options.h"
#include "ccfs/page_cache.h"

namespace ccfs {
namespace {

constexpr uint64_t kMiB = 1 << 20;
constexpr size_t kPs = 8192;
constexpr uint64_t kPages = 256;  // 2 MiB and a tail

class PersistEngineTest : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    data_ = MakeFile(kPages, kPs, 1000, /*tail=*/100);
    data_.replace(5 * kPs, kPs, std::string(kPs, '\0'));  // one zero page
    store_->Put("f", data_);
    std::unique_ptr<BackingFile> f;
    ASSERT_TRUE(store_->Open("f", O_RDWR, 0644, &f).ok());
    file_ = std::make_shared<CountingFile>(std::move(f));
  }
  Options Base(uint64_t memory, int percent) const {
    Options o;
    o.memory = memory;
    o.compressed_percent = percent;
    o.compress_threads = 1;
    o.readahead = 0;
    o.raw_tier = GetParam();
    return o;
  }
  static std::unique_ptr<PageCache> Make(const Options& o) {
    std::unique_ptr<PageCache> cache;
    EXPECT_TRUE(PageCache::Create(o, &cache).ok());
    return cache;
  }
  void ReadAll(PageCache* cache) {
    std::string buf(64 * 1024, 'x');
    for (uint64_t off = 0; off < data_.size(); off += buf.size()) {
      size_t n = 0;
      ASSERT_TRUE(cache->Read(1, file_.get(), off, buf.size(), buf.data(), &n).ok());
      ASSERT_EQ(n, std::min<size_t>(buf.size(), data_.size() - off));
      ASSERT_EQ(0, std::memcmp(buf.data(), data_.data() + off, n)) << "at " << off;
    }
  }
  // Every page `from` holds, compressed as the daemon's writer does (raw ones with lz4).
  std::vector<PageCache::SavedPage> SaveAll(PageCache* from) {
    std::vector<uint64_t> pages;
    for (const auto& c : from->CachedPages()) {
      EXPECT_EQ(c.file_id, 1u);
      pages.push_back(c.page_no);
    }
    std::vector<PageCache::SavedPage> saved;
    from->SavePages(1, pages, &saved);
    auto codec = NewCodec(CodecKind::kLz4, 1);
    std::vector<char> out(codec->Bound(kPs));
    for (auto& p : saved) {
      if (!p.raw) continue;
      p.raw = false;
      if (p.bytes.find_first_not_of('\0') == std::string::npos) {
        p.zero = true;
        p.bytes.clear();
        continue;
      }
      size_t n = codec->Compress(p.bytes.data(), p.length, out.data(), out.size());
      p.codec = CodecKind::kLz4;
      p.bytes.assign(out.data(), n);
    }
    return saved;
  }
  PageCache::Restored Restore(PageCache* to, const PageCache::SavedPage& p, uint64_t epoch) {
    return to->Restore(1, p.page_no, p.length, p.zero, p.codec, p.bytes.data(), p.bytes.size(),
                       epoch);
  }

  std::string data_;
  std::unique_ptr<MemBackingStore> store_ = NewMemBackingStore();
  std::shared_ptr<CountingFile> file_;
};

TEST_P(PersistEngineTest, RestoredPagesAreReadBackAsCompressedHits) {
  auto first = Make(Base(16 * kMiB, 50));
  ASSERT_NO_FATAL_FAILURE(ReadAll(first.get()));
  first->Quiesce();
  const CacheStats before = first->Stats();
  std::vector<PageCache::SavedPage> saved = SaveAll(first.get());
  const uint64_t n = saved.size();
  if (std::string(GetParam()) == "daemon") {
    ASSERT_EQ(n, kPages + 1);
  } else {  // the staging tier drops the pages the pool cannot take in time (the kernel has them)
    ASSERT_GT(n, 16u);
  }
  EXPECT_EQ(first->Stats().reads, before.reads) << "saving is not a read";
  EXPECT_EQ(first->Stats().raw_hits, before.raw_hits);

  auto second = Make(Base(16 * kMiB, 50));
  const uint64_t epoch = second->ChangeEpoch();
  for (const auto& p : saved) {
    ASSERT_EQ(Restore(second.get(), p, epoch), PageCache::Restored::kRestored) << p.page_no;
  }
  CacheStats s = second->Stats();
  EXPECT_EQ(s.persist_pages_restored, 0u) << "the reload counts them once its file checked";
  EXPECT_EQ(s.compressed_pages, n);
  EXPECT_LE(s.compressed_bytes, s.compressed_budget_bytes);
  EXPECT_EQ(Restore(second.get(), saved[3], epoch), PageCache::Restored::kCached)
      << "a cached page is never replaced";
  ASSERT_NO_FATAL_FAILURE(ReadAll(second.get()));
  s = second->Stats();
  EXPECT_EQ(s.misses, kPages + 1 - n);
  EXPECT_EQ(s.compressed_hits, n);
}

TEST_P(PersistEngineTest, ARestoreStopsAtAFullCompressedTierAndDropsNothing) {
  auto first = Make(Base(16 * kMiB, 50));
  ASSERT_NO_FATAL_FAILURE(ReadAll(first.get()));
  first->Quiesce();
  std::vector<PageCache::SavedPage> saved = SaveAll(first.get());
  // About 1,000 of the 8,192 bytes are random: a page takes ~1.1 KiB; 64 KiB hold < 64 pages.
  auto small = Make(Base(2 * kMiB, 3));
  const uint64_t epoch = small->ChangeEpoch();
  size_t restored = 0;
  PageCache::Restored last = PageCache::Restored::kRestored;
  for (const auto& p : saved) {
    last = Restore(small.get(), p, epoch);
    if (last != PageCache::Restored::kRestored) break;
    ++restored;
  }
  EXPECT_EQ(last, PageCache::Restored::kFull);
  CacheStats s = small->Stats();
  EXPECT_GT(restored, 10u);
  EXPECT_EQ(s.compressed_pages, restored);
  EXPECT_LE(s.compressed_bytes, s.compressed_budget_bytes);
  EXPECT_EQ(s.compressed_evictions, 0u) << "a restore drops nothing to make room";

  auto none = Make(Base(2 * kMiB, 0));
  EXPECT_EQ(Restore(none.get(), saved[0], none->ChangeEpoch()), PageCache::Restored::kFull);
}

TEST_P(PersistEngineTest, ARestoreAfterAWriteOrAnInvalidationIsRefused) {
  auto first = Make(Base(16 * kMiB, 50));
  ASSERT_NO_FATAL_FAILURE(ReadAll(first.get()));
  std::vector<PageCache::SavedPage> saved = SaveAll(first.get());
  auto second = Make(Base(16 * kMiB, 50));
  uint64_t epoch = second->ChangeEpoch();
  ASSERT_EQ(Restore(second.get(), saved[0], epoch), PageCache::Restored::kRestored);
  // A write to the file (through the engine) since the epoch was read: the bytes may be old.
  const std::string patch(100, 'W');
  ASSERT_TRUE(second->Write(1, file_.get(), 3 * kPs, patch.data(), patch.size()).ok());
  data_.replace(3 * kPs, patch.size(), patch);
  EXPECT_EQ(Restore(second.get(), saved[3], epoch), PageCache::Restored::kChanged);
  epoch = second->ChangeEpoch();
  second->InvalidateFile(1);
  EXPECT_EQ(Restore(second.get(), saved[4], epoch), PageCache::Restored::kChanged);
  EXPECT_EQ(second->Stats().compressed_pages, 0u);
  ASSERT_NO_FATAL_FAILURE(ReadAll(second.get()));
}

TEST_P(PersistEngineTest, ARestoredBlobThatDoesNotDecodeIsReadFromTheStore) {
  auto cache = Make(Base(16 * kMiB, 50));
  std::string junk(300, '\xff');
  ASSERT_EQ(cache->Restore(1, 2, kPs, false, CodecKind::kLz4, junk.data(), junk.size(),
                           cache->ChangeEpoch()),
            PageCache::Restored::kRestored);
  std::string buf(kPs, 'x');
  size_t n = 0;
  ASSERT_TRUE(cache->Read(1, file_.get(), 2 * kPs, kPs, buf.data(), &n).ok());
  ASSERT_EQ(n, kPs);
  EXPECT_EQ(0, std::memcmp(buf.data(), data_.data() + 2 * kPs, kPs));
  EXPECT_EQ(cache->Stats().misses, 1u);
}

// The daemon's reload checks the file, then restores with the epoch read before the check; here
// the check is a version a writer bumps before each write, as the file's mtime (the signature the
// daemon checks) changes with the store's write, before PageCache::Write moves the epoch. (Bumped
// after the write, the version left a window the daemon does not have: an epoch read after the
// write moved it, a check that still passed, and the old page restored.) Whatever the
// interleaving, no page older than the writes is left to be read.
TEST_P(PersistEngineTest, RestoresRacingWritesLeaveNoStalePage) {
  auto first = Make(Base(16 * kMiB, 50));
  ASSERT_NO_FATAL_FAILURE(ReadAll(first.get()));
  first->Quiesce();
  const std::vector<PageCache::SavedPage> saved = SaveAll(first.get());
  const std::string original = data_;
  for (int round = 0; round < 20; ++round) {
    // Each round starts from the bytes the pages were saved from.
    ASSERT_TRUE(file_->Write(0, original.data(), original.size()).ok());
    data_ = original;
    auto cache = Make(Base(16 * kMiB, 50));
    std::atomic<int> version{0};
    std::thread writer([&] {
      const std::string patch(kPs, static_cast<char>('a' + round));
      for (uint64_t p = round % 7; p < kPages; p += 7) {
        version.fetch_add(1);
        ASSERT_TRUE(cache->Write(1, file_.get(), p * kPs, patch.data(), patch.size()).ok());
      }
    });
    for (const auto& p : saved) {
      const uint64_t epoch = cache->ChangeEpoch();
      if (version.load() != 0) break;  // the check: the file changed since the pages were saved
      Restore(cache.get(), p, epoch);
    }
    writer.join();
    for (uint64_t p = round % 7; p < kPages; p += 7) {
      data_.replace(p * kPs, kPs, std::string(kPs, static_cast<char>('a' + round)));
    }
    ASSERT_NO_FATAL_FAILURE(ReadAll(cache.get())) << "round " << round;
  }
}

INSTANTIATE_TEST_SUITE_P(RawTiers, PersistEngineTest, ::testing::Values("daemon", "kernel"),
                         [](const auto& info) { return std::string(info.param); });

}  // namespace
}  // namespace ccfs
