// The sftp keys: what they take and refuse (backing/sftp_store.h reads over what they name).
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ccfs/config.h"

namespace ccfs {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

TEST(SftpKeyTest, TakesOffAutoAndServers) {
  EXPECT_EQ(Options{}.sftp, "") << "off unless asked for";
  EXPECT_EQ(Options{}.sftp_connections, 4);
  Options o;
  for (const char* v : {"auto", "sftp://u@h:2222/srv/d", "h:/srv/d", "u@h:"}) {
    ASSERT_TRUE(ApplyOptionList(std::string("sftp=") + v, "-o", &o, nullptr).ok()) << v;
    EXPECT_EQ(o.sftp, v);
  }
  ASSERT_TRUE(ApplyOptionList("ssh_config=/etc/ccfs/ssh_config,sftp_connections=8", "-o", &o,
                              nullptr).ok());
  EXPECT_EQ(o.ssh_config, "/etc/ccfs/ssh_config");
  EXPECT_EQ(o.sftp_connections, 8);
  Options back;
  ASSERT_TRUE(ParseConfigText(RenderConfig(o), "rendered", &back).ok());
  EXPECT_EQ(back, o) << "RenderConfig writes what reads back";
  EXPECT_FALSE(IsLiveKey("sftp"));
}

TEST(SftpKeyTest, RefusalsNameTheKeyAndTheValue) {
  Options o;
  Status s = ApplyOptionList("sftp=/local/dir", "-o", &o, nullptr);
  EXPECT_THAT(s.message(), StartsWith("-o: sftp = /local/dir: must be \"\" (off), \"auto\""));
  s = ParseConfigText("[daemon]\nsftp = \"sftp://h:0/d\"\n", "t.toml", &o);
  EXPECT_THAT(s.message(), StartsWith("t.toml:2: sftp = sftp://h:0/d: must be"));
  s = ApplyOptionList("sftp_connections=0", "-o", &o, nullptr);
  EXPECT_THAT(s.message(), HasSubstr("sftp_connections = 0"));
  // A value a config file cannot hold (TOML is UTF-8) is refused, whatever the key.
  for (const char* key : {"sftp", "ssh_config", "pin", "persist"}) {
    s = ApplyOptionList(std::string(key) + "=/d\xb4", "-o", &o, nullptr);
    EXPECT_THAT(s.message(), HasSubstr(std::string(key) + " = /d\\xb4: must be UTF-8 text"))
        << key;
  }
  s = ParseConfigText("[cache]\nsftp = \"auto\"\n", "t.toml", &o);
  EXPECT_THAT(s.message(), HasSubstr("sftp: belongs in table [daemon]"));
  EXPECT_EQ(o, Options{});
}

}  // namespace
}  // namespace ccfs
