#include "cache/mrc.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <queue>
#include <utility>

#include "ccfs/stats.h"

namespace ccfs::cache {

namespace {

constexpr uint32_t kFullThreshold = 1u << 24;  // T for rate 1: every t in [0, 2^24) is sampled
constexpr uint64_t kAdvanceEvery = 256;

// Distances are binned as LatencyHistogram bins nanoseconds: exact below 256, then 128 bins per
// power of two. Reused rather than copied so that one layout serves both.
int BinOf(uint64_t distance) { return LatencyHistogram::BucketOf(distance); }
uint64_t BinLow(int bin) { return bin == 0 ? 0 : LatencyHistogram::BucketUpper(bin - 1) + 1; }
uint64_t BinHigh(int bin) { return LatencyHistogram::BucketUpper(bin); }

// A count of sampled pages as a count of pages: times 1/R, capped.
uint64_t Scaled(uint64_t count, double weight) {
  const double scaled = static_cast<double>(count) * weight;
  return scaled >= 0x1p62 ? (1ull << 62) : static_cast<uint64_t>(scaled);
}

// A histogram over BinOf's bins, read as the weight of values below k (interpolated within a
// bin).
class Cumulative {
 public:
  explicit Cumulative(const std::vector<double>& bins) : bins_(bins), below_(bins.size() + 1, 0) {
    for (size_t b = 0; b < bins.size(); ++b) below_[b + 1] = below_[b] + bins[b];
  }
  // The weight of values < k, i.e. <= k - 1. REQUIRES: k > 0.
  double Below(uint64_t k) const {
    const int b = BinOf(k - 1);
    const double lo = static_cast<double>(BinLow(b));
    const double width = static_cast<double>(BinHigh(b) - BinLow(b)) + 1;
    return below_[b] + bins_[b] * (static_cast<double>(k - 1) - lo + 1) / width;
  }
  // The value below which `share` of the weight lies (interpolated within its bin; at least 1).
  uint64_t Quantile(double share) const {
    const double want = share * below_.back();
    for (size_t b = 0; b < bins_.size(); ++b) {
      if (bins_[b] > 0 && below_[b + 1] >= want) {
        const int bin = static_cast<int>(b);
        const double width = static_cast<double>(BinHigh(bin) - BinLow(bin)) + 1;
        const double v = static_cast<double>(BinLow(bin)) + (want - below_[b]) / bins_[b] * width;
        return std::max<uint64_t>(1, static_cast<uint64_t>(v));
      }
    }
    return 1;
  }

 private:
  const std::vector<double>& bins_;
  std::vector<double> below_;
};

}  // namespace

// The state a drain updates: the sampled pages, their LRU order and the histogram. Used under the
// owner's mutex only.
//
// LRU order without a list: each sampled page's last access has a time (a counter of sampled
// reads), and a bitmap over times has a 1 at the time of every tracked page. The reuse distance
// of a page last read at time s is the number of pages with a later time: keys - (ones in
// [0, s]), counted as a Fenwick tree over the bitmap's 64-bit words (their popcounts) plus a
// popcount within s's word. For 8 Ki pages both fit in ~5 KiB, which stays in cache while the
// engine copies pages; the page table is the one structure a sample misses on. Times run up to
// 4x the pages tracked; then they are renumbered 0..keys-1 in order (Compact: each page's new
// time is its rank, read off the bitmap; one pass over the page table), once every ~3 max_keys
// sampled reads.
class MissRatioCurve::Stack {
 public:
  Stack(const Config& config, uint32_t threshold)
      : max_keys_(config.max_keys), threshold_(threshold), half_life_(config.half_life_reads),
        by_samples_(config.normalize_by_samples), by_footprint_(config.by_footprint),
        bins_(LatencyHistogram::kBuckets, 0.0),
        footprint_bins_(by_footprint_ ? LatencyHistogram::kBuckets : 0, 0.0),
        footprint_reuse_bins_(by_footprint_ ? LatencyHistogram::kBuckets : 0, 0.0) {
    Rehash(1024);
    Compact(kMinTimes);
  }

