// SplitTuner: while the engine serves, predicts the hit ratio and µs per buffer of every split
// (compressed_percent) and codec, and with "auto" (compressed_percent = auto, compressor = auto)
// moves the engine to the best one, slowly.
//
// 1. The prediction. It is `ccfs advise`'s (model/split_prediction.h PredictSplits over
//    model/cache_model.h), fed live with the four inputs of section 2.
//
// 2. The inputs.
//   the workload's reuse   the engine's miss-ratio curve (mrc.h: SHARDS sampling of the reads),
//                          read as S(k), the hit ratio of an LRU cache of k pages; its miss ratio
//                          then scaled so that the prediction at the split in force matches the
//                          hit ratio the engine measured over the window (the engine's GCLOCK with
//                          probation is not LRU: it hits a few points more on skewed laws, mrc.h);
//   the data's compressibility  a sample of the raw tier's victims (VictimSample: one in 16,
//                          copied by the evictor thread, 512 KiB kept), compressed and decompressed
//                          here with each codec the decision may choose — the pages actually
//                          cached, off the read path, whatever compressed_percent is (so C = 0
//                          learns ratios too);
//                          the share kept taken back from the victims' to the reads' pages
//                          (ReadsKeptFraction: a compressed tier's misses are mostly of pages it
//                          cannot keep);
//                          averaged over decisions (kProfileWeight), since one sample is 64 pages,
//                          restarted when two samples running say the data read has moved
//                          (kProfileShift: the hot set went from text to media, say);
//   the paths' costs       the window's mean raw-hit and miss latencies (the engine's histograms),
//                          the sampled codecs' µs per page (a compressed hit = decompression plus
//                          the raw hit's copy), and the compressions per read: the window's
//                          compressions per eviction times the raw tier's predicted misses (every
//                          page entering the raw tier pushes one victim out), all victims when the
//                          window has none to go by (C = 0);
//   the compression charge  ccfs compresses in the background, on the pool's threads: readers pay
//                          for a compression only as far as it takes their CPU. How far is
//                          measured: at a split with a compressed tier, the window's measured µs
//                          per buffer less the prediction's other terms, over its compression
//                          term, clamped to [0, 1] and smoothed over decisions. Until a window at
//                          C > 0 has said, a prior of kPriorCompressCharge.
//
// 3. Which µs per buffer. Under raw_tier = daemon it is the engine's (CacheStats::us_per_buffer):
//    the FUSE trip is the same at every split, so it does not move the choice.
//    Under raw_tier = kernel the kernel answers the raw hits unseen, so the tuner predicts only
//    with a key under auto, and from what the readers see, trip included:
//    - the curve: the engine keeps the pages its curve samples out of the kernel
//      (PageCache::KeepsFromKernel), so every read of them reaches it and the curve (normalised
//      by its sampled weight) is the readers' whole reuse;
//    - the prediction: the model's kernel mode (cache_model.h): a kernel hit costs
//      kernel_hit_us, a compressed hit or a miss a trip plus the daemon's work;
//    - the trip: measured each decision by the layer above (Engine::TripUs: a FUSE round trip to
//      this daemon); no decision without it;
//    - no anchoring (the readers' hit ratio is not seen); the compression charge is measured as
//      in daemon mode, over the reads that reached the engine;
//    - an applied split moves the kernel's share too (Engine::SplitApplied).
//
// 4. Decisions (every auto_interval seconds, once the window holds kMinWindowReads reads, the
//    curve has seen kMinCurveReuses reuses and stands for kCurveSpan times the reads of the
//    largest cache a candidate split makes). The best prediction among the splits auto may
//    choose must beat the split in force by kMinGain, and lie the same way from it (with the same codec) in two decisions running (hysteresis); then
//    compressed_percent moves towards the latest by at most auto_max_step points, and the codec
//    switches; each later decision that still agrees moves another step. The window after a
//    change is skipped (the tiers are refilling, so neither its hit ratio nor its costs describe
//    either split).
//
// 5. Cost. The curve's lock held briefly per decision, one copy of a page per 16 victims on the
//    evictor thread, and per decision 64 pages compressed and decompressed once per codec, on the
//    tuner's thread. Nothing here ever makes a read wait.
//
// Thread-safety: VictimSample::Offer from the evictor thread only, Take from any thread.
// SplitTuner's thread calls the Engine; Fill and Step may be called from any thread (Step is
// serialised with the thread by a mutex).
#ifndef CCFS_CACHE_SPLIT_TUNER_H_
#define CCFS_CACHE_SPLIT_TUNER_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "ccfs/options.h"
#include "ccfs/page_cache.h"
#include "ccfs/stats.h"
#include "ccfs/status.h"
#include "config/memory_bound.h"
#include "model/codec_profile.h"
#include "model/split_prediction.h"
#include "util/mutex.h"

