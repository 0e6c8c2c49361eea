// The split tuner (see split_tuner.h): a window of the engine's counters, the sampled curve and
// victims, ccfs advise's prediction, and a slow, hysteretic decision.
#include "cache/split_tuner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <string_view>

#include <pthread.h>

#include "cache/model_facts.h"
#include "config/keys.h"

namespace ccfs::cache {

// ---- VictimSample ---------------------------------------------------------------------------------

size_t VictimSample::SlotsFor(uint32_t page_size) {
  return std::clamp<size_t>((512u << 10) / std::max<uint32_t>(page_size, 1), 16, 64);
}

VictimSample::VictimSample(uint32_t page_size)
    : page_size_(page_size), slots_wanted_(SlotsFor(page_size)) {}

void VictimSample::Offer(const char* page, uint32_t length) {
  if (offered_++ % kEvery != 0) return;
  const uint32_t n = std::min(length, page_size_);
  MutexLock lock(&mu_);
  if (slots_.size() < slots_wanted_) {
    slots_.emplace_back(page, page + n);
    return;
  }
  slots_[next_].assign(page, page + n);
  next_ = (next_ + 1) % slots_wanted_;
}

std::vector<std::vector<char>> VictimSample::Take() const {
  MutexLock lock(&mu_);
  return slots_;
}

// ---- the window -----------------------------------------------------------------------------------

TunerWindow TunerWindow::Between(const CacheStats& before, const CacheStats& after) {
  TunerWindow w;
  w.reads = after.reads - before.reads;
  const uint64_t hits = (after.raw_hits - before.raw_hits) +
                        (after.compressed_hits - before.compressed_hits);
  w.hit_ratio = w.reads ? static_cast<double>(hits) / w.reads : 0;
  const HistogramSnapshot raw = after.raw_hit_latency.Since(before.raw_hit_latency);
  const HistogramSnapshot miss = after.miss_latency.Since(before.miss_latency);
  w.raw_hit_us = raw.mean_us();
  w.miss_us = miss.mean_us();
  w.misses = miss.count();
  const HistogramSnapshot comp = after.compressed_hit_latency.Since(before.compressed_hit_latency);
  w.us_per_buffer =
      w.reads ? static_cast<double>(raw.sum_ns() + comp.sum_ns() + miss.sum_ns()) / w.reads / 1e3
              : 0;
  w.compressed_hits = after.compressed_hits - before.compressed_hits;
  w.promotions = after.promotions - before.promotions;
  w.evictions = after.evictions - before.evictions;
  w.compressions = after.compressions - before.compressions;
  return w;
}

// ---- the prediction -------------------------------------------------------------------------------

double ReadsKeptFraction(double victims_kept, const TunerWindow& w) {
  const double hits = static_cast<double>(w.compressed_hits);
  const double misses = static_cast<double>(w.misses);
  const double promoted = static_cast<double>(w.promotions);
  if (hits <= 0 || misses <= 0) return victims_kept;
  const double kept_misses = std::clamp(victims_kept * (misses + promoted) - promoted, 0.0, misses);
  return std::clamp((hits + kept_misses) / (hits + misses), victims_kept, 1.0);
}

double CurveHitRatio(const std::vector<PageCache::CurvePoint>& curve, double miss_scale,
                     double pages) {
  double hit = 0;
  if (curve.empty() || pages <= 0) {
    hit = 0;
  } else if (pages <= static_cast<double>(curve.front().pages)) {
    // Towards 0 pages, 0 hits: linear below the first point.
    hit = curve.front().hit_ratio * pages / static_cast<double>(curve.front().pages);
  } else if (pages >= static_cast<double>(curve.back().pages)) {
    hit = curve.back().hit_ratio;
  } else {
    size_t i = 1;
    while (static_cast<double>(curve[i].pages) < pages) ++i;
    const double a = std::log(static_cast<double>(curve[i - 1].pages));
    const double b = std::log(static_cast<double>(curve[i].pages));
    const double t = b > a ? (std::log(pages) - a) / (b - a) : 1.0;
    hit = curve[i - 1].hit_ratio + t * (curve[i].hit_ratio - curve[i - 1].hit_ratio);
  }
  if (pages <= 0) return 0;
  return std::clamp(1.0 - (1.0 - hit) * miss_scale, 0.0, 1.0);
}

std::vector<AdviseRow> PredictLive(const LiveInputs& in) {
  AdviseInputs a;
  a.memory_bytes = in.memory_bytes;
  a.page_size = in.page_size;
  // The curve reaches 4x memory; beyond it S is flat, so a data set that large bounds nothing.
  a.dataset_pages = std::max<uint64_t>(in.curve.empty() ? 1 : in.curve.back().pages,
                                       4 * in.memory_bytes / std::max<uint32_t>(in.page_size, 1));
  a.raw_tier = in.raw_tier;
  a.costs.hit_us = in.raw_hit_us;
  a.costs.disk_us = in.miss_us;
  // kDaemon: the engine's µs per buffer, the trip being the same at every split (in.trip_us 0).
  a.costs.trip_us = in.trip_us;
  a.codecs = in.codecs;
  a.percents = in.percents;
  a.raw_pages_at = in.raw_pages_at;
  const std::vector<PageCache::CurvePoint>* curve = &in.curve;
  const double scale = in.curve_miss_scale;
  a.hot_share = [curve, scale](double pages) { return CurveHitRatio(*curve, scale, pages); };
  const double admitted = in.admitted_per_victim * std::clamp(in.compress_charge, 0.0, 1.0);
  // Every page that enters the raw tier (a miss, or a promoted compressed hit) pushes one victim
  // out; the window says what share of victims got compressed, and what share of their time the
  // readers waited for.
  a.admitted_per_read = [curve, scale, admitted](double raw_pages, double, double) {
    return admitted * (1.0 - CurveHitRatio(*curve, scale, raw_pages));
  };
  return PredictSplits(a);
}

namespace {

bool PercentFits(const Options& o, int percent, const HostMemory& host, uint64_t tiers_now) {
  Options t = o;
  t.compressed_percent = percent;
  // Only under raw_tier = kernel does the split move what the daemon holds.
  return t.raw_share() >= config::kMinRawPages * o.page_size &&
         (!t.kernel_raw_tier() || CheckSplitFits(t, host, tiers_now).ok());
}

}  // namespace

int FittingPercentAtMost(const Options& o, const HostMemory& host, uint64_t tiers_now) {
  for (int p = o.compressed_percent; p > 0; p = (p - 1) / 5 * 5) {
    if (PercentFits(o, p, host, tiers_now)) return p;
  }
  return 0;
}

std::vector<int> CandidatePercents(const Options& o, const HostMemory& host, uint64_t tiers_now) {
  std::vector<int> out;
  auto fits = [&](int p) { return PercentFits(o, p, host, tiers_now); };
  for (int p = 0; p <= 90; p += 5) {
    if (fits(p)) out.push_back(p);
  }
  if (std::find(out.begin(), out.end(), o.compressed_percent) == out.end() &&
      fits(o.compressed_percent)) {
    out.push_back(o.compressed_percent);
    std::sort(out.begin(), out.end());
  }
  return out;
}

// ---- the decision ---------------------------------------------------------------------------------

SplitDecider::Decision SplitDecider::Decide(const std::vector<AdviseRow>& rows, const Options& o) {
  Decision d;
  d.percent = o.compressed_percent;
  d.codec = o.compressor;
  for (const AdviseRow& r : rows) {
    if (r.percent == o.compressed_percent && (r.codec == o.compressor || r.percent == 0)) {
      if (d.current == nullptr || r.codec == o.compressor) d.current = &r;
    }
    const bool percent_ok = o.compressed_percent_auto || r.percent == o.compressed_percent;
    // At C = 0 there is no codec to choose: its rows stand for the codec in force.
    const bool codec_ok = o.compressor_auto || r.codec == o.compressor || r.percent == 0;
    if (!percent_ok || !codec_ok) continue;
    if (d.best == nullptr || r.model.us_per_buffer < d.best->model.us_per_buffer) d.best = &r;
  }
  if (d.best == nullptr || d.current == nullptr) {
    streak_ = 0;
    return d;
  }
  const CodecKind best_codec = d.best->percent == 0 ? o.compressor : d.best->codec;
  const bool pays = d.best->model.us_per_buffer * (1.0 + kMinGain) <= d.current->model.us_per_buffer;
  if (!pays || (d.best->percent == o.compressed_percent && best_codec == o.compressor)) {
    streak_ = 0;
    return d;
  }
  // Agreeing = the same way from the split in force (up, down or the same percent) and the same
  // codec: where the curve is flat the best split flickers between neighbours from one window to
  // the next, and demanding the same one would stop auto short of them all.
  const int way = (d.best->percent > o.compressed_percent) - (d.best->percent < o.compressed_percent);
  if (streak_ > 0 && last_way_ == way && last_codec_ == best_codec) {
    ++streak_;
  } else {
    streak_ = 1;
    last_way_ = way;
    last_codec_ = best_codec;
  }
  // The streak survives the change: while later decisions keep recommending a split that way, each
  // moves another step towards it (the window after a change is skipped, so each step is judged on
  // reads made at the split in force).
  if (streak_ < kAgreeing) return d;
  const int step = std::clamp(d.best->percent - o.compressed_percent, -o.auto_max_step,
                              o.auto_max_step);
  d.change = true;
  d.percent = o.compressed_percent + step;
  d.codec = best_codec;
  return d;
}

namespace {

// `p` moved from `from` by the share `weight` of the way: charged bytes per logical byte (which
// add up, where ratios do not) and the other fields linearly.
void BlendInto(const CodecProfile& from, double weight, CodecProfile* p) {
  auto blend = [weight](double a, double b) { return a + (b - a) * weight; };
  p->ratio = 1.0 / blend(1.0 / from.ratio, 1.0 / p->ratio);
  p->storable_fraction = blend(from.storable_fraction, p->storable_fraction);
  p->zero_fraction = blend(from.zero_fraction, p->zero_fraction);
  p->compress_us = blend(from.compress_us, p->compress_us);
  p->decompress_us = blend(from.decompress_us, p->decompress_us);
}

// Each codec the options let the tuner choose (that measures without error), profiled on the
// victims sampled lately into *measured; false, with nothing measured, while fewer than 16 are.
bool MeasureSample(const VictimSample* sample, const Options& o,
                   std::vector<CodecProfile>* measured) {
  PageSample pages;
  if (sample != nullptr) pages.data = sample->Take();
  for (size_t i = 0; i < pages.data.size(); ++i) pages.pages.push_back(i);
  if (pages.data.size() < 16) return false;
  const TierCharges charges = EngineTierCharges();
  for (CodecKind kind : AllCodecKinds()) {
    if (!o.compressor_auto && kind != o.compressor) continue;
    CodecProfile p;
    if (MeasureCodec(pages, kind, o.compression_level, o.min_savings_percent, 0, charges, &p)
            .ok()) {
      measured->push_back(p);
    }
  }
  return true;
}

// The row of the split and codec in force (at C = 0, any codec's), or null.
const AdviseRow* RowInForce(const std::vector<AdviseRow>& rows, const Options& o) {
  for (const AdviseRow& r : rows) {
    if (r.percent == o.compressed_percent && (r.codec == o.compressor || r.percent == 0)) return &r;
  }
  return nullptr;
}

// The rows as the stats export them.
std::vector<SplitPrediction> Predictions(const std::vector<AdviseRow>& rows) {
  std::vector<SplitPrediction> out;
  for (const AdviseRow& r : rows) {
    SplitPrediction p;
    p.percent = r.percent;
    p.codec = static_cast<int>(r.codec);
    p.hit_ratio = r.model.hit_ratio;
    p.us_per_buffer = r.model.us_per_buffer;
    out.push_back(p);
  }
  return out;
}

}  // namespace

bool ProfileMoved(const CodecProfile& average, const CodecProfile& a, const CodecProfile& b) {
  auto both = [](double avg, double x, double y, double by) {
    return (x - avg > by && y - avg > by) || (avg - x > by && avg - y > by);
  };
  const double bytes = 1.0 / average.ratio;
  return both(average.storable_fraction, a.storable_fraction, b.storable_fraction,
              SplitTuner::kProfileShift) ||
         both(bytes, 1.0 / a.ratio, 1.0 / b.ratio, SplitTuner::kProfileShift * bytes);
}

// ---- the tuner ------------------------------------------------------------------------------------

SplitTuner::SplitTuner(Engine* engine, const VictimSample* sample)
    : engine_(engine), sample_(sample) {}

void SplitTuner::Start() { thread_ = std::thread([this] { Loop(); }); }

SplitTuner::~SplitTuner() { Stop(); }

void SplitTuner::Stop() {
  {
    MutexLock lock(&wake_mu_);
    stop_ = true;
  }
  wake_.SignalAll();
  if (thread_.joinable()) thread_.join();
}

void SplitTuner::Loop() {
  pthread_setname_np(pthread_self(), "ccfs-tuner");
  for (;;) {
    const double interval = std::max(0.01, engine_->options().auto_interval);
    {
      MutexLock lock(&wake_mu_);
      const auto deadline = std::chrono::steady_clock::now() +
                            std::chrono::microseconds(static_cast<int64_t>(interval * 1e6));
      while (!stop_ && wake_.WaitUntil(&wake_mu_, deadline)) {
      }
      if (stop_) return;
    }
    Step();
  }
}

void SplitTuner::Step() {
  const Options o = engine_->options();
  // raw_tier = kernel: the curve covers the readers' reads only while a key is under auto (the
  // engine keeps the curve's pages out of the kernel then); without it no prediction is made.
  const bool kernel = o.kernel_raw_tier();
  if (kernel && !o.compressed_percent_auto && !o.compressor_auto) {
    MutexLock lock(&mu_);
    Wait(split_waiting::kAutoKeys);
    return;
  }
  const CacheStats now = engine_->Stats();
  const HostMemory host = engine_->Host();
  const uint64_t tiers_now = now.raw_bytes + now.compressed_bytes;
  if (kernel && o.compressed_percent_auto) {
    if (const int fit = FittingPercentAtMost(o, host, tiers_now); fit < o.compressed_percent) {
      Apply(fit, o.compressor);
      return;
    }
  }
  // The trip, once the window is long enough to decide on: measured without mu_, since its
  // request is answered by threads that may be reading the stats, which take mu_ (Fill).
  double trip_us = 0;
  if (kernel) {
    bool ready = false;
    {
      MutexLock lock(&mu_);
      ready = have_base_ && now.reads - base_.reads >= kMinWindowReads;
    }
    if (ready) trip_us = engine_->TripUs();
  }
  int percent = 0;
  CodecKind codec = CodecKind::kLz4;
  {
    MutexLock lock(&mu_);
    host_ = host;
    tiers_now_ = tiers_now;
    TunerWindow w;
    std::vector<AdviseRow> rows;
    if (!Measure(o, now, trip_us, &w) || !Predict(o, w, &rows)) return;
    if (!CurveSpansCandidates(rows)) return;
    Wait("");
    const SplitDecider::Decision d = Decide(o, rows);
    if (!d.change) return;
    percent = d.percent;
    codec = d.codec;
  }
  // The engine's Stats() reads Fill(), which takes mu_: the change is applied without it.
  Apply(percent, codec);
}

bool SplitTuner::Measure(const Options& o, const CacheStats& now, double trip_us,
                         TunerWindow* w) {
  if (!have_base_) {
    base_ = now;
    have_base_ = true;
    Wait(split_waiting::kWindow, 0, kMinWindowReads);
    return false;
  }
  *w = TunerWindow::Between(base_, now);
  if (w->reads < kMinWindowReads) {  // let the window grow
    // Until the first full window, the window is what is waited for; after it, what that window
    // found missing stands (or "": decided) while the next one grows.
    if (std::string_view(waiting_) == split_waiting::kWindow) {
      Wait(split_waiting::kWindow, w->reads, kMinWindowReads);
    }
    return false;
  }
  base_ = now;
  if (const uint64_t reuses = engine_->CurveReuses(); reuses < kMinCurveReuses) {
    Wait(split_waiting::kReuses, reuses, kMinCurveReuses);
    return false;
  }
  if (o.kernel_raw_tier()) {
    if (trip_us <= 0) {
      Wait(split_waiting::kTrip);
      return false;
    }
    // One probe is a few trips on an idle thread; smoothed, so one slow wake-up does not swing
    // every prediction.
    trip_us_ = trip_us_ > 0 ? 0.5 * trip_us_ + 0.5 * trip_us : trip_us;
  }
  if (skip_windows_ > 0) {
    --skip_windows_;
    Wait(split_waiting::kAfterChange);
    return false;
  }
  // Costs: the latest window with enough of each path.
  if (w->raw_hit_us > 0) raw_hit_us_ = w->raw_hit_us;
  if (w->misses >= 64) miss_us_ = w->miss_us;
  if (miss_us_ <= 0) miss_us_ = w->miss_us > 0 ? w->miss_us : 100.0;
  if (raw_hit_us_ <= 0) raw_hit_us_ = 1.0;
  if (o.compressed_percent > 0 && w->evictions >= 64) {
    admitted_ = std::min(1.0, static_cast<double>(w->compressions) / w->evictions);
  }
  ProfileCodecs(o);
  if (codecs_.empty()) Wait(split_waiting::kCodecs);
  return !codecs_.empty();
}

void SplitTuner::ProfileCodecs(const Options& o) {
  std::vector<CodecProfile> measured;
  if (MeasureSample(sample_, o, &measured)) {
    // One decision's sample is a few dozen pages, of data whose kinds may compress very
    // differently: alone it moves the predicted capacity, and through the anchor every split's
    // prediction, by several points from one decision to the next. Averaged over decisions
    // (charged bytes per logical byte, which add up, rather than ratios, which do not) — unless
    // the data read has moved (kProfileShift): then the average restarts from the two samples
    // that say so (their mean), instead of taking a dozen decisions to follow.
    std::vector<CodecProfile> unaveraged = measured;
    for (CodecProfile& p : measured) {
      auto same = [&](const CodecProfile& c) { return c.codec == p.codec && c.level == p.level; };
      auto old = std::find_if(codecs_.begin(), codecs_.end(), same);
      if (old == codecs_.end() || old->ratio <= 0 || p.ratio <= 0) continue;
      auto prev = std::find_if(last_sample_.begin(), last_sample_.end(), same);
      const bool moved =
          prev != last_sample_.end() && prev->ratio > 0 && ProfileMoved(*old, *prev, p);
      BlendInto(moved ? *prev : *old, moved ? 0.5 : kProfileWeight, &p);
    }
    if (!measured.empty()) codecs_ = measured;
    last_sample_ = std::move(unaveraged);
  }
  // Drop a codec the options no longer cover, or one not measured yet (nothing to predict with).
  std::erase_if(codecs_, [&](const CodecProfile& c) {
    return !o.compressor_auto && c.codec != o.compressor;
  });
}

bool SplitTuner::Predict(const Options& o, const TunerWindow& w, std::vector<AdviseRow>* rows) {
  LiveInputs in;
  in.memory_bytes = o.memory;
  in.page_size = o.page_size;
  in.curve = engine_->HitRatioCurve();
  in.raw_hit_us = raw_hit_us_;
  in.miss_us = miss_us_;
  in.admitted_per_victim = admitted_;
  in.compress_charge = 1;
  in.codecs = codecs_;
  for (CodecProfile& c : in.codecs) c.storable_fraction = ReadsKeptFraction(c.storable_fraction, w);
  in.percents = CandidatePercents(o, host_, tiers_now_);
  const bool kernel = o.kernel_raw_tier();
  if (kernel) {
    in.raw_tier = RawTierMode::kKernel;
    in.trip_us = trip_us_;
    // In a memory cgroup (ccfs replay puts the daemon beside its reader in one of `memory`), the
    // kernel's share is what the cgroup leaves beside the daemon, and a higher split leaves less:
    // predicted at its budget, every split with a compressed tier looked better than it is.
    if (host_.cgroup_limit_bytes > 0) {
      in.raw_pages_at = [o, host = host_, tiers_now = tiers_now_](int percent) {
        Options t = o;
        t.compressed_percent = percent;
        const uint64_t squeezed = t.kernel_budget() - KernelShareBytes(t, host, tiers_now);
        return static_cast<double>(t.raw_share() - squeezed) / t.page_size;
      };
    }
  }
  if (in.curve.empty()) {
    Wait(split_waiting::kReuses, 0, kMinCurveReuses);
    return false;
  }
  if (in.percents.empty()) {
    Wait(split_waiting::kFit);
    return false;
  }
  *rows = PredictLive(in);
  // Anchor the curve at the split in force: its predicted miss ratio is scaled to the measured one
  // (the engine's policy misses a share of what LRU would, across sizes, more nearly than it hits
  // a fixed number of points more: build/mrc_accuracy, docs/MODEL.md "Auto"). Not under
  // raw_tier = kernel, where the readers' hit ratio is not seen.
  if (const AdviseRow* cur = RowInForce(*rows, o);
      !kernel && cur != nullptr && cur->model.hit_ratio < 1.0) {
    in.curve_miss_scale = std::clamp((1.0 - w.hit_ratio) / (1.0 - cur->model.hit_ratio), 0.25, 4.0);
    *rows = PredictLive(in);
  }
  // What the readers paid for compressions in the window: the measured time the rest of the
  // prediction does not explain, as a share of the full compression term. The window's µs per
  // buffer is per read that reached the engine, without a trip: the model's reads are put the
  // same way (under raw_tier = kernel, those the kernel did not answer).
  if (const AdviseRow* cur = RowInForce(*rows, o);
      cur != nullptr && o.compressed_percent > 0 && cur->model.compress_us_per_buffer > 0.05) {
    const double kernel_hits = kernel ? cur->model.raw_hit_ratio : 0.0;
    const double reached = 1.0 - kernel_hits;
    if (reached > 0.01) {
      const double engine_us = cur->model.us_per_buffer - cur->model.trip_us_per_buffer -
                               kernel_hits * PathCosts{}.kernel_hit_us;
      const double rest = engine_us - cur->model.compress_us_per_buffer;
      const double share = std::clamp(
          (w.us_per_buffer * reached - rest) / cur->model.compress_us_per_buffer, 0.0, 1.0);
      compress_charge_ = 0.5 * compress_charge_ + 0.5 * share;
    }
  }
  in.compress_charge = compress_charge_;
  *rows = PredictLive(in);
  predicted_ = Predictions(*rows);
  return true;
}

bool SplitTuner::CurveSpansCandidates(const std::vector<AdviseRow>& rows) {
  double largest = 0;
  for (const AdviseRow& r : rows) {
    largest = std::max(largest, r.model.raw_capacity_pages + r.model.compressed_capacity_pages);
  }
  const uint64_t reads = engine_->CurveReads();
  const double need = kCurveSpan * largest;
  if (static_cast<double>(reads) >= need) return true;
  Wait(split_waiting::kCurveSpan, reads, static_cast<uint64_t>(std::ceil(need)));
  return false;
}

void SplitTuner::Wait(const char* what, uint64_t have, uint64_t need) {
  waiting_ = what;
  waiting_have_ = have;
  waiting_need_ = need;
}

SplitDecider::Decision SplitTuner::Decide(const Options& o, const std::vector<AdviseRow>& rows) {
  SplitDecider::Decision d;
  if (o.compressed_percent_auto || o.compressor_auto) {
    d = decider_.Decide(rows, o);
  } else {
    Options any = o;  // what auto would choose: shown as the recommendation
    any.compressed_percent_auto = any.compressor_auto = true;
    SplitDecider scratch;
    d = scratch.Decide(rows, any);
  }
  if (d.best != nullptr) {
    recommended_percent_ = d.best->percent;
    recommended_codec_ = static_cast<int>(d.best->percent == 0 ? o.compressor : d.best->codec);
  }
  predicted_us_ = d.current != nullptr ? d.current->model.us_per_buffer : 0;
  return d;
}

void SplitTuner::Apply(int percent, CodecKind codec) {
  // Counted before it is applied: a reader that sees the new split sees it counted.
  changes_.fetch_add(1, std::memory_order_relaxed);
  if (!engine_->ApplySplit(percent, codec).ok()) {
    changes_.fetch_sub(1, std::memory_order_relaxed);
    return;
  }
  engine_->SplitApplied();  // raw_tier = kernel: the kernel's share follows
  // The window after a change is skipped: the tiers are refilling.
  const CacheStats after = engine_->Stats();
  MutexLock lock(&mu_);
  skip_windows_ = 1;
  base_ = after;
}

void SplitTuner::Fill(CacheStats* s) const {
  MutexLock lock(&mu_);
  s->predicted = predicted_;
  s->recommended_percent = recommended_percent_;
  s->recommended_codec = recommended_codec_;
  s->predicted_us_per_buffer = predicted_us_;
  s->predicted_trip_us = trip_us_;
  s->split_waiting = waiting_;
  s->split_waiting_have = waiting_have_;
  s->split_waiting_need = waiting_need_;
  s->split_changes = changes_.load(std::memory_order_relaxed);
}

}  // namespace ccfs::cache
