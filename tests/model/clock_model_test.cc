// The model of the daemon's two CLOCKs against a simulation of the same policy: the raw CLOCK
// with the sketch's credit (uses at most kUseMax; counts at most 15, halved every
// kAgingReadsPerPage x memory pages reads), the compressed tier's hand and second-hit promotion,
// and pages it cannot hold dropped.
#include "model/clock_model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "cache/frequency.h"
#include "cache/model_facts.h"
#include "cache/page_entry.h"
#include "model/che.h"
#include "testing/law.h"
#include "util/rng.h"

namespace ccfs {
namespace {

using testing::Law;

struct Simulated {
  double raw = 0;
  double compressed = 0;
};

// One CLOCK of `frames` slots: the hand skips (and takes a use from, or clears the reference of)
// every page with credit, and takes the first without.
class Clock {
 public:
  explicit Clock(size_t frames) : page_(frames, kEmpty), credit_(frames, 0) {}
  static constexpr uint64_t kEmpty = ~0ull;
  // A free slot, or the hand's victim (its page in *victim).
  size_t Take(uint64_t* victim) {
    *victim = kEmpty;
    if (!free_.empty()) {
      const size_t slot = free_.back();
      free_.pop_back();
      return slot;
    }
    if (used_ < page_.size()) return used_++;
    for (;;) {
      const size_t slot = hand_;
      hand_ = (hand_ + 1) % page_.size();
      if (page_[slot] == kEmpty) return slot;
      if (credit_[slot] > 0) {
        --credit_[slot];
        continue;
      }
      *victim = page_[slot];
      return slot;
    }
  }
  void Put(size_t slot, uint64_t page, int credit) {
    page_[slot] = page;
    credit_[slot] = credit;
  }
  void Release(size_t slot) {
    page_[slot] = kEmpty;
    free_.push_back(slot);
  }
  int& credit(size_t slot) { return credit_[slot]; }

