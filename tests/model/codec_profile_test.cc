// The codec measurement on pages of known kinds: text compresses and is kept, zero pages are kept
// with no blob, random bytes are not kept.
#include "model/codec_profile.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cache/model_facts.h"
#include "util/rng.h"

namespace ccfs {
namespace {

TEST(MeasureCodec, RatioAndKeptShareFollowTheKindsOfPages) {
  PageSample sample;
  Rng rng(5);
  std::string text;
  while (text.size() < 8192) text += "the quick brown fox jumps over the lazy dog ";
  for (int i = 0; i < 3; ++i) {
    sample.pages.push_back(3 * i);
    sample.data.emplace_back(text.begin(), text.begin() + 8192);  // compresses well
    sample.pages.push_back(3 * i + 1);
    sample.data.emplace_back(8192, 0);  // zero: kept with no blob
    sample.pages.push_back(3 * i + 2);
    std::vector<char> noise(8192);
    for (char& c : noise) c = static_cast<char>(rng.Next());
    sample.data.push_back(noise);  // does not compress: not kept
  }
  for (CodecKind kind : AllCodecKinds()) {
    SCOPED_TRACE(CodecName(kind));
    CodecProfile p;
    Status s = MeasureCodec(sample, kind, 1, 12.5, 0.001, cache::EngineTierCharges(), &p);
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(p.codec, kind);
    EXPECT_DOUBLE_EQ(p.storable_fraction, 2.0 / 3);
    EXPECT_DOUBLE_EQ(p.zero_fraction, 1.0 / 3);
    // The text pages take a blob each, the zero pages their entry; the ratio is over both.
    EXPECT_GT(p.ratio, 10.0);
    EXPECT_GT(p.compress_us, 0);
    EXPECT_GT(p.decompress_us, 0);
  }
  EXPECT_GT(MeasureCopyUs(sample, 0.001), 0);
}

}  // namespace
}  // namespace ccfs
