// `ccfs advise` run as a user runs it: a table, a CSV and a PNG, or one JSON object, from a small
// data set; the figures it can be held to (uniform access: the hit ratio at C = 0 is the cached
// fraction; a trace that fits: every read hits); and every bad input refused naming what is wrong.
#include <filesystem>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "datagen/mkdata.h"
#include "testing/command.h"

namespace ccfs {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing::CommandResult;
using testing::RunCcfs;

class AdviseCommandTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    root_ = new std::string(testing::TempPath("ccfs_advise_test"));
    fs::remove_all(*root_);
    fs::create_directories(*root_);
    MkdataOptions mk;
    mk.dir = Data();
    mk.size = 4ull << 20;  // 512 pages of 8 KiB
    ASSERT_TRUE(ParseMix("text=50,random=25,zero=25", &mk.mix).ok());
    std::vector<KindReport> report;
    Status s = MakeDataset(mk, &report);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  static void TearDownTestSuite() {
    fs::remove_all(*root_);
    delete root_;
  }
  static std::string Data() { return *root_ + "/data"; }
  static std::string Path(const std::string& name) { return *root_ + "/" + name; }
  // The first file of the data set, as a trace names it.
  static std::string FirstFile() {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(Data())) names.push_back(e.path().filename());
    std::sort(names.begin(), names.end());
    return names.front();
  }

  static CommandResult Advise(std::vector<std::string> extra) {
    std::vector<std::string> args = {"advise", Data(), "--memory", "2MiB", "--sample-pages", "64"};
    args.insert(args.end(), extra.begin(), extra.end());
    return RunCcfs(args, 60);
  }

  static std::string* root_;
};
std::string* AdviseCommandTest::root_ = nullptr;

