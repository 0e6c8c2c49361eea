// The model: the thesis's formulas and its oracles, checked on numbers worked by hand; the FUSE
// trip charged per path as each raw-tier mode routes reads; `ccfs model`'s transport flags.
#include "model/cache_model.h"

#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "testing/command.h"

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

// A phase-change trace: each law's steady state, weighted by the operations it covers.
TEST(Model, PhasedModelWeighsEachLawByItsOperations) {
  ModelInputs in = Inputs(0.0, 1.0, DistSpec::Kind::kUniform);
  in.memory_bytes = in.dataset_pages * in.page_size / 5;
  DistSpec uniform, pareto;
  uniform.kind = DistSpec::Kind::kUniform;
  pareto.kind = DistSpec::Kind::kPareto;
  const std::vector<DistSpec> laws = {uniform, pareto};
  ModelInputs p = in;
  p.dist = pareto;
  const ModelResult u = EvaluateModel(in), q = EvaluateModel(p);
  EXPECT_NEAR(u.hit_ratio, 0.20, 1e-9);
  EXPECT_NEAR(q.hit_ratio, 0.80, 1e-9);
  // Ops 50..300 with phases of 100: 50 + 100 uniform (phases 0 and 2), 100 pareto (phase 1).
  ModelResult m = EvaluatePhasedModel(in, laws, 100, 50, 300);
  EXPECT_NEAR(m.hit_ratio, (150 * 0.20 + 100 * 0.80) / 250, 1e-9);
  EXPECT_NEAR(m.us_per_buffer, (150 * u.us_per_buffer + 100 * q.us_per_buffer) / 250, 1e-9);
  EXPECT_NEAR(m.capacity_fraction, u.capacity_fraction, 1e-12);
  // Inside one phase it is that phase's law, whatever the first law is.
  EXPECT_NEAR(EvaluatePhasedModel(in, laws, 100, 120, 180).hit_ratio, 0.80, 1e-9);
  // No phases: the first law.
  EXPECT_NEAR(EvaluatePhasedModel(in, laws, 0, 0, 300).hit_ratio, 0.20, 1e-9);
}

// The thesis's sum as the model computed it before it had a transport, kept here verbatim as the
// reference: with no trip the model must give these numbers bit for bit.
double ThesisUsPerBuffer(const ModelInputs& in, const ModelResult& m) {
  const double compress = in.compressed_fraction > 0 ? in.costs.compress_us : 0.0;
  return m.raw_hit_ratio * in.costs.hit_us +
         m.compressed_hit_ratio * (in.costs.decompress_us + compress) +
         m.miss_ratio * (in.costs.disk_us + compress);
}

TEST(ModelTransport, NoTripReproducesTheThesisExactly) {
  for (DistSpec::Kind kind :
       {DistSpec::Kind::kUniform, DistSpec::Kind::kPareto, DistSpec::Kind::kZipf}) {
    for (double c : {0.0, 0.1, 0.25, 0.5, 0.8, 0.95}) {
      for (double ratio : {1.0, 1.8, 2.97}) {
        ModelInputs in = Inputs(c, ratio, kind);
        in.dist.theta = 0.9;
        in.costs.kernel_hit_us = 123;  // daemon mode has no kernel hits: never charged
        ASSERT_EQ(in.costs.trip_us, 0.0);
        ModelResult m = EvaluateModel(in);
        EXPECT_EQ(m.us_per_buffer, ThesisUsPerBuffer(in, m)) << "C " << c << " R " << ratio;
        EXPECT_EQ(m.trip_us_per_buffer, 0.0);
      }
    }
  }
  // The thesis's own costs carry no trip.
  EXPECT_EQ(ThesisCosts(CodecKind::kLz4).trip_us, 0.0);
  EXPECT_EQ(ThesisCosts(CodecKind::kZstd).trip_us, 0.0);
}

