// codec_table: the codec table of the thesis, measured on any directory of files.
//
//   codec_table DIR [--page-sizes 4K,8K,16K,32K,64K] [--max-mib 256] [--threads N] [--csv FILE]
//                   [--tail short|pad|skip] [--min-ms 300]
//
// Reads up to --max-mib of the regular files under DIR (recursively, in path order, symlinks not
// followed), cuts each file into pages and, for lz4 level 1, zstd level 1 and zstd level 3 at each
// page size, prints the compression ratio (sum in / sum out), the share of pages that save at
// least 12.5% (what the compressed tier would keep; Options::min_savings_percent), and the cost
// per page of compressing and decompressing: wall µs (elapsed / pages) and CPU µs (the workers'
// CLOCK_THREAD_CPUTIME_ID / pages), with 1 thread and with --threads threads. A memcpy row per
// page size is the in-process reference: what a raw-tier hit costs in copying.
//
// Each measurement goes through the whole page set at least once; when one pass is shorter than
// --min-ms, the workers repeat their slices for about that long, so small directories still give
// stable figures. Every decompressed page
// is compared with the original once per codec and page size, outside the timed passes.
//
// Page tails: a file's last page is usually short. --tail short (default) compresses just the
// bytes that exist; pad fills the page with zeros (inflates the ratio for small files); skip
// leaves tails out (drops every file smaller than a page). The meanKi column shows the mean page
// length actually compressed, so per-page costs at large page sizes can be read in that light.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <benchmark/benchmark.h>
#include <fmt/core.h>
#include <fmt/os.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <cctype>
#include <cmath>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "ccfs/codec.h"
#include "ccfs/options.h"

namespace ccfs {
namespace {

namespace fs = std::filesystem;

constexpr size_t kMinPageSize = 1024;
constexpr size_t kMaxPageSize = 1 << 20;
constexpr double kKeepSavingsFraction = 0.125;  // the default min_savings_percent

// ---- arguments ---------------------------------------------------------------------------------

struct Args {
  std::string dir;
  std::vector<std::string> page_sizes = {"4K", "8K", "16K", "32K", "64K"};
  double max_mib = 256;
  int threads = 0;
  std::string csv;
  std::string tail = "short";
  double min_ms = 300;
};

// "8K", "8KiB", "128k", "1M", "4096" -> bytes; nullopt unless a power of two in range.
std::optional<size_t> ParsePageSize(const std::string& text) {
  size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  if (digits == 0 || digits > 9) return std::nullopt;
  size_t value = std::stoul(text.substr(0, digits));
  std::string suffix = text.substr(digits);
  for (char& c : suffix) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (suffix == "K" || suffix == "KB" || suffix == "KIB") {
    value <<= 10;
  } else if (suffix == "M" || suffix == "MB" || suffix == "MIB") {
    value <<= 20;
  } else if (!suffix.empty() && suffix != "B") {
    return std::nullopt;
  }
  if (value < kMinPageSize || value > kMaxPageSize || (value & (value - 1)) != 0) {
    return std::nullopt;
  }
  return value;
}

// ---- corpus ------------------------------------------------------------------------------------

struct Corpus {
  std::vector<uint8_t> bytes;  // every file read, back to back
  struct File {
    size_t offset;
    size_t size;
  };
  std::vector<File> files;
  size_t files_skipped = 0;  // unreadable, or vanished between listing and reading
};

// Reads up to `limit` bytes of `path` onto the end of corpus->bytes. False if it cannot be read.
bool AppendFile(const fs::path& path, size_t limit, Corpus* corpus) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) return false;
  // Size the read by the file, not by the remaining budget: resizing the corpus by the budget for
  // every small file would zero-fill hundreds of MiB per file.
  struct stat st;
  if (fstat(fd, &st) != 0) {
    close(fd);
    return false;
  }
  limit = std::min(limit, static_cast<size_t>(std::max<off_t>(st.st_size, 0)));
  const size_t start = corpus->bytes.size();
  corpus->bytes.resize(start + limit);
  size_t got = 0;
  bool ok = true;
  while (got < limit) {
    const ssize_t r = read(fd, corpus->bytes.data() + start + got, limit - got);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      ok = false;
      break;
    }
    if (r == 0) break;
    got += static_cast<size_t>(r);
  }
  close(fd);
  corpus->bytes.resize(start + (ok ? got : 0));
  if (ok && got > 0) corpus->files.push_back({start, got});
  return ok;
}

