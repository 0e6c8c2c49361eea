// The cache file (cache/cache_file.h): what is written reads back record for record; a file cut
// anywhere, with any byte changed, of another version, page size or dataset, or with a path that
// leaves DATASET is refused whole; a write that is not committed leaves the previous file and no
// temporary file; temporary files of dead writers are removed.
#include "cache/cache_file.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "ccfs/codec.h"

namespace ccfs::cache {
namespace {

constexpr uint32_t kPs = 8192;
constexpr uint64_t kDataset = 0x1234;

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void Spit(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

class PersistFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/ccfs-cache-file-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    path_ = dir_ + "/c.cache";
  }
  void TearDown() override { std::system(("rm -rf " + dir_).c_str()); }

  // Writes a file of two files: the first with a compressed page (lz4), a zero page and a short
  // last page (zstd), the second with one page.
  Status WriteSample() {
    std::unique_ptr<CacheFileWriter> w;
    Status s = CacheFileWriter::Create(dir_, "c.cache", kPs, kDataset, &w);
    if (!s.ok()) return s;
    std::string page(kPs, 'a');
    for (size_t i = 0; i < page.size(); i += 7) page[i] = static_cast<char>('a' + i % 23);
    for (CodecKind kind : {CodecKind::kLz4, CodecKind::kZstd}) {
      auto codec = NewCodec(kind, 1);
      std::string out(codec->Bound(kPs), '\0');
      blobs_.push_back(out.substr(0, codec->Compress(page.data(), page.size(), out.data(),
                                                     out.size())));
    }
    pages_.push_back(page);
    if (!(s = w->AddFile(CachedFileRecord{7, 3 * kPs, 11, 12, "dir/a"})).ok()) return s;
    if (!(s = w->AddPage(0, kPs, 0, blobs_[0].data(), blobs_[0].size())).ok()) return s;
    if (!(s = w->AddPage(1, kPs, kZeroPage, nullptr, 0)).ok()) return s;
    if (!(s = w->AddPage(2, kPs, 1, blobs_[1].data(), blobs_[1].size())).ok()) return s;
    if (!(s = w->AddFile(CachedFileRecord{9, 100, -5, 6, "b"})).ok()) return s;
    if (!(s = w->AddPage(0, 100, kZeroPage, nullptr, 0)).ok()) return s;
    return w->Commit();
  }

  Status Verify(const std::string& path, CacheFileSummary* summary = nullptr) {
    int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return Status::FromErrno(errno, path);
    CacheFileSummary ignored;
    Status s = VerifyCacheFile(fd, kPs, kDataset, summary ? summary : &ignored);
    close(fd);
    return s;
  }

  std::string dir_, path_;
  std::vector<std::string> blobs_, pages_;
};

TEST_F(PersistFileTest, WhatIsWrittenReadsBackRecordForRecord) {
  ASSERT_TRUE(WriteSample().ok());
  CacheFileSummary sum;
  Status s = Verify(path_, &sum);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(sum.files, 2u);
  EXPECT_EQ(sum.pages, 4u);
  EXPECT_EQ(sum.page_bytes, blobs_[0].size() + blobs_[1].size());
  EXPECT_GT(sum.written, 0);

  int fd = open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  CacheFileReader r(fd, kPs, kDataset);
  ASSERT_TRUE(r.ReadHeader().ok());
  EXPECT_EQ(r.codecs(), 3u) << "both codecs are listed";
  CacheFileReader::Kind k;
  ASSERT_TRUE(r.Next(&k).ok());
  ASSERT_EQ(k, CacheFileReader::Kind::kFile);
  EXPECT_EQ(r.file().file_id, 7u);
  EXPECT_EQ(r.file().size, 3 * kPs);
  EXPECT_EQ(r.file().mtime_ns, 11);
  EXPECT_EQ(r.file().ctime_ns, 12);
  EXPECT_EQ(r.file().path, "dir/a");
  ASSERT_TRUE(r.Next(&k).ok());
  ASSERT_EQ(k, CacheFileReader::Kind::kPage);
  EXPECT_EQ(r.page().page_no, 0u);
  EXPECT_EQ(r.page().codec, 0);
  std::string back(kPs, '\0');
  ASSERT_TRUE(NewCodec(CodecKind::kLz4, 1)
                  ->Decompress(r.page().bytes.data(), r.page().bytes.size(), back.data(), kPs)
                  .ok());
  EXPECT_EQ(back, pages_[0]);
  ASSERT_TRUE(r.Next(&k).ok());
  EXPECT_EQ(r.page().codec, kZeroPage);
  EXPECT_TRUE(r.page().bytes.empty());
  ASSERT_TRUE(r.Next(&k).ok());
  EXPECT_EQ(r.page().codec, 1);
  EXPECT_EQ(std::string(r.page().bytes), blobs_[1]);
  ASSERT_TRUE(r.Next(&k).ok());
  EXPECT_EQ(r.file().mtime_ns, -5);
  ASSERT_TRUE(r.Next(&k).ok());
  EXPECT_EQ(r.page().length, 100u);
  ASSERT_TRUE(r.Next(&k).ok());
  EXPECT_EQ(k, CacheFileReader::Kind::kEnd);
  close(fd);
  struct stat st;
  EXPECT_NE(stat((path_ + ".tmp-" + std::to_string(getpid())).c_str(), &st), 0)
      << "the temporary file is gone once renamed";
}

TEST_F(PersistFileTest, AFileCutAnywhereIsRefused) {
  ASSERT_TRUE(WriteSample().ok());
  const std::string whole = Slurp(path_);
  const std::string cut = dir_ + "/cut";
  for (size_t len = 0; len < whole.size(); ++len) {
    Spit(cut, whole.substr(0, len));
    EXPECT_FALSE(Verify(cut).ok()) << "cut at " << len << " of " << whole.size();
  }
  Spit(cut, whole + "x");
  Status s = Verify(cut);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("after the end record"), std::string::npos) << s.message();
}

