// Evictor: keeps free raw frames available, deciding which victims are worth a compression.
//
// One background thread watches the raw tier's free frames. Below the low watermark it sweeps a
// batch of victims (kRaw -> kEvicting: pages on probation first, then the CLOCK hand's; see
// raw_tier.h), runs admission on them (admission.h: victims with no sign of reuse, or from
// regions that keep failing to compress, are dropped at once), cuts the rest into one chunk per
// compression worker and submits them to the CompressionPool. A worker compresses each victim of its chunk and
// publishes it in the compressed tier, or drops it (rejected, zero budget, invalidated meanwhile).
// With no compressed budget the batch is dropped at once. Compression never runs on a reader's
// thread: a miss waits only when no frame is free at all, and when the pool falls that far behind
// the evictor drops a small batch uncompressed instead (pressure_drops).
//
// Ownership: the evictor owns its thread and the admission state (ghost set, reject memory); it
// borrows the engine's index, tiers, pool, frequency sketch and counters (Parts), which must
// outlive it. The victims it takes are owned by it (kEvicting) until a worker publishes or drops
// them.
//
// Thread-safety: Kick, Configure, EnableCompression, low_watermark, Behind and Quiesce may be called
// from any thread. Stop is called by the engine's destructor before it waits for the pool (again by
// ~Evictor, which is then a no-op). The admission state is touched by the evictor thread only;
// compression workers run CompressChunk.
// Lock order: mu_ is a leaf (the sweep and the pool submissions run with it released).
#ifndef CCFS_CACHE_EVICTOR_H_
#define CCFS_CACHE_EVICTOR_H_

#include <atomic>
#include <cstdint>
#include <thread>
#include <utility>
#include <vector>

#include "cache/admission.h"
#include "cache/compressed_tier.h"
#include "cache/engine_counters.h"
#include "cache/frequency.h"
#include "cache/page_entry.h"
#include "cache/page_index.h"
#include "cache/raw_tier.h"
#include "ccfs/codec.h"
#include "ccfs/options.h"
#include "compress/compression_pool.h"
#include "util/mutex.h"
#include "util/thread_cpu.h"

namespace ccfs::cache {

class VictimSample;  // split_tuner.h

class Evictor {
 public:
  // raw_tier = kernel: the least batch and low watermark, percent of the (staging) raw frames.
  static constexpr double kStagingMinPercent = 25;
  // The least batch, in frames (at most an eighth of the tier), while misses wait for a frame: a
  // run of misses takes up to 1 MiB of frames at once (page_cache.cc), and with batches of 2% of
  // a small tier (two frames of 128) such misses waited for the evictor once per page or two.
  // Not while no miss waits: a larger batch leaves more frames empty, and in a scan hands the
  // pool more pages of a region that does not compress before its rejects are counted
  // (RejectMemory); nor for Behind, for the same reason.
  static constexpr uint32_t kStalledBatchFrames = 32;

  // The engine's parts the evictor works on (not owned).
  struct Parts {
    PageIndex* index;
    RawTier* raw;
    CompressedTier* compressed;
    CompressionPool* pool;
    FrequencySketch* frequency;
    EngineCounters* counters;
    VictimSample* victims;  // may be null: no victims are sampled (split_tuner.h)
  };

  // Applies `options` (Configure) and starts the evictor thread.
  Evictor(const Parts& parts, const Options& options);
  // Stops the thread if Stop() was not called.
  ~Evictor();
  Evictor(const Evictor&) = delete;
  Evictor& operator=(const Evictor&) = delete;

  // Stops and joins the evictor thread. Chunks already submitted to the pool still run (they call
  // back into this object): the caller waits for the pool before destroying the evictor.
  void Stop() EXCLUDES(mu_);

  // Takes the live keys it uses: low_watermark_percent and evict_batch_percent (against the raw
  // tier's budget), min_savings_percent, admission_filter, and the ghost set's size (from the
  // compressed budget; applied by the evictor thread before its next admission).
  void Configure(const Options& options);
  // Whether victims may be compressed (compressed_percent > 0); off, they are dropped.
  void EnableCompression(bool on) { compress_enabled_.store(on); }
  bool compression_enabled() const { return compress_enabled_.load(std::memory_order_relaxed); }

  // Wakes the evictor if it sleeps and there is work: cheap when there is none (a fence and two
  // loads), so misses and promotions call it freely.
  void Kick() EXCLUDES(mu_);

  // Waits until no sweep, compression or eviction is in flight and none is needed.
  void Quiesce() EXCLUDES(mu_);

  // A reader's or read-ahead's backing read of `pages` pages of a stream (a run of at least
  // kStreamRunBytes) took `ns`: the store's time per page as streamed, which admission weighs
  // against a compression's (Admit). Any thread; never blocks.
  void NoteStreamRead(uint64_t ns, uint64_t pages) {
    if (pages > 0) Smooth(&stream_page_ns_, ns / pages);
  }

  // Kernel mode: `pages` pages from `first` on were read past a full staging tier and sent
  // without being kept (pass_through_pages). The evictor remembers them as it does a stream's
  // pages it drops (Admit), so that they are kept when they come back: a data set scanned again
  // and again would otherwise have most of a pass never remembered. Any thread; at most
  // kMaxPassedRuns runs wait for the evictor, the rest are not remembered.
  void NotePassed(const PageKey& first, uint32_t pages);

  // Free frames below this wake the evictor (at least 1).
  uint32_t low_watermark() const { return low_watermark_.load(std::memory_order_relaxed); }
  // True while the compression pool holds all the evictor gives it at once (two batches): a miss
  // that now found no free frame would make the evictor drop victims uncompressed. A warm-up
  // waits instead, so that what it loads is kept.
  bool Behind() const;

