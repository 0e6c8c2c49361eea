// Replay in engine mode: under uniform access the measured hit ratio is the model's (the cached
// fraction of the data set), with and without a compressed tier; CPU time by path and joules per
// buffer (or why there are none) are reported; --record writes a trace that replays to the same
// operations.
#include "trace/replay.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <map>
#include <set>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "datagen/mkdata.h"
#include "stats/fake_powercap.h"
#include "testing/command.h"
#include "trace/op_source.h"

namespace ccfs {
namespace {

namespace fs = std::filesystem;

class ReplayEngineTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string(testing::TempPath("ccfs_replay_test_data"));
    fs::remove_all(*dir_);
    MkdataOptions mk;
    mk.dir = *dir_;
    mk.size = 48ull << 20;  // 6144 pages of 8 KiB
    ASSERT_TRUE(ParseMix("text=50,db=50", &mk.mix).ok());
    std::vector<KindReport> report;
    Status s = MakeDataset(mk, &report);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  static void TearDownTestSuite() {
    fs::remove_all(*dir_);
    delete dir_;
  }

  ReplayOptions Uniform(int compressed_percent) {
    ReplayOptions options;
    options.mode = ReplayMode::kEngine;
    options.target = *dir_;
    options.engine.memory = 12ull << 20;  // a quarter of the data set, before compression
    options.engine.compressed_percent = compressed_percent;
    options.engine.compress_threads = 1;
    options.dist.kind = DistSpec::Kind::kUniform;
    options.ops = 40000;
    options.warmup = 20000;
    options.seed = 3;
    return options;
  }

