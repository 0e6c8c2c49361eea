// The directory warm-up without the kernel: listings are played to an InodeTable as READDIRPLUS
// records them, and the warmer lists ahead only once a listing it expected has ended.
#include "fuse/dir_warmer.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "testing/command.h"

namespace ccfs {
namespace {

class DirWarmerTest : public ::testing::Test {
 protected:
  // top/ holds s0..s7, each holding c0..c2 (directories) and files f0..f9.
  void SetUp() override {
    char dir[] = "/var/tmp/ccfs_dir_warmer.XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    dir_ = dir;
    for (int s = 0; s < 8; ++s) {
      const std::string sub = dir_ + "/top/s" + std::to_string(s);
      for (int c = 0; c < 3; ++c) std::filesystem::create_directories(sub + "/c" + std::to_string(c));
      for (int f = 0; f < 10; ++f) testing::WriteWholeFile(sub + "/f" + std::to_string(f), "x");
    }
    ASSERT_TRUE(table_.Open(dir_, 64).ok());
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Looks up every entry of `dir` (its names in `names` order) and records the listing as
  // READDIRPLUS does; returns the key of the entry listed first.
  InodeKey List(Inode* dir, const std::vector<std::string>& names) {
    InodeKey prev{0, 0}, first{0, 0};
    for (const std::string& n : names) {
      struct stat st;
      Inode* found = nullptr;
      EXPECT_EQ(table_.Lookup(dir, n.c_str(), &st, &found), 0) << n;
      if (found == nullptr) continue;
      table_.NoteListed(prev, found, static_cast<uint64_t>(st.st_size));
      prev = KeyOf(*found);
      if (first.second == 0) first = prev;
    }
    return first;
  }
  Inode* Find(Inode* dir, const std::string& name) {
    struct stat st;
    Inode* found = nullptr;
    EXPECT_EQ(table_.Lookup(dir, name.c_str(), &st, &found), 0) << name;
    return found;
  }
  static std::vector<std::string> SubNames() {
    std::vector<std::string> names = {"c0", "c1", "c2"};
    for (int f = 0; f < 10; ++f) names.push_back("f" + std::to_string(f));
    return names;
  }
  // Waits up to 10 s for the warmer to have warmed `n` directories.
  static bool AwaitWarmed(DirWarmer* w, size_t n) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (w->warmed() < n && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return w->warmed() >= n;
  }

  std::string dir_;
  InodeTable table_;
};

TEST_F(DirWarmerTest, AWalkWarmsTheDirectoriesItComesToNextAndALoneListingNothing) {
  DirWarmer w(&table_, dir_);
  ASSERT_TRUE(w.enabled()) << "a local file system keeps what a lookup found";
  Inode* top = Find(table_.root(), "top");
  std::vector<std::string> subs;
  for (int s = 0; s < 8; ++s) subs.push_back("s" + std::to_string(s));
  // A lone listing: expected by nothing, it warms nothing.
  w.ListingEnded(top, List(top, subs), /*on=*/true);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(w.warmed(), 0u);
  // s0 was expected (a first subdirectory of top): its listing's end warms its first kAhead
  // subdirectories (c0..c2: three) and the kAhead directories after it in top (s1..s4).
  Inode* s0 = Find(top, "s0");
  w.ListingEnded(s0, List(s0, SubNames()), /*on=*/true);
  EXPECT_TRUE(AwaitWarmed(&w, 3 + DirWarmer::kAhead)) << w.warmed();
  // s1, warmed already, comes next: only s5 is new (each directory is queued once).
  Inode* s1 = Find(top, "s1");
  w.ListingEnded(s1, List(s1, SubNames()), /*on=*/true);
  EXPECT_TRUE(AwaitWarmed(&w, 3 + DirWarmer::kAhead + 3 + 1)) << w.warmed();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(w.warmed(), 3 + DirWarmer::kAhead + 3 + 1);
}

TEST_F(DirWarmerTest, ReadAheadOffWarmsNothing) {
  DirWarmer w(&table_, dir_);
  Inode* top = Find(table_.root(), "top");
  w.ListingEnded(top, List(top, {"s0", "s1", "s2"}), /*on=*/false);
  Inode* s0 = Find(top, "s0");
  w.ListingEnded(s0, List(s0, SubNames()), /*on=*/false);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(w.warmed(), 0u);
}

TEST_F(DirWarmerTest, ADirectoryRemovedBeforeItsTurnIsPassedOver) {
  DirWarmer w(&table_, dir_);
  Inode* top = Find(table_.root(), "top");
  w.ListingEnded(top, List(top, {"s0", "s1", "s2"}), /*on=*/true);
  std::filesystem::remove_all(dir_ + "/top/s1");
  Inode* s0 = Find(top, "s0");
  w.ListingEnded(s0, List(s0, SubNames()), /*on=*/true);
  // c0..c2 and s2 are warmed; s1 is gone (its borrow fails), and the warmer goes on.
  EXPECT_TRUE(AwaitWarmed(&w, 4)) << w.warmed();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(w.warmed(), 4u);
}

}  // namespace
}  // namespace ccfs