 private:
  std::vector<uint64_t> page_;
  std::vector<int> credit_;
  std::vector<size_t> free_;
  size_t used_ = 0;
  size_t hand_ = 0;
};

// The policy, page by page. Pages whose rank is a multiple of `unstorable_every` (0: none) cannot
// be compressed.
Simulated Simulate(const AccessDistribution& dist, size_t memory_pages, size_t raw_frames,
                   size_t compressed_pages, uint64_t unstorable_every, int warmup, int ops) {
  const uint64_t n = dist.pages();
  enum Where : uint8_t { kOut, kRaw, kCompressed };
  std::vector<Where> where(n, kOut);
  std::vector<size_t> slot(n, 0);
  std::vector<uint8_t> count(n, 0);
  std::vector<bool> hit_once(n, false);
  Clock raw(raw_frames);
  Clock compressed(std::max<size_t>(compressed_pages, 1));
  const uint64_t aging = cache::FrequencySketch::kAgingReadsPerPage * memory_pages;
  auto storable = [&](uint64_t page) {
    return compressed_pages > 0 && (unstorable_every == 0 || page % unstorable_every != 0);
  };
  auto compress = [&](uint64_t page) {
    uint64_t victim;
    const size_t s = compressed.Take(&victim);
    if (victim != Clock::kEmpty) where[victim] = kOut;
    compressed.Put(s, page, 0);
    where[page] = kCompressed;
    slot[page] = s;
    hit_once[page] = false;
  };
  auto load = [&](uint64_t page, int credit) {
    uint64_t victim;
    const size_t s = raw.Take(&victim);
    if (victim != Clock::kEmpty) {
      where[victim] = kOut;
      if (storable(victim)) compress(victim);
    }
    raw.Put(s, page, credit);
    where[page] = kRaw;
    slot[page] = s;
  };
  Rng rng(7);
  Simulated out;
  for (int i = 0; i < warmup + ops; ++i) {
    const uint64_t page = dist.NextRank(rng);
    const bool measured = i >= warmup;
    if (where[page] == kRaw) {
      int& uses = raw.credit(slot[page]);
      uses = std::min<int>(uses + 1, cache::kUseMax);
      out.raw += measured;
    } else if (where[page] == kCompressed) {
      out.compressed += measured;
      if (!hit_once[page]) {
        hit_once[page] = true;
        compressed.credit(slot[page]) = 1;  // referenced: one more turn of the hand
      } else {
        compressed.Release(slot[page]);
        load(page, cache::kPromotedUses);
      }
    } else {
      load(page, std::min<int>(count[page], cache::kUseMax));
    }
    if (count[page] < cache::FrequencySketch::kMax) ++count[page];
    if ((i + 1) % aging == 0) {
      for (uint8_t& c : count) c >>= 1;
    }
  }
  out.raw /= ops;
  out.compressed /= ops;
  return out;
}

// The same tiers simulated and modelled: `unstorable_every` as Simulate takes it (the model's
// storable share 1 - 1 / unstorable_every).
struct Both {
  Simulated sim;
  ClockTierHits model;
};
Both SimulateAndModel(const AccessDistribution& dist, size_t memory_pages, size_t raw_frames,
                      size_t compressed_pages, uint64_t unstorable_every, int warmup, int ops) {
  Both out;
  out.sim = Simulate(dist, memory_pages, raw_frames, compressed_pages, unstorable_every, warmup, ops);
  ClockTiers tiers;
  tiers.raw_pages = static_cast<double>(raw_frames);
  tiers.compressed_pages = static_cast<double>(compressed_pages);
  tiers.storable = unstorable_every > 0 ? 1.0 - 1.0 / static_cast<double>(unstorable_every) : 1.0;
  tiers.memory_pages = static_cast<double>(memory_pages);
  tiers.engine = cache::EngineClockFacts();
  out.model =
      ClockTierHitRatios(dist, tiers, {static_cast<double>(warmup), static_cast<double>(ops)});
  return out;
}

TEST(ClockModel, OneTierMatchesTheSimulatedPolicyAndUniformAccessHitsTheCachedFraction) {
  for (uint64_t pages : {4000u, 16000u}) {
    auto dist = Law("pareto", pages);
    const Both r = SimulateAndModel(*dist, 2000, 2000, 0, 0, 100000, 200000);
    EXPECT_NEAR(r.model.raw, r.sim.raw, 0.015) << pages << " pages";
    EXPECT_EQ(r.model.compressed, 0.0);
  }
  // Under uniform access any policy that fills the cache hits the cached fraction; the one-tier
  // form is che.h's Replacement::kGclock.
  auto uniform = Law("uniform", 10000);
  const ClockFacts engine = cache::EngineClockFacts();
  EXPECT_NEAR(CacheHitRatio(*uniform, 2500, Replacement::kGclock, {}, engine), 0.25, 1e-3);
  EXPECT_NEAR(CacheHitRatio(*uniform, 20000, Replacement::kGclock, {}, engine), 1.0, 1e-9);
}

TEST(ClockModel, TheRawTierKeepsThePagesTheCompressedTierCannotHold) {
  // Uniform over twice memory, a quarter of it raw, the rest holding every storable page at 3x,
  // one page in ten incompressible: those miss unless the raw tier has them. Loaded by a miss with
  // the sketch's count as credit, they outlive the promoted pages (one use): the raw tier holds
  // far more of them than their tenth of the data set, and the hit ratio is above the one a
  // single recency order gives (incompressible reads hit at the raw tier's share, 1/8).
  auto dist = Law("uniform", 16000);
  const Both r = SimulateAndModel(*dist, 8000, 2000, 18000, 10, 64000, 200000);
  EXPECT_NEAR(r.model.raw, r.sim.raw, 0.01);
  EXPECT_NEAR(r.model.raw + r.model.compressed, r.sim.raw + r.sim.compressed, 0.01);
  const double one_order = 1.0 - 0.1 * (1.0 - 2000.0 / 16000);  // 0.9125
  EXPECT_GT(r.model.raw + r.model.compressed, one_order + 0.02);
  EXPECT_GT(r.sim.raw + r.sim.compressed, one_order + 0.02);
}

TEST(ClockModel, ACompressedTierThatFillsEvictsAndThePagesComeBackByMisses) {
  // Pareto over eight times memory: the compressed tier (three quarters of memory at 2.8x) holds
  // a third of the storable pages and its hand evicts.
  auto dist = Law("pareto", 64000);
  const Both r = SimulateAndModel(*dist, 8000, 2000, 16800, 10, 100000, 200000);
  EXPECT_NEAR(r.model.raw, r.sim.raw, 0.03);
  EXPECT_NEAR(r.model.raw + r.model.compressed, r.sim.raw + r.sim.compressed, 0.02);
  EXPECT_LT(r.model.raw + r.model.compressed, 0.95);
}

}  // namespace
}  // namespace ccfs
