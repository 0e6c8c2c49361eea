// Persistence across a restart: see persister.h for what is written, how it is reloaded and why a
// page of a changed file is never served.
#include "fuse/persister.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "cache/cache_file.h"
#include "ccfs/codec.h"
#include "ccfs/config.h"
#include "fuse/log.h"

namespace ccfs {

namespace {

using cache::CacheFileReader;
using cache::CacheFileWriter;
using cache::CachedFileRecord;

// Pages copied out of the engine at once: the copies of one batch are all that a write holds.
constexpr size_t kSaveBatch = 256;

// The reload and the periodic writes yield the CPU to everything else.
void LowestPriority() {
  setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), 19);
}

// CPU seconds the calling thread has used.
double ThreadCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

double SecondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

bool AllZero(const std::string& bytes) {
  return std::all_of(bytes.begin(), bytes.end(), [](char c) { return c == 0; });
}

std::string CacheFileName(const std::string& dataset) {
  return fmt::format("ccfs-{:016x}.cache", cache::CacheFileDatasetId(dataset));
}

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

}  // namespace

Persister::Persister(const Config& config, PageCache* cache, InodeTable* inodes, Pins* pins)
    : config_(config),
      path_(config.dir + "/" + CacheFileName(config.dataset)),
      name_(CacheFileName(config.dataset)),
      cache_(cache),
      inodes_(inodes),
      pins_(pins) {}

Persister::~Persister() {
  stopping_.store(true);
  {
    MutexLock lock(&mu_);
    cv_.SignalAll();
  }
  if (reload_thread_.joinable()) reload_thread_.join();
  if (writer_thread_.joinable()) writer_thread_.join();
}

void Persister::Start() {
  started_ = true;
  // A writer killed mid-write (kill -9, a crash) left its temporary file: the previous cache file
  // is whole beside it.
  cache::RemoveStaleCacheTemps(config_.dir, name_);
  reload_thread_ = std::thread([this] { ReloadThread(); });
  writer_thread_ = std::thread([this] { WriterThread(); });
}

void Persister::Finish() {
  if (!started_) return;  // the mount failed before it served: nothing was reloaded or cached
  stopping_.store(true);
  {
    MutexLock lock(&mu_);
    cv_.SignalAll();
  }
  if (reload_thread_.joinable()) reload_thread_.join();
  if (writer_thread_.joinable()) writer_thread_.join();
  if (!reload_done_.load()) {
    // Writing now would drop the pages not reloaded yet: the file as it is serves better.
    LogInfo(fmt::format("persist: the reload had not finished; {} is kept as it was", path_));
    return;
  }
  Written written;
  WriteNow(&written);
}

void Persister::ReloadThread() {
  LowestPriority();
  Reloaded reloaded;
  ReloadNow(&reloaded);
}

void Persister::WriterThread() {
  LowestPriority();
  auto last = std::chrono::steady_clock::now();
  for (;;) {
    {
      MutexLock lock(&mu_);
      // Woken each second: persist_interval is live, and a write waits for the reload.
      cv_.WaitFor(&mu_, std::chrono::seconds(1));
    }
    if (stopping_.load()) return;
    const double interval = cache_->options().persist_interval;
    if (interval <= 0 || SecondsSince(last) < interval || !reload_done_.load()) continue;
    Written written;
    WriteNow(&written, &stopping_);
    last = std::chrono::steady_clock::now();
  }
}