// Memory to hold every page raw, none, or a share, so that one path at a time carries the reads.
TEST(ModelTransport, DaemonModeChargesTheTripOnEveryPath) {
  ModelInputs in = Inputs(0.0, 2.0, DistSpec::Kind::kUniform);
  in.costs.trip_us = 20;
  in.costs.kernel_hit_us = 0.5;  // not charged in daemon mode
  in.memory_bytes = in.dataset_pages * in.page_size;  // all raw hits
  ModelResult m = EvaluateModel(in);
  EXPECT_NEAR(m.raw_hit_ratio, 1.0, 1e-12);
  EXPECT_NEAR(m.us_per_buffer, 1 + 20, 1e-9);
  EXPECT_NEAR(m.trip_us_per_buffer, 20, 1e-9);
  in.memory_bytes = 0;  // all misses
  m = EvaluateModel(in);
  EXPECT_NEAR(m.miss_ratio, 1.0, 1e-12);
  EXPECT_NEAR(m.us_per_buffer, 110 + 20, 1e-9);
  // Half compressed, uniform: 0.125 raw, 0.25 compressed, 0.625 missed, each with its trip.
  in = Inputs(0.5, 2.0, DistSpec::Kind::kUniform);
  in.costs.trip_us = 20;
  m = EvaluateModel(in);
  EXPECT_NEAR(m.us_per_buffer, 0.125 * (1 + 20) + 0.25 * (3 + 8 + 20) + 0.625 * (110 + 8 + 20),
              1e-9);
  EXPECT_NEAR(m.trip_us_per_buffer, 20, 1e-9);
}

TEST(ModelTransport, KernelModeRawHitsPayNoTrip) {
  ModelInputs in = Inputs(0.0, 2.0, DistSpec::Kind::kUniform);
  in.raw_tier = RawTierMode::kKernel;
  in.costs.trip_us = 20;
  in.costs.kernel_hit_us = 2.5;
  in.costs.hit_us = 1000;  // the daemon's raw hit is not what a kernel hit costs
  in.memory_bytes = in.dataset_pages * in.page_size;  // all raw hits: the kernel answers them
  ModelResult m = EvaluateModel(in);
  EXPECT_NEAR(m.us_per_buffer, 2.5, 1e-9);
  EXPECT_NEAR(m.trip_us_per_buffer, 0, 1e-12);
  in.memory_bytes = 0;  // all misses: each reaches the daemon
  m = EvaluateModel(in);
  EXPECT_NEAR(m.us_per_buffer, 110 + 20, 1e-9);
  // The kernel holds the raw share T(1 - C): the hit ratios are daemon mode's; compressed hits
  // and misses pay the trip, raw hits the kernel's cost.
  in = Inputs(0.5, 2.0, DistSpec::Kind::kUniform);
  in.costs.trip_us = 20;
  in.costs.kernel_hit_us = 2.5;
  ModelResult daemon = EvaluateModel(in);
  in.raw_tier = RawTierMode::kKernel;
  m = EvaluateModel(in);
  EXPECT_EQ(m.hit_ratio, daemon.hit_ratio);
  EXPECT_EQ(m.raw_hit_ratio, daemon.raw_hit_ratio);
  EXPECT_NEAR(m.us_per_buffer, 0.125 * 2.5 + 0.25 * (3 + 8 + 20) + 0.625 * (110 + 8 + 20), 1e-9);
  EXPECT_NEAR(m.trip_us_per_buffer, (0.25 + 0.625) * 20, 1e-9);
}

