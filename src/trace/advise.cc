// The prediction of `ccfs advise` (see advise.h): the workload's reuse, the data's
// compressibility and the paths' costs, measured here and fed to model/cache_model.h.
#include "trace/advise.h"

#include <fcntl.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
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

// Runs `pass` (which handles `per_pass` pages) until at least `min_seconds` have gone by, at least
// once; returns the mean µs per page.
template <typename Pass>
double TimePerPage(size_t per_pass, double min_seconds, Pass pass) {
  if (per_pass == 0) return 0;
  const auto start = Clock::now();
  uint64_t pages = 0;
  do {
    pass();
    pages += per_pass;
  } while (SecondsSince(start) < min_seconds);
  return SecondsSince(start) * 1e6 / static_cast<double>(pages);
}

bool AllZero(const std::vector<char>& page) {
  return std::find_if(page.begin(), page.end(), [](char c) { return c != 0; }) == page.end();
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
  std::vector<std::unique_ptr<BackingFile>> files(dataset.files().size());
  const uint32_t page_size = dataset.page_size();
  const size_t frame = (page_size + kIoAlignment - 1) / kIoAlignment * kIoAlignment;
  std::unique_ptr<char, decltype(&std::free)> buf(
      static_cast<char*>(std::aligned_alloc(kIoAlignment, frame)), &std::free);
  double total_us = 0;
  for (uint64_t page : sample->pages) {
    const Dataset::PageRef ref = dataset.Locate(page);
    std::unique_ptr<BackingFile>& file = files[ref.file];
    if (!file) {
      Status s = store->Open(dataset.files()[ref.file].path, O_RDONLY, 0, &file);
      if (!s.ok()) return s;
    }
    size_t got = 0;
    const auto start = Clock::now();
    Status s = file->ReadPage(ref.offset, frame, buf.get(), &got);
    total_us += SecondsSince(start) * 1e6;
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

Status MeasureCodec(const PageSample& sample, CodecKind kind, int level, double min_savings_percent,
                    double min_seconds, const TierCharges& charges, CodecProfile* profile) {
  *profile = CodecProfile();
  profile->codec = kind;
  profile->level = level;
  if (sample.data.empty()) return Status::Ok();
  std::unique_ptr<Codec> codec = NewCodec(kind, level);
  const size_t n = sample.data.size();
  std::vector<std::vector<char>> blobs(n);  // empty: not kept (zero pages are kept, with no blob)
  std::vector<bool> zero(n);
  std::vector<char> out;
  // One pass as the evictor makes it (cache/evictor.cc CompressChunk): a zero page needs no blob;
  // any other page is compressed into a cap below which it is kept.
  auto compress_pass = [&](bool keep) {
    for (size_t i = 0; i < n; ++i) {
      const std::vector<char>& page = sample.data[i];
      if (AllZero(page)) {
        zero[i] = true;
        continue;
      }
      const size_t cap = static_cast<size_t>(page.size() * (1.0 - min_savings_percent / 100.0));
      if (out.size() < codec->Bound(page.size())) out.resize(codec->Bound(page.size()));
      const size_t size = cap > 0 ? codec->Compress(page.data(), page.size(), out.data(), cap) : 0;
      if (keep) blobs[i].assign(out.data(), out.data() + size);
    }
  };
  compress_pass(true);
  profile->compress_us = TimePerPage(n, min_seconds, [&] { compress_pass(false); });

  double logical = 0, charged = 0;
  uint64_t kept = 0, zeros = 0;
  for (size_t i = 0; i < n; ++i) {
    const std::vector<char>& page = sample.data[i];
    if (zero[i]) {
      ++zeros;
      charged += charges.zero_page;
    } else if (!blobs[i].empty()) {
      std::vector<char> back(page.size());
      Status s = codec->Decompress(blobs[i].data(), blobs[i].size(), back.data(), back.size());
      if (!s.ok() || back != page) {
        return Status::Corruption(fmt::format("{} level {}: sampled page {} does not decode to its "
                                              "bytes", CodecName(kind), level, sample.pages[i]));
      }
      charged += charges.blob(blobs[i].size());
    } else {
      continue;
    }
    ++kept;
    logical += page.size();
  }
  profile->storable_fraction = static_cast<double>(kept) / n;
  profile->zero_fraction = static_cast<double>(zeros) / n;
  profile->ratio = charged > 0 ? logical / charged : 1.0;
  // A compressed hit decompresses a blob, or fills a zero page.
  std::vector<char> back;
  profile->decompress_us = TimePerPage(kept, min_seconds, [&] {
    for (size_t i = 0; i < n; ++i) {
      const std::vector<char>& page = sample.data[i];
      if (back.size() < page.size()) back.resize(page.size());
      if (zero[i]) {
        std::memset(back.data(), 0, page.size());
      } else if (!blobs[i].empty()) {
        (void)codec->Decompress(blobs[i].data(), blobs[i].size(), back.data(), page.size());
      }
    }
  });
  return Status::Ok();
}

double MeasureCopyUs(const PageSample& sample, double min_seconds) {
  if (sample.data.empty()) return 0;
  std::vector<char> to(sample.data[0].size());
  return TimePerPage(sample.data.size(), min_seconds, [&] {
    for (const std::vector<char>& page : sample.data) {
      if (to.size() < page.size()) to.resize(page.size());
      std::memcpy(to.data(), page.data(), page.size());
      // Keep the copy from being optimised away.
      asm volatile("" : : "r"(to.data()) : "memory");
    }
  });
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

std::vector<AdviseRow> PredictSplits(const AdviseInputs& in) {
  std::vector<AdviseRow> rows;
  for (int percent : in.percents) {
    for (const CodecProfile& codec : in.codecs) {
      ModelInputs m;
      m.memory_bytes = in.memory_bytes;
      m.page_size = in.page_size;
      m.dataset_pages = in.dataset_pages;
      m.compressed_fraction = percent / 100.0;
      m.ratio = codec.ratio;
      m.storable_fraction = codec.storable_fraction;
      m.dist = in.dist;
      m.raw_tier = in.raw_tier;
      m.costs = in.costs;
      m.costs.compress_us = codec.compress_us;
      m.costs.decompress_us = codec.decompress_us + in.costs.hit_us;
      m.hot_share = in.hot_share;
      // First the capacities, then the compressions the admission filter lets through at them.
      m.compressions_per_read = 0;
      ModelResult capacities = EvaluateModel(m);
      const double budget_pages = static_cast<double>(in.memory_bytes) * percent / 100.0 / in.page_size;
      const double ghost_pages = std::max(1024.0, 2 * budget_pages);  // cache/evictor.cc's ghost set
      m.compressions_per_read = in.admitted_per_read(capacities.raw_capacity_pages,
                                                     capacities.reach_pages, ghost_pages);
      AdviseRow row;
      row.percent = percent;
      row.codec = codec.codec;
      row.model = EvaluateModel(m);
      rows.push_back(row);
    }
  }
  // Speed-up against C = 0 (the same for every codec).
  double base = 0;
  for (const AdviseRow& r : rows) {
    if (r.percent == 0) base = r.model.us_per_buffer;
  }
  for (AdviseRow& r : rows) r.speedup = r.model.us_per_buffer > 0 ? base / r.model.us_per_buffer : 1;
  return rows;
}

Advice ChooseSplit(const std::vector<AdviseRow>& rows) {
  Advice advice;
  const AdviseRow* best = nullptr;
  for (const AdviseRow& r : rows) {
    if (best == nullptr || r.model.us_per_buffer < best->model.us_per_buffer) best = &r;
  }
  if (best == nullptr) return advice;
  advice.best = *best;
  advice.compress = best->percent > 0 && best->speedup >= kWorthwhileSpeedup;
  if (advice.compress) {
    advice.text = fmt::format("use C={}%, {}: predicted {:.2f}x faster than C=0", best->percent,
                              CodecName(best->codec), best->speedup);
  } else if (best->percent > 0) {
    advice.text = fmt::format("keep C=0: compression does not pay here, best C={}% ({}) predicted "
                              "{:.2f}x (less than {:.2f}x is within the model's error)",
                              best->percent, CodecName(best->codec), best->speedup,
                              kWorthwhileSpeedup);
  } else {
    // C = 0 itself is the best: say how far the best compressed split falls behind.
    const AdviseRow* next = nullptr;
    for (const AdviseRow& r : rows) {
      if (r.percent > 0 && (next == nullptr || r.model.us_per_buffer < next->model.us_per_buffer)) {
        next = &r;
      }
    }
    advice.text = next == nullptr
                      ? "keep C=0: no compressed split was evaluated"
                      : fmt::format("keep C=0: compression does not pay here, best C={}% ({}) "
                                    "predicted {:.2f}x",
                                    next->percent, CodecName(next->codec), next->speedup);
  }
  return advice;
}

}  // namespace ccfs
