#include "cache/split_tuner.h"

#include <fcntl.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "ccfs/backing_store.h"
#include "ccfs/config.h"
#include "ccfs/page_cache.h"
#include "cache/engine_files.h"

namespace ccfs::cache {
namespace {

std::vector<PageCache::CurvePoint> UniformCurve(uint64_t dataset_pages, uint64_t memory_pages) {
  // An LRU cache of k pages under uniform reads over N pages hits k / N.
  std::vector<PageCache::CurvePoint> curve;
  for (uint64_t k = memory_pages / 64; k <= 4 * memory_pages; k *= 2) {
    curve.push_back({k, std::min(1.0, static_cast<double>(k) / dataset_pages)});
  }
  return curve;
}

TEST(SplitTunerTest, CurveIsReadLogLinearFlatBeyondAndItsMissesScaled) {
  std::vector<PageCache::CurvePoint> curve = {{16, 0.2}, {64, 0.6}, {256, 0.9}};
  EXPECT_DOUBLE_EQ(CurveHitRatio(curve, 1, 0), 0);
  EXPECT_DOUBLE_EQ(CurveHitRatio(curve, 1, 8), 0.1) << "linear from 0 below the first point";
  EXPECT_DOUBLE_EQ(CurveHitRatio(curve, 1, 16), 0.2);
  EXPECT_NEAR(CurveHitRatio(curve, 1, 32), 0.4, 1e-12) << "halfway in log between 16 and 64";
  EXPECT_DOUBLE_EQ(CurveHitRatio(curve, 1, 4096), 0.9) << "flat beyond the last point";
  EXPECT_NEAR(CurveHitRatio(curve, 0.5, 64), 0.8, 1e-12) << "half the misses";
  EXPECT_NEAR(CurveHitRatio(curve, 2, 16), 0.0, 1e-12) << "twice the misses, clamped at 0";
  EXPECT_DOUBLE_EQ(CurveHitRatio(curve, 0, 16), 1.0) << "no misses";
}

TEST(SplitTunerTest, VictimSampleKeepsOneInSixteenWithinItsBytes) {
  EXPECT_EQ(VictimSample::SlotsFor(8192), 64u);
  EXPECT_EQ(VictimSample::SlotsFor(16384), 32u);
  EXPECT_EQ(VictimSample::SlotsFor(131072), 16u) << "at least 16 pages to measure codecs on";
  VictimSample sample(16384);
  std::vector<char> page(16384);
  for (uint32_t i = 0; i < 16 * 100; ++i) {
    page[0] = static_cast<char>(i / 16);
    sample.Offer(page.data(), 16384);
  }
  std::vector<std::vector<char>> kept = sample.Take();
  ASSERT_EQ(kept.size(), 32u) << "100 offered copies, 32 kept";
  std::vector<int> firsts;
  for (const auto& p : kept) firsts.push_back(static_cast<unsigned char>(p[0]));
  std::sort(firsts.begin(), firsts.end());
  EXPECT_EQ(firsts.front(), 68) << "the newest 32 of 0..99";
  EXPECT_EQ(firsts.back(), 99);
}

LiveInputs Inputs(double ratio, double storable, double miss_us) {
  LiveInputs in;
  in.memory_bytes = 1024 * 8192;
  in.page_size = 8192;
  in.curve = UniformCurve(2048, 1024);  // data twice the memory
  in.raw_hit_us = 1;
  in.miss_us = miss_us;
  CodecProfile lz4;
  lz4.codec = CodecKind::kLz4;
  lz4.ratio = ratio;
  lz4.storable_fraction = storable;
  lz4.compress_us = 3;
  lz4.decompress_us = 1;
  CodecProfile zstd = lz4;
  zstd.codec = CodecKind::kZstd;
  zstd.ratio = ratio * 1.4;
  zstd.compress_us = 20;
  zstd.decompress_us = 4;
  in.codecs = {lz4, zstd};
  Options o;
  o.memory = in.memory_bytes;
  in.percents = CandidatePercents(o);
  return in;
}

const AdviseRow& Best(const std::vector<AdviseRow>& rows) {
  const AdviseRow* best = &rows.front();
  for (const AdviseRow& r : rows) {
    if (r.model.us_per_buffer < best->model.us_per_buffer) best = &r;
  }
  return *best;
}

// The victims are the pages entering the raw tier, misses and promotions; with a compressed tier
// holding what it keeps, the misses are mostly of pages it cannot keep.
TEST(SplitTunerTest, KeptShareIsTakenBackFromTheVictimsToTheReads) {
  TunerWindow w;
  EXPECT_DOUBLE_EQ(ReadsKeptFraction(0.75, w), 0.75) << "no reads: the victims' share";
  w.misses = 310;
  EXPECT_DOUBLE_EQ(ReadsKeptFraction(0.75, w), 0.75) << "no compressed hit (C = 0): the same";
  // raw_tier = kernel: no promotions. 690 compressed hits (kept pages), 310 misses of which 3/4
  // kept: 922.5 of 1000 reads' pages kept.
  w.compressed_hits = 690;
  EXPECT_DOUBLE_EQ(ReadsKeptFraction(0.75, w), 0.9225);
  // raw_tier = daemon: 200 of the 510 victims were promotions, all kept; the misses' kept share
  // is what the other victims leave: 0.75 * 510 - 200 = 182.5 of 310.
  w.promotions = 200;
  EXPECT_NEAR(ReadsKeptFraction(0.75, w), (690 + 182.5) / 1000, 1e-12);
  // Never below the victims' share, nor above 1.
  w.promotions = 0;
  EXPECT_DOUBLE_EQ(ReadsKeptFraction(1.0, w), 1.0);
  EXPECT_DOUBLE_EQ(ReadsKeptFraction(0.0, w), 0.69);
}

TEST(SplitTunerTest, PredictionFavoursCompressionOnlyWhereItPays) {
  // Compressible data twice the memory, dear misses: a large split fits it all.
  std::vector<AdviseRow> rows = PredictLive(Inputs(3.0, 1.0, 200));
  EXPECT_GE(Best(rows).percent, 50);
  EXPECT_GT(Best(rows).model.hit_ratio, 0.9);
  // Pages that do not compress: the compressed tier holds nothing, C = 0 is best.
  rows = PredictLive(Inputs(1.0, 0.0, 200));
  EXPECT_EQ(Best(rows).percent, 0);
  // Misses as cheap as a decompression: compressing cannot pay for itself.
  rows = PredictLive(Inputs(3.0, 1.0, 0.5));
  EXPECT_EQ(Best(rows).percent, 0);
}

// raw_tier = kernel in a memory cgroup of `memory`: the kernel's share is what the cgroup leaves
// beside the daemon's own memory (here 30% of it) and its compressed tier, so the raw level of a
// split with a compressed tier is smaller than its budget, and the prediction says so.
TEST(SplitTunerTest, KernelShareSqueezedByTheCgroupIsPredictedAsSuch) {
  LiveInputs in = Inputs(3.0, 1.0, 200);
  in.raw_tier = RawTierMode::kKernel;
  in.trip_us = 20;
  const std::vector<AdviseRow> free_rows = PredictLive(in);
  auto squeezed = [](int percent) { return std::max(0.0, 1024 * (0.7 - percent / 100.0)); };
  in.raw_pages_at = squeezed;
  const std::vector<AdviseRow> rows = PredictLive(in);
  ASSERT_EQ(rows.size(), free_rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_DOUBLE_EQ(rows[i].model.raw_capacity_pages, squeezed(rows[i].percent));
    // Fewer of the reads are the kernel's: more of them pay a trip.
    EXPECT_LT(rows[i].model.raw_hit_ratio, free_rows[i].model.raw_hit_ratio) << rows[i].percent;
    EXPECT_GT(rows[i].model.us_per_buffer, free_rows[i].model.us_per_buffer) << rows[i].percent;
  }
}

TEST(SplitTunerTest, CandidatesLeaveTheRawTierItsPagesAndIncludeTheCurrentSplit) {
  Options o;
  o.memory = 40 * 8192;
  o.compressed_percent = 33;
  std::vector<int> p = CandidatePercents(o);
  EXPECT_EQ(p.front(), 0);
  EXPECT_NE(std::find(p.begin(), p.end(), 33), p.end());
  for (int c : p) {
    Options t = o;
    t.compressed_percent = c;
    EXPECT_GE(t.raw_share(), 16u * 8192) << c;
  }
  EXPECT_LT(p.back(), 90) << "90% of 40 pages leaves 4 raw pages";
}

// Under raw_tier = kernel the daemon holds the compressed tier: auto may reach only the splits a
// mount would have been allowed in the memory cgroup it runs in. The daemon's raw tier holds all
// of memory at every split, so there the cgroup does not cut the candidates.
TEST(SplitTunerTest, CandidatesUnderTheKernelTierFitTheMemoryCgroup) {
  Options o;
  o.memory = 64ull << 20;
  o.compressed_percent = 50;
  o.raw_tier = "kernel";
  HostMemory host;
  host.cgroup_limit_bytes = 64ull << 20;
  std::vector<int> p = CandidatePercents(o, host);
  ASSERT_FALSE(p.empty());
  EXPECT_NE(std::find(p.begin(), p.end(), 50), p.end());
  EXPECT_LT(p.back(), 90) << "at 90 the daemon's tiers and its own memory exceed 64 MiB";
  for (int c : p) {
    Options t = o;
    t.compressed_percent = c;
    EXPECT_TRUE(CheckMemoryFits(t, host).ok()) << c;
  }
  Options roomy = o;
  roomy.memory = 32ull << 20;
  EXPECT_EQ(CandidatePercents(roomy, host).back(), 90) << "every split fits twice the memory";
  Options daemon = o;
  daemon.raw_tier = "daemon";
  daemon.memory = 40ull << 20;
  EXPECT_EQ(CandidatePercents(daemon, host).back(), 90);
}

std::vector<AdviseRow> Rows(std::initializer_list<std::tuple<int, CodecKind, double>> list) {
  std::vector<AdviseRow> rows;
  for (auto [percent, codec, us] : list) {
    AdviseRow r;
    r.percent = percent;
    r.codec = codec;
    r.model.us_per_buffer = us;
    rows.push_back(r);
  }
  return rows;
}

TEST(SplitTunerTest, DeciderWaitsForAgreementAndMovesByBoundedSteps) {
  Options o;
  o.compressed_percent = 0;
  o.compressed_percent_auto = true;
  o.auto_max_step = 10;
  const auto rows = Rows({{0, CodecKind::kLz4, 100}, {0, CodecKind::kZstd, 100},
                          {40, CodecKind::kLz4, 60}, {40, CodecKind::kZstd, 50}});
  SplitDecider d;
  SplitDecider::Decision first = d.Decide(rows, o);
  EXPECT_FALSE(first.change) << "one decision is not enough";
  ASSERT_NE(first.best, nullptr);
  EXPECT_EQ(first.best->percent, 40);
  EXPECT_EQ(first.best->codec, CodecKind::kLz4) << "the codec is not under auto";
  SplitDecider::Decision second = d.Decide(rows, o);
  EXPECT_TRUE(second.change);
  EXPECT_EQ(second.percent, 10) << "at most auto_max_step points at a time";
  EXPECT_EQ(second.codec, CodecKind::kLz4);

  // Both keys under auto: zstd at 40%.
  o.compressor_auto = true;
  SplitDecider both;
  both.Decide(rows, o);
  SplitDecider::Decision c = both.Decide(rows, o);
  EXPECT_TRUE(c.change);
  EXPECT_EQ(c.codec, CodecKind::kZstd);

  // A recommendation that flips from one side of the split in force to the other never agrees
  // with itself: no change.
  SplitDecider flip;
  o.compressor_auto = false;
  o.compressed_percent = 40;
  const auto below = Rows({{20, CodecKind::kLz4, 50}, {40, CodecKind::kLz4, 100}, {60, CodecKind::kLz4, 60}});
  const auto above = Rows({{20, CodecKind::kLz4, 60}, {40, CodecKind::kLz4, 100}, {60, CodecKind::kLz4, 50}});
  EXPECT_FALSE(flip.Decide(below, o).change);
  EXPECT_FALSE(flip.Decide(above, o).change);
  EXPECT_FALSE(flip.Decide(below, o).change);

  // One that flickers between neighbours on the same side agrees: it moves towards the latest.
  SplitDecider flicker;
  o.auto_max_step = 20;
  const auto at60 = Rows({{40, CodecKind::kLz4, 100}, {60, CodecKind::kLz4, 50}, {80, CodecKind::kLz4, 51}});
  const auto at80 = Rows({{40, CodecKind::kLz4, 100}, {60, CodecKind::kLz4, 51}, {80, CodecKind::kLz4, 50}});
  EXPECT_FALSE(flicker.Decide(at60, o).change);
  SplitDecider::Decision up = flicker.Decide(at80, o);
  EXPECT_TRUE(up.change);
  EXPECT_EQ(up.percent, 60) << "towards 80, at most auto_max_step points";
}

TEST(SplitTunerTest, DeciderKeepsASplitThatIsWithinTheMargin) {
  Options o;
  o.compressed_percent = 20;
  o.compressed_percent_auto = true;
  const auto rows = Rows({{0, CodecKind::kLz4, 101}, {20, CodecKind::kLz4, 100},
                          {40, CodecKind::kLz4, 98}});  // 2% better: inside kMinGain
  SplitDecider d;
  for (int i = 0; i < 5; ++i) EXPECT_FALSE(d.Decide(rows, o).change);
  // A fixed key is never changed, whatever the prediction.
  o.compressed_percent_auto = false;
  const auto far = Rows({{0, CodecKind::kLz4, 500}, {20, CodecKind::kLz4, 100}, {40, CodecKind::kLz4, 10}});
  for (int i = 0; i < 5; ++i) EXPECT_FALSE(d.Decide(far, o).change);
}

CodecProfile Profile(double ratio, double storable) {
  CodecProfile p;
  p.ratio = ratio;
  p.storable_fraction = storable;
  return p;
}

TEST(SplitTunerTest, ProfileMovesOnlyWhenTwoSamplesRunningLeaveTheAverageTheSameWay) {
  const CodecProfile avg = Profile(2.0, 0.9);  // 0.5 charged bytes per logical byte
  // The reads moved to data that does not compress: both samples keep almost nothing.
  EXPECT_TRUE(ProfileMoved(avg, Profile(1.0, 0.05), Profile(1.0, 0.0)));
  // One odd sample is noise: the next is back near the average.
  EXPECT_FALSE(ProfileMoved(avg, Profile(1.0, 0.05), Profile(2.1, 0.88)));
  EXPECT_FALSE(ProfileMoved(avg, Profile(2.1, 0.88), Profile(1.0, 0.05)));
  // Far both times, but opposite ways: not a move either.
  EXPECT_FALSE(ProfileMoved(Profile(2.0, 0.5), Profile(2.0, 0.95), Profile(2.0, 0.1)));
  // Within kProfileShift of the average: the ordinary spread of a 64-page sample.
  EXPECT_FALSE(ProfileMoved(avg, Profile(1.8, 0.8), Profile(2.3, 0.95)));
  // The same share kept, but the kept pages now shrink 4x instead of 2x (bytes -50%).
  EXPECT_TRUE(ProfileMoved(avg, Profile(4.0, 0.9), Profile(3.8, 0.92)));
  EXPECT_FALSE(ProfileMoved(avg, Profile(4.0, 0.9), Profile(2.2, 0.92)));
}

// A file whose every page read costs `delay` (a store much slower than memory).
class SlowFile final : public ForwardingFile {
 public:
  SlowFile(std::unique_ptr<BackingFile> inner, std::chrono::microseconds delay)
      : ForwardingFile(std::move(inner)), delay_(delay) {}
  Status ReadPages(uint64_t offset, size_t len, std::span<char* const> bufs,
                   uint64_t known_size, size_t* got) override {
    const auto until = std::chrono::steady_clock::now() + delay_ * bufs.size();
    while (std::chrono::steady_clock::now() < until) {
    }
    return inner_->ReadPages(offset, len, bufs, known_size, got);
  }

