#include "util/mount_table.h"

#include <gtest/gtest.h>

namespace ccfs {
namespace {

TEST(MountTableTest, FindsMountPointsAndOnlyMountPoints) {
  EXPECT_TRUE(IsMounted("/")) << "the root is always mounted";
  EXPECT_TRUE(IsMounted("/proc")) << "/proc/mounts is read from a mounted /proc";
  EXPECT_FALSE(IsMounted("/proc/self")) << "a directory inside a mount is not a mount point";
  EXPECT_FALSE(IsMounted("/no/such/ccfs/mount"));
  EXPECT_FALSE(IsMounted(""));
}

}  // namespace
}  // namespace ccfs