// Lists regular files under `dir` in path order and reads them until `max_bytes`. Returns an error
// message, or an empty string.
std::string LoadCorpus(const std::string& dir, size_t max_bytes, Corpus* corpus) {
  std::error_code ec;
  const fs::file_status st = fs::status(dir, ec);
  if (ec) return fmt::format("{}: {}", dir, ec.message());
  if (!fs::is_directory(st)) return fmt::format("{}: not a directory", dir);

  std::vector<fs::path> paths;
  fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec);
  if (ec) return fmt::format("{}: {}", dir, ec.message());
  for (; it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) {
      // A directory that vanished or cannot be listed: skip it, keep walking.
      ec.clear();
      continue;
    }
    std::error_code type_ec;
    if (it->is_regular_file(type_ec) && !it->is_symlink(type_ec)) paths.push_back(it->path());
  }
  std::sort(paths.begin(), paths.end());

  corpus->bytes.reserve(max_bytes);  // untouched pages cost nothing
  for (const fs::path& path : paths) {
    if (corpus->bytes.size() >= max_bytes) break;
    if (!AppendFile(path, max_bytes - corpus->bytes.size(), corpus)) ++corpus->files_skipped;
  }
  if (corpus->bytes.empty()) return fmt::format("{}: no readable, non-empty regular files", dir);
  return "";
}

// A page is a span of the corpus (or of the zero-padded tails for --tail pad).
struct Page {
  const uint8_t* data;
  size_t size;
};

std::vector<Page> CutPages(const Corpus& corpus, size_t page_size, const std::string& tail,
                           std::vector<uint8_t>* padded_tails) {
  std::vector<Page> pages;
  size_t tails = 0;
  for (const Corpus::File& f : corpus.files) {
    if (f.size % page_size != 0) ++tails;
  }
  if (tail == "pad") padded_tails->assign(tails * page_size, 0);
  size_t next_tail = 0;
  for (const Corpus::File& f : corpus.files) {
    const uint8_t* base = corpus.bytes.data() + f.offset;
    size_t off = 0;
    for (; off + page_size <= f.size; off += page_size) pages.push_back({base + off, page_size});
    const size_t rest = f.size - off;
    if (rest == 0 || tail == "skip") continue;
    if (tail == "pad") {
      uint8_t* dst = padded_tails->data() + next_tail++ * page_size;
      std::memcpy(dst, base + off, rest);
      pages.push_back({dst, page_size});
    } else {
      pages.push_back({base + off, rest});
    }
  }
  return pages;
}

// ---- timing ------------------------------------------------------------------------------------

uint64_t NowNs(clockid_t clock) {
  timespec ts;
  clock_gettime(clock, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

struct Cost {
  double wall_us = 0;  // per page
  double cpu_us = 0;   // per page, summed over worker threads
};

// Runs body(thread, first, last) over [0, pages) split into `threads` contiguous slices, each
// worker going over its slice `reps` times. Workers start together on a barrier so thread start-up
// is not timed.
Cost TimePasses(int threads, size_t pages, uint64_t reps,
                const std::function<void(int, size_t, size_t)>& body) {
  std::atomic<uint64_t> cpu_ns{0};
  std::barrier start(threads + 1);
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      const size_t first = pages * static_cast<size_t>(t) / static_cast<size_t>(threads);
      const size_t last = pages * static_cast<size_t>(t + 1) / static_cast<size_t>(threads);
      start.arrive_and_wait();
      const uint64_t cpu0 = NowNs(CLOCK_THREAD_CPUTIME_ID);
      for (uint64_t r = 0; r < reps; ++r) body(t, first, last);
      cpu_ns += NowNs(CLOCK_THREAD_CPUTIME_ID) - cpu0;
    });
  }
  const uint64_t t0 = NowNs(CLOCK_MONOTONIC);
  start.arrive_and_wait();
  for (std::thread& w : workers) w.join();
  const uint64_t wall_ns = NowNs(CLOCK_MONOTONIC) - t0;
  const double page_visits = static_cast<double>(pages) * static_cast<double>(reps);
  return {static_cast<double>(wall_ns) / 1000.0 / page_visits,
          static_cast<double>(cpu_ns.load()) / 1000.0 / page_visits};
}

