// The measurements of `ccfs advise` (see advise.h): the workload's reuse from a trace and the
// paths' costs and sample pages of a data set, fed to model/split_prediction.h.
#include "trace/advise.h"

#include <fcntl.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <unordered_set>

#include <fmt/format.h>

#include "ccfs/backing_store.h"
#include "trace/replay_target.h"
#include "util/rng.h"

namespace ccfs {

namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

uint32_t Clamp32(uint64_t distance) {
  return distance >= ReuseProfile::kFar ? ReuseProfile::kFar : static_cast<uint32_t>(distance);
}

}  // namespace

// ---- the workload ---------------------------------------------------------------------------------

ReuseProfile ReuseProfile::FromPages(const std::vector<uint64_t>& reads, uint64_t pages,
                                     uint64_t warmup) {
  ReuseProfile p;
  StackDistanceCounter stack(pages, reads.size());
  // The counted read each page had last, to give it its next read's distance.
  std::vector<uint64_t> last_counted(pages, UINT64_MAX);
  const uint64_t counted = reads.size() > warmup ? reads.size() - warmup : 0;
  p.distance_.reserve(counted);
  p.next_distance_.reserve(counted);
  for (uint64_t i = 0; i < reads.size(); ++i) {
    const uint64_t page = reads[i];
    const uint64_t d = stack.Access(page);
    if (i < warmup) continue;
    p.curve_.Add(d);
    if (last_counted[page] != UINT64_MAX) {
      p.next_distance_[last_counted[page]] = Clamp32(d);
    } else {
      ++p.distinct_;
    }
    last_counted[page] = p.distance_.size();
    p.distance_.push_back(Clamp32(d));
    p.next_distance_.push_back(kFar);
  }
  return p;
}

ReuseProfile ReuseProfile::Build(const Dataset& dataset, const OpSource& source, uint64_t warmup,
                                 uint64_t ops) {
  std::vector<uint64_t> reads;
  reads.reserve(warmup + ops);
  uint64_t warmup_reads = 0;  // the warm-up's operations less its writes
  const uint32_t page_size = dataset.page_size();
  for (uint64_t i = 0; i < warmup + ops; ++i) {
    const PageOp op = source.Get(i);
    if (op.op != TraceOp::kRead) continue;
    reads.push_back(dataset.files()[op.file].first_page + op.offset / page_size);
    if (i < warmup) ++warmup_reads;
  }
  return FromPages(reads, dataset.pages(), warmup_reads);
}

double ReuseProfile::AdmittedPerRead(double raw_pages, double reach_pages, double ghost_pages,
                                     bool promote, bool filter) const {
  if (distance_.empty()) return 0;
  uint64_t admitted = 0;
  for (size_t i = 0; i < distance_.size(); ++i) {
    const double d = distance_[i] == kFar ? INFINITY : distance_[i];
    if (d < raw_pages) continue;  // a raw hit: the page's stay in the raw tier goes on
    const bool compressed_hit = d < reach_pages;
    if (compressed_hit && !promote) continue;  // served from the compressed tier; no stay begins
    const double e = next_distance_[i] == kFar ? INFINITY : next_distance_[i];
    if (!filter || e < raw_pages || compressed_hit || d < raw_pages + ghost_pages) ++admitted;
  }
  return static_cast<double>(admitted) / distance_.size();
}

// ---- the data -------------------------------------------------------------------------------------

