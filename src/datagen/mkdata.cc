// MakeDataset's driver (datagen/mkdata.h): plans the files of each kind, writes them on a few
// threads from the content sources of content.h, and measures each kind's compression ratio on a
// sample of its pages.
#include "datagen/mkdata.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <filesystem>
#include <memory>
#include <mutex>
#include <regex>
#include <thread>

#include <fmt/format.h>

#include "ccfs/codec.h"
#include "datagen/content.h"
#include "util/rng.h"

namespace ccfs {

namespace fs = std::filesystem;

namespace {

constexpr uint64_t kChunk = 1 << 20;  // write unit; a multiple of every page size
constexpr uint64_t kMinFile = 4ull << 20;
constexpr uint64_t kMaxFile = 32ull << 20;
constexpr uint64_t kSamplePagesPerKind = 2048;

const char* Extension(DataKind kind) {
  switch (kind) {
    case DataKind::kText: return "txt";
    case DataKind::kBinary: return "bin";
    case DataKind::kDb: return "db";
    case DataKind::kRandom: return "rnd";
    case DataKind::kZero: return "zero";
  }
  return "dat";
}

// ---- the build ----------------------------------------------------------------------------------

struct FileJob {
  DataKind kind;
  uint64_t index;       // file number within its kind
  uint64_t size;
  uint64_t first_page;  // page number within its kind, for sampling
  std::string path;
  std::vector<BinarySegment> binary_plan;
};

struct RatioSums {
  uint64_t pages = 0, in = 0, lz4_out = 0, zstd_out = 0;
};

const std::regex& OurFileName() {
  static const std::regex re("(text|binary|db|random|zero)-[0-9]+\\.(txt|bin|db|rnd|zero)");
  return re;
}

Status PrepareDirectory(const MkdataOptions& options) {
  std::error_code ec;
  if (fs::exists(options.dir, ec) && !fs::is_directory(options.dir, ec)) {
    return Status::InvalidArgument(fmt::format("{}: exists and is not a directory", options.dir));
  }
  fs::create_directories(options.dir, ec);
  if (ec) return Status::IOError(ec.value(), fmt::format("{}: cannot create: {}", options.dir, ec.message()));
  std::vector<fs::path> ours;
  bool others = false;
  for (auto it = fs::directory_iterator(options.dir, ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    if (std::regex_match(it->path().filename().string(), OurFileName()) && it->is_regular_file()) {
      ours.push_back(it->path());
    } else {
      others = true;
    }
  }
  if (ec) return Status::IOError(ec.value(), fmt::format("{}: cannot list: {}", options.dir, ec.message()));
  if ((others || !ours.empty()) && !options.force) {
    return Status::InvalidArgument(fmt::format(
        "{}: directory is not empty; use --force to replace a data set made by mkdata", options.dir));
  }
  if (others && options.on_warning) {
    options.on_warning(fmt::format(
        "{}: holds entries mkdata did not make; they are kept and will be part of the data set",
        options.dir));
  }
  for (const fs::path& p : ours) {
    fs::remove(p, ec);
    if (ec) return Status::IOError(ec.value(), fmt::format("{}: cannot remove: {}", p.string(), ec.message()));
  }
  return Status::Ok();
}

}  // namespace

const char* DataKindName(DataKind kind) {
  switch (kind) {
    case DataKind::kText: return "text";
    case DataKind::kBinary: return "binary";
    case DataKind::kDb: return "db";
    case DataKind::kRandom: return "random";
    case DataKind::kZero: return "zero";
  }
  return "?";
}

Status ParseMix(const std::string& text, std::vector<MixEntry>* mix) {
  std::vector<MixEntry> out;
  std::array<bool, kDataKinds> seen{};
  int total = 0;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    std::string item = text.substr(start, comma - start);
    start = comma + 1;
    size_t eq = item.find('=');
    if (item.empty() || eq == std::string::npos) {
      return Status::InvalidArgument(fmt::format("--mix {}: item '{}' is not KIND=PERCENT", text, item));
    }
    std::string name = item.substr(0, eq), value = item.substr(eq + 1);
    int kind = -1;
    for (int k = 0; k < kDataKinds; ++k) {
      if (name == DataKindName(static_cast<DataKind>(k))) kind = k;
    }
    if (kind < 0) {
      return Status::InvalidArgument(fmt::format(
          "--mix {}: unknown kind '{}' (text, binary, db, random, zero)", text, name));
    }
    if (seen[kind]) return Status::InvalidArgument(fmt::format("--mix {}: '{}' given twice", text, name));
    seen[kind] = true;
    char* end = nullptr;
    long percent = std::strtol(value.c_str(), &end, 10);
    if (value.empty() || *end != '\0' || percent < 0 || percent > 100) {
      return Status::InvalidArgument(fmt::format(
          "--mix {}: '{}' for {} is not a whole percentage 0..100", text, value, name));
    }
    total += static_cast<int>(percent);
    if (percent > 0) out.push_back({static_cast<DataKind>(kind), static_cast<int>(percent)});
  }
  if (total != 100) {
    return Status::InvalidArgument(fmt::format("--mix {}: percentages add up to {}, not 100", text, total));
  }
  *mix = std::move(out);
  return Status::Ok();
}

Status MakeDataset(const MkdataOptions& options, std::vector<KindReport>* report) {
  std::vector<MixEntry> mix = options.mix;
  if (mix.empty()) {
    Status s = ParseMix(kDefaultMix, &mix);
    if (!s.ok()) return s;
  }
  const uint32_t page = options.page_size;
  if (page < 4096 || page > (128u << 10) || (page & (page - 1)) != 0) {
    return Status::InvalidArgument(fmt::format(
        "--page-size {}: must be a power of two from 4 KiB to 128 KiB", page));
  }
  if (options.size < kDbPage) {
    return Status::InvalidArgument(fmt::format("--size {}: must be at least 8 KiB", options.size));
  }
  Status s = PrepareDirectory(options);
  if (!s.ok()) return s;

  // Split the size by kind (multiples of 8 KiB; the last kind takes the rounding), then each kind
  // into files of 4..32 MiB drawn from the seed.
  std::vector<FileJob> jobs;
  std::vector<KindReport> reports;
  uint64_t assigned = 0;
  for (size_t m = 0; m < mix.size(); ++m) {
    uint64_t bytes = m + 1 == mix.size() ? options.size - assigned
                                         : options.size / 100 * mix[m].percent / kDbPage * kDbPage;
    bytes = bytes / kDbPage * kDbPage;
    assigned += bytes;
    KindReport r;
    r.kind = mix[m].kind;
    r.bytes = bytes;
    Rng sizes(StreamSeed(options.seed, mix[m].kind, ~1ull));
    uint64_t left = bytes, index = 0, first_page = 0;
    std::vector<uint64_t> file_sizes;
    while (left > 0) {
      uint64_t size = (kMinFile + sizes.Below(kMaxFile - kMinFile + 1)) / kDbPage * kDbPage;
      if (left < size + kMinFile / 2) size = left;  // no tiny tail file
      FileJob job;
      job.kind = mix[m].kind;
      job.index = index;
      job.size = size;
      job.first_page = first_page;
      job.path = (fs::path(options.dir) /
                  fmt::format("{}-{:03}.{}", DataKindName(job.kind), index, Extension(job.kind)))
                     .string();
      file_sizes.push_back(size);
      jobs.push_back(std::move(job));
      left -= size;
      first_page += size / page;
      ++index;
    }
    r.files = static_cast<int>(index);
    if (r.kind == DataKind::kBinary) {
      auto plan = PlanBinaries(options.seed, file_sizes, &r.source);
      for (size_t i = 0; i < plan.size(); ++i) jobs[jobs.size() - plan.size() + i].binary_plan = std::move(plan[i]);
    } else {
      static const char* const kSources[] = {"seeded word model", "", "seeded heap and b-tree pages",
                                             "seeded random bytes", "zero bytes"};
      r.source = kSources[static_cast<int>(r.kind)];
    }
    reports.push_back(r);
  }

  // Sample every stride-th page of a kind for the ratio: about kSamplePagesPerKind pages.
  std::array<uint64_t, kDataKinds> stride{};
  for (const KindReport& r : reports) {
    stride[static_cast<int>(r.kind)] = std::max<uint64_t>(1, r.bytes / page / kSamplePagesPerKind);
  }

  std::mutex mu;  // guards sums, first_error, on_file
  std::array<RatioSums, kDataKinds> sums{};
  Status first_error;
  std::atomic<size_t> next_job{0};
  std::atomic<bool> failed{false};
  auto worker = [&] {
    std::unique_ptr<Codec> lz4 = NewCodec(CodecKind::kLz4, 1);
    std::unique_ptr<Codec> zstd = NewCodec(CodecKind::kZstd, 1);
    std::vector<char> out(std::max(lz4->Bound(page), zstd->Bound(page)));
    auto buffer = std::make_unique<char[]>(kChunk);
    for (;;) {
      size_t j = next_job.fetch_add(1);
      if (j >= jobs.size() || failed.load()) return;
      FileJob& job = jobs[j];
      const int k = static_cast<int>(job.kind);
      std::unique_ptr<ContentSource> source =
          NewContentSource(options.seed, job.kind, job.index, std::move(job.binary_plan));
      Status st;
      RatioSums local;
      int fd = ::open(job.path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      if (fd < 0) st = Status::FromErrno(errno, job.path);
      for (uint64_t done = 0; st.ok() && done < job.size;) {
        size_t n = static_cast<size_t>(std::min<uint64_t>(kChunk, job.size - done));
        source->Fill(buffer.get(), n);
        for (size_t p = 0; p + page <= n; p += page) {
          uint64_t kind_page = job.first_page + (done + p) / page;
          if (kind_page % stride[k] != 0) continue;
          local.pages++;
          local.in += page;
          // Compress() returns 0 only when the output does not fit: count the page as stored raw.
          size_t c = lz4->Compress(buffer.get() + p, page, out.data(), out.size());
          local.lz4_out += c ? c : page;
          c = zstd->Compress(buffer.get() + p, page, out.data(), out.size());
          local.zstd_out += c ? c : page;
        }
        for (size_t w = 0; w < n;) {
          ssize_t r = ::write(fd, buffer.get() + w, n - w);
          if (r < 0 && errno == EINTR) continue;
          if (r < 0) {
            st = Status::FromErrno(errno, job.path);
            break;
          }
          w += static_cast<size_t>(r);
        }
        done += n;
      }
      if (fd >= 0) {
        // Leave the data set on the device, not in the page cache: replays start cold.
        if (st.ok() && ::fdatasync(fd) != 0) st = Status::FromErrno(errno, job.path);
        if (st.ok()) ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
        if (::close(fd) != 0 && st.ok()) st = Status::FromErrno(errno, job.path);
      }
      std::lock_guard<std::mutex> lock(mu);
      if (!st.ok()) {
        if (first_error.ok()) first_error = st;
        failed = true;
        return;
      }
      sums[k].pages += local.pages;
      sums[k].in += local.in;
      sums[k].lz4_out += local.lz4_out;
      sums[k].zstd_out += local.zstd_out;
      if (options.on_file) options.on_file(job.path, job.size);
    }
  };
  int threads = std::max(1, options.threads);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) pool.emplace_back(worker);
  for (std::thread& t : pool) t.join();
  if (!first_error.ok()) return first_error;

  for (KindReport& r : reports) {
    const RatioSums& sum = sums[static_cast<int>(r.kind)];
    r.pages_sampled = sum.pages;
    r.lz4_ratio = sum.lz4_out ? static_cast<double>(sum.in) / sum.lz4_out : 0;
    r.zstd_ratio = sum.zstd_out ? static_cast<double>(sum.in) / sum.zstd_out : 0;
  }
  *report = std::move(reports);
  return Status::Ok();
}

}  // namespace ccfs