  static std::string* dir_;
};
std::string* ReplayEngineTest::dir_ = nullptr;

TEST_F(ReplayEngineTest, UniformHitRatioMatchesTheModelWithoutCompression) {
  ReplayResult r;
  Status s = RunReplay(Uniform(0), &r);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_TRUE(r.have_counters);
  EXPECT_EQ(r.ops, 40000u);
  EXPECT_EQ(r.raw_hits + r.compressed_hits + r.misses, r.cache_reads);
  EXPECT_EQ(r.cache_reads, r.reads);  // one cache read per client page
  EXPECT_EQ(r.compressed_hits, 0u);
  // A quarter of the data set: the cache fills after ~N ln 4/3 reads, long before the measured
  // ones, so the window's first reads cost the model nothing (che.h).
  EXPECT_LT(0.3 * r.dataset_pages, static_cast<double>(r.warmup_ops));
  EXPECT_NEAR(r.model.hit_ratio, 0.25, 0.001);
  EXPECT_NEAR(r.hit_ratio, r.model.hit_ratio, 0.03);
}

TEST_F(ReplayEngineTest, UniformHitRatioMatchesTheModelWithHalfCompressed) {
  ReplayResult r;
  Status s = RunReplay(Uniform(50), &r);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_TRUE(r.have_counters);
  EXPECT_GT(r.compression_ratio, 1.3);  // text and database pages do compress
  EXPECT_GT(r.compressed_hits, 0u);
  // The compressed tier buys capacity: (0.5 + 0.5 R) / 4 of the data set.
  EXPECT_GT(r.model.hit_ratio, 0.30);
  EXPECT_NEAR(r.hit_ratio, r.model.hit_ratio, 0.03)
      << "ratio " << r.compression_ratio << ", raw " << r.raw_hits << ", compressed "
      << r.compressed_hits << ", misses " << r.misses;
  // The pool compressed victims, but the paths' measured means already hold what that cost the
  // reader: the model's µs per buffer is its hit ratios times those means, nothing more.
  EXPECT_GT(r.delta.compressions, 0u);
  EXPECT_GT(r.model.compressions_per_read, 0.0);
  EXPECT_EQ(r.model.compress_us_per_buffer, 0.0);
  EXPECT_NEAR(r.model.us_per_buffer,
              r.model.raw_hit_ratio * r.costs.hit_us +
                  r.model.compressed_hit_ratio * r.costs.decompress_us +
                  r.model.miss_ratio * r.costs.disk_us,
              1e-9 * std::max(1.0, r.model.us_per_buffer));
}

// CPU and energy per buffer: the engine's CPU time by path over the measured phase, this process's
// CPU time, and joules per buffer where a powercap tree has RAPL (a fake one here), or the reason
// there are none.
TEST_F(ReplayEngineTest, ReportsTheCacheCpuByPathAndThisProcessCpu) {
  ReplayOptions options = Uniform(50);
  options.ops = 10000;
  options.powercap_root = *dir_ + "/no-powercap";
  ReplayResult r;
  Status s = RunReplay(options, &r);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_TRUE(r.have_counters);
  ASSERT_GT(r.delta.compressions, 0u);
  EXPECT_GT(r.cpu.ns[CpuTimes::kCompress], 0u);
  EXPECT_GT(r.cpu.ns[CpuTimes::kMiss], 0u);
  EXPECT_EQ(r.cpu.ns[CpuTimes::kRequest], 0u) << "no request threads in the engine";
  EXPECT_DOUBLE_EQ(r.cpu_us_per_buffer, r.cpu.TotalUsPerBuffer(r.ops));
  EXPECT_GT(r.process_cpu_us_per_buffer, 0.0);
  EXPECT_EQ(r.joules_per_buffer, -1);
  EXPECT_EQ(r.energy_note, "no RAPL: CPU time only");

  auto j = nlohmann::json::parse(ReplayResultJson(r));
  EXPECT_DOUBLE_EQ(j["cpu_us_per_buffer"].get<double>(), r.cpu_us_per_buffer);
  double sum = 0;
  for (const char* path : CpuTimes::kNames) {
    sum += j["cpu_us_per_buffer_by_path"][path].get<double>();
  }
  EXPECT_NEAR(sum, r.cpu_us_per_buffer, 1e-9);
  EXPECT_TRUE(j["joules_per_buffer"].is_null());
  EXPECT_EQ(j["energy"], "no RAPL: CPU time only");
  EXPECT_GT(j["process_cpu_us_per_buffer"].get<double>(), 0.0);
}

TEST_F(ReplayEngineTest, JoulesPerBufferWhereThereIsRapl) {
  testing::FakePowercap powercap;
  powercap.Zone("intel-rapl:0", "package-0", 1000);
  ReplayOptions options = Uniform(0);
  options.duration_s = 0.3;
  options.powercap_root = powercap.root();
  // The fake counter moves by 1 J at each progress report, as a real one moves with time.
  uint64_t uj = 1000;
  options.progress_interval_s = 0.01;
  options.on_progress = [&](const ReplayProgress&) {
    uj += 1000000;
    powercap.SetEnergy("intel-rapl:0", uj);
  };
  ReplayResult r;
  Status s = RunReplay(options, &r);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(r.energy_note, "RAPL package-0");
  ASSERT_GE(r.joules_per_buffer, 0.0);
  // Every joule the counter moved during the run, over the run's page operations.
  EXPECT_DOUBLE_EQ(r.joules_per_buffer, static_cast<double>(uj - 1000) / 1e6 / r.ops);
  auto j = nlohmann::json::parse(ReplayResultJson(r));
  EXPECT_DOUBLE_EQ(j["joules_per_buffer"].get<double>(), r.joules_per_buffer);
}

// By default the warm-up lasts until the cache is full: a compressed tier holds two or three times
// the pages its memory would hold raw, and three times the memory in pages is not enough to fill
// it. Measured before it is full, the hit ratio would fall short of the model.
TEST_F(ReplayEngineTest, DefaultWarmupLastsUntilTheCompressedTierIsFull) {
  ReplayOptions options = Uniform(80);
  options.warmup = -1;
  const uint64_t base = 3 * (options.engine.memory / 8192);
  ReplayResult r;
  Status s = RunReplay(options, &r);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_GT(r.warmup_ops, base);
  EXPECT_LE(r.warmup_ops, 10u * 6144);
  EXPECT_GT(r.model.hit_ratio, 0.40);
  EXPECT_NEAR(r.hit_ratio, r.model.hit_ratio, 0.03)
      << "ratio " << r.compression_ratio << ", warm-up " << r.warmup_ops;
  // An explicit warm-up is kept as given.
  options.warmup = 1234;
  options.ops = 1000;
  ASSERT_TRUE(RunReplay(options, &r).ok());
  EXPECT_EQ(r.warmup_ops, 1234u);
}

// The engine is in the reader's process: no FUSE trip, and its model is the thesis's.
TEST_F(ReplayEngineTest, TheEngineHasNoTrip) {
  ReplayOptions options = Uniform(0);
  options.ops = 3000;
  options.warmup = 1000;
  ReplayResult r;
  Status s = RunReplay(options, &r);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(r.costs.trip_us, 0.0);
  EXPECT_EQ(r.model.trip_us_per_buffer, 0.0);
  EXPECT_FALSE(r.kernel_hits_timed);
}

TEST_F(ReplayEngineTest, RecordedTraceReplaysTheSameOperations) {
  std::string trace = testing::TempPath("ccfs_replay_test.csv");
  ReplayOptions options = Uniform(25);
  options.dist.kind = DistSpec::Kind::kPareto;
  options.ops = 3000;
  options.warmup = 1000;
  options.record_path = trace;
  ReplayResult first;
  Status s = RunReplay(options, &first);
  ASSERT_TRUE(s.ok()) << s.ToString();

  Dataset dataset;
  ASSERT_TRUE(Dataset::Open(*dir_, 8192, &dataset).ok());
  std::vector<TraceRecord> records;
  s = ReadTraceFile(trace, dataset, TraceFormat::kAuto, &records);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(records.size(), 4000u);

  ReplayOptions again = Uniform(25);
  again.trace_path = trace;
  again.ops = 3000;
  again.warmup = 1000;
  ReplayResult second;
  s = RunReplay(again, &second);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(second.ops, first.ops);
  EXPECT_EQ(second.dist, "trace:" + trace);
  fs::remove(trace);
}

// The hottest `n` pages (by count) of operations [first, first + count).
std::set<uint64_t> HottestPages(const OpSource& source, uint64_t first, uint64_t count,
                                size_t n) {
  std::map<uint64_t, int> hits;
  for (uint64_t i = first; i < first + count; ++i) {
    PageOp op = source.Get(i);
    ++hits[(uint64_t{op.file} << 40) | op.offset];
  }
  std::vector<std::pair<int, uint64_t>> by_count;
  for (const auto& [page, c] : hits) by_count.push_back({c, page});
  std::sort(by_count.rbegin(), by_count.rend());
  std::set<uint64_t> out;
  for (size_t i = 0; i < n && i < by_count.size(); ++i) out.insert(by_count[i].second);
  return out;
}

TEST_F(ReplayEngineTest, PhasesMoveTheHotSetAndChangeTheLaw) {
  Dataset dataset;
  ASSERT_TRUE(Dataset::Open(*dir_, 8192, &dataset).ok());
  DistSpec pareto, uniform;
  uniform.kind = DistSpec::Kind::kUniform;
  std::unique_ptr<AccessDistribution> p, u;
  ASSERT_TRUE(NewAccessDistribution(pareto, dataset.pages(), 7, &p).ok());
  ASSERT_TRUE(NewAccessDistribution(uniform, dataset.pages(), 7, &u).ok());
  OpSource plain(dataset, p.get(), 7, 0);
  OpSource phased(dataset, p.get(), 7, 0);
  constexpr uint64_t kPhase = 30000;
  phased.SetPhases(kPhase, {p.get(), p.get(), u.get()});

  // Phase 0 is the plain stream; every operation is a pure function of its index.
  for (uint64_t i = 0; i < 1000; ++i) {
    EXPECT_EQ(phased.Get(i).offset, plain.Get(i).offset);
    EXPECT_EQ(phased.Get(i).file, plain.Get(i).file);
  }
  EXPECT_EQ(phased.Get(kPhase + 5).offset, phased.Get(kPhase + 5).offset);

  // Phase 1 has the same law over another hot set: its 100 hottest pages are not phase 0's.
  std::set<uint64_t> hot0 = HottestPages(phased, 0, kPhase, 100);
  std::set<uint64_t> hot1 = HottestPages(phased, kPhase, kPhase, 100);
  std::set<uint64_t> hot0_again = HottestPages(plain, kPhase, kPhase, 100);
  size_t kept = 0, kept_plain = 0;
  for (uint64_t page : hot1) kept += hot0.count(page);
  for (uint64_t page : hot0_again) kept_plain += hot0.count(page);
  EXPECT_GT(kept_plain, 60u) << "without phases the hot set stays";
  EXPECT_LT(kept, 20u) << "with phases it moves";

  // Phase 2 is uniform: its hottest page is read far less often than phase 0's.
  auto top_count = [&](uint64_t first) {
    std::map<uint64_t, int> hits;
    int top = 0;
    for (uint64_t i = first; i < first + kPhase; ++i) {
      PageOp op = phased.Get(i);
      top = std::max(top, ++hits[(uint64_t{op.file} << 40) | op.offset]);
    }
    return top;
  };
  EXPECT_GT(top_count(0), 5 * top_count(2 * kPhase));
}

// Pages that do not compress (random bytes: half of this data set) are rejected by the compressed
// tier whatever its room; only the raw tier keeps them. The model takes the share of pages the
// compressed tier can hold from the run's own counters, so it predicts the misses they cause.
TEST(ReplayStorableTest, TheModelCountsPagesTheCompressedTierCannotHold) {
  const std::string dir = testing::TempPath("ccfs_replay_storable_data");
  fs::remove_all(dir);
  MkdataOptions mk;
  mk.dir = dir;
  mk.size = 32ull << 20;  // 4096 pages of 8 KiB
  ASSERT_TRUE(ParseMix("text=50,random=50", &mk.mix).ok());
  std::vector<KindReport> report;
  Status s = MakeDataset(mk, &report);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ReplayOptions options;
  options.mode = ReplayMode::kEngine;
  options.target = dir;
  // zstd: the text alone would fit compressed (the model with every page storable says ~0.8).
  options.engine.memory = 12ull << 20;
  options.engine.compressed_percent = 75;
  options.engine.compressor = CodecKind::kZstd;
  options.engine.compress_threads = 1;
  options.dist.kind = DistSpec::Kind::kUniform;
  options.ops = 40000;
  options.warmup = 30000;
  options.seed = 3;
  ReplayResult r;
  s = RunReplay(options, &r);
  fs::remove_all(dir);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_TRUE(r.have_counters);
  EXPECT_NEAR(r.storable_fraction, 0.5, 0.08);
  EXPECT_LT(r.hit_ratio, 0.8) << "the random half cannot be held compressed";
  EXPECT_NEAR(r.hit_ratio, r.model.hit_ratio, 0.05)
      << "ratio " << r.compression_ratio << ", storable " << r.storable_fraction;
  auto j = nlohmann::json::parse(ReplayResultJson(r));
  EXPECT_DOUBLE_EQ(j["storable_fraction"].get<double>(), r.storable_fraction);
}

TEST_F(ReplayEngineTest, BadArgumentsAreClearErrors) {
  ReplayOptions options = Uniform(0);
  options.target = "/nonexistent/ccfs";
  ReplayResult r;
  Status s = RunReplay(options, &r);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("/nonexistent/ccfs"), std::string::npos) << s.message();
  options = Uniform(0);
  options.write_ratio = 1.5;
  EXPECT_FALSE(RunReplay(options, &r).ok());
  options = Uniform(0);
  options.trace_path = "/nonexistent/trace.csv";
  s = RunReplay(options, &r);
  EXPECT_NE(s.message().find("/nonexistent/trace.csv"), std::string::npos) << s.message();
}