TEST_F(PersistFileTest, AnyByteChangedIsRefused) {
  ASSERT_TRUE(WriteSample().ok());
  const std::string whole = Slurp(path_);
  const std::string bad = dir_ + "/bad";
  for (size_t at = 0; at < whole.size(); ++at) {
    std::string b = whole;
    b[at] = static_cast<char>(b[at] ^ 0x20);
    Spit(bad, b);
    EXPECT_FALSE(Verify(bad).ok()) << "byte " << at << " of " << whole.size();
  }
}

TEST_F(PersistFileTest, AnotherVersionPageSizeOrDatasetIsRefusedSayingWhich) {
  ASSERT_TRUE(WriteSample().ok());
  int fd = open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  CacheFileSummary sum;
  Status s = VerifyCacheFile(fd, 2 * kPs, kDataset, &sum);
  EXPECT_NE(s.message().find("page_size 8192"), std::string::npos) << s.message();
  s = VerifyCacheFile(fd, kPs, kDataset + 1, &sum);
  EXPECT_NE(s.message().find("another dataset"), std::string::npos) << s.message();
  close(fd);

  // Version 2, whose header checksum matches: refused for its version, not as damage.
  std::string b = Slurp(path_);
  b[8] = 2;
  Spit(dir_ + "/v2-bad-sum", b);
  s = Verify(dir_ + "/v2-bad-sum");
  EXPECT_NE(s.message().find("header checksum"), std::string::npos) << s.message();
  const uint64_t sum56 = XXH3_64bits(b.data(), 56);
  for (int i = 0; i < 8; ++i) b[56 + i] = static_cast<char>(sum56 >> (8 * i));
  Spit(path_, b);
  s = Verify(path_);
  EXPECT_EQ(s.code(), Status::Code::kNotSupported) << s.ToString();
  EXPECT_NE(s.message().find("version 2, this ccfs reads 1"), std::string::npos) << s.message();
  Spit(path_, "");
  s = Verify(path_);
  EXPECT_NE(s.message().find("truncated header"), std::string::npos) << s.message();
  Spit(path_, std::string(64, 'x'));
  s = Verify(path_);
  EXPECT_NE(s.message().find("not a ccfs cache file"), std::string::npos) << s.message();
}

TEST_F(PersistFileTest, PathsThatLeaveTheDatasetAreRefused) {
  for (const char* path : {"/etc/passwd", "../x", "a/../../x", "a//b", "./a", "a/", ""}) {
    std::unique_ptr<CacheFileWriter> w;
    ASSERT_TRUE(CacheFileWriter::Create(dir_, "c.cache", kPs, kDataset, &w).ok());
    ASSERT_TRUE(w->AddFile(CachedFileRecord{1, 1, 1, 1, path}).ok());
    ASSERT_TRUE(w->Commit().ok());
    Status s = Verify(path_);
    EXPECT_FALSE(s.ok()) << "path '" << path << "'";
  }
}

TEST_F(PersistFileTest, AWriteNotCommittedLeavesThePreviousFileAndNoTemporaryFile) {
  ASSERT_TRUE(WriteSample().ok());
  const std::string before = Slurp(path_);
  {
    std::unique_ptr<CacheFileWriter> w;
    ASSERT_TRUE(CacheFileWriter::Create(dir_, "c.cache", kPs, kDataset, &w).ok());
    ASSERT_TRUE(w->AddFile(CachedFileRecord{1, 1, 1, 1, "x"}).ok());
    struct stat st;
    EXPECT_EQ(stat(w->temp_path().c_str(), &st), 0);
  }  // abandoned
  EXPECT_EQ(Slurp(path_), before);
  EXPECT_EQ(std::system(("test $(ls -A " + dir_ + " | wc -l) -eq 1").c_str()), 0)
      << "only the cache file is left";
}

TEST_F(PersistFileTest, TemporaryFilesOfDeadWritersAreRemoved) {
  // pid 2^22 + 1 is above pid_max's largest default (4194304): no process has it.
  const std::string dead = path_ + ".tmp-4194305";
  const std::string alive = path_ + ".tmp-" + std::to_string(getpid());
  const std::string other = dir_ + "/other.cache.tmp-4194305";
  for (const std::string& p : {dead, alive, other}) Spit(p, "x");
  RemoveStaleCacheTemps(dir_, "c.cache");
  struct stat st;
  EXPECT_NE(stat(dead.c_str(), &st), 0);
  EXPECT_EQ(stat(alive.c_str(), &st), 0) << "a live writer's file is its own";
  EXPECT_EQ(stat(other.c_str(), &st), 0) << "another dataset's";
}

}  // namespace
}  // namespace ccfs::cache