  uint32_t threshold() const { return threshold_; }
  uint32_t keys() const { return keys_; }
  uint64_t reuses() const { return reuses_; }
  double covered() const { return by_samples_ ? weight_ : reads_; }

  // One sampled read. Returns false when the page is no longer sampled (the rate fell after the
  // sample was queued).
  bool Access(uint64_t hash, uint32_t t) {
    if (t >= threshold_) return false;
    if (hash == 0) hash = 1;  // 0 marks an empty slot
    const double weight = static_cast<double>(kFullThreshold) / threshold_;  // 1 / R
    Slot* slot = Find(hash);
    // The distinct pages read before this read (scaled): sizes up to it are told by this read.
    const int footprint = by_footprint_ ? BinOf(Scaled(keys_, weight)) : 0;
    if (by_footprint_) footprint_bins_[footprint] += weight;
    if (slot != nullptr) {
      if (by_footprint_) footprint_reuse_bins_[footprint] += weight;
      ++reuses_;
      const uint64_t d = keys_ - OnesThrough(slot->time);
      bins_[BinOf(Scaled(d, weight))] += weight;
      Flip(slot->time, -1);
    } else {
      if (2 * (keys_ + 1) > table_.size()) Rehash(table_.size() * 2);
      slot = Insert(hash);
      ++keys_;
      heap_.emplace(t, hash);
    }
    weight_ += weight;
    // Renumbering changes times, not slots: `slot` stays good. It holds no bit now (a reuse's was
    // cleared, a new page has none), so it takes no rank: its time is set just after.
    if (now_ == times_) {
      Compact(std::max<size_t>(kMinTimes, std::bit_ceil(4 * static_cast<size_t>(keys_))));
    }
    slot->time = static_cast<uint32_t>(now_);
    Flip(now_, +1);
    ++now_;
    if (max_keys_ != 0 && keys_ > max_keys_) LowerRate();
    return true;
  }

  // Brings N up to date with the counters now: `reads` recorded and `drops` dropped in all. A
  // dropped sample stood for 1/R reads whose outcome is unknown: they leave N. Every half-life of
  // reads, N and the histogram are halved together.
  void Advance(uint64_t reads, uint64_t drops) {
    uint64_t fresh = reads - seen_reads_;
    seen_reads_ = reads;
    reads_ -= static_cast<double>(drops - seen_drops_) * kFullThreshold / threshold_;
    seen_drops_ = drops;
    for (int halvings = 0; half_life_ != 0 && since_halved_ + fresh >= half_life_; ++halvings) {
      if (halvings == 64) {  // all but nothing is left: skip the rest of a long quiet spell
        Reset();
        fresh %= half_life_;
        since_halved_ = 0;
        break;
      }
      const uint64_t step = half_life_ - since_halved_;
      reads_ = (reads_ + static_cast<double>(step)) / 2;
      for (double& b : bins_) b /= 2;
      for (double& b : footprint_bins_) b /= 2;
      for (double& b : footprint_reuse_bins_) b /= 2;
      weight_ /= 2;
      fresh -= step;
      since_halved_ = 0;
    }
    reads_ += static_cast<double>(fresh);
    since_halved_ += fresh;
  }

  // Forgets the counts (then call Advance before HitRatios).
  void Reset() {
    std::fill(bins_.begin(), bins_.end(), 0.0);
    std::fill(footprint_bins_.begin(), footprint_bins_.end(), 0.0);
    std::fill(footprint_reuse_bins_.begin(), footprint_reuse_bins_.end(), 0.0);
    weight_ = 0;
    reads_ = 0;
  }

