// The man pages `ccfs manpage` writes (and the build installs from build/man/): they render with
// man(1) and groff without a warning, ccfs.1 names every subcommand --help lists, and ccfs.toml.5
// has every key of the key table with its table, default, liveness and conf/ccfs.toml's paragraph.
#include <unistd.h>

#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ccfs/options.h"
#include "cli/help_text.h"
#include "config/keys.h"
#include "testing/command.h"

namespace ccfs::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const std::string kConf = std::string(CCFS_SOURCE_DIR) + "/conf/ccfs.toml";

// Runs of white space as one space, so text can be compared across line breaks.
std::string Squeeze(const std::string& text) {
  std::string out;
  for (char c : text) {
    bool space = c == ' ' || c == '\n' || c == '\t';
    if (space && (out.empty() || out.back() == ' ')) continue;
    out += space ? ' ' : c;
  }
  return out;
}

// A page written to a temporary file, rendered and linted; the file goes with it.
class Page {
 public:
  explicit Page(const std::vector<std::string>& manpage_args) {
    char path[] = "/tmp/ccfs_manpage_test.XXXXXX";
    int fd = mkstemp(path);
    if (fd >= 0) close(fd);
    path_ = path;
    std::vector<std::string> args = {"manpage"};
    args.insert(args.end(), manpage_args.begin(), manpage_args.end());
    args.insert(args.end(), {"--out", path_});
    generated_ = RunCcfs(args);
    roff_ = ReadWholeFile(path_);
  }
  ~Page() { unlink(path_.c_str()); }

  const CommandResult& generated() const { return generated_; }
  const std::string& roff() const { return roff_; }
  const std::string& path() const { return path_; }
  // The page as man(1) shows it, 80 columns, no formatting.
  CommandResult Render() const {
    return RunCommand({"env", "MANWIDTH=80", "MAN_KEEP_FORMATTING=", "man", "-l", path_});
  }

 private:
  std::string path_;
  CommandResult generated_;
  std::string roff_;
};

// groff's own check: every warning on (-ww), no output (-z). Silence means a clean page.
void ExpectCleanRoff(const Page& page) {
  CommandResult lint = RunCommand({"groff", "-ww", "-z", "-man", page.path()});
  EXPECT_EQ(lint.exit_code, 0) << lint.output;
  EXPECT_EQ(lint.err, "") << "groff warnings";
  for (unsigned char c : page.roff()) {
    ASSERT_LT(c, 0x80) << "non-ASCII byte in the roff source: write it as \\[uXXXX]";
  }
}

// Expects `page` to have been written, to pass groff's check and to render with man(1); sets
// *text to what man shows, white space squeezed.
void GeneratedLintedAndRendered(const Page& page, std::string* text) {
  ASSERT_EQ(page.generated().exit_code, 0) << page.generated().output;
  ExpectCleanRoff(page);
  CommandResult shown = page.Render();
  ASSERT_EQ(shown.exit_code, 0) << shown.output;
  EXPECT_EQ(shown.err, "");
  *text = Squeeze(shown.out);
}

// conf/ccfs.toml's comment paragraph above each key, its lines joined.
std::map<std::string, std::string> ConfParagraphs() {
  std::map<std::string, std::string> paragraphs;
  std::stringstream in(ReadWholeFile(kConf));
  std::string paragraph;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("# ", 0) == 0) {
      for (char c : line.substr(2)) {
        if (c != '`') paragraph += c;  // `code` is set in bold, without the backticks
      }
      paragraph += " ";
    } else if (size_t eq = line.find(" = "); eq != std::string::npos && line[0] != '#') {
      paragraphs[line.substr(0, eq)] = Squeeze(paragraph);
      paragraph.clear();
    } else {
      paragraph.clear();
    }
  }
  return paragraphs;
}

TEST(ManpageTest, CommandPageShowsEverySubcommandAndRendersCleanly) {
  Page page({"1"});
  std::string text;
  ASSERT_NO_FATAL_FAILURE(GeneratedLintedAndRendered(page, &text));

  std::vector<std::string> subcommands = ListedSubcommands();
  ASSERT_GE(subcommands.size(), 7u) << "mkdata, model, mount, replay, set, stat, umount at least";
  for (const std::string& name : subcommands) {
    SCOPED_TRACE(name);
    // The synopsis line and the subsection both start "ccfs NAME".
    size_t first = text.find("ccfs " + name + " ");
    ASSERT_NE(first, std::string::npos);
    EXPECT_NE(text.find("ccfs " + name + " ", first + 1), std::string::npos);
  }
  EXPECT_THAT(text, Not(HasSubstr("ccfs manpage"))) << "for the build, not for users";
  for (const char* section : {"SYNOPSIS", "COMMANDS", "SIGNALS", "FILES", "EXIT STATUS",
                              "EXAMPLES", "SEE ALSO", "SIGTERM", "JOURNAL_STREAM"}) {
    EXPECT_THAT(text, HasSubstr(section));
  }
  // Options and their defaults come from the subcommands themselves.
  EXPECT_THAT(text, HasSubstr("ccfs mount [--config TEXT] [-o TEXT] [-f] DATASET MOUNTPOINT"));
  EXPECT_THAT(text, HasSubstr("-i, --interval FLOAT seconds between lines"));
  EXPECT_THAT(text, HasSubstr("/srv/dataset /srv/data fuse.ccfs memory=1GiB"));
  CommandResult version = RunCcfs({"--version"});
  ASSERT_EQ(version.exit_code, 0);
  EXPECT_THAT(text, HasSubstr(Squeeze(version.out))) << "the footer carries the version";
}

