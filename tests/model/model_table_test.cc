// `ccfs model`'s table: what is not given is the thesis's for the codec (the trip the one assumed,
// a kernel hit a raw hit's), what is given wins, and each split is EvaluateModel's.
#include "model/model_table.h"

#include <gtest/gtest.h>

namespace ccfs {
namespace {

ModelRequest Request() {
  ModelRequest r;
  r.memory_bytes = 256ull << 20;
  r.page_size = 8192;
  r.dataset_pages = 131072;
  r.codec = CodecKind::kZstd;
  r.assumed_trip_us = 18;
  return r;
}

TEST(ModelTableTest, DefaultsAreTheThesisFiguresForTheCodec) {
  ModelReport report = RunModel(Request());
  const ModelInputs& in = report.inputs;
  const PathCosts thesis = ThesisCosts(CodecKind::kZstd);
  EXPECT_DOUBLE_EQ(in.ratio, ThesisRatio(CodecKind::kZstd));
  EXPECT_DOUBLE_EQ(in.costs.compress_us, thesis.compress_us);
  EXPECT_DOUBLE_EQ(in.costs.decompress_us, thesis.decompress_us);
  EXPECT_DOUBLE_EQ(in.costs.disk_us, thesis.disk_us);
  EXPECT_DOUBLE_EQ(in.costs.trip_us, 18);
  EXPECT_DOUBLE_EQ(in.costs.kernel_hit_us, in.costs.hit_us);
  ASSERT_EQ(report.rows.size(), 10u);  // 0, 10, ..., 90
  EXPECT_EQ(report.rows.front().percent, 0);
  EXPECT_EQ(report.rows.back().percent, 90);
}

TEST(ModelTableTest, GivenFiguresWinAndAKernelHitDefaultsToTheGivenRawHit) {
  ModelRequest r = Request();
  r.ratio = 4;
  r.hit_us = 2.5;
  r.trip_us = 0;
  r.raw_tier = RawTierMode::kKernel;
  ModelReport report = RunModel(r);
  EXPECT_DOUBLE_EQ(report.inputs.ratio, 4);
  EXPECT_DOUBLE_EQ(report.inputs.costs.hit_us, 2.5);
  EXPECT_DOUBLE_EQ(report.inputs.costs.trip_us, 0);
  EXPECT_DOUBLE_EQ(report.inputs.costs.kernel_hit_us, 2.5);
  r.kernel_hit_us = 7;
  EXPECT_DOUBLE_EQ(RunModel(r).inputs.costs.kernel_hit_us, 7);
}

TEST(ModelTableTest, EachRowIsTheModelAtItsSplit) {
  ModelRequest r = Request();
  r.percents = {75, 25};
  r.replacement = Replacement::kFifo;
  ModelReport report = RunModel(r);
  EXPECT_EQ(report.inputs.raw_replacement, Replacement::kFifo);
  EXPECT_EQ(report.inputs.cache_replacement, Replacement::kLru);  // below a FIFO raw level
  ASSERT_EQ(report.rows.size(), 2u);
  for (const ModelRow& row : report.rows) {
    ModelInputs in = report.inputs;
    in.compressed_fraction = row.percent / 100.0;
    ModelResult want = EvaluateModel(in);
    EXPECT_DOUBLE_EQ(row.result.hit_ratio, want.hit_ratio) << row.percent;
    EXPECT_DOUBLE_EQ(row.result.us_per_buffer, want.us_per_buffer) << row.percent;
  }
  EXPECT_EQ(report.rows[0].percent, 75);
  EXPECT_NE(report.rows[0].result.hit_ratio, report.rows[1].result.hit_ratio);
}

}  // namespace
}  // namespace ccfs
