// Config: what a user sees when ccfs reads its TOML file and -o list — values land in Options,
// -o beats the file, mount options are handed on, and every mistake is refused with a message that
// names the file, the line and the key while leaving the previous settings untouched.
#include "ccfs/config.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "config/config_test_util.h"
#include "config/live_options.h"

namespace ccfs {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// Expects `text` to be refused, with a message starting "t.toml:<line>: " and naming each part,
// and expects the options to be exactly as they were.
void ExpectFileError(const std::string& text, int line, const std::vector<std::string>& parts) {
  SCOPED_TRACE(text);
  Options o = AllNonDefault();
  Status s = ParseConfigText(text, "t.toml", &o);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_THAT(s.message(), StartsWith("t.toml:" + std::to_string(line) + ": "));
  for (const std::string& part : parts) EXPECT_THAT(s.message(), HasSubstr(part));
  EXPECT_EQ(o, AllNonDefault()) << "a refused file changed the options";
}

class ConfigFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/ccfs_config_test.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::system(("rm -rf '" + dir_ + "'").c_str()); }
  std::string Write(const std::string& name, const std::string& text) {
    std::string path = dir_ + "/" + name;
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }
  std::string dir_;
};

// --- the documented example --------------------------------------------------------------------

TEST(ConfigExampleTest, ShippedConfSetsEveryKeyToItsDefault) {
  // Starting from all-non-default options, loading must reach the defaults exactly: a key missing
  // from conf/ccfs.toml or documented with a different default fails here.
  Options o = AllNonDefault();
  Status s = LoadConfigFile(std::string(CCFS_SOURCE_DIR) + "/conf/ccfs.toml", &o);
  ASSERT_TRUE(s.ok()) << s.ToString();
  // "auto" keeps the value in force (where the tuner starts), which the file cannot name: two
  // settings of "auto" are the same setting (ChangedKeys), and the rest must match exactly.
  const std::vector<std::string> changed = ChangedKeys(o, MountDefaults());
  EXPECT_TRUE(changed.empty()) << changed.front();
  EXPECT_TRUE(o.compressed_percent_auto);
  o.compressed_percent = MountDefaults().compressed_percent;
  EXPECT_EQ(o, MountDefaults());
}

// --- values ------------------------------------------------------------------------------------

TEST(ParseConfigTextTest, EveryKeyIsReadFromItsTable) {
  const std::string text = R"(
[cache]
memory = "64MiB"
compressed_percent = 40
page_size = 16384
raw_tier = "kernel"
kernel_evict = false
estimate_splits = false
auto_interval = 0.5
auto_max_step = 5
readahead = "256KiB"

[compression]
compressor = "zstd"
compression_level = 3
compress_threads = 3
min_savings_percent = 20.25
admission_filter = false

[eviction]
evict_batch_percent = 5.5
low_watermark_percent = 7
probation = false

[daemon]
request_threads = 4
misses_in_flight = 5
pin_threads = true
allow_other = true
attr_timeout = 2.5
entry_timeout = 3.5
negative_timeout = 0.5
close_to_open = false
passthrough = true
readdirplus = false
max_open_files = 1000
transport = "uring"
metrics = "127.0.0.1:9567"
pin = "etc/hostname"
pin_percent = 30
persist = "/var/cache/ccfs"
persist_interval = 30.0
sftp = "files:/export"
ssh_config = "/etc/ccfs/ssh_config"
sftp_connections = 8
)";
  Options o;
  Status s = ParseConfigText(text, "t.toml", &o);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(o, AllNonDefault());
}

TEST(ParseConfigTextTest, EmptyOrCommentOnlyFileKeepsDefaults) {
  for (const char* text : {"", "\n\n", "# nothing here\n", "[cache]\n"}) {
    Options o;
    EXPECT_TRUE(ParseConfigText(text, "t.toml", &o).ok()) << text;
    EXPECT_EQ(o, Options{}) << text;
  }
}