TEST(ManpageTest, ConfigPageHasEveryKeyWithItsTableDefaultLivenessAndParagraph) {
  Page page({"5", "--conf", kConf});
  std::string text;
  ASSERT_NO_FATAL_FAILURE(GeneratedLintedAndRendered(page, &text));
  const std::map<std::string, std::string> paragraphs = ConfParagraphs();

  const Options defaults = MountDefaults();
  for (const config::KeySpec& key : config::AllKeys()) {
    SCOPED_TRACE(std::string(key.name));
    const std::string head = std::string(key.name) + " = " +
                             config::FormatValue(key, defaults, config::ValueStyle::kToml) + " ";
    // Once in the synopsis, once as the key's entry.
    size_t synopsis = text.find(head);
    ASSERT_NE(synopsis, std::string::npos);
    size_t entry = text.find(head, synopsis + 1);
    ASSERT_NE(entry, std::string::npos) << "no entry in KEYS";
    size_t live = text.find("Live: ", entry);
    ASSERT_NE(live, std::string::npos);
    const std::string entry_text = text.substr(entry, live + 9 - entry);  // to "Live: yes"
    EXPECT_THAT(entry_text, HasSubstr("Table: [" + std::string(key.table) + "]"));
    EXPECT_THAT(entry_text, HasSubstr(key.live ? "Live: yes" : "Live: no"));
    EXPECT_THAT(entry_text, HasSubstr("Range: "));
    auto paragraph = paragraphs.find(std::string(key.name));
    ASSERT_NE(paragraph, paragraphs.end()) << "not in conf/ccfs.toml";
    EXPECT_THAT(entry_text, HasSubstr(paragraph->second.substr(0, paragraph->second.size() - 1)))
        << "conf/ccfs.toml's paragraph is the key's description";
  }
  EXPECT_THAT(text, HasSubstr("Range: between 0 and 95")) << "the validator's own words";
}

TEST(ManpageTest, WithoutConfTheKeyTablesOneLineDocStandsIn) {
  Page page({"5"});
  std::string text;
  ASSERT_NO_FATAL_FAILURE(GeneratedLintedAndRendered(page, &text));
  for (const config::KeySpec& key : config::AllKeys()) {
    // The renderer turns \- back into -, so the doc reads as written.
    EXPECT_THAT(text, HasSubstr(Squeeze(std::string(key.doc)))) << key.name;
  }
}

TEST(ManpageTest, BadArgumentsAreRefused) {
  CommandResult r = RunCcfs({"manpage", "3"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.output, HasSubstr("section"));
  r = RunCcfs({"manpage", "5", "--conf", "/nonexistent/ccfs.toml"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.output, HasSubstr("/nonexistent/ccfs.toml"));
  EXPECT_THAT(RunCcfs({"--help"}).out, Not(HasSubstr("manpage"))) << "hidden from --help";
}

TEST(ManpageTest, BuildInstallsThePagesTheBinaryWrites) {
  // build/man/ (CMake target ccfs_man, which ccfs_tests depends on) must hold what the binary
  // under test writes now: the package installs those files.
  const std::filesystem::path man_dir = std::filesystem::path(CCFS_BINARY).parent_path() / "man";
  Page command_page({"1"});
  Page config_page({"5", "--conf", kConf});
  EXPECT_TRUE(ReadWholeFile((man_dir / "ccfs.1").string()) == command_page.roff())
      << (man_dir / "ccfs.1") << " differs from `ccfs manpage 1`: build the target ccfs_man";
  EXPECT_TRUE(ReadWholeFile((man_dir / "ccfs.toml.5").string()) == config_page.roff())
      << (man_dir / "ccfs.toml.5") << " differs from `ccfs manpage 5 --conf conf/ccfs.toml`";
  EXPECT_TRUE(std::filesystem::exists(man_dir / "ccfs.1.gz"));
  EXPECT_TRUE(std::filesystem::exists(man_dir / "ccfs.toml.5.gz"));
}

}  // namespace
}  // namespace ccfs::testing
