// PageCache: the tiered page cache (the "engine").
//
// 1. The tiers. Caches pages of backing files in RAM split into two tiers:
//   raw tier         fixed page frames, (100 - compressed_percent)% of `memory` (the raw share),
//                    CLOCK eviction;
//   compressed tier  blobs at their real allocated size, compressed_percent% of `memory` (the
//                    split), its own CLOCK; when full it drops its coldest pages (all cached data
//                    is clean).
//    A page lives in exactly one tier. A read is served page by page: a raw hit copies out of the
//    frame; a compressed hit decompresses and moves the page back into a raw frame; a miss reads
//    the page from the BackingFile (O_DIRECT) into a free frame. When free frames fall below the
//    low watermark a background evictor sweeps the raw CLOCK, takes a batch of victims and hands
//    them to the compression pool; with compressed_percent = 0 the same code drops them instead.
//    Compression is never on the read path: a miss waits only when no frame is free at all (a
//    stall, counted with its time); when the compression pool falls that far behind, the evictor
//    drops a few victims uncompressed instead (pressure_drops).
//
// 2. Options that shape the policy (ccfs/options.h; conf/ccfs.toml):
//   admission_filter  once the compressed tier is full, a raw victim is compressed only if it has
//                     shown reuse (read again after its miss, or evicted before and come back);
//                     others are dropped uncompressed (admission_drops). Victims from regions whose
//                     compressions keep being rejected are dropped untried whatever this says
//                     (incompressible_skips). false = compress every victim.
//   probation         a page loaded by a miss that had not been read lately (frequency sketch) is
//                     the first victim of the next sweeps unless it is read again meanwhile;
//                     false = plain GCLOCK over all raw pages.
//   pin_threads       the compression workers run only on the last CPUs (util/cpus.h), leaving the
//                     first ones to the threads that call Read. Read once, at Create.
//    A miss starts the page with as many CLOCK uses as the frequency sketch has seen it read
//    lately, so pages read often come back with credit.
//
// 3. The miss-ratio curve. Every page read (hit or miss) is also offered to the miss-ratio curve
//    (cache/mrc.h: SHARDS sampling of reuse distances), which says what hit ratio an
//    LRU cache of other sizes would have had on the same reads; HitRatioCurve() reads it. It
//    costs an unsampled read a hash, a compare and a counter add, a sampled one (at most one page
//    in two) mostly one cache miss, and never makes a read wait; mrc_samples and mrc_drops count
//    what it took and what it let go.
//
// 4. Read-ahead (Options::readahead). After a Read, ReadAhead tells the engine what one reader of
//    an open file read (its Stream). While that reader's reads follow each other, the engine reads
//    the next pages from the store on its own threads (a window that starts at four reads and
//    doubles each time the reader is half way through it, up to `readahead` bytes; a read
//    elsewhere ends the stream), so the reader finds them cached or loading instead of waiting for
//    each miss in turn. Pages read ahead are not reads (not in `reads`, the curve or the frequency
//    sketch until a reader asks for them); they are counted as readahead_pages, then as
//    readahead_hits when a reader asks or readahead_wasted when evicted first, and they enter as
//    read-once pages (probation, no uses), so a stream never pushes out pages read often.
//
// 5. Warm-up (`ccfs warmup`). Warm loads the pages of a range that are in neither tier, as pages
//    someone wants: they start with a use on the raw CLOCK (no probation) and carry the mark the
//    admission filter reads as reuse, so once the raw share is full they move into the compressed
//    tier rather than out of the cache. Pages of the range cached already get the same mark. They
//    are not reads (not in `reads`, the curve or the sketch): warm_pages counts them. ResidencyOf
//    says what the tiers hold of a range of pages.
//
// 6. Pins (the daemon's `pin` key). A page of a file pinned when the page is loaded carries the
//    wanted marks of a warm-up (no probation; compressed, not dropped, when the raw share fills)
//    and a pin mark: both CLOCKs pass such pages over while they find other victims, and take
//    them like any other only after a whole turn found nothing else, so pins can never stall
//    eviction. pinned_pages and pinned_bytes say what pinned files hold now. What may be pinned
//    (a share of memory) is the caller's rule.
//
// 7. Files. They are named by a caller-chosen 64-bit id (the daemon uses the backing inode number)
//    plus the BackingFile to read misses from. The id must change, or InvalidateFile() must be
//    called, whenever the file's content changes other than through Write().
//
// 7. Persistence (persist = DIR; the daemon's fuse/persister.h writes and reloads the cache file).
//    CachedPages lists what the tiers hold; SavePages copies pages out as they are held (a
//    compressed page's blob; a raw page's bytes, pinned as a reader pins them but not counted as a
//    read); Restore publishes a saved page straight into the compressed tier, with no raw frame,
//    never over a page cached already, never beyond the tier's budget (nothing is dropped for it)
//    and never after a change to the file since `epoch` (ChangeEpoch(), as Demote's). None of them
//    is on the read path, nor does the read path do anything for them.
//
// Thread-safety: every method may be called from any number of threads at once. Threads that call
// Read/Write are registered with RCU on first use and unregistered when they exit.
// Ownership: the caller keeps ownership of BackingFiles; a BackingFile must stay alive until every
// call naming it has returned.
#ifndef CCFS_PAGE_CACHE_H_
#define CCFS_PAGE_CACHE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "ccfs/backing_store.h"
#include "ccfs/codec.h"
#include "ccfs/options.h"
#include "ccfs/stats.h"
#include "ccfs/status.h"