TEST(ParseConfigTextTest, KeysNotInTheFileKeepTheirPreviousValues) {
  Options o = AllNonDefault();
  ASSERT_TRUE(ParseConfigText("[cache]\ncompressed_percent = 10\n", "t.toml", &o).ok());
  Options expected = AllNonDefault();
  expected.compressed_percent = 10;
  EXPECT_EQ(o, expected);
}

TEST(ParseConfigTextTest, SizesAcceptBytesAndUnits) {
  const std::vector<std::pair<std::string, uint64_t>> cases = {
      {"1073741824", 1ull << 30},      {"\"1GiB\"", 1ull << 30},   {"\"1G\"", 1ull << 30},
      {"\"1.5GiB\"", 3ull << 29},      {"\"2000MB\"", 2000000000}, {"\"512 MiB\"", 512ull << 20},
      {"\"1048576B\"", 1ull << 20},
  };
  for (const auto& [value, bytes] : cases) {
    Options o;
    Status s = ParseConfigText("[cache]\nmemory = " + value + "\n", "t.toml", &o);
    ASSERT_TRUE(s.ok()) << value << ": " << s.message();
    EXPECT_EQ(o.memory, bytes) << value;
  }
  Options o;
  ASSERT_TRUE(ParseConfigText("[cache]\npage_size = \"64KiB\"\n", "t.toml", &o).ok());
  EXPECT_EQ(o.page_size, 65536u);
}

TEST(ParseConfigTextTest, DottedKeysAreTheSameLayout) {
  Options o;
  ASSERT_TRUE(ParseConfigText("cache.compressed_percent = 50\n", "t.toml", &o).ok());
  EXPECT_EQ(o.compressed_percent, 50);
}

TEST(ParseConfigTextTest, LevelIsJudgedAgainstTheCompressorInTheSameFile) {
  Options o;
  Status s = ParseConfigText("[compression]\ncompression_level = 19\ncompressor = \"zstd\"\n", "t.toml", &o);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(o.compressor, CodecKind::kZstd);
  EXPECT_EQ(o.compression_level, 19);
}

// --- errors in files ---------------------------------------------------------------------------

TEST(ParseConfigTextTest, OutOfRangeNamesLineKeyValueAndRange) {
  ExpectFileError("[cache]\nmemory = \"64MiB\"\ncompressed_percent = 120\n", 3,
                  {"compressed_percent = 120", "between 0 and 95"});
  ExpectFileError("[compression]\ncompressor = \"lz4\"\ncompression_level = 19\n", 3,
                  {"compression_level = 19", "1 and 12", "lz4"});
  ExpectFileError("[daemon]\n\nrequest_threads = 0\n", 3, {"request_threads = 0", "between 1 and 64"});
  ExpectFileError("[cache]\npage_size = 5000\n", 2, {"page_size = 5000", "power of two"});
  ExpectFileError("[cache]\npage_size = \"8GiB\"\n", 2, {"page_size", "8GiB", "power of two"});
  ExpectFileError("[eviction]\nevict_batch_percent = 0.0\n", 2, {"evict_batch_percent = 0"});
  ExpectFileError("[cache]\ncompressed_percent = 99999999999\n", 2, {"compressed_percent = 99999999999", "0 and 95"});
  ExpectFileError("[cache]\nmemory = -5\n", 2, {"memory = -5", "negative"});
  ExpectFileError("[daemon]\nattr_timeout = -inf\n", 2, {"attr_timeout"});
}

TEST(ParseConfigTextTest, RuleBetweenKeysPointsAtAKeyTheFileSet) {
  // 1MiB cannot hold 16 pages of 128KiB: the memory line is blamed, the message says why.
  ExpectFileError("[cache]\nmemory = \"1MiB\"\npage_size = \"128KiB\"\n", 2, {"memory", "16 pages", "131072"});
  // memory is left at its default; the file's page_size line is the one to fix.
  Options small;
  small.memory = 1 << 20;
  Status s = ParseConfigText("[cache]\n\npage_size = \"128KiB\"\n", "t.toml", &small);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), AllOf(StartsWith("t.toml:3: "), HasSubstr("memory")));
  EXPECT_EQ(small.page_size, 8192u);
}