  // REQUIRES: Advance was called just before.
  std::vector<double> HitRatios(const std::vector<uint64_t>& capacities) const {
    const double n = reads_;
    std::vector<double> out(capacities.size(), 0.0);
    if (n <= 0 || weight_ <= 0) return out;
    const Cumulative hits(bins_);  // a read at distance d hits a cache of k pages when d < k
    if (by_footprint_) {
      const Cumulative told(footprint_bins_), reuses(footprint_reuse_bins_);
      // Sizes beyond what a quarter of the reads can tell are read at the largest that they can.
      const uint64_t reach = told.Quantile(0.75);
      for (size_t i = 0; i < capacities.size(); ++i) {
        const uint64_t k = std::min(capacities[i], reach);
        if (k == 0) continue;
        // Reads made before the curve had seen k pages cannot tell a cache of k pages (a first
        // read then may be a reuse at a distance below k of a read before the start); every
        // reuse among them lies below k. Counted over the rest:
        const double eligible = weight_ - told.Below(k);
        if (eligible <= 0) continue;
        out[i] = std::clamp((hits.Below(k) - reuses.Below(k)) / eligible, 0.0, 1.0);
      }
      return out;
    }
    for (size_t i = 0; i < capacities.size(); ++i) {
      const uint64_t k = capacities[i];
      if (k == 0) continue;
      const double miss = (weight_ - hits.Below(k)) / (by_samples_ ? weight_ : n);
      out[i] = std::clamp(1.0 - miss, 0.0, 1.0);
    }
    return out;
  }

 private:
  struct Slot {
    uint64_t hash = 0;  // 0: empty
    uint32_t time = 0;
  };

  // ---- the page table: open addressing, linear probing, backward-shift deletion ----
  size_t Home(uint64_t hash) const { return hash & (table_.size() - 1); }
  Slot* Find(uint64_t hash) {
    for (size_t i = Home(hash);; i = (i + 1) & (table_.size() - 1)) {
      if (table_[i].hash == hash) return &table_[i];
      if (table_[i].hash == 0) return nullptr;
    }
  }
  Slot* Insert(uint64_t hash) {
    size_t i = Home(hash);
    while (table_[i].hash != 0) i = (i + 1) & (table_.size() - 1);
    table_[i].hash = hash;
    return &table_[i];
  }
  void Erase(Slot* slot) {
    const size_t mask = table_.size() - 1;
    size_t hole = static_cast<size_t>(slot - table_.data());
    for (size_t i = (hole + 1) & mask; table_[i].hash != 0; i = (i + 1) & mask) {
      // Move an entry back into the hole unless its home lies cyclically in (hole, i].
      const size_t home = Home(table_[i].hash);
      if (((i - home) & mask) >= ((i - hole) & mask)) {
        table_[hole] = table_[i];
        hole = i;
      }
    }
    table_[hole] = Slot{};
  }
  void Rehash(size_t slots) {
    std::vector<Slot> old = std::move(table_);
    table_.assign(slots, Slot{});
    for (const Slot& s : old) {
      if (s.hash != 0) *Insert(s.hash) = s;
    }
  }

  // ---- the bitmap over times and the Fenwick tree over its words' popcounts ----
  static constexpr size_t kMinTimes = 1024;  // a power of two, a multiple of 64

