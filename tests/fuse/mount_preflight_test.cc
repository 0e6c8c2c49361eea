// The decision behind clearing a dead mount point (fuse/mount_preflight.h), on mount table lines as
// the kernel writes them. tests/fs/daemon_test.cc checks the same with real dead mounts.
#include "fuse/mount_preflight.h"

#include <gtest/gtest.h>

#include <cerrno>

namespace ccfs {
namespace {

MountEntry Parsed(const std::string& line) {
  MountEntry e;
  EXPECT_TRUE(ParseMountLine(line, &e)) << line;
  return e;
}

TEST(MountPreflightTest, OnlyADeadCcfsMountIsCleared) {
  const MountEntry ccfs = Parsed("/srv/data /mnt fuse.ccfs rw,nosuid,nodev,relatime 0 0");
  const MountEntry sshfs = Parsed("me@host:/x /mnt fuse.sshfs rw,nosuid,nodev,relatime 0 0");
  const MountEntry plain_fuse = Parsed("/srv/data /mnt fuse rw,nosuid,nodev,relatime 0 0");
  const MountEntry nfs = Parsed("host:/x /mnt nfs4 rw,relatime 0 0");

  EXPECT_TRUE(IsDeadCcfsMount(ENOTCONN, &ccfs));
  EXPECT_TRUE(IsDeadCcfsMount(ECONNABORTED, &ccfs)) << "while the kernel aborts the connection";

  EXPECT_FALSE(IsDeadCcfsMount(0, &ccfs)) << "a live ccfs mount is refused, not cleared";
  EXPECT_FALSE(IsDeadCcfsMount(EACCES, &ccfs));
  EXPECT_FALSE(IsDeadCcfsMount(ENOTCONN, &sshfs)) << "another file system's dead mount";
  EXPECT_FALSE(IsDeadCcfsMount(ENOTCONN, &plain_fuse));
  EXPECT_FALSE(IsDeadCcfsMount(ESTALE, &nfs));
  EXPECT_FALSE(IsDeadCcfsMount(ENOTCONN, nullptr)) << "nothing listed there: not ours to judge";
}

}  // namespace
}  // namespace ccfs