TEST(ParseConfigTextTest, UnknownKeySuggestsTheNearestKnownKey) {
  ExpectFileError("[cache]\nmemroy = 5\n", 2, {"unknown key 'memroy'", "did you mean 'memory'"});
  ExpectFileError("[compression]\n\ncompresion_level = 5\n", 3, {"compresion_level", "did you mean 'compression_level'"});
  ExpectFileError("[daemon]\nfrobnicate = 5\n", 2, {"unknown key 'frobnicate'"});
}

TEST(ParseConfigTextTest, KeyInTheWrongPlaceNamesItsTable) {
  ExpectFileError("memory = \"1GiB\"\n", 1, {"memory", "belongs in table [cache]"});
  ExpectFileError("[daemon]\ncompressed_percent = 5\n", 2, {"compressed_percent", "[cache]", "not [daemon]"});
  ExpectFileError("[cahce]\nmemory = 5\n", 1, {"unknown table 'cahce'", "did you mean 'cache'"});
  ExpectFileError("cache = 5\n", 1, {"cache", "expected a table"});
  ExpectFileError("[[cache]]\nmemory = 5\n", 1, {"cache", "expected a table", "an array"});
}

TEST(ParseConfigTextTest, WrongTypeNamesKeyAndExpectedType) {
  ExpectFileError("[cache]\ncompressed_percent = \"25\"\n", 2, {"compressed_percent", "expected an integer", "a string"});
  ExpectFileError("[cache]\ncompressed_percent = 25.5\n", 2, {"compressed_percent", "expected an integer", "a float"});
  ExpectFileError("[daemon]\nallow_other = \"yes\"\n", 2, {"allow_other", "expected a boolean"});
  ExpectFileError("[compression]\nadmission_filter = 1\n", 2, {"admission_filter", "expected a boolean"});
  ExpectFileError("[compression]\ncompressor = 1\n", 2, {"compressor", "expected a string"});
  ExpectFileError("[cache]\nmemory = true\n", 2, {"memory", "expected a size"});
  ExpectFileError("[daemon]\nattr_timeout = \"1s\"\n", 2, {"attr_timeout", "expected a number"});
  ExpectFileError("[cache]\nmemory = [1, 2]\n", 2, {"memory", "an array"});
}

TEST(ParseConfigTextTest, BadValuesNameTheKey) {
  ExpectFileError("[cache]\nmemory = \"12XB\"\n", 2, {"memory", "unknown unit 'XB'"});
  ExpectFileError("[cache]\nmemory = \"lots\"\n", 2, {"memory", "not a size"});
  ExpectFileError("[cache]\nmemory = \"\"\n", 2, {"memory", "empty size"});
  ExpectFileError("[compression]\ncompressor = \"gzip\"\n", 2, {"compressor", "gzip", "lz4", "zstd"});
}

TEST(ParseConfigTextTest, DuplicateKeyNamesTheSecondLineAndTheKey) {
  ExpectFileError("[cache]\nmemory = 1048576\n\nmemory = 2097152\n", 4, {"memory"});
  ExpectFileError("[cache]\n[daemon]\n[cache]\n", 3, {"cache"});
}

TEST(ParseConfigTextTest, SyntaxErrorNamesTheLine) {
  ExpectFileError("[cache]\nmemory =\n", 2, {});
  ExpectFileError("[cache\n", 1, {});
}