// A coordinator on the other ends of a replay's turn pipes (bench/auto_compare.py's part): gives a
// turn, waits for it back, and counts the turns given, until the pipe back closes or `max_turns`.
class TurnGiver {
 public:
  explicit TurnGiver(int max_turns = 1 << 30) {
    EXPECT_EQ(::pipe(go_), 0);
    EXPECT_EQ(::pipe(back_), 0);
    thread_ = std::thread([this, max_turns] {
      char c = 't';
      while (turns_ < max_turns && ::write(go_[1], &c, 1) == 1) {
        ++turns_;
        if (::read(back_[0], &c, 1) != 1) return;  // the replay is done (or failed)
        ++returned_;
      }
      ::close(go_[1]);  // no more turns: a replay still running finds the pipe closed
      go_[1] = -1;
    });
  }
  ~TurnGiver() { Finish(); }
  void Apply(ReplayOptions* options, uint64_t turn_ops) const {
    options->turn_in_fd = go_[0];
    options->turn_out_fd = back_[1];
    options->turn_ops = turn_ops;
  }
  // After the replay: closing its end of the pipe back ends the giver (as the replay's exit would).
  void Finish() {
    if (back_[1] >= 0) ::close(back_[1]);
    back_[1] = -1;
    if (thread_.joinable()) thread_.join();
    for (int* fd : {&go_[0], &go_[1], &back_[0]}) {
      if (*fd >= 0) ::close(*fd);
      *fd = -1;
    }
  }
  int turns() const { return turns_; }
  int returned() const { return returned_; }