TEST_F(AdviseCommandTest, JsonHasARowPerTierSplitAndCodecThePageCacheTheCurveAndTheVerdict) {
  CommandResult r = Advise({"--dist", "uniform", "--trip-us", "0", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["dataset_pages"], 512);
  EXPECT_EQ(j["raw_tiers"], nlohmann::json::array({"daemon", "kernel"}));
  ASSERT_EQ(j["rows"].size(), 40u);  // both tiers, C = 0, 10, ..., 90, lz4 and zstd
  for (const auto& row : j["rows"]) {
    EXPECT_GE(row["hit_ratio"].get<double>(), 0.0);
    EXPECT_LE(row["hit_ratio"].get<double>(), 1.0);
    EXPECT_GT(row["us_per_buffer"].get<double>(), 0.0);
    EXPECT_LT(row["us_low"].get<double>(), row["us_per_buffer"].get<double>()) << row;
    EXPECT_GT(row["us_high"].get<double>(), row["us_per_buffer"].get<double>()) << row;
  }
  EXPECT_EQ(j["rows"][0]["raw_tier"], "daemon");
  EXPECT_EQ(j["rows"][20]["raw_tier"], "kernel");
  // Uniform access, the law's share: at C = 0 the hit ratio is the cached fraction, 256 of 512.
  EXPECT_DOUBLE_EQ(j["rows"][0]["hit_ratio"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(j["page_cache"]["hit_ratio"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(j["page_cache"]["vs_page_cache"].get<double>(), 1.0);
  EXPECT_EQ(j["rows"][0]["compressions_per_read"].get<double>(), 0.0);
  // A quarter of the pages are random: no codec keeps them; a quarter are zero.
  for (const auto& codec : j["codecs"]) {
    EXPECT_LT(codec["storable_fraction"].get<double>(), 0.9) << codec;
    EXPECT_GT(codec["zero_fraction"].get<double>(), 0.1) << codec;
    EXPECT_GT(codec["ratio"].get<double>(), 1.5) << codec;
  }
  // The miss cost: the median of the sample's reads, with its spread.
  const auto& miss = j["miss_cost_us"];
  EXPECT_TRUE(miss["measured"].get<bool>());
  EXPECT_GT(miss["p10"].get<double>(), 0.0);
  EXPECT_LE(miss["p10"].get<double>(), miss["median"].get<double>());
  EXPECT_LE(miss["median"].get<double>(), miss["p90"].get<double>());
  EXPECT_EQ(j["costs_us"]["disk"].get<double>(), miss["median"].get<double>());
  EXPECT_GT(j["costs_us"]["kernel_hit"].get<double>(), 0.0);
  EXPECT_EQ(j["costs_us"]["trip"].get<double>(), 0.0);
  ASSERT_EQ(j["assumptions"].size(), 1u) << "the trip was given: only the daemon's own memory";
  EXPECT_EQ(j["curve"].size(), 65u);
  EXPECT_DOUBLE_EQ(j["curve"].back()["hit_ratio"].get<double>(), 1.0);
  ASSERT_EQ(j["advice"].size(), 2u);
  EXPECT_THAT(j["advice"][1]["text"].get<std::string>(),
              ::testing::AnyOf(::testing::StartsWith("use C="), ::testing::StartsWith("keep C=0")));
  EXPECT_THAT(j["verdict"]["answer"].get<std::string>(), ::testing::AnyOf("yes", "close", "no"));
  EXPECT_THAT(j["verdict"]["text"].get<std::string>(),
              ::testing::StartsWith(j["verdict"]["answer"].get<std::string>() + ": "));
  EXPECT_FALSE(fs::exists("advise.csv")) << "without --out no file is written";
}

TEST_F(AdviseCommandTest, TableCsvAndPlotUnderOut) {
  // A quote and a space in the directory (and in the verdict the plot is titled with) reach the
  // plotting script as they are: it is run without a shell. The directory is created.
  const std::string dir = Path("it's out/advise here");
  fs::remove_all(Path("it's out"));
  CommandResult r = Advise({"--dist", "pareto", "--exact", "--c-step", "20", "--out", dir});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.out, HasSubstr("assumed: trip 18 µs"));
  EXPECT_THAT(r.out, HasSubstr("exact LRU curve"));
  EXPECT_THAT(r.out, HasSubstr("median of 64 O_DIRECT reads; 10th-90th percentile"));
  EXPECT_THAT(r.out, HasSubstr("\npage cache    0     -"));
  EXPECT_THAT(r.out, HasSubstr("split, raw_tier = daemon: "));
  EXPECT_THAT(r.out, HasSubstr("split, raw_tier = kernel: "));
  EXPECT_THAT(r.out, HasSubstr("\nverdict: "));
  EXPECT_THAT(r.out, HasSubstr("µs/buffer"));
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("files: none")));
  const std::string csv = testing::ReadWholeFile(dir + "/advise.csv");
  // The header, the page cache alone, then C = 0..80 step 20 for two codecs and two tiers.
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 1 + 1 + 5 * 2 * 2) << csv;
  EXPECT_THAT(csv, ::testing::StartsWith("raw_tier,compressed_percent,codec,hit_ratio"));
  EXPECT_THAT(csv, HasSubstr("\npage_cache,0,-,"));
  EXPECT_THAT(csv, HasSubstr("\ndaemon,40,zstd,"));
  EXPECT_THAT(csv, HasSubstr("\nkernel,40,zstd,"));
  const std::string png = testing::ReadWholeFile(dir + "/advise.png");
  ASSERT_GT(png.size(), 8u) << r.output;
  EXPECT_EQ(png.substr(1, 3), "PNG");
}

TEST_F(AdviseCommandTest, VerdictIsYesWhereMissesAreDearAndNoWhereTheyAreCheap) {
  // Uniform reads of twice the memory, three quarters of the pages worth compressing: every hit
  // the compressed tier adds saves a miss.
  CommandResult dear = Advise({"--dist", "uniform", "--trip-us", "20", "--kernel-hit-us", "2",
                               "--disk-us", "5000", "--json"});
  ASSERT_EQ(dear.exit_code, 0) << dear.output;
  nlohmann::json j = nlohmann::json::parse(dear.out);
  EXPECT_EQ(j["verdict"]["answer"], "yes") << j["verdict"];
  EXPECT_EQ(j["verdict"]["raw_tier"], "kernel") << j["verdict"];
  EXPECT_GT(j["verdict"]["compressed_percent"].get<int>(), 0) << j["verdict"];
  EXPECT_FALSE(j["miss_cost_us"]["measured"].get<bool>());

  CommandResult text = Advise({"--dist", "uniform", "--trip-us", "20", "--kernel-hit-us", "2",
                               "--disk-us", "5000"});
  ASSERT_EQ(text.exit_code, 0) << text.output;
  EXPECT_THAT(text.out, HasSubstr("\nverdict: yes: ccfs with raw_tier = kernel"));
  EXPECT_THAT(text.out, HasSubstr("\nmount: ccfs mount -o memory=2MiB,raw_tier=kernel,"));
  EXPECT_THAT(text.out, HasSubstr("files: none"));

  CommandResult cheap = Advise({"--dist", "uniform", "--trip-us", "20", "--kernel-hit-us", "2",
                                "--disk-us", "3", "--json"});
  ASSERT_EQ(cheap.exit_code, 0) << cheap.output;
  j = nlohmann::json::parse(cheap.out);
  EXPECT_EQ(j["verdict"]["answer"], "no") << j["verdict"];
  EXPECT_THAT(j["verdict"]["text"].get<std::string>(),
              ::testing::StartsWith("no: use the page cache alone"));
}

TEST_F(AdviseCommandTest, WithoutMatplotlibItSaysSoAndKeepsTheCsv) {
  // A plot script that exits as plot_advise.py does when matplotlib cannot be imported.
  const std::string script = Path("no_matplotlib.py");
  testing::WriteWholeFile(script, "import sys\nsys.exit(3)\n");
  const std::string dir = Path("no-plot");
  CommandResult r = Advise({"--dist", "uniform", "--out", dir, "--plot-script", script});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.err, HasSubstr("no plot: python3-matplotlib is not installed"));
  EXPECT_TRUE(fs::exists(dir + "/advise.csv"));
  EXPECT_FALSE(fs::exists(dir + "/advise.png"));
  // A script that fails otherwise is a failure.
  testing::WriteWholeFile(script, "import sys\nsys.exit(1)\n");
  r = Advise({"--dist", "uniform", "--out", dir, "--plot-script", script});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.err, HasSubstr("plotting failed"));
}