  // Sets (+1) or clears (-1) the bit of `time`. REQUIRES: it is clear / set.
  void Flip(size_t time, int delta) {
    bits_[time / 64] ^= 1ull << (time % 64);
    for (size_t i = time / 64 + 1; i < word_tree_.size(); i += i & (~i + 1)) {
      word_tree_[i] += delta;
    }
  }
  // Ones in [0, time].
  uint64_t OnesThrough(size_t time) const {
    const size_t word = time / 64;
    uint64_t ones = std::popcount(bits_[word] & (~0ull >> (63 - time % 64)));
    for (size_t i = word; i > 0; i -= i & (~i + 1)) ones += word_tree_[i];  // words < `word`
    return ones;
  }
  // Renumbers the tracked pages' times 0..keys-1 in their order (each page's new time is its
  // rank: the ones before its bit), into a bitmap of `size` times.
  void Compact(size_t size) {
    std::vector<uint32_t> before(bits_.size() + 1, 0);  // ones in the words before each word
    for (size_t w = 0; w < bits_.size(); ++w) before[w + 1] = before[w] + std::popcount(bits_[w]);
    for (Slot& slot : table_) {
      if (slot.hash == 0 || slot.time >= now_) continue;
      const size_t w = slot.time / 64;
      const uint64_t below = bits_[w] & ((1ull << (slot.time % 64)) - 1);
      slot.time = before[w] + static_cast<uint32_t>(std::popcount(below));
    }
    const size_t live = before.back();
    times_ = size;
    bits_.assign(size / 64, 0);
    for (size_t t = 0; t < live; ++t) bits_[t / 64] |= 1ull << (t % 64);
    // Linear build of the word tree from the words' popcounts.
    word_tree_.assign(size / 64 + 1, 0);
    for (size_t i = 1; i < word_tree_.size(); ++i) {
      word_tree_[i] += static_cast<uint32_t>(std::popcount(bits_[i - 1]));
      const size_t parent = i + (i & (~i + 1));
      if (parent < word_tree_.size()) word_tree_[parent] += word_tree_[i];
    }
    now_ = live;
  }

  // Lowers T to the largest t tracked and forgets every page at or above it.
  void LowerRate() {
    const uint32_t t_max = heap_.top().first;
    while (!heap_.empty() && heap_.top().first >= t_max) {
      Slot* slot = Find(heap_.top().second);
      Flip(slot->time, -1);
      Erase(slot);
      --keys_;
      heap_.pop();
    }
    threshold_ = t_max;
  }

  const uint32_t max_keys_;
  uint32_t threshold_;
  const uint64_t half_life_;
  const bool by_samples_;
  const bool by_footprint_;
  uint64_t reuses_ = 0;  // Access calls that found their page tracked
  uint32_t keys_ = 0;

  std::vector<Slot> table_;
  std::vector<uint64_t> bits_;        // a 1 at each tracked page's time
  std::vector<uint32_t> word_tree_;   // Fenwick tree over bits_'s popcounts, [1..words]
  size_t times_ = 0;                  // times before the next Compact
  size_t now_ = 0;                    // the next time
  std::priority_queue<std::pair<uint32_t, uint64_t>> heap_;  // (t, hash) of tracked pages