namespace ccfs {

class PageCache {
 public:
  // Validates `options` (the message names a bad key) and starts the evictor and compression pool
  // (compress_threads workers, pinned to CPUs when pin_threads is set).
  static Status Create(const Options& options, std::unique_ptr<PageCache>* cache);
  // Stops the background threads and frees every page.
  ~PageCache();
  PageCache(const PageCache&) = delete;
  PageCache& operator=(const PageCache&) = delete;

  // Reads up to `len` bytes at `offset` of file `file_id` into `dst`; *n is set to the bytes
  // copied, which is less than len only at end of file. Any offset and length are allowed. A page
  // that cannot be read fails the whole call (*n then counts the bytes copied before it).
  // load_to: where the caller knows the reader goes next (the rest of a small file read from its
  // start), a run of misses the request ends in goes on through the missing pages up to byte
  // load_to in the same backing read, as read-ahead (counted so, on probation): one read of the
  // store where the reader's next requests would each have been one. A load_to given is the
  // file's size as the caller just read it: a backing read that ends short there is the end of
  // the file (BackingFile::ReadPages' known_size).
  Status Read(uint64_t file_id, BackingFile* file, uint64_t offset, size_t len, void* dst,
              size_t* n, uint64_t load_to = 0);
  // Read from the tiers alone: copies pages from the first on until one is in neither tier or is
  // still loading, then stops with *whole = false (*n: the bytes copied before it, counted as
  // hits). The rest is for Read, typically on a thread that may wait for the store. *whole = true
  // when every page was there (*n < len then means end of file).
  Status TryRead(uint64_t file_id, uint64_t offset, size_t len, void* dst, size_t* n, bool* whole);
  // The largest file that a read from its start loads whole at its first miss (Read's load_to):
  // one the read-ahead window its reader would be given covers, whose requests would each cost a
  // read of the store (kernel mode: the mount's read-ahead; daemon mode: ReadAhead's largest
  // window), and at most 128 KiB. Live with `readahead` and the split; 0 with readahead = 0.
  uint64_t WholeFileBytes() const;

  // One reader's position in one open file, for ReadAhead. Thread-safe: requests of one open file
  // may be served by several threads at once, in any order.
  class Stream {
   public:
    // After a read of [offset, offset + n) (at_end: it reached the end of the file), the bytes to
    // read ahead, starting at *ahead_offset, given the largest window; 0 = none.
    uint64_t Next(uint64_t offset, uint64_t n, bool at_end, uint64_t max_window,
                  uint64_t* ahead_offset);
    // The bytes from `offset` that Next handed out were not read ahead after all (the read-ahead
    // queue was full): the stream's next window starts there again.
    void Dropped(uint64_t offset);

