// The engine: PageCache::Impl ties the index, the two tiers, the evictor and the compression pool
// together. page_entry.h describes the state machine every path below follows (its transitions
// table names each change of state made here); evictor.h is the other half of the engine.
// This file holds the read path, read-ahead, writes and invalidation; page_cache_impl.h says where
// the rest of Impl is (construction and the live keys, demotion and budget changes).
//
// Read path, per page (no lock on a raw hit):
//   lookup under RCU -> kRaw/kEvicting: pin, copy, unpin            (raw hit)
//                    -> kCompressed:   decompress; promote into a free frame if one is free now,
//                                      otherwise serve from a scratch page  (compressed hit)
//                    -> kLoading:      wait for the loader, then read again  (counted as a miss)
//                    -> absent:        the first page of a run of misses (below)
// A run of misses: the absent page and the pages after it that the request covers, up to the
// first page found in the index (cached, or loading by another reader), the first for which no
// frame is free at once, or kMaxRunBytes. Each page is claimed, in order, by inserting it kLoading
// with a frame; one ReadPages call reads them all; each is then published kRaw (or abandoned
// past end of file or on an error), waking its waiters. Only the run's first page may wait for a
// frame (a stall), because it is the only time the reader holds no claimed page: a reader never
// waits (for a frame or for another reader's load) while it holds pages in kLoading, so loads
// never wait on each other in a cycle, and every claimed page is published or abandoned before
// Read looks at the next page. Under raw_tier = kernel a run that runs out of frames goes on,
// unclaimed, to the end of the request's missing pages (LoadRun says why).
// Read-ahead (page_cache.h; cache/readahead.h for the window and the threads): a read-ahead
// thread loads a window as runs of misses of its own (LoadRun with `ahead`): the same claims and
// the same order, so a reader that reaches a page being read ahead waits for that load like any
// other, and a write or invalidation during it leaves the page unpublished (kStaleBit). Its pages
// carry kAheadBit until a reader asks for them, start with no uses and go on probation.
// Every page read, whatever its path, is also recorded by the miss-ratio curve (mrc.h),
// after the latency is taken.
// Eviction (evictor.h): a single evictor thread watches free frames; below the low watermark it
// sweeps a batch of victims and hands them to the compression pool in a few chunks; with no
// compressed budget it drops them at once. Compression never runs on a reader's thread.
#include "ccfs/page_cache.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "cache/blob.h"
#include "cache/engine_counters.h"
#include "cache/page_cache_impl.h"
#include "cache/page_entry.h"
#include "cache/page_index.h"
#include "cache/rcu.h"
#include "cache/readahead.h"
#include "util/thread_cpu.h"

