// The `metrics` key's address: "[HOST:]PORT" as the daemon will bind it, and the key through the
// config entry points (file, -o, control), refused with a message naming the key.
#include "config/listen_address.h"

#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ccfs/config.h"

namespace ccfs {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

ListenAddress Parsed(const std::string& text) {
  ListenAddress a;
  Status s = ParseListenAddress(text, &a);
  EXPECT_TRUE(s.ok()) << text << ": " << s.ToString();
  return a;
}

TEST(ListenAddressTest, BarePortIsLoopback) {
  ListenAddress a = Parsed("9567");
  EXPECT_EQ(a.host, "127.0.0.1");
  EXPECT_EQ(a.port, 9567);
  EXPECT_EQ(a.ToString(), "127.0.0.1:9567");
}

TEST(ListenAddressTest, HostsAsWritten) {
  EXPECT_EQ(Parsed("127.0.0.1:9567").ToString(), "127.0.0.1:9567");
  EXPECT_EQ(Parsed(" 0.0.0.0:1 ").ToString(), "0.0.0.0:1");
  EXPECT_EQ(Parsed("localhost:65535").ToString(), "127.0.0.1:65535");
  EXPECT_EQ(Parsed("LocalHost:80").host, "127.0.0.1");
  ListenAddress v6 = Parsed("[::1]:9567");
  EXPECT_EQ(v6.host, "::1");
  EXPECT_EQ(v6.ToString(), "[::1]:9567");
  EXPECT_EQ(Parsed("[::]:9567").host, "::");
}

TEST(ListenAddressTest, RefusesWhatIsNotAnAddress) {
  for (const char* bad : {"", "nonsense", "nonsense:", ":9567", "0", "65536", "99999999", "-1",
                          "9567x", "127.0.0.1", "127.0.0.1:", "127.0.0.1:0", "256.0.0.1:9567",
                          "example.com:9567", "::1:9567", "[::1]", "[127.0.0.1]:9567",
                          "[nonsense]:9567", "127.0.0.1:95 67"}) {
    SCOPED_TRACE(bad);
    ListenAddress a{"unchanged", 7};
    Status s = ParseListenAddress(bad, &a);
    EXPECT_FALSE(s.ok());
    EXPECT_THAT(s.message(), HasSubstr("[HOST:]PORT"));
    EXPECT_EQ(a.host, "unchanged");
    EXPECT_EQ(a.port, 7);
  }
}

TEST(MetricsKeyTest, OffByDefaultAndSetEverywhere) {
  EXPECT_EQ(Options{}.metrics, "");
  Options o;
  ASSERT_TRUE(ApplyOptionList("metrics=127.0.0.1:9999", "-o", &o, nullptr).ok());
  EXPECT_EQ(o.metrics, "127.0.0.1:9999");
  ASSERT_TRUE(ApplyOptionList("metrics=", "-o", &o, nullptr).ok());
  EXPECT_EQ(o.metrics, "") << "an empty value turns the endpoint off";
  ASSERT_TRUE(ParseConfigText("[daemon]\nmetrics = \"[::1]:9567\"\n", "t.toml", &o).ok());
  EXPECT_EQ(o.metrics, "[::1]:9567");
  // RenderConfig writes what reads back.
  Options back;
  ASSERT_TRUE(ParseConfigText(RenderConfig(o), "rendered", &back).ok());
  EXPECT_EQ(back, o);
}

TEST(MetricsKeyTest, BadAddressesNameTheKey) {
  Options o;
  Status s = ApplyOptionList("metrics=nonsense", "-o", &o, nullptr);
  EXPECT_THAT(s.message(), StartsWith("-o: metrics = nonsense: must be [HOST:]PORT"));
  EXPECT_EQ(o, Options{});
  s = ParseConfigText("[daemon]\n\nmetrics = \"1.2.3:80\"\n", "t.toml", &o);
  EXPECT_THAT(s.message(), StartsWith("t.toml:3: metrics = 1.2.3:80: must be [HOST:]PORT"));
  s = ParseConfigText("[daemon]\nmetrics = 9567\n", "t.toml", &o);
  EXPECT_THAT(s.message(), StartsWith("t.toml:2: metrics: expected a string, got an integer"));
  s = ParseConfigText("[cache]\nmetrics = \"9567\"\n", "t.toml", &o);
  EXPECT_THAT(s.message(), HasSubstr("metrics: belongs in table [daemon]"));
  EXPECT_EQ(o, Options{});
}

TEST(MetricsKeyTest, NeedsARemount) {
  EXPECT_FALSE(IsLiveKey("metrics"));
  Options o;
  Status s = ApplyControlText("metrics=9567\n", "control", &o);
  EXPECT_THAT(s.message(), HasSubstr("metrics cannot change while mounted"));
}

}  // namespace
}  // namespace ccfs