 private:
  std::chrono::microseconds delay_;
};

// Text-like pages: words from a small vocabulary compress ~3x.
std::string CompressibleData(size_t bytes, uint32_t seed) {
  static const char* kWords[] = {"cache ", "page ", "split ", "tier ", "raw ", "compressed ",
                                 "read ", "miss ", "hit ", "ratio ", "buffer ", "memory "};
  std::mt19937 rng(seed);
  std::string out;
  while (out.size() < bytes) out += kWords[rng() % 12];
  out.resize(bytes);
  return out;
}

std::string RandomData(size_t bytes, uint32_t seed) {
  std::mt19937_64 rng(seed);
  std::string out(bytes, '\0');
  for (size_t i = 0; i + 8 <= bytes; i += 8) {
    uint64_t v = rng();
    std::memcpy(&out[i], &v, 8);
  }
  return out;
}

// An engine whose reads, curve and split the test sets: the tuner's own steps, without reads.
class FakeEngine final : public SplitTuner::Engine {
 public:
  explicit FakeEngine(const std::string& settings) {
    EXPECT_TRUE(ApplyOptionList(settings, "test", &o_, nullptr).ok()) << settings;
  }
  CacheStats Stats() const override {
    CacheStats s;
    s.reads = reads_;
    s.raw_hits = reads_ / 2;
    s.compressed_percent = o_.compressed_percent;
    return s;
  }
  std::vector<PageCache::CurvePoint> HitRatioCurve() const override {
    return UniformCurve(2048, 1024);  // data twice the memory: compressing pays
  }
  Options options() const override { return o_; }
  Status ApplySplit(int percent, CodecKind codec) override {
    o_.compressed_percent = percent;
    o_.compressor = codec;
    ++applied_;
    return Status::Ok();
  }
  uint64_t CurveReads() const override { return curve_reads_; }
  HostMemory Host() const override { return host_; }

