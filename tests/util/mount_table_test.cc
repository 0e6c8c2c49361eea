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

TEST(MountTableTest, ParsesALineDecodingTheKernelsEscapes) {
  MountEntry e;
  ASSERT_TRUE(ParseMountLine(
      "/srv/my\\040data /mnt/a\\011b fuse.ccfs rw,nosuid,nodev,relatime 0 0", &e));
  EXPECT_EQ(e.source, "/srv/my data");
  EXPECT_EQ(e.target, "/mnt/a\tb");
  EXPECT_EQ(e.type, "fuse.ccfs");
  EXPECT_FALSE(ParseMountLine("only two", &e));
}

}  // namespace
}  // namespace ccfs