namespace ccfs::cache {

// A few pages the raw tier evicted, kept as bytes for the tuner's codec measurements.
class VictimSample {
 public:
  static constexpr uint32_t kEvery = 16;  // one victim in kEvery is copied
  // The newest copies kept: 512 KiB of pages, at least 16 and at most 64 of them.
  static size_t SlotsFor(uint32_t page_size);

  explicit VictimSample(uint32_t page_size);

  // Evictor thread: a victim's bytes (stable while it is kEvicting). Cheap unless it is the
  // kEvery-th: then one copy under the mutex.
  void Offer(const char* page, uint32_t length) EXCLUDES(mu_);
  // The pages held now.
  std::vector<std::vector<char>> Take() const EXCLUDES(mu_);

 private:
  const uint32_t page_size_;
  const size_t slots_wanted_;
  uint64_t offered_ = 0;  // evictor thread only
  mutable Mutex mu_;
  std::vector<std::vector<char>> slots_ GUARDED_BY(mu_);
  size_t next_ GUARDED_BY(mu_) = 0;
};

// What the tuner measured over one window of reads (between two decisions).
struct TunerWindow {
  uint64_t reads = 0;
  double hit_ratio = 0;           // the engine's, over the window
  double raw_hit_us = 0;          // mean, µs; 0 if no raw hit
  double miss_us = 0;             // mean, µs; 0 if no miss
  double us_per_buffer = 0;       // the engine's, all paths
  uint64_t misses = 0;
  uint64_t compressed_hits = 0;
  uint64_t promotions = 0;
  uint64_t evictions = 0;
  uint64_t compressions = 0;
  // The window between two snapshots of the engine's counters.
  static TunerWindow Between(const CacheStats& before, const CacheStats& after);
};

// Inputs of one prediction, all measured (see the top of this file).
struct LiveInputs {
  uint64_t memory_bytes = 0;
  uint32_t page_size = 8192;
  std::vector<PageCache::CurvePoint> curve;  // REQUIRES: sizes ascending
  double curve_miss_scale = 1;  // the curve's miss ratios are multiplied by it (hit clamped to [0, 1])
  double raw_hit_us = 1;
  double miss_us = 100;
  // Compressions per page entering the raw tier (the window's compressions / evictions), or 1.
  double admitted_per_victim = 1;
  // The share of a compression's time that readers wait for, 0..1 (see the top of this file).
  double compress_charge = 1;
  // raw_tier = kernel: the readers' µs per buffer, a kernel hit costing kernel_hit_us and every
  // read that reaches the engine trip_us more than its work there. kDaemon: the engine's.
  RawTierMode raw_tier = RawTierMode::kDaemon;
  double trip_us = 0;
  // raw_tier = kernel: the raw level's pages at a split (AdviseInputs::raw_pages_at); empty: its
  // share of memory_bytes.
  std::function<double(int percent)> raw_pages_at;
  std::vector<CodecProfile> codecs;  // each codec the prediction covers
  std::vector<int> percents;         // ascending
};

// The curve read as S(k): linear in log k between its points, 0 at k = 0, flat beyond its last
// point; its miss ratio then scaled by miss_scale, the hit ratio clamped to [0, 1].
double CurveHitRatio(const std::vector<PageCache::CurvePoint>& curve, double miss_scale,
                     double pages);

// The share of the pages read that a codec keeps, from `victims_kept`, the share of the raw tier's
// victims it keeps, over window `w`. The victims are the pages entering the raw tier: misses and
// promotions. A compressed tier holding the pages it can keep turns their misses into hits, so
// the misses, and the victims with them, over-represent the pages it cannot keep. Of the reads,
// raw hits are of any page, compressed hits of kept ones; so the share is (compressed hits + kept
// misses) / (compressed hits + misses), the kept misses being the kept victims less the
// promotions. `victims_kept` itself while the window has no compressed hit.
double ReadsKeptFraction(double victims_kept, const TunerWindow& w);

// One row per (percent, codec), as PredictSplits gives them.
std::vector<AdviseRow> PredictLive(const LiveInputs& in);

// The splits compressed_percent may take: 0, 5, .., 90 and `current`, those leaving the raw tier
// kMinRawPages pages (config/keys.h) and, under raw_tier = kernel, fitting `host` with the daemon's
// tiers, holding `tiers_now` bytes now, at their budgets there (config/memory_bound.h
// CheckSplitFits: the daemon holds the compressed tier, so a higher split needs more of the memory
// cgroup's room), ascending. The mount checks only the split it starts from; auto must not move
// beyond what the cgroup holds.
std::vector<int> CandidatePercents(const Options& o, const HostMemory& host = {},
                                   uint64_t tiers_now = 0);

// raw_tier = kernel: the largest of `o`'s compressed_percent and the multiples of 5 below it that
// fits as CandidatePercents says; 0 when none does (the least the daemon can hold).
int FittingPercentAtMost(const Options& o, const HostMemory& host, uint64_t tiers_now);

// Whether two samples running, `a` then `b`, both lie away from the codec's running average the
// same way by more than SplitTuner::kProfileShift: in the share of pages kept (absolute) or in
// charged bytes per logical byte (relative to the average's). REQUIRES: every ratio > 0.
bool ProfileMoved(const CodecProfile& average, const CodecProfile& a, const CodecProfile& b);

// The hysteresis: remembers the last recommendation and how many decisions in a row made it.
class SplitDecider {
 public:
  static constexpr double kMinGain = 0.03;  // predicted µs per buffer at least 3% below
  static constexpr int kAgreeing = 2;       // decisions in a row recommending a split the same way

