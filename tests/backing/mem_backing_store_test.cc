#include <fcntl.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "ccfs/backing_store.h"

namespace ccfs {
namespace {

constexpr size_t kPage = 4096;

struct AlignedFree {
  void operator()(void* p) const { std::free(p); }
};
std::unique_ptr<char, AlignedFree> NewPage(size_t len = kPage) {
  return std::unique_ptr<char, AlignedFree>(
      static_cast<char*>(std::aligned_alloc(kIoAlignment, len)));
}

TEST(MemBackingStoreTest, ReadsWhatWasPutWithShortLastPageAndEof) {
  auto store = NewMemBackingStore();
  std::string data(kPage + 100, 'a');
  data[kPage] = 'b';
  store->Put("d/f", data);
  std::unique_ptr<BackingFile> f;
  ASSERT_TRUE(store->Open("d/f", O_RDONLY, 0, &f).ok());
  auto buf = NewPage();
  size_t got = 0;
  ASSERT_TRUE(f->ReadPage(0, kPage, buf.get(), &got).ok());
  EXPECT_EQ(got, kPage);
  EXPECT_EQ(std::string(buf.get(), got), data.substr(0, kPage));
  ASSERT_TRUE(f->ReadPage(kPage, kPage, buf.get(), &got).ok());
  EXPECT_EQ(std::string(buf.get(), got), data.substr(kPage));
  ASSERT_TRUE(f->ReadPage(2 * kPage, kPage, buf.get(), &got).ok());
  EXPECT_EQ(got, 0u);
  EXPECT_EQ(store->page_reads(), 3u);
  uint64_t size = 0;
  ASSERT_TRUE(f->Size(&size).ok());
  EXPECT_EQ(size, data.size());
}

TEST(MemBackingStoreTest, PutReplacesWhatOpenHandlesRead) {
  auto store = NewMemBackingStore();
  store->Put("f", "old");
  std::unique_ptr<BackingFile> f;
  ASSERT_TRUE(store->Open("f", O_RDONLY, 0, &f).ok());
  store->Put("f", "new content");
  auto buf = NewPage();
  size_t got = 0;
  ASSERT_TRUE(f->ReadPage(0, kPage, buf.get(), &got).ok());
  EXPECT_EQ(std::string(buf.get(), got), "new content");
}

TEST(MemBackingStoreTest, OpenHonoursCreateExclusiveTruncateAndMissing) {
  auto store = NewMemBackingStore();
  std::unique_ptr<BackingFile> f;
  Status s = store->Open("missing", O_RDONLY, 0, &f);
  EXPECT_EQ(s.code(), Status::Code::kNotFound);
  EXPECT_NE(s.message().find("missing"), std::string::npos);

  ASSERT_TRUE(store->Open("n", O_RDWR | O_CREAT, 0644, &f).ok());
  ASSERT_TRUE(f->Write(10, "xyz", 3).ok());
  EXPECT_EQ(store->Get("n"), std::string(10, '\0') + "xyz");
  EXPECT_EQ(store->Open("n", O_RDWR | O_CREAT | O_EXCL, 0644, &f).err(), EEXIST);
  ASSERT_TRUE(store->Open("n", O_WRONLY | O_TRUNC, 0, &f).ok());
  EXPECT_EQ(store->Get("n"), "");
  EXPECT_EQ(store->Get("never-put"), "");
}

TEST(MemBackingStoreTest, AccessModeIsEnforced) {
  auto store = NewMemBackingStore();
  store->Put("f", "data");
  std::unique_ptr<BackingFile> ro, wo;
  ASSERT_TRUE(store->Open("f", O_RDONLY, 0, &ro).ok());
  EXPECT_EQ(ro->Write(0, "x", 1).err(), EBADF);
  ASSERT_TRUE(store->Open("f", O_WRONLY, 0, &wo).ok());
  auto buf = NewPage();
  size_t got = 0;
  EXPECT_EQ(wo->ReadPage(0, kPage, buf.get(), &got).err(), EBADF);
  EXPECT_EQ(store->Get("f"), "data");
}

TEST(MemBackingStoreTest, InjectedReadFailuresAreIOErrorsNamingThePath) {
  auto store = NewMemBackingStore();
  store->Put("ds/f", std::string(kPage, 'z'));
  std::unique_ptr<BackingFile> f;
  ASSERT_TRUE(store->Open("ds/f", O_RDONLY, 0, &f).ok());
  auto buf = NewPage();
  size_t got = 7;
  store->FailReads(true);
  Status s = f->ReadPage(0, kPage, buf.get(), &got);
  EXPECT_EQ(s.code(), Status::Code::kIOError);
  EXPECT_EQ(s.ToErrno(), EIO);
  EXPECT_EQ(got, 0u);
  EXPECT_NE(s.message().find("ds/f"), std::string::npos);
  store->FailReads(false);
  ASSERT_TRUE(f->ReadPage(0, kPage, buf.get(), &got).ok());
  EXPECT_EQ(got, kPage);
}

TEST(MemBackingStoreDeathTest, MisalignedPageReadAbortsLikeAnEngineBugShould) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  auto store = NewMemBackingStore();
  store->Put("f", std::string(3 * kPage, 'q'));
  std::unique_ptr<BackingFile> f;
  ASSERT_TRUE(store->Open("f", O_RDONLY, 0, &f).ok());
  auto buf = NewPage(2 * kPage);
  size_t got = 0;
  EXPECT_DEATH(f->ReadPage(100, kPage, buf.get(), &got).ok(), "not aligned");
  EXPECT_DEATH(f->ReadPage(0, 100, buf.get(), &got).ok(), "not aligned");
  EXPECT_DEATH(f->ReadPage(0, kPage, buf.get() + 8, &got).ok(), "not aligned");
}

}  // namespace
}  // namespace ccfs