  // Compresses `length` bytes of page `key` with `codec` as the pool does a victim: an all-zero
  // page keeps no blob (*blob = nullptr), a page that does not save min_savings_percent is
  // rejected (false). *charged: what it costs the compressed tier. Counts compressions,
  // compress_ns, zero_pages and rejects. Any thread (pool workers).
  bool CompressPage(Codec& codec, const PageKey& key, const char* page, uint32_t length,
                    Blob** blob, size_t* charged);

  // CPU time the evictor thread has used so far (sweeps, admission, the sketch's aging), read
  // from its thread CPU clock. The compressions it hands out are the pool's.
  uint64_t cpu_ns() const { return cpu_.TotalNs(); }

 private:
  // kCompress: take a batch for the pool. kDrop: the pool is saturated and free frames are nearly
  // gone; misses would wait for compressions, so a batch is dropped uncompressed instead.
  enum class Evict { kNone, kCompress, kDrop };
  Evict Pressure() const;
  bool NeedEviction() const { return Pressure() != Evict::kNone; }

  void Loop() EXCLUDES(mu_);
  // Splits a sweep's victims into those worth compressing (kept in *victims) and those dropped at
  // once (admission.h). Evictor thread only.
  void Admit(std::vector<PageEntry*>* victims);
  // A pool task: compresses each victim and publishes or drops it.
  void CompressChunk(Codec& codec, const std::vector<PageEntry*>& chunk);
  // kEvicting (owned by the caller) -> kDead once no reader pins it: unlink, free the frame,
  // retire the entry.
  void DropEvicting(PageEntry* e);
  void Count(EngineCounters::Counter c, uint64_t n = 1) { parts_.counters->Add(c, n); }

  const Parts parts_;
  const uint32_t page_size_;
  // kernel_demote: victims (pages loaded by misses) leave the staging tier uncompressed, since the
  // kernel keeps their raw copy; what the compressed tier takes is demoted from the kernel
  // (PageCache::Demote), compressed by the pool without passing through a frame.
  const bool demotes_;

  std::atomic<bool> compress_enabled_;
  std::atomic<bool> admission_filter_;
  std::atomic<uint32_t> low_watermark_{1};
  std::atomic<uint32_t> batch_{1};
  std::atomic<uint32_t> stalled_batch_{1};  // batch_ or more: kStalledBatchFrames
  std::atomic<double> min_savings_;
  std::atomic<uint32_t> in_flight_{0};     // victims handed to the pool, not yet done
  std::atomic<uint64_t> ghost_slots_{0};   // wanted size of ghost_; the evictor applies it
  // Moving means (weight 1/8, relaxed: an update lost to a race only delays the mean) of the
  // store's time per page read as a stream (NoteStreamRead) and of a page's compression on the
  // pool (CompressPage, wall clock); 0 until measured.
  std::atomic<uint64_t> stream_page_ns_{0};
  std::atomic<uint64_t> compress_page_ns_{0};
  static void Smooth(std::atomic<uint64_t>* mean, uint64_t sample) {
    const uint64_t m = mean->load(std::memory_order_relaxed);
    mean->store(m == 0 ? sample : m - m / 8 + sample / 8, std::memory_order_relaxed);
  }
  GhostSet ghost_;                         // evictor thread only
  // Stream pages dropped at their first eviction while the compressed tier had room, and pages
  // passed through (NotePassed): they come back a whole pass over the data set later, and a pass
  // over data larger than memory makes as many fingerprints, each of which overwrites one (a
  // fingerprint outlives D later ones in N slots with probability about e^(-D/N)). Sized as
  // ghost_ is, most of a pass over twice memory was forgotten before it came back; at
  // kStreamGhostSlotsPerPage slots per page of memory about three quarters is remembered, for 4
  // bytes a slot (LazyArray: resident as written). Evictor thread only.
  static constexpr uint64_t kStreamGhostSlotsPerPage = 8;
  GhostSet stream_ghost_;
  uint64_t ghost_applied_ = 0;             // evictor thread only
  RejectMemory reject_memory_;             // evictor thread and workers (relaxed atomics)
  uint64_t reads_at_last_aging_ = 0;       // evictor thread only
  std::vector<PageKey> coldest_;           // evictor thread only: Admit's scratch

  // NotePassed's runs, until the evictor's next Admit remembers them.
  static constexpr size_t kMaxPassedRuns = 4096;
  Mutex passed_mu_;
  std::vector<std::pair<PageKey, uint32_t>> passed_ GUARDED_BY(passed_mu_);
  std::vector<std::pair<PageKey, uint32_t>> passed_taken_;  // evictor thread only: Admit's scratch

  Mutex mu_;
  CondVar cv_;                         // with mu_: Kick, Stop; waited on by the evictor thread
  bool stop_ GUARDED_BY(mu_) = false;
  bool busy_ GUARDED_BY(mu_) = false;  // a sweep is being handed out
  std::atomic<bool> sleeping_{false};  // waiting on cv_ (Kick)
  ThreadCpuGroup cpu_;                 // the evictor thread; before thread_, which leaves it first
  std::thread thread_;
};

// Removes each entry of *dropped (made kDead by the compressed tier) from the index and retires
// it, then clears *dropped. Call without the compressed tier's mutex.
void RetireDropped(PageIndex* index, std::vector<PageEntry*>* dropped);

}  // namespace ccfs::cache

#endif  // CCFS_CACHE_EVICTOR_H_
