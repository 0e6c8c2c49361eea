// Dataset: the same tree always gives the same page numbering, and every page maps to the right
// place in the right file.
#include "trace/dataset.h"

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "testing/command.h"

namespace ccfs {
namespace {

namespace fs = std::filesystem;

void WriteFile(const fs::path& path, size_t size) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << std::string(size, 'x');
}

TEST(Dataset, ListsRegularFilesSortedAndMapsPages) {
  fs::path root = testing::TempPath("ccfs_dataset_test");
  fs::remove_all(root);
  WriteFile(root / "b.bin", 10000);           // 2 pages of 8 KiB
  WriteFile(root / "a" / "z.txt", 8192);      // 1 page
  WriteFile(root / "empty", 0);               // no page
  WriteFile(root / ".ccfs" / "stats.json", 100);  // a mount's control files are skipped
  fs::create_symlink(root / "b.bin", root / "link");

  Dataset dataset;
  Status s = Dataset::Open(root.string(), 8192, &dataset);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_EQ(dataset.files().size(), 3u);
  EXPECT_EQ(dataset.files()[0].path, "a/z.txt");
  EXPECT_EQ(dataset.files()[1].path, "b.bin");
  EXPECT_EQ(dataset.files()[2].path, "empty");
  EXPECT_EQ(dataset.pages(), 3u);
  EXPECT_EQ(dataset.bytes(), 18192u);
  EXPECT_EQ(dataset.Locate(0).file, 0u);
  EXPECT_EQ(dataset.Locate(1).file, 1u);
  EXPECT_EQ(dataset.Locate(2).file, 1u);
  EXPECT_EQ(dataset.Locate(2).offset, 8192u);
  EXPECT_EQ(dataset.Find("./b.bin"), 1);
  EXPECT_EQ(dataset.Find("nope"), -1);
  fs::remove_all(root);
}

TEST(Dataset, EmptyFilesBetweenOthersAreSkippedByLocate) {
  Dataset d = Dataset::FromFiles("/r", 4096, {{"a", 4096}, {"b", 0}, {"c", 0}, {"d", 5000}});
  ASSERT_EQ(d.pages(), 3u);
  EXPECT_EQ(d.Locate(0).file, 0u);
  EXPECT_EQ(d.Locate(1).file, 3u);
  EXPECT_EQ(d.Locate(2).file, 3u);
  EXPECT_EQ(d.Locate(2).offset, 4096u);
}

TEST(Dataset, MissingOrEmptyDirectoryIsAnErrorNamingIt) {
  Dataset dataset;
  Status s = Dataset::Open("/nonexistent/ccfs/data", 8192, &dataset);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("/nonexistent/ccfs/data"), std::string::npos);
  fs::path root = testing::TempPath("ccfs_dataset_empty");
  fs::remove_all(root);
  fs::create_directories(root);
  s = Dataset::Open(root.string(), 8192, &dataset);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("no non-empty regular file"), std::string::npos) << s.message();
  fs::remove_all(root);
}

}  // namespace
}  // namespace ccfs
