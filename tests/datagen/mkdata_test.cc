// mkdata: a seed gives the same bytes every time (whatever the thread count), kinds compress as
// their names promise, and a directory holding data is not overwritten by accident.
#include "datagen/mkdata.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <gtest/gtest.h>

#include "testing/command.h"

namespace ccfs {
namespace {

namespace fs = std::filesystem;

std::map<std::string, std::string> ReadTree(const fs::path& root) {
  std::map<std::string, std::string> files;
  for (const auto& entry : fs::directory_iterator(root)) {
    std::ifstream in(entry.path(), std::ios::binary);
    std::stringstream content;
    content << in.rdbuf();
    files[entry.path().filename().string()] = content.str();
  }
  return files;
}

class MkdataTest : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = testing::TempPath("ccfs_mkdata_test");
    fs::remove_all(base_);
  }
  void TearDown() override { fs::remove_all(base_); }

  Status Make(const std::string& name, uint64_t seed, int threads, std::vector<KindReport>* report,
              bool force = false) {
    MkdataOptions options;
    options.dir = (base_ / name).string();
    options.size = 12ull << 20;
    options.seed = seed;
    options.threads = threads;
    options.force = force;
    return MakeDataset(options, report);
  }

  fs::path base_;
};

TEST_F(MkdataTest, SameSeedSameBytesAnyThreadCount) {
  std::vector<KindReport> report;
  ASSERT_TRUE(Make("a", 7, 1, &report).ok());
  ASSERT_TRUE(Make("b", 7, 2, &report).ok());
  ASSERT_TRUE(Make("c", 8, 2, &report).ok());
  auto a = ReadTree(base_ / "a"), b = ReadTree(base_ / "b"), c = ReadTree(base_ / "c");
  ASSERT_EQ(a.size(), b.size());
  uint64_t total = 0;
  for (const auto& [name, content] : a) {
    EXPECT_EQ(content, b[name]) << name << " differs between two runs with seed 7";
    total += content.size();
    if (name.starts_with("text") || name.starts_with("db") || name.starts_with("random")) {
      EXPECT_NE(content, c[name]) << name << " is the same with seed 8";
    }
  }
  EXPECT_EQ(total, 12ull << 20);
}

TEST_F(MkdataTest, KindsCompressAsTheirNamesSay) {
  std::vector<KindReport> report;
  Status s = Make("a", 1, 2, &report);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_EQ(report.size(), 5u);
  std::map<std::string, KindReport> by_kind;
  for (const KindReport& r : report) by_kind[DataKindName(r.kind)] = r;
  EXPECT_NEAR(by_kind["random"].lz4_ratio, 1.0, 0.01);
  EXPECT_GT(by_kind["zero"].lz4_ratio, 50.0);
  EXPECT_GT(by_kind["text"].lz4_ratio, 1.4);
  EXPECT_GT(by_kind["db"].lz4_ratio, 1.5);
  EXPECT_GT(by_kind["binary"].lz4_ratio, 1.1);
  for (const KindReport& r : report) {
    EXPECT_GE(r.zstd_ratio, r.lz4_ratio * 0.95) << DataKindName(r.kind);
    EXPECT_GT(r.pages_sampled, 0u) << DataKindName(r.kind);
  }
  EXPECT_EQ(by_kind["text"].bytes, (12ull << 20) / 100 * 30 / 8192 * 8192);
}

TEST_F(MkdataTest, RefusesANonEmptyDirectoryWithoutForce) {
  std::vector<KindReport> report;
  ASSERT_TRUE(Make("a", 1, 2, &report).ok());
  Status s = Make("a", 2, 2, &report);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("--force"), std::string::npos) << s.message();
  ASSERT_TRUE(Make("a", 2, 2, &report, /*force=*/true).ok());
  fs::create_directories(base_ / "d");
  std::ofstream(base_ / "d" / "mine.txt") << "precious";
  EXPECT_FALSE(Make("d", 1, 2, &report).ok());
  EXPECT_TRUE(fs::exists(base_ / "d" / "mine.txt"));
}

TEST(ParseMix, AcceptsPercentagesAndNamesBadItems) {
  std::vector<MixEntry> mix;
  ASSERT_TRUE(ParseMix("text=50,db=50", &mix).ok());
  ASSERT_EQ(mix.size(), 2u);
  EXPECT_EQ(mix[1].kind, DataKind::kDb);
  Status s = ParseMix("text=50,video=50", &mix);
  EXPECT_NE(s.message().find("unknown kind 'video'"), std::string::npos) << s.message();
  s = ParseMix("text=50,db=40", &mix);
  EXPECT_NE(s.message().find("add up to 90"), std::string::npos) << s.message();
  EXPECT_FALSE(ParseMix("text=x,db=100", &mix).ok());
  EXPECT_FALSE(ParseMix("text=50,text=50", &mix).ok());
  EXPECT_FALSE(ParseMix("text", &mix).ok());
  EXPECT_FALSE(ParseMix("text=-10,db=110", &mix).ok());
}

}  // namespace
}  // namespace ccfs