  uint64_t reads_ = 0;
  uint64_t curve_reads_ = 0;
  int applied_ = 0;
  HostMemory host_;  // none: every split fits

 private:
  Options o_;
};

// A young curve, one standing for fewer reads than kCurveSpan times the largest cache a candidate
// split makes, is flat beyond the pages read so far: its predictions are shown, but nothing is
// recommended or changed. Once the same curve stands for enough reads, auto moves.
TEST(SplitTunerTest, NoDecisionUntilTheCurveSpansTheLargestCandidateCache) {
  FakeEngine engine("memory=8MiB,compressed_percent=auto,auto_max_step=10");
  const int start = engine.options().compressed_percent;
  VictimSample sample(8192);
  const std::string text = CompressibleData(8192 * 64, 9);
  for (uint32_t i = 0; i < VictimSample::kEvery * 64; ++i) {
    sample.Offer(text.data() + 8192 * (i / VictimSample::kEvery), 8192);
  }
  SplitTuner tuner(&engine, &sample);
  CacheStats s;
  tuner.Fill(&s);
  EXPECT_EQ(s.split_waiting, split_waiting::kWindow) << "before the first step";
  auto steps = [&](int n) {
    for (int i = 0; i < n; ++i) {
      engine.reads_ += 2 * SplitTuner::kMinWindowReads;
      tuner.Step();
    }
  };
  // The largest cache: 1024 pages of memory, nearly all of it compressed ~3x, read twice.
  engine.curve_reads_ = 2 * 1024;
  steps(8);
  tuner.Fill(&s);
  EXPECT_FALSE(s.predicted.empty()) << "predictions are shown while the curve is young";
  EXPECT_EQ(s.recommended_percent, -1);
  EXPECT_EQ(engine.applied_, 0);
  EXPECT_EQ(engine.options().compressed_percent, start);
  // Which is said: what it waits for, how far the curve has got and how far it must.
  EXPECT_EQ(s.split_waiting, split_waiting::kCurveSpan);
  EXPECT_EQ(s.split_waiting_have, 2u * 1024);
  EXPECT_GT(s.split_waiting_need, 2u * 1024);
  EXPECT_LE(s.split_waiting_need, 64u * 1024);
  // A window still growing does not hide that reason.
  engine.reads_ += SplitTuner::kMinWindowReads / 2;
  tuner.Step();
  tuner.Fill(&s);
  EXPECT_EQ(s.split_waiting, split_waiting::kCurveSpan);

  engine.curve_reads_ = 64 * 1024;
  steps(8);
  tuner.Fill(&s);
  EXPECT_EQ(s.split_waiting, "") << "decided";
  EXPECT_GT(s.recommended_percent, start);
  EXPECT_GT(engine.applied_, 0);
  EXPECT_GT(engine.options().compressed_percent, start);
}

// Under raw_tier = kernel the daemon may be moved into a memory cgroup after its mount (ccfs
// replay does), or its readers there may grow: a split in force that no longer fits is left at
// the next step, for the largest that fits, without a window of reads or the decider's agreement.
TEST(SplitTunerTest, KernelModeLeavesASplitThatNoLongerFitsAtOnce) {
  FakeEngine engine("memory=64MiB,raw_tier=kernel,compressed_percent=auto");
  const int start = engine.options().compressed_percent;
  ASSERT_GE(start, 20);
  SplitTuner tuner(&engine, nullptr);
  tuner.Step();
  EXPECT_EQ(engine.applied_, 0) << "no cgroup: the split stays";
  engine.host_.cgroup_limit_bytes = 64ull << 20;
  engine.host_.self_anon_bytes = 20ull << 20;  // tiers empty (FakeEngine): 20 MiB of its own
  engine.host_.cgroup_unreclaimable_bytes = 50ull << 20;  // 30 MiB of readers
  tuner.Step();
  EXPECT_EQ(engine.applied_, 1);
  const int fit = engine.options().compressed_percent;
  EXPECT_LT(fit, start);
  EXPECT_GT(fit, 0);
  Options o = engine.options();
  EXPECT_TRUE(CheckSplitFits(o, engine.host_, 0).ok()) << fit;
  o.compressed_percent = fit + 5;
  EXPECT_FALSE(CheckSplitFits(o, engine.host_, 0).ok()) << "the largest that fits";
  tuner.Step();
  EXPECT_EQ(engine.applied_, 1) << "what fits is left alone";
}

struct AutoRun {
  CacheStats stats;
  std::vector<int> percents;  // compressed_percent seen after each burst
};

// Uniform reads over pages [first, first + count) of the data, until `done` or `seconds` pass.
struct ReadPhase {
  uint64_t first = 0;
  uint64_t count = 0;  // 0: to the end of the data
  double seconds = 0;
  std::function<bool(const CacheStats&)> done;
};

// The engine under `settings` over `data`, the phases one after the other.
// `attach`, if set, is handed the engine before the first read.
AutoRun RunPhases(const std::string& data, const std::string& settings,
                  const std::vector<ReadPhase>& phases,
                  const std::function<void(PageCache*)>& attach = nullptr) {
  constexpr size_t kPs = 8192;
  std::unique_ptr<MemBackingStore> store = NewMemBackingStore();
  store->Put("f", data);
  std::unique_ptr<BackingFile> inner;
  EXPECT_TRUE(store->Open("f", O_RDONLY, 0, &inner).ok());
  SlowFile file(std::move(inner), std::chrono::microseconds(150));
  Options o;
  Status st = ApplyOptionList(settings, "test", &o, nullptr);
  EXPECT_TRUE(st.ok()) << st.ToString();
  std::unique_ptr<PageCache> cache;
  st = PageCache::Create(o, &cache);
  EXPECT_TRUE(st.ok()) << st.ToString();
  AutoRun run;
  if (!cache) return run;
  if (attach) attach(cache.get());
  std::mt19937_64 rng(7);
  std::vector<char> buf(kPs);
  for (const ReadPhase& phase : phases) {
    const uint64_t pages = phase.count > 0 ? phase.count : data.size() / kPs - phase.first;
    const auto until = std::chrono::steady_clock::now() +
                       std::chrono::microseconds(static_cast<int64_t>(phase.seconds * 1e6));
    while (std::chrono::steady_clock::now() < until) {
      for (int i = 0; i < 2000; ++i) {
        size_t got = 0;
        const uint64_t page = phase.first + rng() % pages;
        EXPECT_TRUE(cache->Read(1, &file, page * kPs, kPs, buf.data(), &got).ok());
      }
      run.stats = cache->Stats();
      run.percents.push_back(run.stats.compressed_percent);
      if (phase.done(run.stats)) break;
    }
  }
  return run;
}

// Uniform reads over all of `data`, until `done` or `seconds` pass.
AutoRun RunAuto(const std::string& data, const std::string& settings, double seconds,
                const std::function<bool(const CacheStats&)>& done,
                const std::function<void(PageCache*)>& attach = nullptr) {
  return RunPhases(data, settings, {{0, 0, seconds, done}}, attach);
}

// compressed_percent = auto, starting from the default 25, over compressible data twice the memory, with
// misses far dearer than a decompression: the tuner finds that compressing pays and moves there,
// never by more than auto_max_step at a time.
TEST(SplitTunerEngineTest, AutoMovesTowardsCompressionWhereItPays) {
  const std::string data = CompressibleData(2048 * 8192, 1);
  AutoRun run = RunAuto(
      data, "memory=8MiB,compressed_percent=auto,auto_interval=0.05,auto_max_step=10", 60,
      [](const CacheStats& s) { return s.compressed_percent >= 45; });
  std::printf("compressed_percent over time:");
  for (int p : run.percents) std::printf(" %d", p);
  std::printf("\nsplit_changes %llu, recommended %d%%, hit ratio %.3f\n",
              static_cast<unsigned long long>(run.stats.split_changes),
              run.stats.recommended_percent, run.stats.hit_ratio());
  EXPECT_TRUE(run.stats.compressed_percent_auto);
  EXPECT_GE(run.stats.compressed_percent, 45);
  EXPECT_GE(run.stats.split_changes, 2u) << "steps of at most 10 points from 25";
  for (size_t i = 1; i < run.percents.size(); ++i) {
    EXPECT_LE(std::abs(run.percents[i] - run.percents[i - 1]), 10);
  }
  EXPECT_FALSE(run.stats.predicted.empty());
}

// Data that does not compress, starting at 25%: the compressed tier holds nothing, so the tuner
// gives its memory back to raw pages (0%).
TEST(SplitTunerEngineTest, AutoGivesUpCompressionOnIncompressibleData) {
  const std::string data = RandomData(2048 * 8192, 2);
  AutoRun run = RunAuto(
      data, "memory=8MiB,compressed_percent=auto,auto_interval=0.05,auto_max_step=10", 60,
      [](const CacheStats& s) { return s.compressed_percent == 0; });
  std::printf("compressed_percent over time:");
  for (int p : run.percents) std::printf(" %d", p);
  std::printf("\n");
  EXPECT_EQ(run.stats.compressed_percent, 0);
  EXPECT_EQ(run.stats.recommended_percent, 0);
}

// The hot set moves from text to data that does not compress (phase_trace.py's case): auto first
// finds compression pays, then, once the pages it sees stop compressing, gives the memory back.
TEST(SplitTunerEngineTest, AutoFollowsTheReadsFromCompressibleToIncompressiblePages) {
  constexpr uint64_t kText = 2048, kRandom = 768;  // pages; the memory holds 1024
  const std::string data = CompressibleData(kText * 8192, 6) + RandomData(kRandom * 8192, 7);
  int high = 0;
  AutoRun run = RunPhases(
      data, "memory=8MiB,compressed_percent=auto,auto_interval=0.05,auto_max_step=20",
      {{0, kText, 60, [&](const CacheStats& s) { return (high = s.compressed_percent) >= 45; }},
       {kText, kRandom, 60, [](const CacheStats& s) { return s.compressed_percent <= 25; }}});
  std::printf("compressed_percent, as it changed:");
  for (size_t i = 0; i < run.percents.size(); ++i) {
    if (i == 0 || run.percents[i] != run.percents[i - 1]) std::printf(" %d", run.percents[i]);
  }
  std::printf("\n");
  EXPECT_GE(high, 45) << "text: compression pays";
  // Random pages: the compressed tier holds none of them, and at 25% or less the raw tier holds
  // all 768 (any split there serves them all, so auto need not go to 0).
  EXPECT_LE(run.stats.compressed_percent, 25);
}

// A fixed split keeps working exactly as before: predictions are shown, nothing moves.
TEST(SplitTunerEngineTest, FixedSplitIsNeverChangedButGetsARecommendation) {
  const std::string data = CompressibleData(2048 * 8192, 3);
  AutoRun run = RunAuto(data, "memory=8MiB,compressed_percent=0,auto_interval=0.05", 3,
                        [](const CacheStats&) { return false; });
  EXPECT_EQ(run.stats.compressed_percent, 0);
  EXPECT_EQ(run.stats.split_changes, 0u);
  EXPECT_FALSE(run.stats.predicted.empty()) << "the estimator runs with a fixed split too";
  EXPECT_GT(run.stats.recommended_percent, 0) << "compressible data, dear misses";
}

// Under raw_tier = kernel with no key under auto the engine sees only the kernel's misses: no
// prediction is made, and no page is kept out of the kernel for the curve.
TEST(SplitTunerEngineTest, KernelRawTierGetsNoPrediction) {
  const std::string data = CompressibleData(2048 * 8192, 5);
  AutoRun run = RunAuto(data, "memory=8MiB,raw_tier=kernel,compressed_percent=25,auto_interval=0.05",
                        30, [](const CacheStats& s) { return s.reads > 12000; });
  EXPECT_GT(run.stats.reads, 12000u) << "enough reads for a few windows";
  EXPECT_TRUE(run.stats.predicted.empty());
  EXPECT_EQ(run.stats.recommended_percent, -1);
  EXPECT_EQ(run.stats.split_waiting, split_waiting::kAutoKeys);
}

// What the FUSE layer asks of the engine for each page it serves under raw_tier = kernel: keep it
// out of the kernel only under auto, and then only the curve's sample, about one page in
// MissRatioCurve::Config::kKernelRate.
TEST(SplitTunerEngineTest, KernelRawTierUnderAutoKeepsOnlyTheCurvesSampleFromTheKernel) {
  auto kept = [](const std::string& settings) {
    Options o;
    EXPECT_TRUE(ApplyOptionList(settings, "test", &o, nullptr).ok()) << settings;
    std::unique_ptr<PageCache> cache;
    EXPECT_TRUE(PageCache::Create(o, &cache).ok());
    uint64_t n = 0;
    for (uint64_t file = 1; file <= 4; ++file) {
      for (uint64_t page = 0; page < 32768; ++page) n += cache->KeepsFromKernel(file, page) ? 1 : 0;
    }
    return n;
  };
  const uint64_t auto_kept = kept("memory=8MiB,raw_tier=kernel,compressed_percent=auto");
  EXPECT_GT(auto_kept, 131072u / 256);
  EXPECT_LT(auto_kept, 131072u / 64);
  EXPECT_EQ(kept("memory=8MiB,raw_tier=kernel,compressed_percent=50"), 0u);
  EXPECT_EQ(kept("memory=8MiB,raw_tier=daemon,compressed_percent=auto"), 0u);
}

// Under raw_tier = kernel with auto the tuner predicts once the layer above measures a trip, and
// hands each split it applies back to that layer (the kernel's share follows it); without a trip
// it predicts nothing.
TEST(SplitTunerEngineTest, KernelRawTierUnderAutoPredictsWithTheMeasuredTrip) {
  const std::string data = CompressibleData(2048 * 8192, 5);
  const std::string settings =
      "memory=8MiB,raw_tier=kernel,compressed_percent=auto,auto_interval=0.05";
  AutoRun blind = RunAuto(data, settings, 30, [](const CacheStats& s) { return s.reads > 12000; });
  EXPECT_GT(blind.stats.reads, 12000u);
  EXPECT_TRUE(blind.stats.predicted.empty()) << "no trip measured, no prediction";
  EXPECT_TRUE(blind.stats.split_waiting == split_waiting::kTrip ||
              blind.stats.split_waiting == split_waiting::kReuses)
      << blind.stats.split_waiting;

  std::atomic<int> probes{0}, applied{0};
  AutoRun run = RunAuto(
      data, settings, 30,
      [](const CacheStats& s) { return !s.predicted.empty(); },
      [&](PageCache* c) {
        c->AttachKernelSide(PageCache::KernelSide{[&] {
                                                    ++probes;
                                                    return 20.0;
                                                  },
                                                  [&] { ++applied; }});
      });
  EXPECT_FALSE(run.stats.predicted.empty());
  EXPECT_GT(probes.load(), 0);
  EXPECT_GE(run.stats.recommended_percent, 0);
  EXPECT_GE(static_cast<uint64_t>(applied.load()), run.stats.split_changes);
}

TEST(SplitTunerEngineTest, EstimatorOffRecordsNothing) {
  const std::string data = CompressibleData(512 * 8192, 4);
  AutoRun run = RunAuto(data, "memory=2MiB,estimate_splits=false", 0.5,
                        [](const CacheStats&) { return false; });
  EXPECT_EQ(run.stats.mrc_samples, 0u);
  EXPECT_TRUE(run.stats.predicted.empty());
  EXPECT_EQ(run.stats.recommended_percent, -1);
  EXPECT_EQ(run.stats.split_waiting, split_waiting::kOff);
}

}  // namespace
}  // namespace ccfs::cache