Status SamplePages(const Dataset& dataset, uint64_t count, uint64_t seed, PageSample* sample) {
  *sample = PageSample();
  const uint64_t n = dataset.pages();
  if (count >= n) {
    for (uint64_t p = 0; p < n; ++p) sample->pages.push_back(p);
  } else {
    Rng rng(seed);
    std::unordered_set<uint64_t> chosen;
    while (chosen.size() < count) {
      const uint64_t p = rng.Below(n);
      if (chosen.insert(p).second) sample->pages.push_back(p);
    }
  }
  std::unique_ptr<BackingStore> store = NewPosixBackingStore(dataset.root());
  // The file of the page read last stays open: pages are sampled at random, so another page of it
  // comes next only by chance, and a tree of more files than descriptors must not keep them all.
  std::unique_ptr<BackingFile> file;
  uint32_t file_no = UINT32_MAX;
  const uint32_t page_size = dataset.page_size();
  const size_t frame = (page_size + kIoAlignment - 1) / kIoAlignment * kIoAlignment;
  std::unique_ptr<char, decltype(&std::free)> buf(
      static_cast<char*>(std::aligned_alloc(kIoAlignment, frame)), &std::free);
  double total_us = 0;
  for (uint64_t page : sample->pages) {
    const Dataset::PageRef ref = dataset.Locate(page);
    if (ref.file != file_no) {
      file.reset();
      Status s = store->Open(dataset.files()[ref.file].path, O_RDONLY, 0, &file);
      if (!s.ok()) return s;
      file_no = ref.file;
    }
    size_t got = 0;
    const auto start = Clock::now();
    Status s = file->ReadPage(ref.offset, frame, buf.get(), &got);
    const double us = SecondsSince(start) * 1e6;
    total_us += us;
    sample->read_times_us.push_back(us);
    if (!s.ok()) return s;
    sample->direct = sample->direct && file->direct();
    const uint64_t want = std::min<uint64_t>(page_size, dataset.files()[ref.file].size - ref.offset);
    if (got < want) {
      return Status::IOError(0, fmt::format("{}: {} bytes at offset {}, file shorter than listed",
                                            dataset.FullPath(ref.file), got, ref.offset));
    }
    sample->data.emplace_back(buf.get(), buf.get() + want);
  }
  sample->read_us = sample->pages.empty() ? 0 : total_us / sample->pages.size();
  return Status::Ok();
}

MissCost MissCostOf(const PageSample& sample) {
  MissCost cost;
  std::vector<double> times = sample.read_times_us;
  if (times.empty()) return cost;
  std::sort(times.begin(), times.end());
  // Nearest rank: the smallest time at or above the share q of the reads.
  auto rank = [&times](double q) {
    const size_t i = static_cast<size_t>(std::ceil(q * times.size()));
    return times[std::min(times.size() - 1, i == 0 ? 0 : i - 1)];
  };
  cost.p10 = rank(0.10);
  cost.median = rank(0.50);
  cost.p90 = rank(0.90);
  cost.mean = sample.read_us;
  return cost;
}

Status MeasureKernelHitUs(const Dataset& dataset, const PageSample& sample, double* us) {
  *us = 0;
  DescriptorFiles files;
  Status s = files.Open(dataset, false);
  if (!s.ok()) return s;
  const size_t count = std::min<size_t>(64, sample.pages.size());
  if (count == 0) return Status::Ok();
  std::vector<char> buf(dataset.page_size());
  auto read_all = [&]() -> Status {
    for (size_t i = 0; i < count; ++i) {
      const Dataset::PageRef ref = dataset.Locate(sample.pages[i]);
      Status st = files.Read(ref.file, ref.offset, sample.data[i].size(), buf.data());
      if (!st.ok()) return st;
    }
    return Status::Ok();
  };
  if (!(s = read_all()).ok()) return s;  // loads them
  constexpr int kPasses = 8;
  const auto start = Clock::now();
  for (int pass = 0; pass < kPasses; ++pass) {
    if (!(s = read_all()).ok()) return s;
  }
  *us = SecondsSince(start) * 1e6 / (kPasses * count);
  return Status::Ok();
}

// ---- the prediction -------------------------------------------------------------------------------

void UseReuseProfile(const ReuseProfile& reuse, bool exact, AdviseInputs* in) {
  in->hot_share = nullptr;
  if (exact) in->hot_share = [&reuse](double pages) { return reuse.curve().HitRatio(pages); };
  const bool promote = in->raw_tier == RawTierMode::kDaemon;
  const bool filter = in->admission_filter;
  in->admitted_per_read = [&reuse, promote, filter](double raw, double reach, double ghost) {
    return reuse.AdmittedPerRead(raw, reach, ghost, promote, filter);
  };
}

Prediction PredictConfigurations(const AdviseInputs& base, const std::vector<RawTierMode>& tiers,
                                 const ReuseProfile& reuse, bool exact, double disk_us) {
  Prediction p;
  AdviseInputs in = base;
  in.costs.disk_us = disk_us;
  for (RawTierMode tier : tiers) {
    in.raw_tier = tier;
    UseReuseProfile(reuse, exact, &in);
    std::vector<AdviseRow> rows = PredictSplits(in);
    p.rows.insert(p.rows.end(), rows.begin(), rows.end());
  }
  p.page_cache = PredictPageCache(in);
  return p;
}

}  // namespace ccfs
