// Options::Validate and the codec names: a bad setting is refused with a message that names the
// key, the value and the allowed range; every value at the edge of a range is accepted.
#include "ccfs/options.h"

#include <zstd.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace ccfs {
namespace {

using ::testing::HasSubstr;

TEST(CodecNameTest, NamesRoundTripThroughParse) {
  for (CodecKind kind : {CodecKind::kLz4, CodecKind::kZstd}) {
    CodecKind parsed = kind == CodecKind::kLz4 ? CodecKind::kZstd : CodecKind::kLz4;
    ASSERT_TRUE(ParseCodecKind(CodecName(kind), &parsed)) << CodecName(kind);
    EXPECT_EQ(parsed, kind);
  }
  EXPECT_STREQ(CodecName(CodecKind::kLz4), "lz4");
  EXPECT_STREQ(CodecName(CodecKind::kZstd), "zstd");
  EXPECT_STREQ(CodecName(static_cast<CodecKind>(7)), "?");
}

TEST(CodecNameTest, ParseRejectsOtherSpellingsAndLeavesKindAlone) {
  for (const char* name : {"LZ4", "Zstd", "", "lz4 ", "gzip", "zst"}) {
    CodecKind kind = CodecKind::kZstd;
    EXPECT_FALSE(ParseCodecKind(name, &kind)) << name;
    EXPECT_EQ(kind, CodecKind::kZstd) << name;
  }
}

TEST(CodecLevelRangeTest, ComesFromTheLibrariesAndBoundsCompressionLevel) {
  EXPECT_EQ(CodecLevelRange(CodecKind::kLz4).min, 1);
  EXPECT_EQ(CodecLevelRange(CodecKind::kLz4).max, 12);
  EXPECT_EQ(CodecLevelRange(CodecKind::kZstd).min, ZSTD_minCLevel());
  EXPECT_EQ(CodecLevelRange(CodecKind::kZstd).max, ZSTD_maxCLevel());
  for (CodecKind kind : AllCodecKinds()) {
    const CodecLevels levels = CodecLevelRange(kind);
    Options o;
    o.compressor = kind;
    for (int level : {levels.min, levels.max}) {
      o.compression_level = level;
      EXPECT_TRUE(o.Validate().ok()) << CodecName(kind) << " " << level;
    }
    for (int level : {levels.min - 1, levels.max + 1}) {
      o.compression_level = level;
      EXPECT_FALSE(o.Validate().ok()) << CodecName(kind) << " " << level;
    }
  }
  Options defaults;
  EXPECT_EQ(defaults.compressor, kDefaultCodec);
  EXPECT_EQ(defaults.compression_level, kDefaultCodecLevel);
}

TEST(OptionsValidateTest, DefaultsAreValid) { EXPECT_TRUE(Options{}.Validate().ok()); }

struct BadCase {
  const char* what;
  std::function<void(Options*)> change;
  std::vector<std::string> message_parts;  // key, value, range
};

TEST(OptionsValidateTest, EachOutOfRangeValueIsRefusedByName) {
  const std::vector<BadCase> cases = {
      {"memory below 1MiB", [](Options* o) { o->memory = 1000; }, {"memory", "1000", "1MiB"}},
      {"memory too small for 16 raw pages",
       [](Options* o) { o->memory = 1 << 20; o->page_size = 131072; },
       {"memory", "1048576", "16 pages", "131072"}},
      {"compressed_percent above 95", [](Options* o) { o->compressed_percent = 96; },
       {"compressed_percent", "96", "between 0 and 95"}},
      {"compressed_percent negative", [](Options* o) { o->compressed_percent = -1; },
       {"compressed_percent", "-1", "between 0 and 95"}},
      {"page_size not a power of two", [](Options* o) { o->page_size = 12288; },
       {"page_size", "12288", "power of two", "4096", "131072"}},
      {"page_size too small", [](Options* o) { o->page_size = 2048; }, {"page_size", "2048"}},
      {"page_size too large", [](Options* o) { o->page_size = 262144; }, {"page_size", "262144"}},
      {"page_size zero", [](Options* o) { o->page_size = 0; }, {"page_size", "0"}},
      {"lz4 level above 12", [](Options* o) { o->compression_level = 13; },
       {"compression_level", "13", "between 1 and 12", "lz4"}},
      {"lz4 level 0", [](Options* o) { o->compression_level = 0; }, {"compression_level", "0", "lz4"}},
      {"zstd level above max",
       [](Options* o) { o->compressor = CodecKind::kZstd; o->compression_level = ZSTD_maxCLevel() + 1; },
       {"compression_level", std::to_string(ZSTD_maxCLevel() + 1), std::to_string(ZSTD_maxCLevel()), "zstd"}},
      {"compress_threads above 256", [](Options* o) { o->compress_threads = 257; },
       {"compress_threads", "257", "between 0 and 256"}},
      {"compress_threads negative", [](Options* o) { o->compress_threads = -1; }, {"compress_threads", "-1"}},
      {"min_savings_percent above 99", [](Options* o) { o->min_savings_percent = 99.5; },
       {"min_savings_percent", "99.5", "between 0 and 99"}},
      {"min_savings_percent negative", [](Options* o) { o->min_savings_percent = -0.5; },
       {"min_savings_percent", "-0.5"}},
      {"min_savings_percent NaN", [](Options* o) { o->min_savings_percent = std::nan(""); },
       {"min_savings_percent", "nan"}},
      {"evict_batch_percent zero", [](Options* o) { o->evict_batch_percent = 0; },
       {"evict_batch_percent", "0", "greater than 0", "50"}},
      {"evict_batch_percent above 50", [](Options* o) { o->evict_batch_percent = 50.5; },
       {"evict_batch_percent", "50.5"}},
      {"low_watermark_percent zero", [](Options* o) { o->low_watermark_percent = 0; },
       {"low_watermark_percent", "0", "greater than 0", "50"}},
      {"low_watermark_percent above 50", [](Options* o) { o->low_watermark_percent = 51; },
       {"low_watermark_percent", "51"}},
      {"request_threads zero", [](Options* o) { o->request_threads = 0; },
       {"request_threads", "0", "between 1 and 64"}},
      {"request_threads above 64", [](Options* o) { o->request_threads = 65; }, {"request_threads", "65"}},
      {"attr_timeout negative", [](Options* o) { o->attr_timeout = -1; }, {"attr_timeout", "-1", ">= 0"}},
      {"attr_timeout infinite",
       [](Options* o) { o->attr_timeout = std::numeric_limits<double>::infinity(); }, {"attr_timeout", "inf"}},
  };
  for (const BadCase& c : cases) {
    SCOPED_TRACE(c.what);
    Options o;
    c.change(&o);
    Status s = o.Validate();
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
    for (const std::string& part : c.message_parts) EXPECT_THAT(s.message(), HasSubstr(part));
  }
}

TEST(OptionsValidateTest, EdgesOfEveryRangeAreAccepted) {
  const std::vector<std::pair<const char*, std::function<void(Options*)>>> cases = {
      {"memory exactly 1MiB", [](Options* o) { o->memory = 1 << 20; }},
      {"raw tier exactly 16 pages",
       [](Options* o) { o->compressed_percent = 0; o->page_size = 65536; o->memory = 16 * 65536; }},
      {"compressed_percent 0", [](Options* o) { o->compressed_percent = 0; }},
      {"compressed_percent 95", [](Options* o) { o->compressed_percent = 95; }},
      {"page_size 4KiB", [](Options* o) { o->page_size = 4096; }},
      {"page_size 128KiB", [](Options* o) { o->page_size = 131072; }},
      {"lz4 level 12", [](Options* o) { o->compression_level = 12; }},
      {"zstd max level",
       [](Options* o) { o->compressor = CodecKind::kZstd; o->compression_level = ZSTD_maxCLevel(); }},
      {"zstd fast level",
       [](Options* o) { o->compressor = CodecKind::kZstd; o->compression_level = -5; }},
      {"compress_threads 256", [](Options* o) { o->compress_threads = 256; }},
      {"min_savings_percent 0", [](Options* o) { o->min_savings_percent = 0; }},
      {"min_savings_percent 99", [](Options* o) { o->min_savings_percent = 99; }},
      {"evict_batch_percent 50", [](Options* o) { o->evict_batch_percent = 50; }},
      {"low_watermark_percent 0.01", [](Options* o) { o->low_watermark_percent = 0.01; }},
      {"request_threads 1", [](Options* o) { o->request_threads = 1; }},
      {"request_threads 64", [](Options* o) { o->request_threads = 64; }},
      {"attr_timeout 0", [](Options* o) { o->attr_timeout = 0; }},
  };
  for (const auto& [what, change] : cases) {
    Options o;
    change(&o);
    Status s = o.Validate();
    EXPECT_TRUE(s.ok()) << what << ": " << s.message();
  }
}

// Kernel mode's read-ahead window: the key, within 1/128 of the kernel's share, not under 32 KiB,
// in whole 4 KiB pages; 0 stays off.
TEST(KernelReadaheadTest, TheKeyWithinTheKernelsShare) {
  Options o;
  o.raw_tier = "kernel";
  o.memory = 2ull << 30;
  o.compressed_percent = 25;
  o.readahead = 2 << 20;
  EXPECT_EQ(o.kernel_readahead(), 2u << 20) << "1.5 GiB raw: the key binds";
  o.memory = 64 << 20;  // 48 MiB raw less 1 MiB of staging: 376 KiB
  EXPECT_NEAR(static_cast<double>(o.kernel_budget()), 47 << 20, 64);
  EXPECT_EQ(o.kernel_readahead(), 376u << 10);
  o.compressed_percent = 90;  // 6.4 MiB raw less 1 MiB: 43.2 KiB, 40 in whole pages
  EXPECT_EQ(o.kernel_readahead(), 40u << 10);
  o.compressed_percent = 25;
  o.memory = 4 << 20;
  EXPECT_EQ(o.kernel_readahead(), 32u << 10) << "the floor";
  o.memory = 1ull << 30;
  o.readahead = 64 << 10;
  EXPECT_EQ(o.kernel_readahead(), 64u << 10) << "a smaller key stands";
  o.readahead = (64 << 10) + 100;
  EXPECT_EQ(o.kernel_readahead(), 64u << 10) << "whole pages";
  o.readahead = 0;
  EXPECT_EQ(o.kernel_readahead(), 8u << 10) << "nothing ahead: one page per request, not 4 KiB";
  o.page_size = 16384;
  EXPECT_EQ(o.kernel_readahead(), 16u << 10);
}

}  // namespace
}  // namespace ccfs