TEST(ParseConfigTextTest, BinaryGarbageIsRefusedNotCrashedOn) {
  ExpectFileError(std::string("[cache]\nmem\0ory = 1\n", 20), 2, {"binary"});
  ExpectFileError("\x7f" "ELF\x02\x01\x01\xff\xfe\xfd", 1, {});
  std::string noise;
  for (int i = 0; i < 4096; ++i) noise.push_back(static_cast<char>((i * 7919 + 13) & 0xff));
  Options o = AllNonDefault();
  EXPECT_FALSE(ParseConfigText(noise, "t.toml", &o).ok());
  EXPECT_EQ(o, AllNonDefault());
}

TEST(ParseConfigTextTest, FirstErrorInFileOrderIsReported) {
  // toml++ keeps keys sorted; the report must still follow the file.
  ExpectFileError("[daemon]\nzzz = 1\n[cache]\naaa = 2\n", 2, {"zzz"});
}

// --- files -------------------------------------------------------------------------------------

TEST_F(ConfigFileTest, LoadConfigFileUsesThePathInMessages) {
  std::string path = Write("bad.toml", "[cache]\n\ncompressed_percent = 120\n");
  Options o;
  Status s = LoadConfigFile(path, &o);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), StartsWith(path + ":3: compressed_percent = 120"));
  EXPECT_EQ(o, Options{});
}

TEST_F(ConfigFileTest, MissingFileIsNotFoundAndNamesThePath) {
  Options o = AllNonDefault();
  Status s = LoadConfigFile(dir_ + "/absent.toml", &o);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Status::Code::kNotFound);
  EXPECT_THAT(s.ToString(), AllOf(HasSubstr(dir_ + "/absent.toml"), HasSubstr("No such file")));
  EXPECT_EQ(o, AllNonDefault());
}

TEST_F(ConfigFileTest, UnreadableFileIsAnErrorNamingThePath) {
  if (geteuid() == 0) GTEST_SKIP() << "root reads files regardless of mode";
  std::string path = Write("secret.toml", "[cache]\ncompressed_percent = 10\n");
  ASSERT_EQ(chmod(path.c_str(), 0), 0);
  Options o;
  Status s = LoadConfigFile(path, &o);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.ToString(), AllOf(HasSubstr(path), HasSubstr("Permission denied")));
  EXPECT_EQ(o, Options{});
}

TEST_F(ConfigFileTest, ReadErrorIsAnErrorNamingThePath) {
  // Opening /proc/self/mem succeeds even for root, but reading offset 0 (never mapped) fails.
  Options o = AllNonDefault();
  Status s = LoadConfigFile("/proc/self/mem", &o);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.ToString(), AllOf(HasSubstr("/proc/self/mem"), HasSubstr("cannot read")));
  EXPECT_EQ(o, AllNonDefault());
}

TEST_F(ConfigFileTest, DirectoryIsNotAConfigFile) {
  Options o;
  Status s = LoadConfigFile(dir_, &o);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.ToString(), AllOf(HasSubstr(dir_), HasSubstr("directory")));
}

TEST_F(ConfigFileTest, EmptyFileGivesDefaults) {
  Options o;
  ASSERT_TRUE(LoadConfigFile(Write("empty.toml", ""), &o).ok());
  EXPECT_EQ(o, Options{});
}

// --- -o lists and key=value --------------------------------------------------------------------

TEST_F(ConfigFileTest, OptionListOverridesTheFile) {
  std::string path = Write("c.toml", "[cache]\ncompressed_percent = 10\nmemory = \"64MiB\"\n");
  Options o;
  ASSERT_TRUE(LoadConfigFile(path, &o).ok());
  ASSERT_TRUE(ApplyOptionList("compressed_percent=40", "-o", &o, nullptr).ok());
  EXPECT_EQ(o.compressed_percent, 40);
  EXPECT_EQ(o.memory, 64ull << 20) << "keys -o does not mention keep the file's value";
}