  struct Decision {
    bool change = false;
    int percent = 0;           // what to apply (== current when !change)
    CodecKind codec = CodecKind::kLz4;
    const AdviseRow* best = nullptr;     // the recommendation (null: no row)
    const AdviseRow* current = nullptr;  // the split in force (null: not among the rows)
  };
  // Among `rows`, the best one `o` lets auto choose (compressed_percent_auto: any percent, else
  // o's; compressor_auto: any codec, else o's); a change when it beats the split in force by
  // kMinGain for the kAgreeing-th decision running (and every one after it that agrees), moving at
  // most auto_max_step points.
  Decision Decide(const std::vector<AdviseRow>& rows, const Options& o);
  void Reset() { streak_ = 0; }

 private:
  int last_way_ = 0;  // the last recommendation's direction from the split in force: -1, 0, +1
  CodecKind last_codec_ = CodecKind::kLz4;
  int streak_ = 0;
};

class SplitTuner {
 public:
  // What the tuner needs of the engine (PageCache::Impl implements it). Stats and ApplySplit are
  // called without the tuner's mutex, since the engine's Stats calls Fill; HitRatioCurve and
  // options may be called with it held.
  class Engine {
   public:
    virtual ~Engine() = default;
    virtual CacheStats Stats() const = 0;
    virtual std::vector<PageCache::CurvePoint> HitRatioCurve() const = 0;
    virtual Options options() const = 0;
    // Applies a split and codec found by auto (the engine keeps a key not under auto as it is).
    virtual Status ApplySplit(int percent, CodecKind codec) = 0;
    // raw_tier = kernel (page_cache.h KernelSide): one FUSE round trip now, in µs (<= 0: unknown),
    // and the hook that has the kernel's share follow an applied split. Called without mu_.
    virtual double TripUs() { return 0; }
    virtual void SplitApplied() {}
    // Reads the curve has seen of a page it had seen before (MissRatioCurve::Counts::reuses).
    virtual uint64_t CurveReuses() const { return kMinCurveReuses; }
    // The reads the curve stands for (MissRatioCurve::Counts::covered).
    virtual uint64_t CurveReads() const { return UINT64_MAX; }
    // The machine and the memory cgroup the daemon is in, now: read at every step, since the
    // daemon may be moved into a cgroup after its mount (ccfs replay does).
    virtual HostMemory Host() const { return HostMemory::Read(); }
  };
  static constexpr uint64_t kMinWindowReads = 4096;
  // No prediction until the curve has seen this many reuses of its sampled pages. Before, its
  // reads are mostly first reads: a flat curve, by which every split hits alike and compressing
  // only costs, so a cache still filling would be moved towards C = 0 before its reuse shows
  // (the sample is small under raw_tier = kernel: one page in 128).
  static constexpr uint64_t kMinCurveReuses = 256;
  // Predictions are shown, but no split is recommended or chosen, until the curve stands for
  // kCurveSpan times as many reads as the largest cache a candidate split makes (its raw pages
  // plus the pages its compressed tier holds at the measured ratio). A young curve has seen reuse
  // only at the distances its reads have had time to reach: it is flat beyond the pages read so
  // far, by which a larger compressed tier gains nothing and only takes pages from the raw tier,
  // so a cache in its first pass over data larger than itself would be moved towards C = 0, then
  // back. After 2K uniform reads over D >= K pages, D (1 - e^(-2K/D)) >= 0.86 K pages have been
  // read: the curve reaches most of the way to the largest cache.
  static constexpr double kCurveSpan = 2;
  // The share of compression time readers are taken to wait for before any measurement: the pool
  // runs beside them (compress_threads leaves them a CPU by default), so not all of it, but on a
  // small machine some.
  static constexpr double kPriorCompressCharge = 0.25;
  // The weight of the newest sample in the codecs' profiles, averaged over decisions.
  static constexpr double kProfileWeight = 0.125;
  // The data moved, not the sample's noise: two samples running both away from the average, the
  // same way, by more than this in the share of pages kept or in charged bytes per logical byte
  // (relative). The average then restarts from those two.
  static constexpr double kProfileShift = 0.2;

