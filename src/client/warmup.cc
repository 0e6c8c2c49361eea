#include "client/warmup.h"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "ccfs/mount_protocol.h"
#include "ccfs/stats.h"
#include "client/mount_client.h"
#include "util/cachestat.h"

namespace ccfs {

namespace fs = std::filesystem;

namespace {

// One ioctl loads at most this much: small enough that `jobs` of them keep a large file's load
// spread over the daemon's miss pool and that a warm-up told to stop ends within a few MiB
// (ranges in flight finish), large enough that the open and close around each cost little
// beside it (two backing reads of the largest run).
constexpr uint64_t kRangeBytes = 2ull << 20;

// A read through the mount (ReadThrough) asks for this much at a time: the kernel splits it into
// requests of its own (max_read), so a larger buffer saves only system calls.
constexpr uint64_t kReadThroughBytes = 1ull << 20;

// Under raw_tier = kernel the ranges read through the mount stop at this share of the kernel's
// budget: the daemon tells the kernel to drop the pages it sent longest ago once the share passes
// the budget, and readers beside the warm-up add pages too.
constexpr uint64_t kKernelSharePercent = 90;

// How often the loads are looked at: often enough that a warm-up stops within a few ranges of the
// cache filling up, even on a store that streams at GB/s.
constexpr int kPollMs = 20;

// The kernel's page size, in which cachestat counts.
uint64_t SystemPageSize() { return static_cast<uint64_t>(sysconf(_SC_PAGESIZE)); }

// Holds a descriptor of a file of the mount, closed at the end.
class OpenFile {
 public:
  explicit OpenFile(const std::string& path)
      : fd_(open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) {}
  ~OpenFile() {
    if (fd_ >= 0) close(fd_);
  }
  OpenFile(const OpenFile&) = delete;
  OpenFile& operator=(const OpenFile&) = delete;
  int fd() const { return fd_; }