TEST(ApplyOptionListTest, SetsEveryKindOfKey) {
  Options o;
  std::vector<std::string> pass;
  Status s = ApplyOptionList(
      "memory=64MiB, compressed_percent=40,page_size=16K,raw_tier=kernel,kernel_evict=false,estimate_splits=false,auto_interval=0.5,auto_max_step=5,readahead=256KiB,compressor=zstd,compression_level=3,"
      "compress_threads=3,min_savings_percent=20.25,admission_filter=off,evict_batch_percent=5.5,low_watermark_percent=7,"
      "probation=no,"
      "request_threads=4,misses_in_flight=5,pin_threads=on,allow_other=yes,attr_timeout=2.5,entry_timeout=3.5,negative_timeout=0.5,close_to_open=false,passthrough=true,readdirplus=false,max_open_files=1000,transport=uring,metrics=127.0.0.1:9567,pin=etc/hostname,pin_percent=30,"
      "persist=/var/cache/ccfs,persist_interval=30,sftp=files:/export,"
      "ssh_config=/etc/ccfs/ssh_config,sftp_connections=8",
      "-o", &o, &pass);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(o, AllNonDefault());
  EXPECT_TRUE(pass.empty());
}

TEST(ApplyOptionListTest, MountOptionsArePassedThroughInOrder) {
  Options o;
  std::vector<std::string> pass = {"earlier"};
  Status s = ApplyOptionList("ro,noatime,compressed_percent=30,fsname=dataset,default_permissions,"
                             "subtype=ccfs,nosuid,nodev,_netdev,nofail",
                             "-o", &o, &pass);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(o.compressed_percent, 30);
  EXPECT_THAT(pass, ElementsAre("earlier", "ro", "noatime", "fsname=dataset", "default_permissions",
                                "subtype=ccfs", "nosuid", "nodev", "_netdev", "nofail"));
}

TEST(ApplyOptionListTest, BareAllowOtherIsPassedThroughAndSetsTheOption) {
  Options o;
  std::vector<std::string> pass;
  ASSERT_TRUE(ApplyOptionList("allow_other", "-o", &o, &pass).ok());
  EXPECT_TRUE(o.allow_other);
  EXPECT_THAT(pass, ElementsAre("allow_other"));
}

TEST(ApplyOptionListTest, MountOptionsWithoutPassthroughAreErrors) {
  Options o = AllNonDefault();
  Status s = ApplyOptionList("compressed_percent=30,noatime", "-o", &o, nullptr);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), AllOf(StartsWith("-o: "), HasSubstr("'noatime' is a mount option")));
  EXPECT_EQ(o, AllNonDefault());
}

TEST(ApplyOptionListTest, ErrorsNameTheKeyAndChangeNothing) {
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
      {"compressed_percent=30,memroy=1G", {"unknown key 'memroy'", "did you mean 'memory'"}},
      {"compressed_percent=120", {"compressed_percent = 120", "between 0 and 95"}},
      {"compressed_percent=abc", {"compressed_percent = abc", "integer"}},
      {"memory=12XB", {"memory", "unknown unit"}},
      {"memory=-1G", {"memory", "negative"}},
      {"memory", {"memory", "needs a value"}},
      {"allow_other=maybe", {"allow_other", "true/false"}},
      {"attr_timeout=nan", {"attr_timeout", "finite"}},
      {"min_savings_percent=5%", {"min_savings_percent"}},
      {"compressor=LZ4", {"compressor", "lz4"}},
      {"fsname", {"fsname", "needs a value"}},
      {"noatime=1", {"noatime", "takes no value"}},
      {"compression_level=19", {"compression_level = 19", "lz4"}},
  };
  for (const auto& [list, parts] : cases) {
    SCOPED_TRACE(list);
    Options o = AllNonDefault();
    o.compressor = CodecKind::kLz4;
    o.compression_level = 1;
    const Options before = o;
    std::vector<std::string> pass = {"kept"};
    Status s = ApplyOptionList("ro," + list, "-o", &o, &pass);
    ASSERT_FALSE(s.ok());
    EXPECT_THAT(s.message(), StartsWith("-o: "));
    for (const std::string& part : parts) EXPECT_THAT(s.message(), HasSubstr(part));
    EXPECT_EQ(o, before);
    EXPECT_THAT(pass, ElementsAre("kept")) << "a refused list must not hand anything on";
  }
}