  // Tests drive Step themselves; the engine calls Start once it holds the tuner, so the thread
  // never sees a half-built owner (its Stats reads the owner's pointer to this tuner). `engine`
  // and `sample` must outlive the tuner.
  SplitTuner(Engine* engine, const VictimSample* sample);
  ~SplitTuner();
  SplitTuner(const SplitTuner&) = delete;
  SplitTuner& operator=(const SplitTuner&) = delete;

  // Starts the thread that calls Step every auto_interval.
  void Start();
  // Stops and joins the thread.
  void Stop();
  // Looks at the reads since the last window: Measure, Predict, Decide (a recommendation; under
  // auto, a change) and Apply. First, under raw_tier = kernel with compressed_percent = auto, a
  // split in force that no longer fits the memory cgroup (FittingPercentAtMost) is left at once,
  // without a window or the decider's hysteresis: the cgroup's OOM killer would end the mount.
  void Step() EXCLUDES(mu_);
  // The latest prediction into `s` (predicted, recommended_*, predicted_us_per_buffer,
  // split_waiting*, split_changes).
  void Fill(CacheStats* s) const EXCLUDES(mu_);

 private:
  void Loop();

  // Step's parts, in order. Measure: the window since the last one and what was measured over it
  // (the paths' costs, the codecs' profiles); false while there is nothing to predict from (the
  // window is short, or skipped after a change, or no codec has a profile).
  // `trip_us`: raw_tier = kernel's measured trip (<= 0: none, no prediction then).
  bool Measure(const Options& o, const CacheStats& now, double trip_us, TunerWindow* w)
      REQUIRES(mu_);
  // The codecs' profiles: the victims sampled lately, averaged over decisions.
  void ProfileCodecs(const Options& o) REQUIRES(mu_);
  // Predict: every split's and codec's row, anchored at the split in force and exported for Fill;
  // false, with nothing exported, without a curve or a candidate split.
  bool Predict(const Options& o, const TunerWindow& w, std::vector<AdviseRow>* rows)
      REQUIRES(mu_);
  // Whether the curve stands for enough reads to tell the rows' caches apart (kCurveSpan).
  bool CurveSpansCandidates(const std::vector<AdviseRow>& rows) REQUIRES(mu_);
  // What the step waits for instead of deciding, for Fill (CacheStats::split_waiting); "" once it
  // decides. Each early return of Step's parts says why.
  void Wait(const char* what, uint64_t have = 0, uint64_t need = 0) REQUIRES(mu_);
  // Decide: the recommendation for Fill, and under auto whether to change (the decider's
  // hysteresis).
  SplitDecider::Decision Decide(const Options& o, const std::vector<AdviseRow>& rows)
      REQUIRES(mu_);
  // Apply: hands the change to the engine, then starts a window after it that will be skipped.
  // Without mu_: the engine's Stats reads Fill.
  void Apply(int percent, CodecKind codec) EXCLUDES(mu_);