Status Persister::WriteNow(Written* written, const std::atomic<bool>* abandon) {
  MutexLock lock(&write_mu_);
  const auto t0 = std::chrono::steady_clock::now();
  *written = Written();
  const Options o = cache_->options();

  // What the tiers hold, the raw pages (the hotter ones) first, each file's pages in order.
  std::vector<PageCache::CachedPage> cached = cache_->CachedPages();
  std::sort(cached.begin(), cached.end(), [](const auto& a, const auto& b) {
    if (a.raw != b.raw) return a.raw;
    if (a.file_id != b.file_id) return a.file_id < b.file_id;
    return a.page_no < b.page_no;
  });
  std::vector<uint64_t> ids;
  ids.reserve(cached.size());
  for (const auto& c : cached) ids.push_back(c.file_id);
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  // The files' signatures are read before any page is copied (persister.h, section 1).
  std::vector<InodeTable::FileRecord> records;
  inodes_->DescribeFiles(ids, &records);
  std::unordered_map<uint64_t, const InodeTable::FileRecord*> by_id;
  for (const auto& r : records) by_id.emplace(r.file_id, &r);

  std::unique_ptr<CacheFileWriter> writer;
  Status s = CacheFileWriter::Create(config_.dir, name_, o.page_size,
                                     cache::CacheFileDatasetId(config_.dataset), &writer);
  std::unique_ptr<Codec> codec = NewCodec(o.compressor, o.compression_level);
  std::vector<char> out(codec->Bound(o.page_size));
  std::vector<uint64_t> batch;
  std::vector<PageCache::SavedPage> saved;
  std::unordered_set<uint64_t> files;
  for (size_t i = 0; s.ok() && i < cached.size();) {
    size_t end = i;
    while (end < cached.size() && cached[end].raw == cached[i].raw &&
           cached[end].file_id == cached[i].file_id) {
      ++end;
    }
    auto rec = by_id.find(cached[i].file_id);
    if (rec == by_id.end()) {  // no signature or no path known: not written
      i = end;
      continue;
    }
    const InodeTable::FileRecord& f = *rec->second;
    s = writer->AddFile(CachedFileRecord{f.file_id, f.sig.size, f.sig.mtime_ns, f.sig.ctime_ns,
                                         f.path});
    files.insert(f.file_id);  // a file's raw and compressed pages are two records
    for (; s.ok() && i < end; i += batch.size()) {
      if (abandon != nullptr && abandon->load()) {
        s = Status::Busy("abandoned: the mount is stopping");
        break;
      }
      batch.clear();
      for (size_t k = i; k < end && batch.size() < kSaveBatch; ++k) {
        batch.push_back(cached[k].page_no);
      }
      saved.clear();
      cache_->SavePages(f.file_id, batch, &saved);
      for (const PageCache::SavedPage& p : saved) {
        if (!s.ok()) break;
        if (p.zero || (p.raw && AllZero(p.bytes))) {
          s = writer->AddPage(p.page_no, p.length, cache::kZeroPage, nullptr, 0);
        } else if (!p.raw) {
          s = writer->AddPage(p.page_no, p.length, static_cast<uint8_t>(p.codec), p.bytes.data(),
                              static_cast<uint32_t>(p.bytes.size()));
        } else {
          // As the evictor would: a page that does not save min_savings_percent is not kept.
          const auto cap = static_cast<size_t>(p.length * (1.0 - o.min_savings_percent / 100.0));
          const size_t size = cap > 0 ? codec->Compress(p.bytes.data(), p.length, out.data(), cap)
                                      : 0;
          if (size == 0) continue;
          s = writer->AddPage(p.page_no, p.length, static_cast<uint8_t>(codec->kind()),
                              out.data(), static_cast<uint32_t>(size));
        }
      }
    }
    i = end;
  }
  if (s.ok()) s = writer->Commit();
  written->seconds = SecondsSince(t0);
  if (s.code() == Status::Code::kBusy) {
    LogInfo(fmt::format("persist: the write of {} was abandoned: the mount is stopping", path_));
    return s;
  }
  if (!s.ok()) {
    cache_->CountPersistence(0, 0, 0, 1);
    LogWarning(fmt::format("persist: {} not written, the previous one is kept: {}", path_,
                           s.ToString()));
    return s;
  }
  written->files = files.size();
  written->pages = writer->pages();
  written->bytes = writer->bytes_written();
  cache_->CountPersistence(written->pages, 0, 0, 0);
  LogInfo(fmt::format("persist: wrote {} pages of {} files to {} ({}) in {:.2f} s",
                      written->pages, written->files, path_, FormatSize(written->bytes),
                      written->seconds));
  return s;
}

