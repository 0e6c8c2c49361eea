// The model: the thesis's formulas and its oracles, checked on numbers worked by hand.
#include "trace/model.h"

#include <cmath>

#include <gtest/gtest.h>

namespace ccfs {
namespace {

ModelInputs Inputs(double c, double ratio, DistSpec::Kind kind) {
  ModelInputs in;
  in.memory_bytes = 256ull << 20;
  in.page_size = 8192;
  in.dataset_pages = 131072;  // 1 GiB: memory is a quarter of it
  in.compressed_fraction = c;
  in.ratio = ratio;
  in.dist.kind = kind;
  in.costs.hit_us = 1;
  in.costs.decompress_us = 3;
  in.costs.compress_us = 8;
  in.costs.disk_us = 110;
  return in;
}

TEST(Model, UniformHitRatioIsTheCachedFraction) {
  // g(C) = (T(1-C) + T C R) / B / N = 0.25 (0.5 + 0.5 * 2) = 0.375.
  ModelResult m = EvaluateModel(Inputs(0.5, 2.0, DistSpec::Kind::kUniform));
  EXPECT_NEAR(m.hit_ratio, 0.375, 1e-9);
  EXPECT_NEAR(m.raw_hit_ratio, 0.125, 1e-9);
  EXPECT_NEAR(m.compressed_hit_ratio, 0.25, 1e-9);
  // 0.125 * 1 + 0.25 * (3 + 8) + 0.625 * (110 + 8)
  EXPECT_NEAR(m.us_per_buffer, 0.125 + 2.75 + 73.75, 1e-9);
  // Capped at 1 when everything fits.
  EXPECT_NEAR(EvaluateModel(Inputs(0.9, 10.0, DistSpec::Kind::kUniform)).hit_ratio, 1.0, 1e-12);
}

TEST(Model, NoCompressionIsChargedWithoutACompressedTier) {
  ModelResult m = EvaluateModel(Inputs(0.0, 2.0, DistSpec::Kind::kUniform));
  EXPECT_NEAR(m.hit_ratio, 0.25, 1e-9);
  EXPECT_NEAR(m.us_per_buffer, 0.25 * 1 + 0.75 * 110, 1e-9);
}

TEST(Model, ParetoFollowsTheOracle) {
  ModelInputs in = Inputs(0.0, 1.0, DistSpec::Kind::kPareto);
  in.memory_bytes = in.dataset_pages * in.page_size / 5;  // 20% cached -> 80% hits
  EXPECT_NEAR(EvaluateModel(in).hit_ratio, 0.80, 1e-9);
  in.memory_bytes = in.dataset_pages * in.page_size / 100;  // 1% -> 0.01^0.1386
  EXPECT_NEAR(EvaluateModel(in).hit_ratio, std::pow(0.01, std::log(0.8) / std::log(0.2)), 1e-6);
}

}  // namespace
}  // namespace ccfs