TEST_F(AdviseCommandTest, ATraceThatFitsHitsEveryTime) {
  // Eight pages read over and over, far fewer than the memory holds.
  std::string trace = "file,offset,length,op\n";
  for (int round = 0; round < 50; ++round) {
    for (int page = 0; page < 8; ++page) {
      trace += FirstFile() + "," + std::to_string(page * 8192) + ",8192,read\n";
    }
  }
  testing::WriteWholeFile(Path("loop.csv"), trace);
  CommandResult r = Advise({"--trace", Path("loop.csv"), "--json", "--raw-tier", "kernel",
                            "--kernel-hit-us", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["workload"]["reads"], 400);
  EXPECT_EQ(j["workload"]["distinct_pages"], 8);
  EXPECT_TRUE(j["workload"]["exact"].get<bool>());
  EXPECT_EQ(j["costs_us"]["kernel_hit"].get<double>(), 2.0);
  EXPECT_EQ(j["raw_tiers"], nlohmann::json::array({"kernel"}));
  ASSERT_EQ(j["rows"].size(), 20u);
  for (const auto& row : j["rows"]) {
    EXPECT_DOUBLE_EQ(row["hit_ratio"].get<double>(), 1.0) << row;
    // Kernel mode: every read a kernel hit, no trip, nothing compressed.
    EXPECT_NEAR(row["us_per_buffer"].get<double>(), 2.0, 1e-9) << row;
  }
  EXPECT_THAT(j["advice"][0]["text"].get<std::string>(), ::testing::StartsWith("keep C=0"));
  // The page cache alone does as well, without a daemon: no.
  EXPECT_NEAR(j["page_cache"]["us_per_buffer"].get<double>(), 2.0, 1e-9);
  EXPECT_EQ(j["verdict"]["answer"], "no") << j["verdict"];
}

TEST_F(AdviseCommandTest, BadInputIsRefusedNamingWhatIsWrong) {
  fs::create_directories(Path("empty"));
  testing::WriteWholeFile(Path("bad.csv"), "file,offset,length,op\n" + FirstFile() +
                                                ",0,8192,read\n" + FirstFile() + ",zero,8192,read\n");
  testing::WriteWholeFile(Path("header-only.csv"), "file,offset,length,op\n");
  struct Case {
    std::vector<std::string> args;
    std::string mention;
  };
  const std::vector<Case> cases = {
      {{"advise", Path("missing"), "--memory", "2MiB"}, Path("missing")},
      {{"advise", Path("empty"), "--memory", "2MiB"}, Path("empty")},
      {{"advise", Data()}, "--memory"},
      {{"advise", Data(), "--memory", "0"}, "--memory"},
      {{"advise", Data(), "--memory", "lots"}, "--memory lots"},
      {{"advise", Data(), "--memory", "1000TiB"}, "--memory 1000TiB: more than"},
      {{"advise", Data(), "--memory", "1MiB"}, "at C=90%"},  // the raw tier needs 16 pages
      {{"advise", Data(), "--memory", "2MiB", "--c-step", "0"}, "--c-step 0: must be 1..95"},
      {{"advise", Data(), "--memory", "2MiB", "--c-step", "96"}, "--c-step 96: must be 1..95"},
      {{"advise", Data(), "--memory", "2MiB", "--c-max", "99"}, "--c-max 99"},
      {{"advise", Data(), "--memory", "2MiB", "--kernel-hit-us", "-2"}, "--kernel-hit-us -2"},
      {{"advise", Data(), "--memory", "2MiB", "--raw-tier", "cloud"},
       "--raw-tier cloud: must be daemon, kernel or both"},
      {{"advise", Data(), "--memory", "2MiB", "--out", Path("bad.csv") + "/sub"},
       "--out " + Path("bad.csv") + "/sub: cannot create"},
      {{"advise", Data(), "--memory", "2MiB", "--trip-us", "-1"}, "--trip-us -1: must be"},
      {{"advise", Data(), "--memory", "2MiB", "--disk-us", "inf"}, "--disk-us inf: must be"},
      {{"advise", Data(), "--memory", "2MiB", "--dist", "zipf:-1"}, "zipf"},
      {{"advise", Data(), "--memory", "2MiB", "--trace", Path("bad.csv")}, Path("bad.csv") + ":3"},
      {{"advise", Data(), "--memory", "2MiB", "--trace", Path("header-only.csv")},
       Path("header-only.csv")},
      {{"advise", Data(), "--memory", "2MiB", "--trace", Path("nope.csv")}, Path("nope.csv")},
      {{"advise", Data(), "--memory", "2MiB", "--trace", Path("bad.csv"), "--dist", "uniform"},
       "not both"},
      {{"advise", Data(), "--memory", "2MiB", "-o", "compressed_percent=200"}, "compressed_percent"},
  };
  for (const Case& c : cases) {
    CommandResult r = RunCcfs(c.args, 60);
    std::string line;
    for (const std::string& a : c.args) line += a + " ";
    EXPECT_NE(r.exit_code, 0) << line;
    EXPECT_LT(r.exit_code, 128) << line << r.output;
    EXPECT_THAT(r.err, HasSubstr(c.mention)) << line;
  }
}

}  // namespace
}  // namespace ccfs