// One pass to learn the speed, then, if that pass was shorter than `min_ns`, one run of enough
// passes to last about `min_ns`, so the fixed cost of starting and joining threads vanishes in it.
Cost TimeParallel(int threads, size_t pages, uint64_t min_ns,
                  const std::function<void(int, size_t, size_t)>& body) {
  const Cost first = TimePasses(threads, pages, 1, body);
  const double pass_ns = first.wall_us * 1000.0 * static_cast<double>(pages);
  if (pass_ns >= static_cast<double>(min_ns)) return first;
  const double reps = std::min(1e6, std::ceil(static_cast<double>(min_ns) / std::max(pass_ns, 1.0)));
  return TimePasses(threads, pages, static_cast<uint64_t>(reps), body);
}

// ---- rows --------------------------------------------------------------------------------------

struct Row {
  std::string codec;
  std::string level;
  size_t page_size = 0;
  size_t pages = 0;
  double mean_page_bytes = 0;  // below page_size when short tails are included
  double ratio = 1;
  double kept_percent = 0;
  Cost compress_1t, compress_nt, decompress_1t, decompress_nt;
};

double MeanPageBytes(const std::vector<Page>& pages) {
  double total = 0;
  for (const Page& p : pages) total += static_cast<double>(p.size);
  return pages.empty() ? 0 : total / static_cast<double>(pages.size());
}

struct Trial {
  CodecKind kind;
  int level;
};

// Compression ratio, kept share and timings of one codec at one page size. Returns an error
// message (a page that did not round-trip), or an empty string.
std::string MeasureCodec(const Trial& trial, const std::vector<Page>& pages, size_t page_size,
                         int threads, uint64_t min_ns, Row* row) {
  std::vector<std::unique_ptr<Codec>> codecs;
  for (int t = 0; t < threads; ++t) codecs.push_back(NewCodec(trial.kind, trial.level));
  row->codec = CodecName(trial.kind);
  row->level = std::to_string(codecs[0]->level());
  row->page_size = page_size;
  row->pages = pages.size();
  row->mean_page_bytes = MeanPageBytes(pages);

  // Every page gets its own slot in one arena, as blobs in the compressed tier would.
  std::vector<size_t> slot(pages.size() + 1, 0);
  for (size_t i = 0; i < pages.size(); ++i) slot[i + 1] = slot[i] + codecs[0]->Bound(pages[i].size);
  std::vector<uint8_t> arena(slot.back());
  std::vector<size_t> blob_size(pages.size(), 0);

  auto compress = [&](int t, size_t first, size_t last) {
    Codec& codec = *codecs[static_cast<size_t>(t)];
    for (size_t i = first; i < last; ++i) {
      blob_size[i] = codec.Compress(pages[i].data, pages[i].size, arena.data() + slot[i],
                                    slot[i + 1] - slot[i]);
    }
  };
  std::vector<std::vector<uint8_t>> out(static_cast<size_t>(threads),
                                        std::vector<uint8_t>(page_size));
  std::atomic<size_t> failures{0};
  auto decompress = [&](int t, size_t first, size_t last) {
    Codec& codec = *codecs[static_cast<size_t>(t)];
    uint8_t* dst = out[static_cast<size_t>(t)].data();
    size_t failed = 0;
    for (size_t i = first; i < last; ++i) {
      if (!codec.Decompress(arena.data() + slot[i], blob_size[i], dst, pages[i].size).ok()) {
        ++failed;
      }
      benchmark::DoNotOptimize(dst);
    }
    if (failed != 0) failures += failed;
  };

  row->compress_1t = TimeParallel(1, pages.size(), min_ns, compress);
  row->compress_nt = TimeParallel(threads, pages.size(), min_ns, compress);

  size_t in = 0, out_total = 0, kept = 0;
  for (size_t i = 0; i < pages.size(); ++i) {
    if (blob_size[i] == 0) return fmt::format("page {} was refused with cap = Bound()", i);
    in += pages[i].size;
    out_total += blob_size[i];
    if (static_cast<double>(blob_size[i]) <=
        static_cast<double>(pages[i].size) * (1.0 - kKeepSavingsFraction)) {
      ++kept;
    }
  }
  row->ratio = static_cast<double>(in) / static_cast<double>(out_total);
  row->kept_percent = 100.0 * static_cast<double>(kept) / static_cast<double>(pages.size());

  // Untimed check that the figures are for a codec that works.
  for (size_t i = 0; i < pages.size(); ++i) {
    Status s = codecs[0]->Decompress(arena.data() + slot[i], blob_size[i], out[0].data(),
                                     pages[i].size);
    if (!s.ok() || std::memcmp(out[0].data(), pages[i].data, pages[i].size) != 0) {
      return fmt::format("{} level {}: page {} of {} bytes did not round-trip: {}", row->codec,
                         row->level, i, pages[i].size, s.ok() ? "bytes differ" : s.message());
    }
  }

  row->decompress_1t = TimeParallel(1, pages.size(), min_ns, decompress);
  row->decompress_nt = TimeParallel(threads, pages.size(), min_ns, decompress);
  if (failures.load() != 0) return fmt::format("{} decompressions failed", failures.load());
  return "";
}

