// The prediction of `ccfs advise`: the admission estimate on streams whose every distance is known,
// the model's refinements (curve, storable share, compression charge) against hand sums, and the
// advice line.
#include "trace/advise.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "util/rng.h"

namespace ccfs {
namespace {

// 0 1 2 3 0 1 2 3 ...: after the first loop every read has distance 3, and so has the next read
// of its page.
ReuseProfile Loop(uint64_t loop, uint64_t rounds) {
  std::vector<uint64_t> reads;
  for (uint64_t r = 0; r < rounds; ++r) {
    for (uint64_t k = 0; k < loop; ++k) reads.push_back(k);
  }
  return ReuseProfile::FromPages(reads, loop, loop);
}

TEST(ReuseProfile, CountsOnlyTheReadsAfterTheWarmUp) {
  ReuseProfile p = Loop(4, 10);
  EXPECT_EQ(p.reads(), 36u);
  EXPECT_EQ(p.distinct_pages(), 4u);
  EXPECT_DOUBLE_EQ(p.curve().HitRatio(4), 1.0);
  EXPECT_DOUBLE_EQ(p.curve().HitRatio(3), 0.0);
}

TEST(ReuseProfile, AdmissionFollowsTheFilter) {
  ReuseProfile p = Loop(4, 10);
  // 2 raw pages: every read (distance 3) leaves the raw tier's reach.
  // Reach 4: each is a compressed hit, promoted in daemon mode (a victim it admits), served
  // without promotion in kernel mode (no stay in the raw tier, so no victim).
  EXPECT_DOUBLE_EQ(p.AdmittedPerRead(2, 4, 0, /*promote=*/true, /*filter=*/true), 1.0);
  EXPECT_DOUBLE_EQ(p.AdmittedPerRead(2, 4, 0, false, true), 0.0);
  // Reach 3: each is a miss, not read again while raw (next distance 3 >= 2); admitted only if
  // the ghost set reaches back that far, or without the filter.
  EXPECT_DOUBLE_EQ(p.AdmittedPerRead(2, 3, 0, true, true), 0.0);
  EXPECT_DOUBLE_EQ(p.AdmittedPerRead(2, 3, 1, true, true), 0.0);  // 3 < 2 + 1 is false
  EXPECT_DOUBLE_EQ(p.AdmittedPerRead(2, 3, 2, true, true), 1.0);
  EXPECT_DOUBLE_EQ(p.AdmittedPerRead(2, 3, 0, true, false), 1.0);
  // 4 raw pages hold the loop: no read leaves the raw tier, nothing is evicted.
  EXPECT_DOUBLE_EQ(p.AdmittedPerRead(4, 4, 100, true, false), 0.0);
}

TEST(ReuseProfile, ReadAgainWhileRawIsAdmitted) {
  // a a b c d e a a b c d e ...: the second a comes straight back (distance 0), so a's stay
  // shows reuse; b..e never do. Warm-up: the first round.
  std::vector<uint64_t> reads;
  for (int r = 0; r < 20; ++r) {
    for (uint64_t k : {0, 0, 1, 2, 3, 4}) reads.push_back(k);
  }
  ReuseProfile p = ReuseProfile::FromPages(reads, 5, 6);
  // 2 raw pages, reach 2 (no compressed tier to hit), no ghost: of each round's six reads, the
  // first a (distance 4) starts a stay that is read again; the second a is a raw hit; b..e start
  // stays that are not.
  EXPECT_NEAR(p.AdmittedPerRead(2, 2, 0, true, true), 1.0 / 6, 1e-3);
  EXPECT_NEAR(p.AdmittedPerRead(2, 2, 0, true, false), 5.0 / 6, 1e-3);
}

ModelInputs Uniform(double c) {
  ModelInputs in;
  in.memory_bytes = 100 * 8192;
  in.page_size = 8192;
  in.dataset_pages = 1000;
  in.compressed_fraction = c;
  in.ratio = 2.0;
  in.dist.kind = DistSpec::Kind::kUniform;
  in.costs.hit_us = 1;
  in.costs.decompress_us = 5;
  in.costs.compress_us = 20;
  in.costs.disk_us = 100;
  return in;
}

TEST(ModelRefinements, StorableShareSpreadsTheCompressedPages) {
  ModelInputs in = Uniform(0.5);
  in.storable_fraction = 0.5;
  ModelResult m = EvaluateModel(in);
  // 50 raw pages; 50 * 2 = 100 compressed pages spread over 200 positions, half of them held.
  EXPECT_DOUBLE_EQ(m.raw_capacity_pages, 50);
  EXPECT_DOUBLE_EQ(m.reach_pages, 250);
  EXPECT_DOUBLE_EQ(m.raw_hit_ratio, 0.05);
  EXPECT_DOUBLE_EQ(m.compressed_hit_ratio, 0.5 * (0.25 - 0.05));
  in.storable_fraction = 0;
  m = EvaluateModel(in);
  EXPECT_DOUBLE_EQ(m.compressed_hit_ratio, 0);
  EXPECT_DOUBLE_EQ(m.hit_ratio, 0.05);
}

TEST(ModelRefinements, CompressionChargeAndCurveReplaceTheThesisOnes) {
  ModelInputs in = Uniform(0.5);
  ModelResult thesis = EvaluateModel(in);
  EXPECT_DOUBLE_EQ(thesis.compressions_per_read, thesis.compressed_hit_ratio + thesis.miss_ratio);
  in.compressions_per_read = 0.1;
  ModelResult charged = EvaluateModel(in);
  EXPECT_DOUBLE_EQ(charged.compress_us_per_buffer, 2.0);
  EXPECT_NEAR(charged.us_per_buffer,
              thesis.us_per_buffer - thesis.compress_us_per_buffer + 2.0, 1e-9);
  // A curve that hits everything beyond 40 pages.
  in.hot_share = [](double pages) { return pages >= 40 ? 1.0 : 0.0; };
  ModelResult curve = EvaluateModel(in);
  EXPECT_DOUBLE_EQ(curve.hit_ratio, 1.0);
  EXPECT_DOUBLE_EQ(curve.raw_hit_ratio, 1.0);
  EXPECT_NEAR(curve.us_per_buffer, 1.0 + 2.0, 1e-9);
  // No compressed tier, no charge, whatever is given.
  in.compressed_fraction = 0;
  EXPECT_DOUBLE_EQ(EvaluateModel(in).compress_us_per_buffer, 0);
}

// Uniform reads over 1000 pages (50000 after a warm-up of 5000), drawn with `seed`.
ReuseProfile UniformOverAThousandPages(uint64_t seed) {
  std::vector<uint64_t> reads;
  Rng rng(seed);
  for (int i = 0; i < 50000; ++i) reads.push_back(rng.Below(1000));
  return ReuseProfile::FromPages(reads, 1000, 5000);
}

// 100 pages of memory over those 1000: compression buys hits in proportion.
AdviseInputs HundredPagesOfAThousand() {
  AdviseInputs in;
  in.memory_bytes = 100 * 8192;
  in.page_size = 8192;
  in.dataset_pages = 1000;
  in.costs.hit_us = 1;
  return in;
}

TEST(Advice, CompressesWhereMissesAreDearAndNotWhereTheyAreCheap) {
  ReuseProfile reuse = UniformOverAThousandPages(2);
  AdviseInputs in = HundredPagesOfAThousand();
  in.costs.trip_us = 0;
  in.codecs = {{CodecKind::kLz4, 1, 2.0, 1.0, 0, 5, 1}, {CodecKind::kZstd, 1, 3.0, 1.0, 0, 20, 3}};
  in.percents = {0, 10, 20, 30, 40, 50, 60, 70, 80, 90};
  UseReuseProfile(reuse, true, &in);
  in.costs.disk_us = 1000;
  std::vector<AdviseRow> rows = PredictSplits(in);
  ASSERT_EQ(rows.size(), 20u);
  EXPECT_EQ(rows[0].percent, 0);
  EXPECT_DOUBLE_EQ(rows[0].model.us_per_buffer, rows[1].model.us_per_buffer) << "C = 0 codec-free";
  EXPECT_NEAR(rows[0].model.hit_ratio, 0.1, 0.01);
  Advice dear = ChooseSplit(rows);
  EXPECT_TRUE(dear.compress);
  EXPECT_EQ(dear.best.codec, CodecKind::kZstd);  // the better ratio, where a miss costs 1 ms
  EXPECT_GT(dear.best.percent, 50);
  EXPECT_EQ(dear.text.rfind("use C=", 0), 0u) << dear.text;
  EXPECT_NE(dear.text.find("x faster than C=0"), std::string::npos) << dear.text;

  in.costs.disk_us = 2;  // a miss barely dearer than a hit: compression cannot pay
  Advice cheap = ChooseSplit(PredictSplits(in));
  EXPECT_FALSE(cheap.compress);
  EXPECT_EQ(cheap.text.rfind("keep C=0: compression does not pay here, best C=", 0), 0u)
      << cheap.text;
}

// The page cache alone: raw_tier = kernel at C = 0 without the trip; and the verdict against it,
// which says yes only beyond the model's error at every miss cost, no when ccfs is not faster.
TEST(Verdict, AgainstThePageCacheAlone) {
  ReuseProfile reuse = UniformOverAThousandPages(3);
  AdviseInputs in = HundredPagesOfAThousand();
  in.costs.kernel_hit_us = 2;
  in.costs.trip_us = 20;
  in.codecs = {{CodecKind::kZstd, 1, 3.0, 1.0, 0, 20, 3}};
  in.percents = {0, 30, 60, 90};
  const std::vector<RawTierMode> both = {RawTierMode::kDaemon, RawTierMode::kKernel};

  Prediction at = PredictConfigurations(in, both, reuse, true, 1000);
  ASSERT_EQ(at.rows.size(), 8u);
  EXPECT_EQ(at.rows[0].raw_tier, RawTierMode::kDaemon);
  EXPECT_EQ(at.rows[4].raw_tier, RawTierMode::kKernel);
  // Kernel mode at C = 0 is the page cache plus one trip per miss.
  const ModelResult& pc = at.page_cache;
  EXPECT_NEAR(pc.hit_ratio, 0.1, 0.01);
  EXPECT_NEAR(pc.us_per_buffer, pc.hit_ratio * 2 + pc.miss_ratio * 1000, 1e-6);
  EXPECT_NEAR(at.rows[4].model.us_per_buffer, pc.us_per_buffer + pc.miss_ratio * 20, 1e-6);

  // Misses of 1 ms: three times the hits from the compressed tier pay, at every miss cost.
  Prediction fast = PredictConfigurations(in, both, reuse, true, 800);
  Prediction slow = PredictConfigurations(in, both, reuse, true, 1500);
  SetErrorBands(fast, slow, &at);
  for (size_t i = 0; i < at.rows.size(); ++i) {
    EXPECT_NEAR(at.rows[i].us_low, fast.rows[i].model.us_per_buffer * (1 - kModelError), 1e-9);
    EXPECT_NEAR(at.rows[i].us_high, slow.rows[i].model.us_per_buffer * (1 + kModelError), 1e-9);
    EXPECT_LT(at.rows[i].us_low, at.rows[i].model.us_per_buffer);
    EXPECT_GT(at.rows[i].us_high, at.rows[i].model.us_per_buffer);
  }
  Verdict dear = JudgeAgainstPageCache(at, fast, slow);
  EXPECT_EQ(dear.kind, Verdict::Kind::kCcfs) << dear.text;
  EXPECT_EQ(dear.best.raw_tier, RawTierMode::kKernel);
  EXPECT_EQ(dear.best.percent, 90);
  EXPECT_LT(dear.ratio, 1 - kModelError);
  EXPECT_EQ(dear.text.rfind("yes: ccfs with raw_tier = kernel, compressed_percent = 90, compressor "
                            "= zstd", 0), 0u) << dear.text;

  // Misses of 3 µs: nothing beats the page cache, whose hits need no trip.
  Prediction cheap = PredictConfigurations(in, both, reuse, true, 3);
  Verdict no = JudgeAgainstPageCache(cheap, cheap, cheap);
  EXPECT_EQ(no.kind, Verdict::Kind::kPageCache) << no.text;
  EXPECT_GE(no.ratio, 1);
  EXPECT_EQ(no.text.rfind("no: use the page cache alone", 0), 0u) << no.text;

  // Faster at the median, but the fastest misses turn it: close, not yes.
  Prediction cheaper = PredictConfigurations(in, both, reuse, true, 3);
  Verdict close = JudgeAgainstPageCache(at, cheaper, slow);
  EXPECT_EQ(close.kind, Verdict::Kind::kClose) << close.text;
  EXPECT_GT(close.ratio_fast, 1);
  EXPECT_EQ(close.text.rfind("close: ", 0), 0u) << close.text;
  EXPECT_STREQ(VerdictName(close.kind), "close");
}

}  // namespace
}  // namespace ccfs
