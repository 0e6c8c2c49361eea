// A walk through a directory's small files in its listing order (tar, grep -r, cp -r) or in the
// order of their names (`cat d/*`): once two files are read in that order, the daemon reads the
// files after them ahead of the reader (fuse/listing_walk.h), so their first reads find them
// cached, and the walk goes on into the next directory listed; a file changed underneath after it was read ahead reads its new bytes; files read in
// neither order each miss.
#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "fs/fs_test_util.h"
#include "testing/mount_fixture.h"

namespace ccfs::testing {
namespace {

constexpr int kFiles = 24;
constexpr size_t kFileBytes = 20000;     // three 8 KiB pages
constexpr uint64_t kPagesPerFile = 3;

class ListingWalkMountTest : public MountTest {
 protected:
  void SetUp() override {
    ASSERT_EQ(mkdir(ds_.DataPath("d").c_str(), 0755), 0);
    for (int k = 0; k < kFiles; ++k) {
      WriteWholeFile(ds_.DataPath(fmt::format("d/f{:02}", k)), CompressibleBytes(kFileBytes, k));
    }
    ASSERT_NO_FATAL_FAILURE(MountOrDie({"-o", "memory=64MiB"}));
  }
  // The files of `dir` as a readdir of the mount lists them (a READDIRPLUS), in that order.
  std::vector<std::string> Listed(const std::string& dir = "d", size_t files = kFiles) {
    std::vector<std::string> names;
    DIR* dp = opendir(ds_.MntPath(dir).c_str());
    EXPECT_NE(dp, nullptr);
    if (dp == nullptr) return names;
    while (struct dirent* e = readdir(dp)) {
      if (e->d_name[0] == 'f') names.push_back(dir + "/" + e->d_name);
    }
    closedir(dp);
    EXPECT_EQ(names.size(), files);
    return names;
  }
  uint64_t Counter(const char* key) {
    const nlohmann::json stats = ds_.Stats();
    return stats.contains(key) ? stats[key].get<uint64_t>() : 0;
  }
  // Reads `name` through the mount and checks it against the dataset.
  void ReadAndCheck(const std::string& name) {
    EXPECT_EQ(ReadWholeFile(ds_.MntPath(name)), ReadWholeFile(ds_.DataPath(name))) << name;
  }
  // Waits (up to 20 s: the read-ahead threads run beside the reader) until at least `pages`
  // pages were read ahead and no more came for 200 ms (the walk's files queued are all in).
  void AwaitReadAhead(uint64_t pages) {
    uint64_t seen = 0;
    int still = 0;
    for (int tries = 0; tries < 2000 && (seen < pages || still < 20); ++tries) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      const uint64_t now = Counter("readahead_pages");
      still = now == seen ? still + 1 : 0;
      seen = now;
    }
    ASSERT_GE(seen, pages) << ds_.Stats().dump();
  }
};

TEST_F(ListingWalkMountTest, FilesReadInListingOrderAreReadAheadOfTheReader) {
  const std::vector<std::string> names = Listed();
  ASSERT_EQ(names.size(), static_cast<size_t>(kFiles));
  ReadAndCheck(names[0]);
  ReadAndCheck(names[1]);
  ReadAndCheck(names[2]);  // two in a row: the walk is on, the files after it are read ahead
  ASSERT_NO_FATAL_FAILURE(AwaitReadAhead(3 * kPagesPerFile));
  // Their reads are hits (the walk goes on meanwhile: later files are read ahead, by backing
  // reads of their own).
  const uint64_t misses = Counter("misses");
  for (int k = 3; k < 6; ++k) ReadAndCheck(names[k]);
  EXPECT_EQ(Counter("misses"), misses) << ds_.Stats().dump();
  for (int k = 6; k < kFiles; ++k) ReadAndCheck(names[k]);
  EXPECT_GE(Counter("readahead_hits"), 3 * kPagesPerFile) << ds_.Stats().dump();
}

TEST_F(ListingWalkMountTest, FilesReadInTheOrderOfTheirNamesAreReadAheadOfTheReader) {
  std::vector<std::string> names = Listed();
  ASSERT_EQ(names.size(), static_cast<size_t>(kFiles));
  std::sort(names.begin(), names.end());  // as `cat d/*` reads them
  for (int k = 0; k < 3; ++k) ReadAndCheck(names[k]);
  ASSERT_NO_FATAL_FAILURE(AwaitReadAhead(3 * kPagesPerFile));
  const uint64_t misses = Counter("misses");
  for (int k = 3; k < 6; ++k) ReadAndCheck(names[k]);
  EXPECT_EQ(Counter("misses"), misses) << ds_.Stats().dump();
}

// d, with e and f beside it (kMore files each), as the root's listing orders them: a walk
// through one goes on into the next one listed after it.
class ListingWalkIntoMountTest : public ListingWalkMountTest {
 protected:
  static constexpr size_t kMore = 8;
  void SetUp() override {
    for (const char* dir : {"e", "f"}) {
      ASSERT_EQ(mkdir(ds_.DataPath(dir).c_str(), 0755), 0);
      for (size_t k = 0; k < kMore; ++k) {
        WriteWholeFile(ds_.DataPath(fmt::format("{}/f{}", dir, k)),
                       CompressibleBytes(kFileBytes, k));
      }
    }
    ListingWalkMountTest::SetUp();
    // The root's listing, as tar and grep -r read it before they come to its directories.
    DIR* dp = opendir(ds_.MntPath("").c_str());
    ASSERT_NE(dp, nullptr);
    while (struct dirent* e = readdir(dp)) {
      const std::string name = e->d_name;
      if (name == "d" || name == "e" || name == "f") dirs_.push_back(name);
    }
    closedir(dp);
    ASSERT_EQ(dirs_.size(), 3u);
  }
  std::vector<std::string> Files(size_t k) {
    return Listed(dirs_[k], dirs_[k] == "d" ? kFiles : kMore);
  }
  // Reads the first three files of the first directory: a walk is on.
  void WalkTheFirst() {
    const std::vector<std::string> first = Files(0);
    for (int k = 0; k < 3; ++k) ReadAndCheck(first[k]);
    ASSERT_NO_FATAL_FAILURE(AwaitReadAhead(3 * kPagesPerFile));
  }
  std::vector<std::string> dirs_;  // d, e and f in the root's listing order
};

TEST_F(ListingWalkIntoMountTest, AWalkGoesOnIntoTheNextDirectoryListedButNoFurther) {
  ASSERT_NO_FATAL_FAILURE(WalkTheFirst());
  const uint64_t before = Counter("readahead_pages");
  const std::vector<std::string> next = Files(1);  // in turn: the walk goes into it
  ASSERT_NO_FATAL_FAILURE(AwaitReadAhead(before + 3 * kPagesPerFile));
  // A listing after it, with no file of the walk read since, takes no walk.
  const uint64_t after_next = Counter("readahead_pages");
  const std::vector<std::string> last = Files(2);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(Counter("readahead_pages"), after_next) << ds_.Stats().dump();
  uint64_t misses = Counter("misses");
  ReadAndCheck(last[0]);
  EXPECT_GT(Counter("misses"), misses) << ds_.Stats().dump();
  // The next directory's first files are hits (the walk goes on meanwhile: the files after them
  // are read ahead as their first ones are read).
  misses = Counter("misses");
  for (size_t k = 0; k < 3; ++k) ReadAndCheck(next[k]);
  EXPECT_EQ(Counter("misses"), misses) << ds_.Stats().dump();
  for (size_t k = 3; k < next.size(); ++k) ReadAndCheck(next[k]);
}

TEST_F(ListingWalkIntoMountTest, ADirectoryListedOutOfTurnTakesNoWalk) {
  // As `find | xargs cat` does: the lister runs ahead of the reader, and a directory listed past
  // the next one is read, if at all, long after its pages would have been read ahead.
  ASSERT_NO_FATAL_FAILURE(WalkTheFirst());
  const uint64_t before = Counter("readahead_pages");
  const std::vector<std::string> later = Files(2);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(Counter("readahead_pages"), before) << ds_.Stats().dump();
  const uint64_t misses = Counter("misses");
  ReadAndCheck(later[0]);
  EXPECT_GT(Counter("misses"), misses) << ds_.Stats().dump();
}

TEST_F(ListingWalkIntoMountTest, AWalkOfATreeListedFirstGoesOnIntoTheNextDirectory) {
  // As `find | xargs cat` or a data loader does: every directory listed, then the files read in
  // the listings' order, one directory after another.
  const std::vector<std::string> first = Files(0);
  const std::vector<std::string> next = Files(1);
  Files(2);
  for (const std::string& name : first) ReadAndCheck(name);
  // From the fourth file on the first directory's files were read ahead, and past its end the
  // next directory's first three at least.
  ASSERT_NO_FATAL_FAILURE(AwaitReadAhead(first.size() * kPagesPerFile));
  const uint64_t misses = Counter("misses");
  for (size_t k = 0; k < 3; ++k) ReadAndCheck(next[k]);
  EXPECT_EQ(Counter("misses"), misses) << ds_.Stats().dump();
}

TEST_F(ListingWalkMountTest, AFileChangedUnderneathAfterItWasReadAheadReadsItsNewBytes) {
  const std::vector<std::string> names = Listed();
  ASSERT_EQ(names.size(), static_cast<size_t>(kFiles));
  for (int k = 0; k < 3; ++k) ReadAndCheck(names[k]);
  ASSERT_NO_FATAL_FAILURE(AwaitReadAhead(3 * kPagesPerFile));
  // New bytes, the same size (the kernel may keep the listed size for attr_timeout); the ctime
  // moves on at the rewrite.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const std::string fresh = CompressibleBytes(kFileBytes, 1000);
  WriteWholeFile(ds_.DataPath(names[3]), fresh);
  EXPECT_EQ(ReadWholeFile(ds_.MntPath(names[3])), fresh);
  ReadAndCheck(names[4]);
}

TEST_F(ListingWalkMountTest, FilesReadInNeitherOrderEachMiss) {
  const std::vector<std::string> listed = Listed();
  ASSERT_EQ(listed.size(), static_cast<size_t>(kFiles));
  // Files by their place in the listing; by_name[k]: file k's place in the order by name.
  std::vector<std::string> sorted = listed;
  std::sort(sorted.begin(), sorted.end());
  std::vector<size_t> by_name(listed.size());
  for (size_t k = 0; k < listed.size(); ++k) {
    by_name[k] = std::lower_bound(sorted.begin(), sorted.end(), listed[k]) - sorted.begin();
  }
  auto step = [&](size_t a, size_t b) { return b == a + 1 || by_name[b] == by_name[a] + 1; };
  // An order in which no file comes right after, in either order, one that came right after the
  // one before it (two steps in a row start a walk): no file with a step into it from an earlier
  // one and a step out of it to a later one. (By number and per file: strings compared for every
  // three files took 140 s of CPU under ThreadSanitizer, for the same order.)
  std::vector<size_t> order(listed.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::mt19937 rng(7);
  for (bool clean = false; !clean;) {
    std::shuffle(order.begin(), order.end(), rng);
    clean = true;
    for (size_t b = 1; b + 1 < order.size() && clean; ++b) {
      bool into = false, out = false;
      for (size_t a = 0; a < b && !into; ++a) into = step(order[a], order[b]);
      for (size_t c = b + 1; c < order.size() && !out; ++c) out = step(order[b], order[c]);
      clean = !(into && out);
    }
  }
  std::vector<std::string> names;
  for (size_t k : order) names.push_back(listed[k]);
  for (const std::string& name : names) ReadAndCheck(name);
  EXPECT_GE(Counter("misses"), static_cast<uint64_t>(kFiles)) << ds_.Stats().dump();
}

}  // namespace
}  // namespace ccfs::testing