Row MeasureMemcpy(const std::vector<Page>& pages, size_t page_size, int threads, uint64_t min_ns) {
  std::vector<std::vector<uint8_t>> out(static_cast<size_t>(threads),
                                        std::vector<uint8_t>(page_size));
  auto copy = [&](int t, size_t first, size_t last) {
    uint8_t* dst = out[static_cast<size_t>(t)].data();
    for (size_t i = first; i < last; ++i) {
      std::memcpy(dst, pages[i].data, pages[i].size);
      benchmark::DoNotOptimize(dst);
      benchmark::ClobberMemory();
    }
  };
  Row row;
  row.codec = "memcpy";
  row.level = "-";
  row.page_size = page_size;
  row.pages = pages.size();
  row.mean_page_bytes = MeanPageBytes(pages);
  row.ratio = 1.0;
  row.compress_1t = row.decompress_1t = TimeParallel(1, pages.size(), min_ns, copy);
  row.compress_nt = row.decompress_nt = TimeParallel(threads, pages.size(), min_ns, copy);
  return row;
}

std::string SizeLabel(size_t bytes) {
  if (bytes >= (1u << 20) && bytes % (1u << 20) == 0) return fmt::format("{}M", bytes >> 20);
  if (bytes % 1024 == 0) return fmt::format("{}K", bytes >> 10);
  return std::to_string(bytes);
}

void PrintHeader(int threads) {
  const std::string nt = fmt::format("{}T", threads);
  fmt::print("{:<7} {:>5} {:>5} {:>8} {:>6} {:>6} {:>6} | {:>22} {:>22} | {:>22} {:>22}\n",
             "codec", "level", "page", "pages", "meanKi", "ratio", "kept%", "compress 1T wall/cpu",
             "compress " + nt + " wall/cpu", "decomp 1T wall/cpu", "decomp " + nt + " wall/cpu");
}

std::string Pair(const Cost& c) { return fmt::format("{:.2f} / {:.2f}", c.wall_us, c.cpu_us); }

void PrintRow(const Row& r) {
  fmt::print("{:<7} {:>5} {:>5} {:>8} {:>6.1f} {:>6.2f} {:>6.1f} | {:>22} {:>22} | {:>22} {:>22}\n",
             r.codec, r.level, SizeLabel(r.page_size), r.pages, r.mean_page_bytes / 1024, r.ratio,
             r.kept_percent,
             Pair(r.compress_1t), Pair(r.compress_nt), Pair(r.decompress_1t),
             Pair(r.decompress_nt));
  std::fflush(stdout);
}

constexpr const char* kCsvHeader =
    "codec,level,page_size,pages,mean_page_bytes,ratio,kept_percent,"
    "compress_1t_wall_us,compress_1t_cpu_us,compress_nt_wall_us,compress_nt_cpu_us,"
    "decompress_1t_wall_us,decompress_1t_cpu_us,decompress_nt_wall_us,decompress_nt_cpu_us,"
    "threads\n";

std::string CsvRow(const Row& r, int threads) {
  return fmt::format("{},{},{},{},{:.0f},{:.4f},{:.2f},{:.3f},{:.3f},{:.3f},{:.3f},{:.3f},{:.3f},{:.3f},"
                     "{:.3f},{}\n",
                     r.codec, r.level, r.page_size, r.pages, r.mean_page_bytes, r.ratio,
                     r.kept_percent, r.compress_1t.wall_us, r.compress_1t.cpu_us, r.compress_nt.wall_us,
                     r.compress_nt.cpu_us, r.decompress_1t.wall_us, r.decompress_1t.cpu_us,
                     r.decompress_nt.wall_us, r.decompress_nt.cpu_us, threads);
}