 private:
  int go_[2] = {-1, -1}, back_[2] = {-1, -1};
  std::thread thread_;
  std::atomic<int> turns_{0}, returned_{0};
};

TEST_F(ReplayEngineTest, TakingTurnsRunsEveryOperationATurnAtATime) {
  ReplayOptions options = Uniform(50);
  TurnGiver giver;
  giver.Apply(&options, 7000);
  ReplayResult r;
  Status s = RunReplay(options, &r);
  giver.Finish();
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(r.reads, 40000u);
  EXPECT_EQ(r.warmup_ops, 20000u);
  // 60000 operations in turns of 7000: 9 turns, the last kept to the end and never given back.
  EXPECT_EQ(giver.turns(), 9);
  EXPECT_EQ(giver.returned(), 8);
  // The same run without turns: the same operations, so the same hit ratio to within the
  // compression pool's timing.
  ReplayResult plain;
  ASSERT_TRUE(RunReplay(Uniform(50), &plain).ok());
  EXPECT_NEAR(r.hit_ratio, plain.hit_ratio, 0.02);
}

// The coordinator goes away while the replay holds its turn: giving it back is an error naming
// --turn-fds, not a SIGPIPE that ends the process (this test's, here).
TEST_F(ReplayEngineTest, ATurnNobodyTakesBackEndsTheReplayWithAClearError) {
  int in[2], out[2];
  ASSERT_EQ(::pipe(in), 0);
  ASSERT_EQ(::pipe(out), 0);
  ::close(out[0]);                        // nobody reads the turns given back
  ASSERT_EQ(::write(in[1], "t", 1), 1);  // one turn
  ReplayOptions options = Uniform(0);
  options.turn_in_fd = in[0];
  options.turn_out_fd = out[1];
  options.turn_ops = 7000;
  ReplayResult r;
  Status s = RunReplay(options, &r);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("--turn-fds: passing the turn: the other end was closed"),
            std::string::npos)
      << s.message();
  ::close(in[0]);
  ::close(in[1]);
  ::close(out[1]);
}

