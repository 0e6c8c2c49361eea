// The measurements of `ccfs advise` (see advise.h): the workload's reuse from a trace and the
// paths' costs and sample pages of a data set, fed to model/split_prediction.h.
#include "trace/advise.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <unordered_set>

#include <fmt/format.h>

#include "cache/model_facts.h"
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
  IoBuffer buf = NewIoBuffer(frame);
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

Status MeasureKernelHitUs(const PageSample& sample, double* us) {
  *us = 0;
  const size_t count = std::min<size_t>(64, sample.pages.size());
  if (count == 0) return Status::Ok();
  // The sampled pages in a memory file: its pages are the page cache's, whatever the store's own
  // mount does (a network client mounted with direct I/O keeps none).
  const int fd = ::memfd_create("ccfs-advise-kernel-hit", MFD_CLOEXEC);
  if (fd < 0) return Status::FromErrno(errno, "memfd_create");
  size_t page = 0;
  for (size_t i = 0; i < count; ++i) page = std::max(page, sample.data[i].size());
  Status s;
  for (size_t i = 0; i < count && s.ok(); ++i) {
    if (::pwrite(fd, sample.data[i].data(), sample.data[i].size(), i * page) !=
        static_cast<ssize_t>(sample.data[i].size())) {
      s = Status::FromErrno(errno, "writing the memory file");
    }
  }
  std::vector<char> buf(page);
  auto read_all = [&]() {
    for (size_t i = 0; i < count && s.ok(); ++i) {
      if (::pread(fd, buf.data(), sample.data[i].size(), i * page) < 0) {
        s = Status::FromErrno(errno, "reading the memory file");
      }
    }
  };
  read_all();
  constexpr int kPasses = 8;
  const auto start = Clock::now();
  for (int pass = 0; pass < kPasses && s.ok(); ++pass) read_all();
  *us = SecondsSince(start) * 1e6 / (kPasses * count);
  ::close(fd);
  return s;
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

double AdviseReport::HitRatio(double pages) const {
  return exact ? reuse.curve().HitRatio(pages) : law->HotShare(pages);
}

namespace {

// The workload: the law's or the trace's operations, and their reuse.
Status ReadWorkload(const AdviseRequest& req, AdviseReport* r) {
  Status s = Dataset::Open(req.dataset, req.engine.page_size, &r->dataset);
  if (!s.ok()) return s;
  if (!(s = NewAccessDistribution(req.dist, r->dataset.pages(), req.seed, &r->law)).ok()) return s;
  OpSource source(r->dataset, r->law.get(), req.seed, 0);
  uint64_t ops = req.ops > 0 ? req.ops : 200000;
  r->workload = req.dist.ToString();
  if (!req.trace.empty()) {
    std::vector<TraceRecord> records;
    if (!(s = ReadTraceFile(req.trace, r->dataset, req.trace_format, &records)).ok()) return s;
    source.SetTrace(records);
    if (source.trace_ops() == 0) {
      return Status::InvalidArgument(req.trace + ": no operations in the trace");
    }
    if (req.ops == 0) ops = source.trace_ops();
    r->workload = "trace " + req.trace;
  }
  r->exact = req.exact || !req.trace.empty();
  r->warmup = req.warmup >= 0 ? static_cast<uint64_t>(req.warmup)
                              : DefaultWarmupOps(req.engine.memory, req.engine.page_size,
                                                 r->dataset.pages());
  r->reuse = ReuseProfile::Build(r->dataset, source, r->warmup, ops);
  if (r->reuse.reads() == 0) {
    return Status::InvalidArgument(fmt::format(
        "{}: no reads among the {} operations measured (writes are not cached reads)",
        r->workload, ops));
  }
  return Status::Ok();
}

// The data's compressibility and the paths' costs, from one sample of its pages.
Status MeasureDataAndPaths(const AdviseRequest& req, AdviseReport* r) {
  PageSample sample;
  Status s = SamplePages(r->dataset, req.sample_pages, req.seed, &sample);
  if (!s.ok()) return Status::IOError(s.err(), "reading the sample: " + s.message());
  r->sampled_pages = sample.pages.size();
  if (req.disk_us) {
    r->miss = {*req.disk_us, *req.disk_us, *req.disk_us, *req.disk_us};
  } else {
    if (!sample.direct) {
      return Status::InvalidArgument(fmt::format(
          "{}: its file system refuses O_DIRECT (tmpfs?), so a miss's cost cannot be measured "
          "here: give --disk-us",
          req.dataset));
    }
    r->miss = MissCostOf(sample);
  }
  r->costs.disk_us = r->miss.median;
  r->costs.hit_us = MeasureCopyUs(sample, req.measure_seconds);
  r->costs.trip_us = req.trip_us.value_or(req.assumed_trip_us);
  // Kernel hits: the page cache alone has them, and so has raw_tier = kernel.
  if (req.kernel_hit_us) {
    r->costs.kernel_hit_us = *req.kernel_hit_us;
  } else if (!(s = MeasureKernelHitUs(sample, &r->costs.kernel_hit_us)).ok()) {
    return Status::IOError(s.err(), "timing kernel hits: " + s.message());
  }
  for (CodecKind kind : AllCodecKinds()) {
    const int level = kind == req.engine.compressor ? req.engine.compression_level
                                                     : kDefaultCodecLevel;
    r->codecs.emplace_back();
    s = MeasureCodec(sample, kind, level, req.engine.min_savings_percent, req.measure_seconds,
                     cache::EngineTierCharges(), &r->codecs.back());
    if (!s.ok()) return s;
  }
  return Status::Ok();
}

// Every configuration at the median miss cost, banded by the spread; the verdict and the splits.
void Predict(const AdviseRequest& req, AdviseReport* r) {
  AdviseInputs in;
  in.memory_bytes = req.engine.memory;
  in.page_size = req.engine.page_size;
  in.dataset_pages = r->dataset.pages();
  in.admission_filter = req.engine.admission_filter;
  in.costs = r->costs;
  in.codecs = r->codecs;
  in.percents = req.percents;
  in.dist = req.dist;
  r->prediction = PredictConfigurations(in, req.tiers, r->reuse, r->exact, r->miss.median);
  const Prediction fast = PredictConfigurations(in, req.tiers, r->reuse, r->exact, r->miss.p10);
  const Prediction slow = PredictConfigurations(in, req.tiers, r->reuse, r->exact, r->miss.p90);
  SetErrorBands(fast, slow, &r->prediction);
  r->verdict = JudgeAgainstPageCache(r->prediction, fast, slow);
  r->page_cache = AdviseRow();
  r->page_cache.model = r->prediction.page_cache;
  r->page_cache.us_low = fast.page_cache.us_per_buffer * (1 - kModelError);
  r->page_cache.us_high = slow.page_cache.us_per_buffer * (1 + kModelError);
  for (RawTierMode tier : req.tiers) {
    std::vector<AdviseRow> rows;
    for (const AdviseRow& row : r->prediction.rows) {
      if (row.raw_tier == tier) rows.push_back(row);
    }
    r->advice.emplace_back(tier, ChooseSplit(rows));
  }
}

}  // namespace

Status RunAdvise(const AdviseRequest& req, AdviseReport* r) {
  Status s = ReadWorkload(req, r);
  if (!s.ok()) return s;
  if (!(s = MeasureDataAndPaths(req, r)).ok()) return s;
  Predict(req, r);
  if (!req.trip_us) {
    r->assumptions.push_back(fmt::format(
        "trip {:g} µs: the null-FUSE round trip bench/fuse_rtt measures on a 2-vCPU VM; runs "
        "through a mount often pay more (ccfs replay MOUNT --json, costs_us.trip); give --trip-us",
        req.assumed_trip_us));
  }
  r->assumptions.push_back(
      "ccfs's daemon needs memory of its own beside its tiers (about 20 MiB, `ccfs stat`'s rss); "
      "the page cache alone gets exactly --memory");
  return Status::Ok();
}

}  // namespace ccfs