   private:
    std::mutex mu_;
    uint64_t end_ = 0;     // where the stream's reads have reached
    uint64_t window_ = 0;  // bytes kept read ahead of end_; 0 = no stream
    uint64_t issued_ = 0;  // read ahead up to here
  };
  // Reads ahead of `stream` after it read [offset, offset + n) of `file_id` (at_end: it reached
  // the end of the file). Returns at once: the pages are read on the engine's read-ahead threads,
  // which hold `file` until they are done (a request that cannot be queued is dropped).
  // `file` is copied only when a window is queued: most reads queue none.
  void ReadAhead(Stream* stream, uint64_t file_id, const std::shared_ptr<BackingFile>& file,
                 uint64_t offset, uint64_t n, bool at_end);
  // A file no reader has asked for yet but one is expected to read whole next (the next small file
  // in the listing of a directory being read in that order: fuse/listing_walk.h). Returns at once:
  // a read-ahead thread calls `open`, which returns the file (null: nothing to read) and sets *len
  // to its size as read from the store just before, and loads the pages found in neither tier as
  // read-ahead (counted so, on probation). False when the read-ahead queue was full (dropped).
  bool PrefetchFile(uint64_t file_id,
                    std::function<std::shared_ptr<BackingFile>(uint64_t* len)> open);
  // The largest window ReadAhead keeps ahead of one reader, in bytes (0 with readahead = 0).
  uint64_t ReadAheadWindow() const;
  // Writes through: `file` receives the bytes before this returns; cached copies of the pages
  // written are dropped so the next read sees the new bytes.
  Status Write(uint64_t file_id, BackingFile* file, uint64_t offset, const void* src, size_t len);

  // Loads the pages of [offset, offset + len) of `file_id` found in neither tier from `file`, as
  // wanted pages (section 5), and marks the raw ones found cached. Stops at end of file. *loaded:
  // the bytes read from the store. Waits for free frames like a miss, never for other loads. An
  // error is the store's.
  Status Warm(uint64_t file_id, BackingFile* file, uint64_t offset, uint64_t len,
              uint64_t* loaded);
  // Pages of `file_id` loaded from now on are pinned (section 6).
  void Pin(uint64_t file_id);
  // No file is pinned any more; cached pages lose their pin mark. A page whose load began before
  // the call may still be published with the mark: it is passed over like a pinned page until the
  // next UnpinAll or its eviction (a whole turn of pinned pages), never kept beyond that.
  void UnpinAll();
  // What the tiers hold of pages [first_page, first_page + pages) of `file_id` at one moment.
  struct Residency {
    uint64_t raw_pages = 0;         // in a raw frame (loading included)
    uint64_t compressed_pages = 0;  // in the compressed tier
    uint64_t compressed_bytes = 0;  // their compressed size
  };
  Residency ResidencyOf(uint64_t file_id, uint64_t first_page, uint64_t pages) const;

  // Drops every cached page of `file_id` at or after byte `from` (0 = the whole file). Loads in
  // flight for those pages are not published.
  void InvalidateFile(uint64_t file_id, uint64_t from = 0);

  // Demotion (raw_tier = kernel, kernel_demote != "off"; Options::demotes()): the kernel's page
  // cache is dropping page `page_no` of `file_id`, whose `len` bytes (the kernel's copy, fetched
  // back) are `bytes`. A copy is handed to the compression pool, which publishes the page in the
  // compressed tier (no raw frame is used). In this mode pages loaded by misses leave the staging
  // tier uncompressed (the kernel keeps their raw copy), and a compressed hit leaves the compressed
  // tier (the kernel takes the page back). `epoch` is ChangeEpoch() read before the bytes were
  // asked for: if a write or an invalidation happened since, the bytes may be older than the file
  // and are not kept; nor are pages cached already, incompressible ones, or pages beyond what the
  // pool may have waiting (demote_drops). Never waits.
  void Demote(uint64_t file_id, uint64_t page_no, const void* bytes, uint32_t len,
              uint64_t epoch);
  // Moves on at every Write and InvalidateFile (before they drop pages).
  uint64_t ChangeEpoch() const;