  std::vector<double> bins_;    // weight of sampled reuses by scaled distance
  double weight_ = 0;           // weight of all sampled reads (reuses and first reads)
  // Config::by_footprint: the weight of sampled reads, and of the reuses among them, by the
  // distinct pages (scaled) read before each.
  std::vector<double> footprint_bins_;
  std::vector<double> footprint_reuse_bins_;
  double reads_ = 0;            // N: reads recorded, less those dropped, aged
  uint64_t seen_reads_ = 0;     // the owner's counters at the last Advance
  uint64_t seen_drops_ = 0;
  uint64_t since_halved_ = 0;   // reads since N was last halved
};

// The engine's settings, from bench/mrc_accuracy (the replay's 80/20, uniform and zipf:0.9 traces,
// K = 4 Ki pages, the cache's size) and from reads of a fully cached engine:
//  - max_keys. The error is sampling noise, about 1/sqrt(pages tracked) of the miss ratio (which
//    pages fall in the sample). Over 16 Ki pages, 8 Ki keys (rate 1/2) kept every size from K/4 to
//    4K within 0.9 points of exact LRU and K/64 within 4.5; 4 Ki keys within 2.5 and 4.6; 2 Ki
//    keys within 2.3 and 11. Over 128 Ki pages, 8 Ki keys (rate 1/16): within 0.9 and 2. Memory:
//    ~500 KiB (page table 256, heap 128, ring 64, histogram 58; the bitmap ~5).
//  - the rate cap. A sampled read costs the engine's read path a cache miss on the page table
//    (the engine's page copies keep it out of cache), an unsampled one a hash and a compare. Over
//    a small data set the bound on keys alone would sample every read; at one in two a raw hit's
//    extra cost stays a small fraction of the µs per buffer. The cap binds only below 16 Ki
//    distinct pages.
//  - the half-life: a point at 4K needs reuses of up to 4K pages seen many times over.
MissRatioCurve::Config MissRatioCurve::Config::ForCache(uint64_t cache_pages) {
  Config c;
  c.max_keys = 8192;
  c.initial_rate = 0.5;
  c.half_life_reads = 64 * std::max<uint64_t>(cache_pages, 1);
  return c;
}

MissRatioCurve::Config MissRatioCurve::Config::ForKernelTier(uint64_t cache_pages) {
  Config c = ForCache(cache_pages);
  c.initial_rate = std::min(c.initial_rate, kKernelRate);
  c.normalize_by_samples = true;
  c.by_footprint = true;
  return c;
}

MissRatioCurve::MissRatioCurve(const Config& config)
    : threshold_(static_cast<uint32_t>(
          std::clamp(std::ceil(config.initial_rate * kFullThreshold), 1.0,
                     static_cast<double>(kFullThreshold)))),
      ring_(new RingSlot[std::bit_ceil(std::max<uint32_t>(config.ring_slots, 2))]),
      ring_mask_(std::bit_ceil(std::max<uint32_t>(config.ring_slots, 2)) - 1),
      stack_(std::make_unique<Stack>(config, threshold_.load())) {
  for (uint64_t i = 0; i <= ring_mask_; ++i) ring_[i].seq.store(i, std::memory_order_relaxed);
}

MissRatioCurve::~MissRatioCurve() = default;

void MissRatioCurve::RecordSampled(uint64_t hash) {
  // A full ring drops this sample but still wants draining: go on to the lock.
  if (!Push(hash)) drops_.fetch_add(1, std::memory_order_relaxed);
  // Held: the holder, or the next reader to get it, processes the ring. Never wait here.
  if (!mu_.TryLock()) return;
  DrainLocked(kMaxDrainPerRecord);
  mu_.Unlock();
}

bool MissRatioCurve::Push(uint64_t hash) {
  uint64_t pos = ring_tail_.load(std::memory_order_relaxed);
  for (;;) {
    RingSlot& slot = ring_[pos & ring_mask_];
    const uint64_t seq = slot.seq.load(std::memory_order_acquire);
    const int64_t lag = static_cast<int64_t>(seq - pos);
    if (lag == 0) {
      if (ring_tail_.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) {
        slot.hash = hash;
        slot.seq.store(pos + 1, std::memory_order_release);
        return true;
      }
    } else if (lag < 0) {
      return false;  // the slot still holds the sample of the previous lap: full
    } else {
      pos = ring_tail_.load(std::memory_order_relaxed);  // another producer took it
    }
  }
}

void MissRatioCurve::DrainLocked(int max) const {
  uint64_t processed = 0;
  for (int i = 0; i < max; ++i) {
    RingSlot& slot = ring_[ring_head_ & ring_mask_];
    // Not yet written (empty, or a producer between its claim and its store): stop; the sample is
    // taken by a later drain, in order.
    if (slot.seq.load(std::memory_order_acquire) != ring_head_ + 1) break;
    const uint64_t hash = slot.hash;
    slot.seq.store(ring_head_ + ring_mask_ + 1, std::memory_order_release);
    ++ring_head_;
    processed += stack_->Access(hash, SampleValue(hash));
  }
  if (processed == 0) return;
  // The shared words are written only when they change: every reader loads threshold_, and a
  // store would take its cache line away from all of them.
  const uint64_t samples = samples_.load(std::memory_order_relaxed) + processed;
  samples_.store(samples, std::memory_order_relaxed);
  reuses_.store(stack_->reuses(), std::memory_order_relaxed);
  // Aging and the drop correction need the read count, a sum over every shard's cache line: once
  // per kAdvanceEvery samples (and at every query) is often enough.
  if ((samples - processed) / kAdvanceEvery != samples / kAdvanceEvery) {
    stack_->Advance(TotalReads(), drops_.load(std::memory_order_relaxed));
  }
  PublishCovered();
  // A reader that sees the lower threshold stops sampling pages the stack no longer tracks.
  if (stack_->threshold() != threshold_.load(std::memory_order_relaxed)) {
    threshold_.store(stack_->threshold(), std::memory_order_relaxed);
  }
  if (stack_->keys() != keys_.load(std::memory_order_relaxed)) {
    keys_.store(stack_->keys(), std::memory_order_relaxed);
  }
}

uint64_t MissRatioCurve::TotalReads() const {
  uint64_t total = 0;
  for (const ReadShard& s : read_shards_) total += s.n.load(std::memory_order_relaxed);
  return total;
}

std::vector<double> MissRatioCurve::HitRatios(const std::vector<uint64_t>& capacities) const {
  MutexLock lock(&mu_);
  DrainLocked(static_cast<int>(ring_mask_ + 1));
  stack_->Advance(TotalReads(), drops_.load(std::memory_order_relaxed));
  PublishCovered();
  return stack_->HitRatios(capacities);
}

void MissRatioCurve::ResetCounts() {
  MutexLock lock(&mu_);
  DrainLocked(static_cast<int>(ring_mask_ + 1));
  stack_->Advance(TotalReads(), drops_.load(std::memory_order_relaxed));
  stack_->Reset();
  PublishCovered();
}

void MissRatioCurve::PublishCovered() const {
  covered_.store(static_cast<uint64_t>(std::max(0.0, stack_->covered())),
                 std::memory_order_relaxed);
}

MissRatioCurve::Counts MissRatioCurve::counts() const {
  Counts c;
  c.reads = TotalReads();
  c.samples = samples_.load(std::memory_order_relaxed);
  c.reuses = reuses_.load(std::memory_order_relaxed);
  c.drops = drops_.load(std::memory_order_relaxed);
  c.rate = static_cast<double>(threshold_.load(std::memory_order_relaxed)) / kFullThreshold;
  c.keys = keys_.load(std::memory_order_relaxed);
  c.covered = covered_.load(std::memory_order_relaxed);
  return c;
}

ExactLruCurve::ExactLruCurve(uint64_t max_reads) : tree_(max_reads + 1, 0) {}

void ExactLruCurve::Record(uint64_t key, bool count) {
  const size_t size = tree_.size() - 1;
  auto add = [&](uint64_t time, int delta) {
    for (size_t i = time + 1; i <= size; i += i & (~i + 1)) tree_[i] += delta;
  };
  counted_ += count;
  auto [it, first] = last_.try_emplace(key, now_);
  if (!first) {
    // Keys read since: those whose last read is later than this key's.
    uint64_t before = 0;
    for (size_t i = it->second + 1; i > 0; i -= i & (~i + 1)) before += tree_[i];
    const uint64_t d = last_.size() - before;
    if (count) {
      if (d >= hist_.size()) hist_.resize(d + 1, 0);
      hist_[d]++;
    }
    add(it->second, -1);
    it->second = now_;
  }
  add(now_++, +1);
}

std::vector<double> ExactLruCurve::HitRatios(const std::vector<uint64_t>& capacities) const {
  std::vector<double> out;
  for (uint64_t k : capacities) {
    uint64_t hits = 0;
    for (uint64_t d = 0; d < std::min<uint64_t>(k, hist_.size()); ++d) hits += hist_[d];
    out.push_back(counted_ ? static_cast<double>(hits) / counted_ : 0.0);
  }
  return out;
}

}  // namespace ccfs::cache