int Run(const Args& args) {
  std::vector<size_t> page_sizes;
  for (const std::string& text : args.page_sizes) {
    std::optional<size_t> size = ParsePageSize(text);
    if (!size) {
      fmt::print(stderr,
                 "codec_table: --page-sizes: '{}' is not a power of two between 1K and 1M "
                 "(write it as 8K, 8KiB, 1M or 8192)\n",
                 text);
      return 2;
    }
    page_sizes.push_back(*size);
  }
  if (!(args.max_mib > 0)) {
    fmt::print(stderr, "codec_table: --max-mib must be above 0, got {}\n", args.max_mib);
    return 2;
  }
  int threads = args.threads;
  if (threads == 0) threads = static_cast<int>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
  if (threads < 0 || threads > 1024) {
    fmt::print(stderr, "codec_table: --threads must be between 0 (all CPUs) and 1024, got {}\n",
               args.threads);
    return 2;
  }

  std::unique_ptr<std::FILE, int (*)(std::FILE*)> csv(nullptr, std::fclose);
  if (!args.csv.empty()) {
    csv.reset(std::fopen(args.csv.c_str(), "w"));
    if (!csv) {
      fmt::print(stderr, "codec_table: --csv {}: {}\n", args.csv, std::strerror(errno));
      return 1;
    }
    std::fputs(kCsvHeader, csv.get());
  }

  Corpus corpus;
  const size_t max_bytes = static_cast<size_t>(args.max_mib * 1024 * 1024);
  if (std::string err = LoadCorpus(args.dir, max_bytes, &corpus); !err.empty()) {
    fmt::print(stderr, "codec_table: {}\n", err);
    return 1;
  }
  const uint64_t min_ns = static_cast<uint64_t>(args.min_ms * 1e6);
  fmt::print("corpus: {} — {} files, {:.1f} MiB read ({} unreadable skipped); tails: {}; "
             "{} threads; µs per page, wall / CPU\n",
             args.dir, corpus.files.size(), static_cast<double>(corpus.bytes.size()) / (1 << 20),
             corpus.files_skipped, args.tail, threads);
  PrintHeader(threads);

  const Trial trials[] = {{CodecKind::kLz4, 1}, {CodecKind::kZstd, 1}, {CodecKind::kZstd, 3}};
  for (size_t page_size : page_sizes) {
    std::vector<uint8_t> padded_tails;
    const std::vector<Page> pages = CutPages(corpus, page_size, args.tail, &padded_tails);
    if (pages.empty()) {
      fmt::print("{:<7} {:>5} {:>5} {:>8}  (no pages: every file is shorter than a page)\n", "-",
                 "-", SizeLabel(page_size), 0);
      continue;
    }
    std::vector<Row> rows;
    rows.push_back(MeasureMemcpy(pages, page_size, threads, min_ns));
    PrintRow(rows.back());
    for (const Trial& trial : trials) {
      Row row;
      if (std::string err = MeasureCodec(trial, pages, page_size, threads, min_ns, &row);
          !err.empty()) {
        fmt::print(stderr, "codec_table: {}\n", err);
        return 1;
      }
      rows.push_back(row);
      PrintRow(row);
    }
    if (csv) {
      for (const Row& r : rows) std::fputs(CsvRow(r, threads).c_str(), csv.get());
      std::fflush(csv.get());
    }
  }
  if (csv && std::ferror(csv.get())) {
    fmt::print(stderr, "codec_table: --csv {}: write failed\n", args.csv);
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace ccfs

int main(int argc, char** argv) {
  ccfs::Args args;
  CLI::App app{"codec_table: compression ratio and µs per page of lz4/zstd on a directory"};
  app.add_option("DIR", args.dir, "directory whose regular files are read (recursively)")
      ->required();
  app.add_option("--page-sizes", args.page_sizes, "page sizes, e.g. 4K,8K,16K (powers of two)")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--max-mib", args.max_mib, "read at most this many MiB")->capture_default_str();
  app.add_option("--threads", args.threads, "threads for the all-threads columns (0 = all CPUs)")
      ->capture_default_str();
  app.add_option("--csv", args.csv, "also write the rows to this CSV file");
  app.add_option("--tail", args.tail, "a file's last, short page: short, pad or skip")
      ->check(CLI::IsMember({"short", "pad", "skip"}))
      ->capture_default_str();
  app.add_option("--min-ms", args.min_ms, "repeat each measurement for at least this long")
      ->check(CLI::Range(0.0, 600000.0))
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  return ccfs::Run(args);
}