TEST_F(ReplayEngineTest, TurnsThatStopComingEndTheReplayWithAClearError) {
  ReplayOptions options = Uniform(0);
  TurnGiver giver(/*max_turns=*/2);
  giver.Apply(&options, 7000);
  ReplayResult r;
  Status s = RunReplay(options, &r);
  giver.Finish();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("--turn-fds"), std::string::npos) << s.message();
  EXPECT_EQ(giver.turns(), 2);
  // Descriptors that are not open, or open the wrong way, are refused before anything runs.
  options = Uniform(0);
  options.turn_in_fd = 1000;
  options.turn_out_fd = STDERR_FILENO;
  options.turn_ops = 100;
  s = RunReplay(options, &r);
  EXPECT_NE(s.message().find("--turn-fds: 1000"), std::string::npos) << s.message();
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  options.turn_in_fd = fds[0];
  options.turn_out_fd = fds[0];  // the read end
  s = RunReplay(options, &r);
  EXPECT_NE(s.message().find("open for writing"), std::string::npos) << s.message();
  options.turn_out_fd = fds[1];
  options.duration_s = 1;
  s = RunReplay(options, &r);
  EXPECT_NE(s.message().find("--turn-ops"), std::string::npos) << s.message();
  ::close(fds[0]);
  ::close(fds[1]);
}

}  // namespace
}  // namespace ccfs
