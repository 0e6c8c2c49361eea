// "auto" for compressed_percent and compressor: parsed from -o, TOML and control text, rendered
// back, compared as live keys, and refused where the split tuner cannot work, naming the key.
#include <string>

#include <gtest/gtest.h>

#include "ccfs/config.h"
#include "ccfs/options.h"
#include "config/config_test_util.h"
#include "config/live_options.h"

namespace ccfs {
namespace {

TEST(AutoKeysTest, AutoIsAcceptedEverywhereAndKeepsTheValueInForce) {
  Options o;
  o.compressed_percent = 40;
  ASSERT_TRUE(ApplyOptionList("compressed_percent=auto,compressor=AUTO", "-o", &o, nullptr).ok());
  EXPECT_TRUE(o.compressed_percent_auto);
  EXPECT_TRUE(o.compressor_auto);
  EXPECT_EQ(o.compressed_percent, 40) << "auto starts from the value in force";

  ASSERT_TRUE(ApplyOptionList("compressed_percent=30", "-o", &o, nullptr).ok());
  EXPECT_FALSE(o.compressed_percent_auto) << "a number ends auto";
  EXPECT_EQ(o.compressed_percent, 30);

  Options t;
  Status s = ParseConfigText("[cache]\ncompressed_percent = \"auto\"\n[compression]\ncompressor = \"auto\"\n",
                             "t.toml", &t);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_TRUE(t.compressed_percent_auto);
  EXPECT_TRUE(t.compressor_auto);
  const std::string rendered = RenderConfig(t);
  EXPECT_NE(rendered.find("compressed_percent = \"auto\""), std::string::npos) << rendered;
  EXPECT_NE(rendered.find("compressor = \"auto\""), std::string::npos) << rendered;
  Options back;
  ASSERT_TRUE(ParseConfigText(rendered, "rendered", &back).ok());
  EXPECT_TRUE(back.compressed_percent_auto);

  Options c;
  ASSERT_TRUE(ApplyControlText("compressed_percent = auto\n", "control", &c).ok());
  EXPECT_TRUE(c.compressed_percent_auto);
  EXPECT_EQ(DescribeKey(c, "compressed_percent"), "compressed_percent = auto");
}

TEST(AutoKeysTest, TwoAutoSplitsAreTheSameSettingWhateverTheValueInForce) {
  Options a, b;
  a.compressed_percent_auto = b.compressed_percent_auto = true;
  a.compressed_percent = 10;
  b.compressed_percent = 60;
  EXPECT_TRUE(ChangedKeys(a, b).empty());
  b.compressed_percent_auto = false;
  ASSERT_EQ(ChangedKeys(a, b).size(), 1u);
  EXPECT_EQ(ChangedKeys(a, b)[0], "compressed_percent");
}

// Both raw tiers: under raw_tier = kernel the engine keeps its curve's pages out of the kernel.
TEST(AutoKeysTest, AutoWorksWithEitherRawTier) {
  for (const char* list : {"compressed_percent=auto,raw_tier=kernel",
                           "compressed_percent=auto,compressor=auto,raw_tier=kernel",
                           "compressed_percent=auto,raw_tier=daemon"}) {
    Options o;
    Status st = ApplyOptionList(list, "-o", &o, nullptr);
    EXPECT_TRUE(st.ok()) << list << ": " << st.ToString();
  }
}

// A mount's split is auto by default: turning the estimator off alone is refused, saying what else
// to set; with a fixed split it mounts.
TEST(AutoKeysTest, TheMountsAutoSplitNeedsTheEstimator) {
  Options o = MountDefaults();
  EXPECT_TRUE(o.compressed_percent_auto);
  Status s = ApplyOptionList("estimate_splits=false", "-o", &o, nullptr);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("compressed_percent = auto: needs estimate_splits = true (set a fixed "
                             "value to run without it)"),
            std::string::npos)
      << s.ToString();
  s = ApplyOptionList("estimate_splits=false,compressed_percent=50", "-o", &o, nullptr);
  EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_FALSE(o.compressed_percent_auto);
}

TEST(AutoKeysTest, AutoThatCannotWorkIsRefusedNamingTheKey) {
  std::string m = RefusalOf("compressed_percent=auto,estimate_splits=false");
  EXPECT_NE(m.find("compressed_percent = auto: needs estimate_splits = true"), std::string::npos) << m;
  m = RefusalOf("compressor=auto,compressed_percent=0");
  EXPECT_NE(m.find("compressor = auto: compressed_percent = 0 leaves no compressed tier"), std::string::npos) << m;
  m = RefusalOf("compressor=auto,compression_level=15");
  EXPECT_NE(m.find("compressor = auto: compression_level = 15 must suit every codec"), std::string::npos) << m;
  m = RefusalOf("auto_interval=0");
  EXPECT_NE(m.find("auto_interval = 0: must be a finite number of seconds > 0"), std::string::npos) << m;
  m = RefusalOf("auto_max_step=0");
  EXPECT_NE(m.find("auto_max_step = 0: must be between 1 and 95"), std::string::npos) << m;
  m = RefusalOf("compressed_percent=automatic");
  EXPECT_NE(m.find("compressed_percent = automatic: expected an integer"), std::string::npos) << m;
  // Both under auto is fine, and so is a codec chosen for a fixed share.
  EXPECT_EQ(RefusalOf("compressed_percent=auto,compressor=auto"), "");
  EXPECT_EQ(RefusalOf("compressed_percent=40,compressor=auto"), "");
}

}  // namespace
}  // namespace ccfs