void Persister::ReloadNow(Reloaded* r) {
  *r = Reloaded();
  const auto t0 = std::chrono::steady_clock::now();
  const double cpu0 = ThreadCpuSeconds();
  const uint32_t page_size = cache_->options().page_size;
  const uint64_t dataset_id = cache::CacheFileDatasetId(config_.dataset);
  Fd fd(open(path_.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (fd.get() < 0) {
    const int err = errno;
    if (err == ENOENT) {
      LogInfo(fmt::format("persist: no cache file {} yet: a cold start", path_));
    } else {
      cache_->CountPersistence(0, 0, 0, 1);
      LogWarning(fmt::format("persist: cache file {} cannot be opened ({}): a cold start", path_,
                             std::strerror(err)));
    }
    reload_done_.store(true);
    return;
  }
  // One pass: each record checks before it is used, and a damage found later drops what was
  // restored (section 2).
  CacheFileReader reader(fd.get(), page_size, dataset_id);
  Status s = reader.ReadHeader();
  if (!s.ok()) {
    cache_->CountPersistence(0, 0, 0, 1);
    LogWarning(fmt::format("persist: cache file {} ignored, a cold start: {}", path_,
                           s.ToString()));
    reload_done_.store(true);
    return;
  }
  r->used = true;
  CachedFileRecord file;
  bool keep = false;
  uint64_t epoch = 0;
  uint64_t file_id = 0;  // the id the file has now (persister.h, section 2)
  // persister.h, section 3: the epoch first, then the file as it is now, then its record.
  auto check = [&]() {
    epoch = cache_->ChangeEpoch();
    struct stat st;
    if (inodes_->StatPath(file.path, &st) != 0 || !S_ISREG(st.st_mode)) return false;
    const FileSignature sig{file.size, file.mtime_ns, file.ctime_ns};
    if (!(SignatureOf(st) == sig) || !inodes_->AdoptSignature(st, sig, file.path)) return false;
    file_id = inodes_->FileIdOf(st);
    if (pins_->any() && pins_->Matches(file.path)) pins_->Pin(file_id);
    return true;
  };
  bool stopped = false;
  std::unordered_set<uint64_t> files;  // with a page restored (a file may have two records)
  uint64_t last_restored = 0;          // the file of the last page restored, once `files` has one
  while (s.ok()) {
    if (stopping_.load()) {
      stopped = true;
      break;
    }
    CacheFileReader::Kind kind;
    s = reader.Next(&kind);
    if (!s.ok() || kind == CacheFileReader::Kind::kEnd) break;
    if (kind == CacheFileReader::Kind::kFile) {
      file = reader.file();
      keep = check();
      continue;
    }
    if (!keep) {
      ++r->dropped_stale;
      continue;
    }
    const cache::CachedPageRecord& p = reader.page();
    const bool zero = p.codec == cache::kZeroPage;
    PageCache::Restored got = PageCache::Restored::kChanged;
    // A write anywhere moves the epoch: the file is checked again, a few times at most.
    for (int attempt = 0; attempt < 4 && keep; ++attempt) {
      got = cache_->Restore(file_id, p.page_no, p.length, zero,
                            zero ? kDefaultCodec : static_cast<CodecKind>(p.codec),
                            p.bytes.data(), p.bytes.size(), epoch);
      if (got != PageCache::Restored::kChanged) break;
      keep = check();
    }
    if (got == PageCache::Restored::kRestored) {
      // A file's pages come in a row: one insert per run of them.
      if (files.empty() || file_id != last_restored) files.insert(file_id);
      last_restored = file_id;
      ++r->pages;
      r->bytes += p.bytes.size();
    } else if (got == PageCache::Restored::kFull) {
      r->full = true;
      break;
    } else if (got == PageCache::Restored::kChanged && !keep) {
      ++r->dropped_stale;
    }
  }
  if (!s.ok()) {
    // Damaged, truncated, or changed under the reader: nothing of it is kept (a cold start). The
    // pages restored so far checked record by record, so a read served from one meanwhile was
    // right; they go all the same, as a damaged file is never trusted.
    for (uint64_t id : files) cache_->InvalidateFile(id);
    cache_->CountPersistence(0, 0, 0, 1);
    LogWarning(fmt::format("persist: cache file {} ignored, a cold start: {} ({} pages restored "
                           "before it dropped again)",
                           path_, s.ToString(), r->pages));
    *r = Reloaded();
    reload_done_.store(true);
    return;
  }
  r->files = files.size();
  r->seconds = SecondsSince(t0);
  r->cpu_seconds = ThreadCpuSeconds() - cpu0;
  cache_->CountPersistence(0, r->pages, r->dropped_stale, 0);
  LogInfo(fmt::format("persist: restored {} pages ({}) of {} files from {} in {:.2f} s ({:.2f} s "
                      "of CPU); {} pages dropped (their files changed){}{}",
                      r->pages, FormatSize(r->bytes), r->files, path_, r->seconds,
                      r->cpu_seconds, r->dropped_stale,
                      r->full ? "; stopped: the compressed tier is full" : "",
                      stopped ? "; stopped: the mount is stopping" : ""));
  if (!stopped) reload_done_.store(true);
}

}  // namespace ccfs