TEST(ApplyOptionListTest, OrderOfCompressorAndLevelDoesNotMatter) {
  Options o;
  ASSERT_TRUE(ApplyOptionList("compression_level=19,compressor=zstd", "-o", &o, nullptr).ok());
  EXPECT_EQ(o.compression_level, 19);
  EXPECT_EQ(o.compressor, CodecKind::kZstd);
}

TEST(ApplyOptionListTest, EmptyItemsAreIgnored) {
  Options o;
  ASSERT_TRUE(ApplyOptionList("", "-o", &o, nullptr).ok());
  ASSERT_TRUE(ApplyOptionList(",compressed_percent=5,,", "-o", &o, nullptr).ok());
  EXPECT_EQ(o.compressed_percent, 5);
}

TEST_F(ConfigFileTest, TheFileThenEachOptionListInOrderAndAnErrorChangesNothing) {
  const std::string path =
      Write("c.toml", "[cache]\ncompressed_percent = 40\nmemory = \"64MiB\"\n");
  Options o;
  std::vector<std::string> passthrough;
  ASSERT_TRUE(LoadConfigAndOptionLists(path, {"compressed_percent=30,ro", "compressed_percent=20"},
                                       &o, &passthrough)
                  .ok());
  EXPECT_EQ(o.compressed_percent, 20);
  EXPECT_EQ(o.memory, 64u << 20);
  EXPECT_EQ(passthrough, std::vector<std::string>{"ro"});
  const Options before = o;
  Status s = LoadConfigAndOptionLists(path, {"compressed_percent=10", "nosuch=1"}, &o);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("nosuch"));
  EXPECT_EQ(o, before) << "a refused list changed the options";
}

TEST(ApplyKeyValueTest, AppliesOneKeyAndValidates) {
  Options o;
  ASSERT_TRUE(ApplyKeyValue("compressed_percent", "50", "control", &o).ok());
  EXPECT_EQ(o.compressed_percent, 50);
  Status s = ApplyKeyValue("compressed_percent", "96", "control", &o);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), AllOf(StartsWith("control: "), HasSubstr("compressed_percent = 96")));
  EXPECT_EQ(o.compressed_percent, 50);
  s = ApplyKeyValue("compresed_percent", "5", "control", &o);
  EXPECT_THAT(s.message(), HasSubstr("did you mean 'compressed_percent'"));
}

TEST(ApplyControlTextTest, AppliesLiveLinesSkippingBlanksAndComments) {
  Options o;
  Status s = ApplyControlText("# a comment\n\n  compressed_percent = 40 \ncompressor=zstd\ncompression_level=19\n",
                              ".ccfs/control", &o);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(o.compressed_percent, 40);
  EXPECT_EQ(o.compressor, CodecKind::kZstd);
  EXPECT_EQ(o.compression_level, 19);
  ASSERT_TRUE(ApplyControlText("", ".ccfs/control", &o).ok());
}

TEST(ApplyControlTextTest, EachRefusalNamesFileLineAndKeyAndChangesNothing) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"compressed_percent=40\nnonsense\n", "c:2: \"nonsense\": expected key=value"},
      {"\nbogus=1\n", "c:2: unknown key \"bogus\""},
      {"compressed_percent=40\nmemory=1GiB\n", "c:2: memory cannot change while mounted: needs a remount"},
      {"compressed_percent=500\n", "c:1: compressed_percent = 500: must be between 0 and 95"},
      {"compression_level=19\n", "c:1: compression_level = 19: must be between 1 and 12 for compressor lz4"},
      {"probation=maybe\n", "c:1: probation = maybe: expected true/false, yes/no, on/off or 1/0"},
  };
  for (const auto& [text, message] : cases) {
    Options o = AllNonDefault();
    o.compressor = CodecKind::kLz4;
    o.compression_level = 1;
    const Options before = o;
    Status s = ApplyControlText(text, "c", &o);
    ASSERT_FALSE(s.ok()) << text;
    EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
    EXPECT_EQ(s.message(), message) << text;
    EXPECT_EQ(o, before) << text;
  }
}

