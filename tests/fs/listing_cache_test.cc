// The kernel keeps a directory's listing (cache_readdir) and serves it again without asking the
// daemon while the listing was read from the store less than attr_timeout ago (fuse/dir_ops.cc):
// such a listing opens nothing on the store (seen by inotify on the data set, as the store's own
// open events). A change made through the mount shows at once; one made underneath, once the
// listing is attr_timeout old; with attr_timeout = 0 every listing is read from the store.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "fs/fs_test_util.h"
#include "testing/mount_fixture.h"

namespace ccfs::testing {
namespace {

class ListingCacheMountTest : public MountTest {
 protected:
  void SetUp() override {
    ASSERT_EQ(mkdir(ds_.DataPath("d").c_str(), 0755), 0);
    for (int k = 0; k < 5; ++k) WriteWholeFile(ds_.DataPath(fmt::format("d/f{}", k)), "x");
  }
  // The names in the mount's `d`, sorted, "." and ".." left out.
  std::vector<std::string> Listed() {
    std::vector<std::string> names;
    DIR* dp = opendir(ds_.MntPath("d").c_str());
    EXPECT_NE(dp, nullptr) << strerror(errno);
    if (dp == nullptr) return names;
    while (struct dirent* e = readdir(dp)) {
      if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) names.push_back(e->d_name);
    }
    closedir(dp);
    std::sort(names.begin(), names.end());
    return names;
  }
  static bool Has(const std::vector<std::string>& names, const std::string& name) {
    return std::find(names.begin(), names.end(), name) != names.end();
  }
};

TEST_F(ListingCacheMountTest, AListingReadAgainWithinAttrTimeoutOpensNothingOnTheStore) {
  ASSERT_NO_FATAL_FAILURE(MountOrDie({"-o", "memory=8MiB,attr_timeout=60,entry_timeout=60"}));
  const std::vector<std::string> first = Listed();
  ASSERT_EQ(first.size(), 5u);
  OpenEvents opens(ds_.data());
  for (int k = 0; k < 3; ++k) {
    EXPECT_EQ(Listed(), first);
    EXPECT_EQ(opens.Of("d"), 0) << "a listing read again within attr_timeout reached the store";
  }
  // Changes through the mount show at once, whatever the timeouts.
  WriteWholeFile(ds_.MntPath("d/new"), "y");
  EXPECT_TRUE(Has(Listed(), "new")) << "a file created through the mount is not listed";
  ASSERT_EQ(rename(ds_.MntPath("d/f0").c_str(), ds_.MntPath("d/g0").c_str()), 0) << strerror(errno);
  ASSERT_EQ(unlink(ds_.MntPath("d/f1").c_str()), 0) << strerror(errno);
  const std::vector<std::string> after = Listed();
  EXPECT_TRUE(Has(after, "g0") && !Has(after, "f0")) << "a rename through the mount";
  EXPECT_FALSE(Has(after, "f1")) << "an unlink through the mount";
  EXPECT_EQ(after, Listed());
}

TEST_F(ListingCacheMountTest, AChangeUnderneathIsListedOnceTheListingIsAttrTimeoutOld) {
  ASSERT_NO_FATAL_FAILURE(MountOrDie({"-o", "memory=8MiB,attr_timeout=0.5,entry_timeout=0.5"}));
  ASSERT_EQ(Listed().size(), 5u);
  WriteWholeFile(ds_.DataPath("d/under"), "z");
  ASSERT_EQ(unlink(ds_.DataPath("d/f2").c_str()), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  const std::vector<std::string> names = Listed();
  EXPECT_TRUE(Has(names, "under")) << "a file created underneath is not listed past the bound";
  EXPECT_FALSE(Has(names, "f2")) << "a file removed underneath is listed past the bound";
}

TEST_F(ListingCacheMountTest, WithAttrTimeoutZeroEveryListingIsReadFromTheStore) {
  ASSERT_NO_FATAL_FAILURE(MountOrDie({"-o", "memory=8MiB,attr_timeout=0"}));
  ASSERT_EQ(Listed().size(), 5u);
  OpenEvents opens(ds_.data());
  for (int k = 0; k < 3; ++k) {  // read each time: inotify merges an event with the same before it
    ASSERT_EQ(Listed().size(), 5u);
    EXPECT_EQ(opens.Of("d"), 1) << "listing " << k;
  }
  WriteWholeFile(ds_.DataPath("d/under"), "z");
  EXPECT_TRUE(Has(Listed(), "under")) << "attr_timeout = 0 listed a file created underneath late";
}

}  // namespace
}  // namespace ccfs::testing
