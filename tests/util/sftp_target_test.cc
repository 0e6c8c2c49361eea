#include "util/sftp_target.h"

#include <gtest/gtest.h>

namespace ccfs {
namespace {

SftpTarget Parsed(const std::string& text) {
  SftpTarget t;
  Status s = ParseSftpTarget(text, &t);
  EXPECT_TRUE(s.ok()) << text << ": " << s.ToString();
  return t;
}

TEST(SftpTargetTest, ParsesUrls) {
  SftpTarget t = Parsed("sftp://alice@files.example:2222/srv/data/");
  EXPECT_EQ(t.user, "alice");
  EXPECT_EQ(t.host, "files.example");
  EXPECT_EQ(t.port, 2222);
  EXPECT_EQ(t.path, "/srv/data") << "no trailing slash, as sshfs joins paths";
  t = Parsed("sftp://files.example");
  EXPECT_EQ(t.user, "");
  EXPECT_EQ(t.port, 0);
  EXPECT_EQ(t.path, "") << "the login directory";
  EXPECT_EQ(Parsed("sftp://h/~/data").path, "data") << "relative to the login directory";
  t = Parsed("sftp://[::1]:22/d");
  EXPECT_EQ(t.host, "::1");
  EXPECT_EQ(t.port, 22);
  EXPECT_EQ(Parsed("sftp://h/").path, "/");
}

TEST(SftpTargetTest, ParsesSshfsSources) {
  SftpTarget t = Parsed("bob@server:/export/ml");
  EXPECT_EQ(t.user, "bob");
  EXPECT_EQ(t.host, "server");
  EXPECT_EQ(t.path, "/export/ml");
  t = Parsed("server:");
  EXPECT_EQ(t.host, "server");
  EXPECT_EQ(t.path, "");
  EXPECT_EQ(Parsed("server:data/set").path, "data/set");
  t = Parsed("[fe80::1]:/d");
  EXPECT_EQ(t.host, "fe80::1");
  EXPECT_EQ(t.path, "/d");
}

TEST(SftpTargetTest, RefusesWhatNamesNoServer) {
  for (const char* bad : {"", "/local/dir", "sftp://", "sftp://:22/d", "sftp://h:0/d",
                          "sftp://h:99999/d", "sftp://h:/d", "sftp://@h/d", ":/d", "[::1/d",
                          "sftp://[::1/d", "a b:/d"}) {
    SftpTarget t;
    Status s = ParseSftpTarget(bad, &t);
    EXPECT_FALSE(s.ok()) << "'" << bad << "' was taken for " << t.ToString();
    if (!s.ok()) {
      EXPECT_NE(s.message().find(std::string("'") + bad + "'"), std::string::npos);
    }
  }
}

TEST(SftpTargetTest, SaysItselfAsAUrl) {
  EXPECT_EQ(Parsed("u@h:/p").ToString(), "sftp://u@h/p");
  EXPECT_EQ(Parsed("sftp://h:2200/p").ToString(), "sftp://h:2200/p");
  EXPECT_EQ(Parsed("h:rel").ToString(), "sftp://h/~/rel");
  EXPECT_EQ(Parsed("[::1]:/p").ToString(), "sftp://[::1]/p");
}

constexpr char kMounts[] =
    "/dev/vda1 / ext4 rw,relatime 0 0\n"
    "alice@srv:/export /mnt/data fuse.sshfs rw,nosuid,nodev 0 0\n"
    "ccfs-store-sshfs /mnt/named fuse.sshfs rw,nosuid,nodev 0 0\n"
    "/dev/vdb /mnt/data/inner ext4 rw 0 0\n"
    "srv: /mnt/home\\040dir fuse.sshfs rw 0 0\n";

TEST(SftpTargetTest, FindsTheServerOfTheSshfsMountHoldingTheDataset) {
  SftpTarget t;
  ASSERT_TRUE(SftpTargetOfMount("/mnt/data", kMounts, &t).ok());
  EXPECT_EQ(t.user, "alice");
  EXPECT_EQ(t.host, "srv");
  EXPECT_EQ(t.path, "/export");
  ASSERT_TRUE(SftpTargetOfMount("/mnt/data/sets/a", kMounts, &t).ok());
  EXPECT_EQ(t.path, "/export/sets/a") << "the dataset's place under the mount point";
  ASSERT_TRUE(SftpTargetOfMount("/mnt/home dir/x", kMounts, &t).ok());
  EXPECT_EQ(t.path, "x") << "under the login directory";
}

TEST(SftpTargetTest, SaysWhyAMountHasNoServerToRead) {
  SftpTarget t;
  Status s = SftpTargetOfMount("/mnt/data/inner/x", kMounts, &t);
  ASSERT_FALSE(s.ok()) << "the innermost mount is ext4";
  EXPECT_NE(s.message().find("ext4"), std::string::npos) << s.message();
  s = SftpTargetOfMount("/mnt/named/x", kMounts, &t);
  ASSERT_FALSE(s.ok()) << "sshfs -o fsname= hides the server";
  EXPECT_NE(s.message().find("ccfs-store-sshfs"), std::string::npos) << s.message();
  s = SftpTargetOfMount("/mnt/dataset", kMounts, &t);
  ASSERT_FALSE(s.ok()) << "/mnt/dataset is not under /mnt/data";
  EXPECT_NE(s.message().find("ext4"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace ccfs