  // Persistence (section 7). One page the tiers hold, raw (a frame; loading pages are not listed)
  // or compressed.
  struct CachedPage {
    uint64_t file_id;
    uint64_t page_no;
    bool raw;
  };
  // Every page the tiers hold at one walk of the index, in no order.
  std::vector<CachedPage> CachedPages() const;
  // A page as SavePages copied it: `bytes` holds the page compressed with `codec`, or, when raw,
  // the page itself (`length` bytes); a zero page holds no bytes.
  struct SavedPage {
    uint64_t page_no = 0;
    uint32_t length = 0;  // the page's bytes (< page_size only at end of file)
    bool raw = false;
    bool zero = false;
    CodecKind codec = kDefaultCodec;
    std::string bytes;
  };
  // Appends to *out a copy of each page of `pages` of `file_id` still cached (pages that left the
  // tiers meanwhile are skipped).
  void SavePages(uint64_t file_id, const std::vector<uint64_t>& pages,
                 std::vector<SavedPage>* out) const;
  enum class Restored {
    kRestored,  // published in the compressed tier
    kCached,    // the page is cached already (or loading): left as it is
    kChanged,   // a write or an invalidation happened since `epoch`: not kept
    kFull,      // the compressed tier has no room for it (or no budget at all): not kept
  };
  // Publishes page `page_no` of `file_id` (`length` bytes) in the compressed tier: all zero
  // (`zero`), else `size` bytes compressed with `codec`. `epoch`: ChangeEpoch() read before the
  // caller checked that the file is the one the bytes were saved from.
  // REQUIRES: 0 < length <= page_size; zero or 0 < size < length.
  Restored Restore(uint64_t file_id, uint64_t page_no, uint32_t length, bool zero, CodecKind codec,
                   const char* bytes, size_t size, uint64_t epoch);
  // Adds the daemon's persistence counts to the engine's (persist_pages_written,
  // persist_pages_restored, persist_pages_dropped_stale, persist_errors), so that Stats() shows
  // them. Restore counts nothing itself: a reload counts its pages once the whole file checked.
  void CountPersistence(uint64_t written, uint64_t restored, uint64_t dropped_stale,
                        uint64_t errors);

  // Applies the keys that can change live (config.h IsLiveKey; "Live" in conf/ccfs.toml), after
  // Options::Validate; they apply to the next sweep and the next miss. Shrinking a tier evicts or
  // compresses in bulk. A change to any other key (memory, page_size, compress_threads, the
  // daemon's keys) returns NotSupported naming the key ("needs a remount"); nothing is changed then.
  Status Reconfigure(const Options& options);

  // A consistent-enough snapshot of all counters (each counter is exact; they are read one after
  // another, so a snapshot taken under load may be a few pages apart between counters).
  CacheStats Stats() const;

  // One point of the estimated curve: an LRU cache of `pages` pages would have hit `hit_ratio` of
  // the reads served lately.
  struct CurvePoint {
    uint64_t pages;
    double hit_ratio;
  };
  // The estimated hit ratio at sizes from 1/64 to 4 times the cache's memory in pages (memory /
  // page_size; four points per doubling), over the page reads served so far, older reads weighing
  // less (their weight halves every 64 x memory / page_size reads). Estimated from a sample of the
  // reads: an estimate of LRU, not of this cache's own policy. Under raw_tier = kernel the curve
  // covers every read only of the pages kept out of the kernel (KeepsFromKernel). Takes the curve's
  // lock for a moment, never a reader's path.
  std::vector<CurvePoint> HitRatioCurve() const;

  // raw_tier = kernel with compressed_percent or compressor = auto: the pages the curve samples
  // (about one in MissRatioCurve::Config::kKernelRate) must not stay in the kernel's page cache,
  // so that every read of them reaches the engine and the curve sees the readers' whole reuse,
  // the kernel's hits included. The caller (the FUSE layer) has the kernel drop such a page soon
  // after serving it. False in any other mode. Lock-free: on the reply path.
  bool KeepsFromKernel(uint64_t file_id, uint64_t page_no) const;

  // What the split tuner needs from the layer that put the kernel's page cache above the engine
  // (raw_tier = kernel), to predict and apply splits there:
  struct KernelSide {
    // The mean µs of one FUSE round trip to the daemon, measured now (<= 0: not measured). The
    // tuner calls it without any lock of its own, once per decision.
    std::function<double()> trip_us;
    // The tuner changed compressed_percent: the kernel's share follows it.
    std::function<void()> split_applied;
  };
  // Attaches `side` (an empty KernelSide detaches it). After this returns, no call into the side
  // attached before is running or will start.
  void AttachKernelSide(KernelSide side);

  // Waits until no eviction or compression is in flight (for tests and benchmarks).
  void Quiesce();

  Options options() const;

 private:
  class Impl;
  explicit PageCache(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace ccfs

#endif  // CCFS_PAGE_CACHE_H_