TEST(ConfigKeyTest, LiveAndKnownKeys) {
  for (const char* key : {"compressed_percent", "compressor", "compression_level", "min_savings_percent",
                          "admission_filter", "evict_batch_percent", "low_watermark_percent",
                          "probation"}) {
    EXPECT_TRUE(IsLiveKey(key)) << key;
    EXPECT_TRUE(IsKnownKey(key)) << key;
  }
  for (const char* key : {"memory", "page_size", "compress_threads", "request_threads", "pin_threads", "allow_other",
                          "attr_timeout"}) {
    EXPECT_FALSE(IsLiveKey(key)) << key;
    EXPECT_TRUE(IsKnownKey(key)) << key;
  }
  for (const char* key : {"", "noatime", "cache", "Memory", "cache.memory"}) {
    EXPECT_FALSE(IsKnownKey(key)) << key;
    EXPECT_FALSE(IsLiveKey(key)) << key;
  }
}

// --- sizes -------------------------------------------------------------------------------------

TEST(ParseSizeTest, AcceptsBytesAndUnits) {
  const std::vector<std::pair<std::string, uint64_t>> cases = {
      {"0", 0},
      {"8192", 8192},
      {"8K", 8192},
      {"8k", 8192},
      {"8KiB", 8192},
      {"8KB", 8000},
      {"512MiB", 512ull << 20},
      {"512M", 512ull << 20},
      {"3MB", 3000000},
      {"2GiB", 2ull << 30},
      {"2GB", 2000000000},
      {"1TiB", 1ull << 40},
      {"1TB", 1000000000000},
      {"1.5GiB", 3ull << 29},
      {"0.5K", 512},
      {" 64 MiB ", 64ull << 20},
      {"100B", 100},
      {"18446744073709551615", UINT64_MAX},
  };
  for (const auto& [text, bytes] : cases) {
    uint64_t got = 1;
    Status s = ParseSize(text, &got);
    ASSERT_TRUE(s.ok()) << text << ": " << s.message();
    EXPECT_EQ(got, bytes) << text;
  }
}

TEST(ParseSizeTest, RejectsBadSizesWithAReason) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "empty"},
      {"   ", "empty"},
      {"-1", "negative"},
      {"-8KiB", "negative"},
      {"12XB", "unknown unit 'XB'"},
      {"12Kib", ""},  // case-insensitive: accepted; see below
      {"5 MiB junk", "after the number"},
      {"1.2.3", "after the number"},
      {"8K!", "after the number"},
      {"MiB", "not a size"},
      {"1.", "not a size"},
      {"18446744073709551616", "too large"},
      {"16777216TiB", "too large"},
      {"99999999999999999999999", "too large"},
      {"0.1K", "whole number of bytes"},
      {"0x10", "after the number"},
  };
  for (const auto& [text, reason] : cases) {
    uint64_t got = 7;
    Status s = ParseSize(text, &got);
    if (reason.empty()) {
      EXPECT_TRUE(s.ok()) << text;
      continue;
    }
    ASSERT_FALSE(s.ok()) << text;
    EXPECT_THAT(s.message(), HasSubstr(reason)) << text;
    EXPECT_EQ(got, 7u) << text;
  }
}