 private:
  int fd_;
};

// Reads [offset, offset + length) of `fd` (the file `path`) through the mount: under
// raw_tier = kernel the kernel's page cache then keeps the pages (the daemon's ledger counts every
// page its replies send).
Status ReadThrough(int fd, const std::string& path, uint64_t offset, uint64_t length) {
  std::vector<char> buffer(std::min(length, kReadThroughBytes));
  for (uint64_t at = offset; at < offset + length;) {
    const uint64_t want = std::min<uint64_t>(buffer.size(), offset + length - at);
    const ssize_t n = pread(fd, buffer.data(), want, static_cast<off_t>(at));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::FromErrno(errno, path);
    if (n == 0) break;  // the file is shorter than planned: it changed meanwhile
    at += static_cast<uint64_t>(n);
  }
  return Status::Ok();
}

// Runs warm-up ioctl `cmd` on `fd` (the file `path`) over [offset, offset + length).
Status CallDaemon(int fd, const std::string& path, unsigned long cmd, uint64_t offset,
                  uint64_t length, WarmRange* r) {
  std::memset(r, 0, sizeof(*r));
  r->offset = offset;
  r->length = length;
  if (ioctl(fd, cmd, r) == 0) return Status::Ok();
  const int err = errno;
  if (err == ENOTTY) {
    return Status::NotSupported(path + ": not a file of a ccfs mount that knows warm-up "
                                "(a daemon older than this command answers ENOTTY)");
  }
  return Status::FromErrno(err, path);
}

// What the cache holds of one open file, from the daemon's reply `r` and the kernel's page cache.
CachedBytes CachedOf(int fd, uint64_t size, const WarmRange& r) {
  CachedBytes c;
  c.files = 1;
  c.bytes = size;
  c.raw_bytes = r.raw_pages * r.page_size;
  c.compressed_bytes = r.compressed_pages * r.page_size;
  c.compressed_ram = r.compressed_bytes;
  c.kernel_tier = r.kernel_tier != 0;
  if (c.kernel_tier) {
    uint64_t pages = 0;
    c.kernel_errno = CachedPages(fd, 0, 0, &pages);
    if (c.kernel_errno == 0) c.kernel_bytes = pages * SystemPageSize();
  }
  c.held_bytes = std::min(size, c.raw_bytes + c.kernel_bytes + c.compressed_bytes);
  return c;
}

// What the cache holds of `file`; with `evict`, drops it afterwards.
Status FileCached(const WarmupFile& file, bool evict, CachedBytes* c) {
  OpenFile f(file.path);
  if (f.fd() < 0) return Status::FromErrno(errno, file.path);
  WarmRange r;
  Status s = CallDaemon(f.fd(), file.path, kResidencyIoctl, 0, 0, &r);
  if (!s.ok()) return s;
  *c = CachedOf(f.fd(), file.size, r);
  if (evict) s = CallDaemon(f.fd(), file.path, kEvictIoctl, 0, 0, &r);
  return s;
}

Status ForEachCached(const WarmupPlan& plan, bool evict, CachedBytes* out, uint64_t* errors,
                     std::string* first_error) {
  for (const WarmupFile& file : plan.files) {
    CachedBytes c;
    Status s = FileCached(file, evict, &c);
    if (s.code() == Status::Code::kNotSupported) return s;
    if (!s.ok()) {
      if ((*errors)++ == 0) *first_error = s.ToString();
      continue;
    }
    out->Add(c);
  }
  return Status::Ok();
}

}  // namespace

void CachedBytes::Add(const CachedBytes& o) {
  files += o.files;
  bytes += o.bytes;
  raw_bytes += o.raw_bytes;
  kernel_bytes += o.kernel_bytes;
  compressed_bytes += o.compressed_bytes;
  compressed_ram += o.compressed_ram;
  held_bytes += o.held_bytes;
  kernel_tier |= o.kernel_tier;
  if (kernel_errno == 0) kernel_errno = o.kernel_errno;
}

Status PlanWarmup(const std::string& mountpoint, const std::vector<std::string>& paths,
                  WarmupPlan* plan) {
  std::error_code ec;
  const fs::path root = fs::canonical(mountpoint, ec);
  if (ec) return Status::FromErrno(ec.value(), mountpoint);
  plan->mountpoint = root.string();
  auto fail = [plan](const std::string& what) {
    if (plan->errors++ == 0) plan->first_error = what;
  };
  auto add = [plan](const fs::path& p, uint64_t size) {
    plan->files.push_back(WarmupFile{p.string(), size});
    plan->bytes += size;
  };
  for (const std::string& arg : paths) {
    const fs::path given = fs::path(arg).is_absolute() ? fs::path(arg) : root / arg;
    const fs::path p = given.lexically_normal();
    // Inside the mount, by name: a path that leaves it through ".." is refused before any stat.
    const fs::path rel = p.lexically_relative(root);
    if (rel.empty() || *rel.begin() == "..") {
      return Status::InvalidArgument(arg + ": not inside the mount " + plan->mountpoint);
    }
    const fs::file_status st = fs::symlink_status(p, ec);
    if (ec || !fs::exists(st)) {
      return Status::InvalidArgument(arg + ": " + (ec ? ec.message() : "no such file") +
                                     " (a relative PATH is taken inside " + plan->mountpoint + ")");
    }
    if (fs::is_regular_file(st)) {
      const uint64_t size = fs::file_size(p, ec);
      if (ec) fail(p.string() + ": " + ec.message());
      else add(p, size);
      continue;
    }
    if (!fs::is_directory(st)) continue;  // links, devices, sockets: nothing to cache
    fs::recursive_directory_iterator it(p, fs::directory_options::skip_permission_denied, ec);
    if (ec) {
      fail(p.string() + ": " + ec.message());
      continue;
    }
    for (const fs::recursive_directory_iterator end; it != end; it.increment(ec)) {
      if (ec) {
        fail(p.string() + ": " + ec.message());
        break;
      }
      const fs::directory_entry& e = *it;
      if (!e.is_regular_file(ec) || e.is_symlink(ec)) continue;
      const uint64_t size = e.file_size(ec);
      if (ec) {
        fail(e.path().string() + ": " + ec.message());
        continue;
      }
      add(e.path(), size);
    }
  }
  return Status::Ok();
}

Status CheckCached(const WarmupPlan& plan, CachedBytes* out, uint64_t* errors,
                   std::string* first_error) {
  return ForEachCached(plan, /*evict=*/false, out, errors, first_error);
}

Status EvictCached(const WarmupPlan& plan, CachedBytes* out, uint64_t* errors,
                   std::string* first_error) {
  return ForEachCached(plan, /*evict=*/true, out, errors, first_error);
}

namespace {

// One ioctl's worth of a file: a warm-up loads the files range by range, in the order walked.
struct Range {
  size_t file;
  uint64_t offset, length;
};

std::vector<Range> RangesOf(const WarmupPlan& plan) {
  std::vector<Range> ranges;
  for (size_t f = 0; f < plan.files.size(); ++f) {
    const uint64_t size = plan.files[f].size;
    if (size == 0) ranges.push_back(Range{f, 0, 0});
    for (uint64_t at = 0; at < size; at += kRangeBytes) {
      ranges.push_back(Range{f, at, std::min(kRangeBytes, size - at)});
    }
  }
  return ranges;
}

// Runs fn(i) for every i in [0, count) on `jobs` threads, each taking the next index, and calls
// poll(taken) on this thread every kPollMs (taken: indexes handed out so far, at most count) until
// every job has returned. fn returning false, or poll returning true, stops the jobs from taking
// more indexes. Returns the indexes taken.
size_t RunJobs(size_t count, int jobs, const std::function<bool(size_t)>& fn,
               const std::function<bool(size_t)>& poll) {
  std::atomic<size_t> next{0};
  std::atomic<bool> stop{false};
  auto job = [&] {
    for (size_t i; !stop.load() && (i = next.fetch_add(1)) < count;) {
      if (!fn(i)) stop.store(true);
    }
  };
  const size_t n = static_cast<size_t>(std::max(1, jobs));
  std::vector<std::thread> threads;
  for (size_t j = 0; j < n; ++j) threads.emplace_back(job);
  // Each job takes one index past the end before it returns: next reaches count + n.
  while (next.load() < count + n && !stop.load()) {
    const size_t taken = std::min(next.load(), count);
    std::this_thread::sleep_for(std::chrono::milliseconds(kPollMs));
    if (poll(taken)) stop.store(true);
  }
  for (std::thread& t : threads) t.join();
  return std::min(next.load(), count);
}

// The files some range of which was handled, as a plan of their own (what the check reads).
WarmupPlan Handled(const WarmupPlan& plan, const std::vector<std::atomic<bool>>& touched) {
  WarmupPlan p;
  p.mountpoint = plan.mountpoint;
  for (size_t f = 0; f < plan.files.size(); ++f) {
    if (touched[f].load()) p.files.push_back(plan.files[f]);
  }
  return p;
}

// Whether a warm-up that has walked `done` bytes stops, now that the files it handled hold `now`:
// at the limit, or when the files hold all the cache can give them (`full_bytes`) or pages it
// loaded are gone again. Says why in *result.
bool Enough(const CachedBytes& now, uint64_t done, uint64_t full_bytes, WarmupResult* result) {
  if (now.footprint() >= result->limit_bytes) {
    result->at_limit = true;
    return true;
  }
  if (now.footprint() >= full_bytes || now.cached() + now.cached() / 64 < done) {
    result->full = true;
    return true;
  }
  return false;
}

// Under raw_tier = kernel the raw tier is the kernel's page cache, which only reads fill. Once the
// daemon's tiers hold what fits of the first `handled` ranges, the first of them, up to 9/10 of
// the kernel's share and within the limit, are read through the mount, `jobs` at once. They are
// compressed hits by then: the kernel gets them at the speed of decompression, and with
// kernel_demote = off the compressed tier keeps its copies (exclusive: they leave it, as any page
// the kernel asks for does). Read before the daemon loads the rest, they would be misses that do
// not wait for the compression pool, and beside them the evictor would drop pages uncompressed,
// the warm-up's own among them. Errors are counted like the loads'.
Status FillKernelShare(const WarmupPlan& plan, const std::vector<std::atomic<bool>>& touched,
                       const std::vector<Range>& ranges, size_t handled, const CacheStats& stats,
                       const WarmupOptions& options, WarmupProgress* progress,
                       const std::function<void()>& tick, WarmupResult* result) {
  CachedBytes now;
  uint64_t errors = 0;
  std::string first;
  Status s = CheckCached(Handled(plan, touched), &now, &errors, &first);
  if (!s.ok()) return s;
  const uint64_t room =
      std::min(stats.kernel_budget_bytes / 100 * kKernelSharePercent,
               result->limit_bytes - std::min(result->limit_bytes, now.footprint()));
  size_t count = 0;
  for (uint64_t sum = 0; count < handled && sum + ranges[count].length <= room; ++count) {
    sum += ranges[count].length;
  }
  std::mutex error_mu;
  auto read = [&](size_t i) {
    const Range& r = ranges[i];
    const WarmupFile& file = plan.files[r.file];
    if (r.length == 0) return true;
    OpenFile f(file.path);
    Status st = f.fd() < 0 ? Status::FromErrno(errno, file.path)
                           : ReadThrough(f.fd(), file.path, r.offset, r.length);
    if (!st.ok()) {
      progress->errors.fetch_add(1);
      std::lock_guard<std::mutex> lock(error_mu);
      if (result->first_error.empty()) result->first_error = st.ToString();
    }
    return true;
  };
  RunJobs(count, options.jobs, read, [&](size_t) {
    if (tick) tick();
    return false;
  });
  return Status::Ok();
}

}  // namespace

Status Warmup(const WarmupPlan& plan, const WarmupOptions& options, WarmupProgress* progress,
              const std::function<void()>& tick, WarmupResult* result) {
  const auto start = std::chrono::steady_clock::now();
  CacheStats stats;
  Status s = ReadMountStats(plan.mountpoint, &stats);
  if (!s.ok()) return s;
  result->memory_bytes = stats.memory_bytes;
  result->limit_bytes = static_cast<uint64_t>(static_cast<double>(stats.memory_bytes) *
                                              options.max_percent / 100.0);

  const std::vector<Range> ranges = RangesOf(plan);
  std::vector<std::atomic<bool>> touched(plan.files.size());
  std::mutex error_mu;
  Status fatal;  // guarded by error_mu: a daemon without warm-up stops every job

  auto load = [&](size_t i) {
    const Range& r = ranges[i];
    const WarmupFile& file = plan.files[r.file];
    touched[r.file].store(true);
    Status st;
    WarmRange reply{};
    if (r.length > 0) {
      OpenFile f(file.path);
      st = f.fd() < 0 ? Status::FromErrno(errno, file.path)
                      : CallDaemon(f.fd(), file.path, kWarmIoctl, r.offset, r.length, &reply);
    }
    bool go_on = true;
    if (st.ok()) {
      progress->bytes_loaded.fetch_add(reply.loaded);
    } else {
      progress->errors.fetch_add(1);
      std::lock_guard<std::mutex> lock(error_mu);
      if (result->first_error.empty()) result->first_error = st.ToString();
      if (st.code() == Status::Code::kNotSupported) {
        fatal = st;
        go_on = false;
      }
    }
    progress->bytes_done.fetch_add(r.length);
    if (r.offset + r.length >= file.size) progress->files_done.fetch_add(1);
    return go_on;
  };

  uint64_t next_check = 0;
  // The files hold all the daemon's tiers can give them: what is left of them is their slack
  // (free frames, the compressed tier's last blob) and other files' pages.
  const uint64_t full_bytes = (stats.raw_budget_bytes + stats.compressed_budget_bytes) / 100 * 95;
  // True (stop) once the files hold enough, or a look at them failed (its status in s).
  auto enough = [&](size_t taken) {
    if (tick) tick();
    if (taken >= ranges.size()) return false;  // the last ranges are loading: nothing to decide
    const uint64_t done = progress->bytes_done.load();
    if (done < next_check) return false;
    // Ask what the files hold now.
    CachedBytes now;
    uint64_t errors = 0;
    std::string first;
    s = CheckCached(Handled(plan, touched), &now, &errors, &first);
    if (!s.ok() || Enough(now, done, full_bytes, result)) return true;
    // The next look after another 1/64 of the limit is walked, or, when looking takes long (large
    // or many files: each look asks for every page of the files handled), after nine times what
    // was walked meanwhile: looking then takes at most a tenth of the time, and of the daemon's
    // CPU, which the warm-up's compressions need. But never after more than an eighth of
    // `memory`: where a look is slow beside the loads (a slow daemon, a small cache), nine times
    // its walk would load the whole cache again before the next look saw it full.
    const uint64_t walked = progress->bytes_done.load();
    next_check = walked + std::min(std::max(result->limit_bytes / 64, 9 * (walked - done)),
                                   result->memory_bytes / 8);
    return false;
  };
  const size_t taken = RunJobs(ranges.size(), options.jobs, load, enough);
  if (!fatal.ok()) return fatal;
  if (!s.ok()) return s;
  if (stats.kernel_raw_tier && !result->at_limit) {
    s = FillKernelShare(plan, touched, ranges, taken, stats, options, progress, tick, result);
    if (!s.ok()) return s;
  }
  if (tick) tick();

  for (size_t f = 0; f < plan.files.size(); ++f) {
    if (!touched[f].load()) {
      ++result->skipped_files;
      result->skipped_bytes += plan.files[f].size;
    }
  }
  uint64_t errors = 0;
  std::string first;
  s = CheckCached(Handled(plan, touched), &result->cached, &errors, &first);
  result->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return s;
}

}  // namespace ccfs