namespace ccfs {

using cache::Blob;
using cache::EngineCounters;
using cache::NowNs;
using cache::PageEntry;
using cache::PageKey;
using cache::RcuReadLock;

namespace {

using Shard = EngineCounters::Shard;

// CPU time of each read path (Path's order), estimated from a sample of the reads.
constexpr EngineCounters::Counter kPathCpu[] = {&Shard::cpu_raw_hit_ns, &Shard::cpu_decompress_ns,
                                                &Shard::cpu_miss_ns};
// Bytes copied to readers by each read path (Path's order): exact, counted with the page reads.
constexpr EngineCounters::Counter kPathBytes[] = {&Shard::raw_hit_bytes,
                                                  &Shard::compressed_hit_bytes, &Shard::miss_bytes};

// The most one backing read asks for: the largest FUSE request (max_pages 256 of 4 KiB). A longer
// request is read as several runs.
constexpr uint64_t kMaxRunBytes = 1 << 20;

// Decompression on reader threads: one codec per kind per thread, made on first use.
Codec& ReaderCodec(uint8_t kind) {
  thread_local std::unique_ptr<Codec> codecs[2];
  auto& c = codecs[kind & 1];
  if (!c) c = NewCodec(static_cast<CodecKind>(kind & 1), 1);
  return *c;
}

char* ScratchPage(size_t page_size) {
  thread_local std::vector<char> scratch;
  if (scratch.size() < page_size) scratch.resize(page_size);
  return scratch.data();
}

// Where a page a kernel-mode request reads past a full staging tier lands when it cannot land in
// the reader's buffer itself (LoadRun): aligned as the frames are, since the backing file may read
// it with O_DIRECT. kPassScratchPages per thread at most.
constexpr size_t kPassScratchPages = 2;
char* PassScratch(size_t page_size) {
  thread_local IoBuffer scratch(nullptr, &std::free);
  thread_local size_t size = 0;
  if (size < kPassScratchPages * page_size) {
    size = kPassScratchPages * page_size;
    scratch = NewIoBuffer(size);
  }
  return scratch.get();
}

// Where a blob stored in two pieces is made contiguous for the decompressor.
char* BlobScratch(size_t page_size) {
  thread_local std::vector<char> scratch;
  if (scratch.size() < page_size) scratch.resize(page_size);
  return scratch.data();
}

}  // namespace

// ---- reads ------------------------------------------------------------------------------------

Status PageCache::Impl::Read(uint64_t file_id, BackingFile* file, uint64_t offset, size_t len,
                             void* dst, size_t* n, bool* whole, uint64_t load_to) {
  *n = 0;
  if (whole != nullptr) *whole = true;
  char* out = static_cast<char*>(dst);
  while (len > 0) {
    uint64_t page_no = offset / page_size_;
    uint32_t in_page = static_cast<uint32_t>(offset % page_size_);
    uint32_t want = static_cast<uint32_t>(std::min<uint64_t>(len, page_size_ - in_page));
    CpuSample cpu;  // about one event in 64 is timed on this thread's CPU clock (ccfs/stats.h)
    uint64_t start = NowNs();
    const PageKey key{file_id, page_no};
    // One page from the tiers, or a run of misses from its first page on. An error is the
    // reader's, even after some pages: a short success would read as end of file (in raw_tier =
    // kernel mode the kernel then zero-fills and keeps the rest of the page).
    size_t copied = 0;
    bool end_of_file = false;
    for (;;) {
      uint32_t page_copied = 0;
      Path path = Path::kNone;
      bool missing = false;
      Status st = ReadPage(key, in_page, want, out, &page_copied, &path, &missing,
                           /*wait=*/file != nullptr);
      if (!st.ok()) return st;
      if (missing && file == nullptr) {
        *whole = false;  // TryRead: the rest is the caller's
        return Status::Ok();
      }
      if (!missing) {
        const uint64_t ns = NowNs() - start;
        if (path != Path::kNone) {
          RecordRead(key, path, ns);
          Count(kPathBytes[static_cast<int>(path)], page_copied);
        }
        if (path != Path::kNone && cpu.sampled()) {
          Count(kPathCpu[static_cast<int>(path)], cpu.ScaledNs(ns));
        }
        copied = page_copied;
        end_of_file = page_copied < want;
        break;
      }
      bool retry = false;
      st = LoadRun(file_id, file, offset, len, out, cpu, start, &copied, &end_of_file, &retry,
                   Load::kRead, load_to, load_to != 0 ? load_to : kUnknownSize);
      if (!st.ok()) return st;
      if (!retry) break;
    }
    *n += copied;
    out += copied;
    offset += copied;
    len -= copied;
    if (end_of_file) break;
  }
  return Status::Ok();
}

void PageCache::Impl::RecordRead(const PageKey& key, Path path, uint64_t ns) {
  frequency_.Increment(key);
  LatencyOf(path).Record(ns);
  if (estimate_) mrc_.Record(cache::HashPageKey(key));
  Count(&Shard::reads);
  Count(path == Path::kRawHit         ? &Shard::raw_hits
        : path == Path::kCompressedHit ? &Shard::compressed_hits
                                       : &Shard::misses);
}

uint32_t PageCache::Impl::CopyPinned(PageEntry* e, uint32_t in_page, uint32_t want, char* dst) {
  uint32_t length = e->length.load(std::memory_order_relaxed);
  uint32_t copied = in_page >= length ? 0 : std::min(want, length - in_page);
  std::memcpy(dst, raw_.data(e->frame.load(std::memory_order_relaxed)) + in_page, copied);
  cache::Unpin(e);
  return copied;
}

Status PageCache::Impl::ReadPage(const PageKey& key, uint32_t in_page, uint32_t want, char* dst,
                                 uint32_t* copied, Path* path, bool* missing, bool wait) {
  *missing = false;
  bool waited_for_load = false;
  for (;;) {
    bool retry = false;
    {
      RcuReadLock rcu;
      PageEntry* e = index_.Lookup(key);
      if (e != nullptr) {
        uint64_t s = e->state.load(std::memory_order_acquire);
        for (;;) {
          uint64_t kind = cache::KindOf(s);
          if (kind == cache::kRaw || kind == cache::kEvicting) {
            // Pin and mark referenced in one CAS; the frame cannot be reused while pinned.
            if (cache::TryPin(e, &s)) {
              *copied = CopyPinned(e, in_page, want, dst);
              if (s & cache::kAheadBit) {
                Count(&Shard::readahead_hits);
                Count(&Shard::readahead_hit_bytes, *copied);
              }
              *path = waited_for_load ? Path::kMiss : Path::kRawHit;
              return Status::Ok();
            }
            continue;
          }
          if (kind == cache::kCompressed) {
            Status st = ReadCompressed(e, s, in_page, want, dst, copied, &retry);
            if (!retry) {
              *path = waited_for_load ? Path::kMiss : Path::kCompressedHit;
              return st;
            }
            break;
          }
          if (kind == cache::kLoading) {
            if (!wait) break;  // *missing, below
            // Another thread is reading this page from the backing file: wait for it. Waiting
            // inside the read-side section keeps the entry alive; it only delays reclamation.
            if (!(s & cache::kWaiterBit) && !cache::TryMarkWaiter(e, &s)) continue;
            e->state.wait(s | cache::kWaiterBit, std::memory_order_acquire);
            waited_for_load = true;
            s = e->state.load(std::memory_order_acquire);
            continue;
          }
          // kDead: being removed; look it up again.
          retry = true;
          break;
        }
      }
    }
    if (retry) continue;
    *missing = true;
    return Status::Ok();
  }
}

Status PageCache::Impl::ReadCompressed(PageEntry* e, uint64_t s, uint32_t in_page, uint32_t want,
                                       char* dst, uint32_t* copied, bool* retry) {
  // REQUIRES: RCU read-side; `s` was read as kCompressed.
  Blob* blob = e->blob.load(std::memory_order_acquire);
  if (blob == nullptr && cache::KindOf(e->state.load(std::memory_order_acquire)) != cache::kCompressed) {
    *retry = true;  // the entry left the tier between our two loads
    return Status::Ok();
  }
  uint32_t length = e->length.load(std::memory_order_relaxed);
  uint32_t frame;
  // A page is promoted on its second hit while compressed: a promotion displaces a raw page,
  // which then costs a compression, so a page read once from the compressed tier is served from
  // a scratch copy instead. Promotion is optional: it also leaves the last few free frames to
  // misses, which must have one.
  bool promote = promote_ && (s & cache::kTierHitBit) != 0 &&
                 raw_.free_count() > evictor_->low_watermark() / 4 &&
                 raw_.TryAlloc(&frame);
  char* page = promote ? raw_.data(frame) : ScratchPage(page_size_);
  uint64_t t0 = NowNs();
  if (blob == nullptr) {
    std::memset(page, 0, length);
  } else {
    const char* bytes = cache::BlobBytes(blob, BlobScratch(page_size_));
    Status st = ReaderCodec(blob->codec).Decompress(bytes, blob->size, page, length);
    if (!st.ok()) {
      // A blob that does not decode (a restored page whose cache file passed its checksums
      // nonetheless: cache/cache_file.h) is dropped, and the page read from the store as one not
      // cached: the reader never sees the damage.
      if (promote) raw_.Free(frame);
      Invalidate(e);
      *retry = true;
      return Status::Ok();
    }
  }
  Count(&Shard::decompress_ns, NowNs() - t0);
  if (length < page_size_) std::memset(page + length, 0, page_size_ - length);
  if (promote) {
    Blob* old_blob = nullptr;
    if (compressed_.Promote(e, frame, &old_blob)) {
      raw_.owner(frame).store(e, std::memory_order_release);
      cache::RetireBlob(old_blob);
      Count(&Shard::promotions);
      *copied = CopyPinned(e, in_page, want, dst);
      if (raw_.free_count() < evictor_->low_watermark()) KickEvictor();
      return Status::Ok();
    }
    // Someone else promoted or dropped it meanwhile: the bytes are still right, serve them.
    raw_.Free(frame);
    *retry = true;
    return Status::Ok();
  }
  cache::MarkCompressedHit(e);
  *copied = in_page >= length ? 0 : std::min(want, length - in_page);
  std::memcpy(dst, page + in_page, *copied);
  // Exclusive levels: the kernel takes the page back and demotes it again when it drops it.
  if (demotes_) HandToKernel(e);
  if (raw_.free_count() < evictor_->low_watermark()) KickEvictor();
  return Status::Ok();
}

Status PageCache::Impl::LoadRun(uint64_t file_id, BackingFile* file, uint64_t offset, size_t len,
                                char* dst, const CpuSample& cpu, uint64_t start, size_t* copied,
                                bool* eof, bool* retry, Load kind, uint64_t load_to,
                                uint64_t known_size) {
  const bool reader = kind == Load::kRead;
  const bool ahead = kind == Load::kAhead;
  const bool pinned = IsPinned(file_id);
  *copied = 0;
  *eof = false;
  *retry = false;
  struct Claim {
    PageEntry* e;
    uint32_t frame;
  };
  // Per thread, so that a one-page miss allocates nothing but its entry.
  thread_local std::vector<Claim> run;
  thread_local std::vector<char*> bufs;
  run.clear();
  bufs.clear();
  const uint64_t first = offset / page_size_;
  // The request's pages; a reader's run may go on to load_to with pages read ahead.
  const uint64_t wanted = (offset % page_size_ + len + page_size_ - 1) / page_size_;
  const uint64_t to_load =
      reader && load_to > offset + len ? (load_to + page_size_ - 1) / page_size_ - first : wanted;
  const uint64_t max_pages = std::min<uint64_t>(
      {to_load, std::max<uint64_t>(1, kMaxRunBytes / page_size_), kMaxReadBuffers});

  // Claims page `page_no` in `frame`: false (the frame freed) if the page is in the index already.
  auto claim = [&](uint64_t page_no, uint32_t frame) {
    auto* e = new PageEntry;
    e->key = PageKey{file_id, page_no};
    e->frame.store(frame, std::memory_order_relaxed);
    cache::InitLoading(e, /*demoted=*/false, ahead || page_no >= first + wanted,
                       /*wanted=*/kind == Load::kWarm, pinned,
                       /*streamed=*/len >= cache::kStreamRunBytes);
    RcuReadLock rcu;
    if (index_.InsertUnique(e) != e) {
      delete e;  // never published
      raw_.Free(frame);
      return false;
    }
    run.push_back(Claim{e, frame});
    bufs.push_back(raw_.data(frame));
    return true;
  };

  // The first page may wait for a frame: no page is claimed yet (see the top of this file).
  uint64_t waited_ns = 0;
  uint32_t frame = raw_.Alloc(&waited_ns, [this] { KickEvictor(); });
  if (waited_ns > 0 && reader) {
    Count(&Shard::stalls);
    Count(&Shard::stall_ns, waited_ns);
  }
  if (!claim(first, frame)) {
    *retry = true;
    return Status::Ok();
  }
  // The pages after it, while they are missing and a frame is free at once.
  bool out_of_frames = false;
  for (uint64_t p = first + 1; run.size() < max_pages; ++p) {
    {
      RcuReadLock rcu;
      if (index_.Lookup(PageKey{file_id, p}) != nullptr) break;
    }
    if (!raw_.TryAlloc(&frame)) {
      out_of_frames = true;
      break;
    }
    if (!claim(p, frame)) break;
  }
  if (raw_.free_count() < evictor_->low_watermark()) KickEvictor();
  // raw_tier = kernel: the kernel keeps what a reader is sent, and the staging tier only holds
  // pages on their way to the compressed tier. When it has no frame free, the rest of the
  // request's missing pages are read in the same backing read and sent without being kept
  // (pass_through_pages): cutting the run there made a stream one backing read per few free
  // frames, waiting on compressions it does not need. These pages are not claimed, so another
  // reader may load one of them meanwhile; neither read publishes bytes the other's claim does not
  // cover. Pages read ahead and pinned files' pages are not passed.
  size_t passed = 0;
  if (out_of_frames && reader && !promote_ && !pinned) {
    // A page the request covers whole is read straight into its place in the reader's buffer,
    // if that place is aligned as a backing read needs (in the FUSE layer's buffers it is); any
    // other page goes to the thread's scratch, and the run ends when the scratch is full.
    char* scratch = PassScratch(page_size_);
    size_t scratched = 0;
    const uint64_t in_first = offset % page_size_;
    const uint64_t end = std::min<uint64_t>(wanted, max_pages);
    for (uint64_t i = run.size(); i < end; ++i) {
      {
        RcuReadLock rcu;
        if (index_.Lookup(PageKey{file_id, first + i}) != nullptr) break;
      }
      char* at = dst + (i * page_size_ - in_first);
      const bool direct = (i + 1) * page_size_ - in_first <= len &&
                          reinterpret_cast<uintptr_t>(at) % kIoAlignment == 0;
      if (!direct) {
        if (scratched == kPassScratchPages) break;
        at = scratch + scratched++ * page_size_;
      }
      bufs.push_back(at);
      ++passed;
    }
  }

  size_t got = 0;
  const uint64_t read_start = NowNs();
  Status st = file->ReadPages(first * page_size_, page_size_, bufs, known_size, &got);
  Count(&Shard::backing_reads);
  if (st.ok() && got >= cache::kStreamRunBytes) {
    evictor_->NoteStreamRead(NowNs() - read_start, (got + page_size_ - 1) / page_size_);
  }
  if (!st.ok()) {
    got = 0;
    if (reader) Count(&Shard::read_errors, run.size() + passed);
  }

  // Publish (or abandon) every claimed page, in order, copying the request's part of each.
  const bool buffered = !file->direct();
  uint64_t pages_read = 0;
  for (size_t i = 0; i < run.size(); ++i) {
    PageEntry* e = run[i].e;
    const uint32_t f = run[i].frame;
    const bool page_ahead = ahead || i >= wanted;
    const uint64_t at = i * static_cast<uint64_t>(page_size_);
    if (got > at) {
      const auto length = static_cast<uint32_t>(std::min<uint64_t>(page_size_, got - at));
      if (length < page_size_) std::memset(raw_.data(f) + length, 0, page_size_ - length);
      e->length.store(length, std::memory_order_relaxed);
      if (reader && !*eof) {
        // The request's part of this page: from `in_page` (the first page only) for `want`.
        const uint32_t in_page = i == 0 ? static_cast<uint32_t>(offset % page_size_) : 0;
        const auto want = static_cast<uint32_t>(std::min<uint64_t>(len - *copied,
                                                                   page_size_ - in_page));
        const uint32_t c = in_page >= length ? 0 : std::min(want, length - in_page);
        std::memcpy(dst + *copied, raw_.data(f) + in_page, c);
        *copied += c;
        *eof = c < want;
      }
      ++pages_read;
      raw_.owner(f).store(e, std::memory_order_release);
      // A page read often lately (though not cached) starts with credit on the raw CLOCK; a page
      // read ahead starts with none (it has not been read); a page warmed up or of a pinned file
      // with at least one (someone asked for it on purpose: no probation).
      const uint64_t uses = page_ahead ? 0
                            : kind == Load::kWarm || pinned
                                ? std::max<uint64_t>(1, frequency_.Estimate(e->key))
                                : frequency_.Estimate(e->key);
      const uint64_t s = cache::FinishLoad(e, uses);
      if (s & cache::kWaiterBit) e->state.notify_all();
      if (!(s & cache::kStaleBit)) {
        // A page not read at all lately (a one-off, by the sketch) is the first candidate for
        // eviction, unless it is read again before the next sweep (raw_tier.h, Probation).
        if (uses == 0 && probation_.load(std::memory_order_relaxed)) {
          raw_.Probation(f, e, page_ahead);
        }
        continue;
      }
      // Invalidated while loading: the caller still gets what it read (the read was concurrent
      // with the change), but the page is not kept.
      raw_.owner(f).store(nullptr, std::memory_order_relaxed);
    } else {
      // Past end of file, or the read failed: nothing to publish.
      if (st.ok()) *eof = true;
      const uint64_t s = cache::AbandonLoad(e);
      if (s & cache::kWaiterBit) e->state.notify_all();
    }
    {
      RcuReadLock rcu;
      index_.Remove(e);
    }
    raw_.Free(f);
    cache::RetireEntry(e);
  }
  // The pages passed through: the request's part of each (already in place, or copied from the
  // scratch), nothing kept.
  for (size_t i = run.size(); i < run.size() + passed && st.ok() && !*eof; ++i) {
    const uint64_t at = i * static_cast<uint64_t>(page_size_);
    if (got <= at) {
      *eof = true;
      break;
    }
    const auto length = static_cast<uint32_t>(std::min<uint64_t>(page_size_, got - at));
    const auto want = static_cast<uint32_t>(std::min<uint64_t>(len - *copied, page_size_));
    const uint32_t c = std::min(want, length);
    if (bufs[i] != dst + *copied) std::memcpy(dst + *copied, bufs[i], c);  // from the scratch
    *copied += c;
    *eof = c < want;
    ++pages_read;
  }
  if (passed > 0) {
    Count(&Shard::pass_through_pages, passed);
    evictor_->NotePassed(PageKey{file_id, first + run.size()}, static_cast<uint32_t>(passed));
  }
  if (!st.ok()) {
    *copied = 0;
    return st;
  }
  if (!reader) {
    *copied = got;
    *eof = got < run.size() * static_cast<uint64_t>(page_size_);
    Count(ahead ? &Shard::readahead_pages : &Shard::warm_pages, pages_read);
    return st;
  }
  // Pages loaded past the request are read ahead, not read.
  const uint64_t pages_ahead = pages_read > wanted ? pages_read - wanted : 0;
  if (pages_ahead > 0) Count(&Shard::readahead_pages, pages_ahead);
  pages_read -= pages_ahead;
  if (pages_read == 0) return st;
  // The run's time, shared by its pages; its CPU sample, if one, stands for the whole run.
  const uint64_t ns = NowNs() - start;
  for (uint64_t i = 0; i < pages_read; ++i) {
    RecordRead(PageKey{file_id, first + i}, Path::kMiss, ns / pages_read);
    if (buffered) Count(&Shard::buffered_misses);
  }
  Count(&Shard::miss_bytes, *copied);
  if (cpu.sampled()) Count(kPathCpu[static_cast<int>(Path::kMiss)], cpu.ScaledNs(ns));
  return st;
}

uint64_t PageCache::Impl::ReadAheadWindow() const {
  const uint64_t raw_share =
      std::max(uint64_t{raw_.capacity()} * page_size_ / cache::kRawShareOfWindow, cache::kMinWindow);
  return std::min(readahead_max_.load(std::memory_order_relaxed), raw_share);
}

bool PageCache::Impl::PrefetchFile(
    uint64_t file_id, std::function<std::shared_ptr<BackingFile>(uint64_t* len)> open) {
  return readahead_->Push(cache::ReadaheadQueue::Task{file_id, nullptr, 0, 0, std::move(open)});
}

void PageCache::Impl::ReadAhead(Stream* stream, uint64_t file_id,
                                const std::shared_ptr<BackingFile>& file, uint64_t offset,
                                uint64_t n, bool at_end) {
  uint64_t from = 0;
  const uint64_t max_window = ReadAheadWindow();
  const uint64_t len = stream->Next(offset, n, at_end, max_window, &from);
  if (len == 0) return;
  // Whole pages: from the page the window starts in to the one it ends in, in pieces of at most
  // kTaskBytes, so that the read-ahead threads read one window with several reads at once.
  const uint64_t first = from / page_size_ * page_size_;
  const uint64_t end = (from + len + page_size_ - 1) / page_size_ * page_size_;
  const uint64_t piece = std::max<uint64_t>(page_size_, cache::ReadaheadQueue::kTaskBytes);
  for (uint64_t at = first; at < end; at += piece) {
    const cache::ReadaheadQueue::Task task{file_id, file, at, std::min(piece, end - at), nullptr};
    if (!readahead_->Push(task)) {
      stream->Dropped(at);
      break;
    }
  }
}

void PageCache::Impl::Prefetch(const cache::ReadaheadQueue::Task& task) {
  std::shared_ptr<BackingFile> file = task.file;
  uint64_t task_len = task.len;
  // Never past the end of the file: a window there would ask the store for nothing, every time a
  // reader near the end moves on. (On this thread, so no reader waits for the size.) A file
  // opened here is as large as its open just found it.
  uint64_t size = 0;
  if (!file) {
    file = task.open(&task_len);  // on this thread: no reader waits for the store's open
    if (!file) return;
    size = task_len;
    task_len = (task_len + page_size_ - 1) / page_size_ * page_size_;
  } else if (!file->Size(&size).ok()) {
    return;
  }
  const uint64_t end =
      std::min(task.offset + task_len, (size + page_size_ - 1) / page_size_ * page_size_);
  for (uint64_t at = task.offset; at < end;) {
    {
      RcuReadLock rcu;
      if (index_.Lookup(PageKey{task.file_id, at / page_size_}) != nullptr) {
        at += page_size_;  // cached, or loading for a reader
        continue;
      }
    }
    size_t loaded = 0;
    bool eof = false, retry = false;
    Status st = LoadRun(task.file_id, file.get(), at, end - at, nullptr, CpuSample(), 0,
                        &loaded, &eof, &retry, Load::kAhead, 0, size);
    if (!st.ok() || eof) return;  // a reader that gets there meets the error itself
    if (retry) continue;          // a reader claimed the page meanwhile: looked up again
    at += loaded;
  }
}

// ---- writes and invalidation ------------------------------------------------------------------

Status PageCache::Impl::Write(uint64_t file_id, BackingFile* file, uint64_t offset,
                              const void* src, size_t len) {
  uint64_t old_size = 0;
  Status st = file->Size(&old_size);
  if (!st.ok()) return st;
  st = file->Write(offset, src, len);
  if (!st.ok()) return st;
  if (len == 0) return st;
  // Drop the pages written, and the old last page when the file grows (its cached copy ends at
  // the old end of file).
  uint64_t first = offset / page_size_;
  uint64_t last = (offset + len - 1) / page_size_;
  change_epoch_.fetch_add(1, std::memory_order_seq_cst);
  RcuReadLock rcu;
  auto drop = [&](uint64_t page_no) {
    if (PageEntry* e = index_.Lookup(PageKey{file_id, page_no})) Invalidate(e);
  };
  for (uint64_t p = first; p <= last; ++p) drop(p);
  if (offset + len > old_size && old_size / page_size_ < first) drop(old_size / page_size_);
  Count(&Shard::page_writes, last - first + 1);
  return Status::Ok();
}

void PageCache::Impl::InvalidateFile(uint64_t file_id, uint64_t from) {
  uint64_t first = from / page_size_;
  change_epoch_.fetch_add(1, std::memory_order_seq_cst);
  RcuReadLock rcu;
  std::vector<PageEntry*> doomed;
  index_.ForEachOfFile(file_id, first, [&](PageEntry* e) { doomed.push_back(e); });
  for (PageEntry* e : doomed) Invalidate(e);
}


void PageCache::Impl::Invalidate(PageEntry* e) {
  uint64_t s = e->state.load(std::memory_order_acquire);
  for (;;) {
    switch (cache::KindOf(s)) {
      case cache::kLoading:
      case cache::kEvicting:
        // The owner (loader or compression worker) finishes and, seeing the stale bit, drops it.
        if (!cache::TryMarkStale(e, &s)) continue;
        if (index_.Remove(e)) Count(&Shard::invalidations);
        return;
      case cache::kRaw: {
        if (!cache::TryKillRaw(e, &s)) continue;
        index_.Remove(e);
        uint32_t frame = e->frame.load(std::memory_order_relaxed);
        // Readers that pinned before the transition finish their copy first.
        while (cache::PinsOf(e->state.load(std::memory_order_acquire)) != 0) std::this_thread::yield();
        raw_.owner(frame).store(nullptr, std::memory_order_relaxed);
        raw_.Free(frame);
        e->blob.store(nullptr, std::memory_order_relaxed);
        cache::RetireEntry(e);
        Count(&Shard::invalidations);
        return;
      }
      case cache::kCompressed:
        if (!compressed_.Kill(e)) {
          s = e->state.load(std::memory_order_acquire);
          continue;
        }
        index_.Remove(e);
        cache::RetireEntry(e);
        Count(&Shard::invalidations);
        return;
      default:
        return;  // already dead
    }
  }
}

void PageCache::Impl::Quiesce() {
  readahead_->Quiesce();
  evictor_->Quiesce();
}

// ---- PageCache --------------------------------------------------------------------------------

Status PageCache::Create(const Options& options, std::unique_ptr<PageCache>* cache) {
  Status st = options.Validate();
  if (!st.ok()) return st;
  cache->reset(new PageCache(std::make_unique<Impl>(options)));
  return Status::Ok();
}

PageCache::PageCache(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
PageCache::~PageCache() = default;

Status PageCache::TryRead(uint64_t file_id, uint64_t offset, size_t len, void* dst, size_t* n,
                         bool* whole) {
  return impl_->Read(file_id, nullptr, offset, len, dst, n, whole);
}
Status PageCache::Read(uint64_t file_id, BackingFile* file, uint64_t offset, size_t len,
                       void* dst, size_t* n, uint64_t load_to) {
  return impl_->Read(file_id, file, offset, len, dst, n, nullptr, load_to);
}
Status PageCache::Write(uint64_t file_id, BackingFile* file, uint64_t offset, const void* src,
                        size_t len) {
  return impl_->Write(file_id, file, offset, src, len);
}
void PageCache::InvalidateFile(uint64_t file_id, uint64_t from) { impl_->InvalidateFile(file_id, from); }
uint64_t PageCache::WholeFileBytes() const { return impl_->WholeFileBytes(); }
void PageCache::ReadAhead(Stream* stream, uint64_t file_id,
                          const std::shared_ptr<BackingFile>& file, uint64_t offset, uint64_t n,
                          bool at_end) {
  impl_->ReadAhead(stream, file_id, file, offset, n, at_end);
}
bool PageCache::PrefetchFile(uint64_t file_id,
                             std::function<std::shared_ptr<BackingFile>(uint64_t* len)> open) {
  return impl_->PrefetchFile(file_id, std::move(open));
}
uint64_t PageCache::ReadAheadWindow() const { return impl_->ReadAheadWindow(); }
void PageCache::Demote(uint64_t file_id, uint64_t page_no, const void* bytes, uint32_t len,
                       uint64_t epoch) {
  impl_->Demote(file_id, page_no, bytes, len, epoch);
}
uint64_t PageCache::ChangeEpoch() const { return impl_->ChangeEpoch(); }
std::vector<PageCache::CachedPage> PageCache::CachedPages() const { return impl_->CachedPages(); }
void PageCache::SavePages(uint64_t file_id, const std::vector<uint64_t>& pages,
                          std::vector<SavedPage>* out) const {
  impl_->SavePages(file_id, pages, out);
}
PageCache::Restored PageCache::Restore(uint64_t file_id, uint64_t page_no, uint32_t length,
                                       bool zero, CodecKind codec, const char* bytes, size_t size,
                                       uint64_t epoch) {
  return impl_->Restore(file_id, page_no, length, zero, codec, bytes, size, epoch);
}
void PageCache::CountPersistence(uint64_t written, uint64_t restored, uint64_t dropped_stale,
                                 uint64_t errors) {
  impl_->CountPersistence(written, restored, dropped_stale, errors);
}
Status PageCache::Reconfigure(const Options& options) { return impl_->Reconfigure(options); }
CacheStats PageCache::Stats() const { return impl_->Stats(); }
std::vector<PageCache::CurvePoint> PageCache::HitRatioCurve() const {
  return impl_->HitRatioCurve();
}
Status PageCache::Warm(uint64_t file_id, BackingFile* file, uint64_t offset, uint64_t len,
                       uint64_t* loaded) {
  return impl_->Warm(file_id, file, offset, len, loaded);
}
PageCache::Residency PageCache::ResidencyOf(uint64_t file_id, uint64_t first_page,
                                            uint64_t pages) const {
  return impl_->ResidencyOf(file_id, first_page, pages);
}
void PageCache::Pin(uint64_t file_id) { impl_->Pin(file_id); }
void PageCache::UnpinAll() { impl_->UnpinAll(); }
bool PageCache::KeepsFromKernel(uint64_t file_id, uint64_t page_no) const {
  return impl_->KeepsFromKernel(file_id, page_no);
}
void PageCache::AttachKernelSide(KernelSide side) { impl_->AttachKernelSide(std::move(side)); }
void PageCache::Quiesce() { impl_->Quiesce(); }
Options PageCache::options() const { return impl_->options(); }

}  // namespace ccfs
