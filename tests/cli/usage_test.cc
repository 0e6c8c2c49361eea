// The command line as Linux tools have it: a usage error (unknown subcommand or option, a missing
// argument, a bad value) exits 2 with one line on stderr naming the word and a hint to --help;
// --help marks what is required; one flag means one thing in every subcommand.
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ccfs/options.h"
#include "cli/help_text.h"
#include "testing/command.h"

namespace ccfs::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Exit 2, nothing on stdout, and on stderr `message` then the hint to `command --help`.
void ExpectUsageError(const std::vector<std::string>& args, const std::string& message,
                      const std::string& command) {
  SCOPED_TRACE(::testing::PrintToString(args));
  CommandResult r = RunCcfs(args);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_EQ(r.out, "");
  const std::vector<std::string> lines = Lines(r.err);
  ASSERT_EQ(lines.size(), 2u) << r.err;
  EXPECT_EQ(lines[0], message);
  EXPECT_EQ(lines[1], "Try '" + command + " --help' for more information.");
}

TEST(UsageTest, UnknownSubcommandIsNamed) {
  ExpectUsageError({"foo"}, "ccfs: unknown subcommand 'foo'", "ccfs");
  // Two words are not the mount helper's DATASET MOUNTPOINT unless the first is a path.
  ExpectUsageError({"stats", "/mnt"}, "ccfs: unknown subcommand 'stats'", "ccfs");
  ExpectUsageError({}, "ccfs: missing subcommand", "ccfs");
  ExpectUsageError({"--frobnicate"}, "ccfs: unknown option '--frobnicate'", "ccfs");
}

TEST(UsageTest, UnknownOptionIsNamedWithItsSubcommand) {
  ExpectUsageError({"stat", "/mnt", "--frobnicate"}, "ccfs stat: unknown option '--frobnicate'",
                   "ccfs stat");
  ExpectUsageError({"umount", "/mnt", "extra"}, "ccfs umount: unexpected argument 'extra'",
                   "ccfs umount");
  // Where keys go as -o, a key written as a flag is shown its -o form.
  ExpectUsageError({"mount", "--memory", "1GiB", "/a", "/b"},
                   "ccfs mount: unknown option '--memory'; a key goes as -o memory=VALUE",
                   "ccfs mount");
  ExpectUsageError({"mount", "--compressed-percent=30", "/a", "/b"},
                   "ccfs mount: unknown option '--compressed-percent=30'; a key goes as -o "
                   "compressed_percent=30",
                   "ccfs mount");
  // The option model used to take before it was named after the key.
  ExpectUsageError({"model", "--dataset-size", "1GiB", "--codec", "zstd"},
                   "ccfs model: unknown option '--codec'", "ccfs model");
}

TEST(UsageTest, MissingArgumentAndBadValueExitTwo) {
  ExpectUsageError({"stat"}, "ccfs stat: mountpoint is required", "ccfs stat");
  ExpectUsageError({"stat", "/mnt", "--interval", "abc"},
                   "ccfs stat: bad value 'abc' for --interval: must be 0.01 to 86400", "ccfs stat");
  ExpectUsageError({"stat", "/mnt", "--count", "-2"},
                   "ccfs stat: bad value '-2' for --count: must be 0 or more", "ccfs stat");
  ExpectUsageError({"umount", "/mnt", "--timeout", "soon"},
                   "ccfs umount: bad value 'soon' for --timeout", "ccfs umount");
  ExpectUsageError({"stat", "/mnt", "-i"}, "ccfs stat: --interval needs a value", "ccfs stat");
}

TEST(UsageTest, HelpAndVersionStillExitZero) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--help"}, {"-h"}, {"--version"}, {"stat", "--help"}}) {
    CommandResult r = RunCcfs(args);
    EXPECT_EQ(r.exit_code, 0) << ::testing::PrintToString(args) << r.output;
    EXPECT_NE(r.out, "");
  }
}

TEST(UsageTest, HelpMarksWhatIsRequired) {
  EXPECT_THAT(HelpLine("stat", "mountpoint"), HasSubstr("REQUIRED"));
  EXPECT_THAT(HelpLine("mount", "dataset"), HasSubstr("REQUIRED"));
  EXPECT_THAT(HelpLine("stat", "-i,--interval"), Not(HasSubstr("REQUIRED")));
  // Required unless another option stands in: said in words.
  EXPECT_THAT(HelpLine("advise", "--memory"), HasSubstr("required"));
  EXPECT_THAT(HelpLine("model", "--dataset-size"), HasSubstr("required"));
}

TEST(UsageTest, MountHelpListsTheKeys) {
  CommandResult r = RunCcfs({"mount", "--help"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.out, HasSubstr("man ccfs.toml"));
  EXPECT_THAT(r.out, HasSubstr("memory=256MiB"));
  EXPECT_THAT(r.out, HasSubstr("compressed_percent=auto*"));
  EXPECT_THAT(r.out, HasSubstr("page_size=8KiB"));
}

// One spelling of sizes in what the commands print as defaults.
TEST(UsageTest, SizeDefaultsAreShownInBinaryUnits) {
  for (const char* sub : {"mkdata", "model", "advise"}) {
    CommandResult r = RunCcfs({sub, "--help"});
    EXPECT_THAT(r.out, Not(HasSubstr("8K]"))) << sub;
    EXPECT_THAT(r.out, Not(HasSubstr("8K)"))) << sub;
  }
}

}  // namespace
}  // namespace ccfs::testing