// compress_share: the share of each compression the reader pays beyond the paths' costs.
TEST(ModelTransport, CompressionIsChargedAtItsShare) {
  ModelInputs in = Inputs(0.5, 2.0, DistSpec::Kind::kUniform);
  in.compress_share = 0;  // replay: the paths' measured means hold it
  ModelResult m = EvaluateModel(in);
  EXPECT_NEAR(m.us_per_buffer, 0.125 * 1 + 0.25 * 3 + 0.625 * 110, 1e-9);
  EXPECT_EQ(m.compress_us_per_buffer, 0.0);
  EXPECT_NEAR(m.compressions_per_read, 0.875, 1e-12);  // still counted, not charged
  in.compress_share = 0.5;
  in.compressions_per_read = 0.3;  // a measured rate
  m = EvaluateModel(in);
  EXPECT_NEAR(m.compress_us_per_buffer, 0.3 * 0.5 * 8, 1e-12);
  EXPECT_NEAR(m.us_per_buffer, 0.125 * 1 + 0.25 * 3 + 0.625 * 110 + 1.2, 1e-9);
}

// raw_pages: the raw level counted where the kernel holds it, instead of the raw share.
TEST(ModelTransport, AMeasuredRawLevelReplacesTheRawShare) {
  ModelInputs in = Inputs(0.5, 2.0, DistSpec::Kind::kUniform);  // memory a quarter of the data set
  in.raw_tier = RawTierMode::kKernel;
  in.costs.trip_us = 20;
  in.costs.kernel_hit_us = 2.5;
  const ModelResult share = EvaluateModel(in);
  EXPECT_NEAR(share.raw_capacity_pages, 16384, 1e-9);
  // The kernel held 24576 pages: 0.1875 raw hits; the compressed level still reaches 32768 more.
  in.raw_pages = 24576;
  ModelResult m = EvaluateModel(in);
  EXPECT_NEAR(m.raw_capacity_pages, 24576, 1e-9);
  EXPECT_NEAR(m.compressed_capacity_pages, share.compressed_capacity_pages, 1e-9);
  EXPECT_NEAR(m.raw_hit_ratio, 0.1875, 1e-9);
  EXPECT_NEAR(m.hit_ratio, 0.4375, 1e-9);
  EXPECT_NEAR(m.us_per_buffer, 0.1875 * 2.5 + 0.25 * (3 + 8 + 20) + 0.5625 * (110 + 8 + 20), 1e-9);
  // Never beyond the data set.
  in.raw_pages = 1e9;
  EXPECT_NEAR(EvaluateModel(in).raw_hit_ratio, 1.0, 1e-12);
}

TEST(ModelTransport, RawTierNames) {
  RawTierMode mode = RawTierMode::kDaemon;
  ASSERT_TRUE(ParseRawTierMode("kernel", &mode));
  EXPECT_EQ(mode, RawTierMode::kKernel);
  EXPECT_STREQ(RawTierModeName(mode), "kernel");
  ASSERT_TRUE(ParseRawTierMode("daemon", &mode));
  EXPECT_EQ(mode, RawTierMode::kDaemon);
  EXPECT_STREQ(RawTierModeName(mode), "daemon");
  EXPECT_FALSE(ParseRawTierMode("Kernel", &mode));
  EXPECT_FALSE(ParseRawTierMode("", &mode));
  EXPECT_EQ(mode, RawTierMode::kDaemon);
}