  Engine* const engine_;
  const VictimSample* const sample_;

  mutable Mutex mu_;
  bool have_base_ GUARDED_BY(mu_) = false;
  CacheStats base_ GUARDED_BY(mu_);
  int skip_windows_ GUARDED_BY(mu_) = 0;
  double raw_hit_us_ GUARDED_BY(mu_) = 0;  // the latest window's that had enough of each
  double miss_us_ GUARDED_BY(mu_) = 0;
  double admitted_ GUARDED_BY(mu_) = 1;
  double compress_charge_ GUARDED_BY(mu_) = kPriorCompressCharge;
  double trip_us_ GUARDED_BY(mu_) = 0;  // raw_tier = kernel: smoothed over decisions
  std::vector<CodecProfile> codecs_ GUARDED_BY(mu_);
  std::vector<CodecProfile> last_sample_ GUARDED_BY(mu_);  // the previous decision's, unaveraged
  SplitDecider decider_ GUARDED_BY(mu_);
  std::vector<SplitPrediction> predicted_ GUARDED_BY(mu_);
  int recommended_percent_ GUARDED_BY(mu_) = -1;
  int recommended_codec_ GUARDED_BY(mu_) = 0;
  double predicted_us_ GUARDED_BY(mu_) = 0;
  HostMemory host_ GUARDED_BY(mu_);  // this step's: the machine and cgroup the splits must fit
  uint64_t tiers_now_ GUARDED_BY(mu_) = 0;  // the bytes the daemon's tiers hold at this step
  const char* waiting_ GUARDED_BY(mu_) = split_waiting::kWindow;  // a string literal
  uint64_t waiting_have_ GUARDED_BY(mu_) = 0;
  uint64_t waiting_need_ GUARDED_BY(mu_) = kMinWindowReads;
  std::atomic<uint64_t> changes_{0};

  Mutex wake_mu_;
  CondVar wake_;
  bool stop_ GUARDED_BY(wake_mu_) = false;
  std::thread thread_;
};

}  // namespace ccfs::cache

#endif  // CCFS_CACHE_SPLIT_TUNER_H_