TEST(FormatSizeTest, UsesTheLargestBinaryUnit) {
  EXPECT_EQ(FormatSize(0), "0B");
  EXPECT_EQ(FormatSize(1000), "1000B");
  EXPECT_EQ(FormatSize(8192), "8KiB");
  EXPECT_EQ(FormatSize(512ull << 20), "512MiB");
  EXPECT_EQ(FormatSize(3ull << 29), "1.5GiB");
  EXPECT_EQ(FormatSize(1ull << 40), "1TiB");
  EXPECT_EQ(FormatSize(1536), "1.5KiB");
}

TEST(FormatSizeTest, ExactValuesParseBack) {
  for (uint64_t bytes : {0ull, 1ull, 4096ull, 8192ull, 3ull << 29, 256ull << 20, 5ull << 40}) {
    uint64_t back = 0;
    ASSERT_TRUE(ParseSize(FormatSize(bytes), &back).ok()) << FormatSize(bytes);
    EXPECT_EQ(back, bytes) << FormatSize(bytes);
  }
}

// --- rendering ---------------------------------------------------------------------------------

TEST(RenderConfigTest, RoundTripsDefaultsAndOddValues) {
  Options odd = AllNonDefault();
  odd.memory = 1000000007;  // not a multiple of any unit
  odd.min_savings_percent = 1.0 / 3.0;
  odd.attr_timeout = 0;
  odd.compression_level = -7;
  for (const Options& original : {Options{}, AllNonDefault(), odd}) {
    std::string text = RenderConfig(original);
    Options back = original == Options{} ? AllNonDefault() : Options{};
    Status s = ParseConfigText(text, "rendered", &back);
    ASSERT_TRUE(s.ok()) << s.message() << "\n" << text;
    EXPECT_EQ(back, original) << text;
  }
}

TEST(RenderConfigTest, EveryKeyAppearsWithAComment) {
  std::string text = RenderConfig(Options{});
  for (const char* key : {"memory", "compressed_percent", "page_size", "compressor", "compression_level",
                          "compress_threads", "min_savings_percent", "admission_filter",
                          "evict_batch_percent", "low_watermark_percent", "probation",
                          "request_threads", "pin_threads", "allow_other", "attr_timeout"}) {
    EXPECT_THAT(text, HasSubstr("\n" + std::string(key) + " = ")) << key;
  }
  EXPECT_THAT(text, HasSubstr("memory = \"256MiB\""));
  EXPECT_THAT(text, HasSubstr("# "));
}

// kernel_demote works only where the daemon chooses which of the kernel's pages leave.
TEST(ApplyOptionListTest, KernelDemoteThatCannotWorkIsRefusedNamingTheKey) {
  std::string m = RefusalOf("kernel_demote=mix");
  EXPECT_NE(m.find("kernel_demote = mix: needs raw_tier = kernel"), std::string::npos) << m;
  m = RefusalOf("raw_tier=kernel,kernel_evict=false,kernel_demote=exclusive");
  EXPECT_NE(m.find("kernel_demote = exclusive: needs kernel_evict = true"), std::string::npos) << m;
  m = RefusalOf("raw_tier=kernel,kernel_demote=always");
  EXPECT_NE(m.find("kernel_demote = always"), std::string::npos) << m;
  EXPECT_EQ(RefusalOf("raw_tier=kernel,kernel_demote=mix"), "");
  EXPECT_EQ(RefusalOf("raw_tier=kernel,kernel_evict=false,kernel_demote=off"), "");
}

// passthrough hands files to the kernel's page cache: there is none in daemon mode.
TEST(ApplyOptionListTest, PassthroughWithoutTheKernelTierIsRefusedNamingTheKey) {
  const std::string m = RefusalOf("raw_tier=daemon,passthrough=true");
  EXPECT_NE(m.find("passthrough = true: needs raw_tier = kernel"), std::string::npos) << m;
  EXPECT_EQ(RefusalOf("raw_tier=kernel,passthrough=true"), "");
  EXPECT_EQ(RefusalOf("raw_tier=daemon,passthrough=false"), "");
}

}  // namespace
}  // namespace ccfs