// `ccfs model`: the transport flags reach the model, and a bad value is refused naming the flag.
TEST(ModelCommand, TransportFlags) {
  const std::vector<std::string> base = {"model", "--dataset-size", "1GiB", "--memory", "256MiB",
                                         "--compressed-percent", "50", "--json"};
  auto run = [&](const std::vector<std::string>& extra) {
    std::vector<std::string> args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    return testing::RunCcfs(args);
  };
  auto us = [](const testing::CommandResult& r) {
    return nlohmann::json::parse(r.out)["rows"][0]["us_per_buffer"].get<double>();
  };
  testing::CommandResult none = run({"--trip-us", "0"});
  ASSERT_EQ(none.exit_code, 0) << none.output;
  testing::CommandResult daemon = run({"--trip-us", "20"});
  ASSERT_EQ(daemon.exit_code, 0) << daemon.output;
  EXPECT_NEAR(us(daemon), us(none) + 20, 1e-6);
  nlohmann::json j = nlohmann::json::parse(daemon.out);
  EXPECT_EQ(j["raw_tier"], "daemon");
  EXPECT_EQ(j["costs_us"]["trip"].get<double>(), 20.0);
  EXPECT_TRUE(j["costs_us"]["kernel_hit"].is_null());
  // Kernel mode, lz4's thesis costs, uniform: 0.125 raw hits at the kernel's 3 µs, the rest with
  // the trip, as in daemon mode.
  testing::CommandResult kernel = run({"--trip-us", "20", "--raw-tier", "kernel",
                                       "--kernel-hit-us", "3", "--dist", "uniform"});
  ASSERT_EQ(kernel.exit_code, 0) << kernel.output;
  const double lz4_r = 2.13, raw = 0.125, comp = 0.125 * lz4_r;
  EXPECT_NEAR(us(kernel), raw * 3 + comp * (1 + 2 + 20) + (1 - raw - comp) * (110 + 2 + 20), 1e-6);
  EXPECT_EQ(nlohmann::json::parse(kernel.out)["costs_us"]["kernel_hit"].get<double>(), 3.0);

  // Unless given, the trip and the law are those `ccfs advise` assumes (and replay runs).
  testing::CommandResult defaults = run({});
  ASSERT_EQ(defaults.exit_code, 0) << defaults.output;
  nlohmann::json d = nlohmann::json::parse(defaults.out);
  EXPECT_EQ(d["costs_us"]["trip"].get<double>(), 18.0);
  EXPECT_EQ(d["dist"].get<std::string>().rfind("pareto", 0), 0u) << d["dist"];
  EXPECT_EQ(d["page_size"], 8192);
  testing::CommandResult zstd = run({"--compressor", "zstd", "--trip-us", "0"});
  ASSERT_EQ(zstd.exit_code, 0) << zstd.output;
  EXPECT_NE(us(zstd), us(none)) << "--compressor picks the codec's costs and ratio";

  // The per-path costs by their names and by the older --t-* spellings; 0 is a cost like any other.
  for (const char* flag : {"--disk-us", "--t-disk"}) {
    testing::CommandResult disk =
        run({flag, "0", "--hit-us", "0", "--decompress-us", "0", "--compress-us", "0",
             "--trip-us", "0"});
    ASSERT_EQ(disk.exit_code, 0) << disk.output;
    EXPECT_EQ(nlohmann::json::parse(disk.out)["costs_us"]["disk"].get<double>(), 0.0) << flag;
    EXPECT_NEAR(us(disk), 0.0, 1e-9) << flag;
  }

  for (const auto& [extra, mention] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"--trip-us", "-1"}, "--trip-us -1: must be"},
           {{"--trip-us", "inf"}, "--trip-us inf: must be"},
           {{"--trip-us", "lots"}, "--trip-us"},
           {{"--raw-tier", "cloud"}, "--raw-tier cloud: daemon or kernel"},
           {{"--kernel-hit-us", "2"}, "--kernel-hit-us: only --raw-tier kernel"},
           {{"--raw-tier", "kernel", "--kernel-hit-us", "-3"}, "--kernel-hit-us -3: must be"},
           {{"--disk-us", "-5"}, "--disk-us -5: must be"},
           {{"--t-disk", "-5"}, "--disk-us -5: must be"},
           {{"--hit-us", "nan"}, "--hit-us nan: must be"},
           {{"--decompress-us", "-1"}, "--decompress-us -1: must be"},
           {{"--compress-us", "-1"}, "--compress-us -1: must be"},
           {{"--ratio", "0"}, "--ratio 0: must be 1 or more"},
           {{"--ratio", "-2"}, "--ratio -2: must be 1 or more"}}) {
    testing::CommandResult r = run(extra);
    EXPECT_NE(r.exit_code, 0) << extra[0] << " " << extra[1];
    EXPECT_LT(r.exit_code, 128) << r.output;
    EXPECT_NE(r.output.find(mention), std::string::npos) << r.output;
  }
}

}  // namespace
}  // namespace ccfs
