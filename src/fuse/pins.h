// Pins: the paths of DATASET whose files' pages are evicted last (the live key `pin`).
//
// 1. What is pinned. `pin` holds paths relative to DATASET, separated by ':' (a comma would end
//    the -o option); a file is pinned when its path is one of them or lies under one. The engine
//    is told the file ids of pinned files as they are opened (PageCache::Pin, page_cache.h
//    section 6), so a file pays one path walk per setting of `pin`, at its first open after it.
//    A change of `pin` unpins everything at once and pins again as files are opened: a file kept
//    open across the change is pinned at its next open.
// 2. How much. The files under the paths may hold at most `pin_percent` of `memory`, counted by
//    their sizes in DATASET when `pin` or `pin_percent` is set (at mount, by the control file or
//    SIGHUP): more is refused, naming the key and the sizes, and a path that does not exist is
//    refused naming it. Files that grow later are not refused; the engine's CLOCKs never stall on
//    pinned pages in any case.
//
// Thread-safety: every method may be called from any thread; mu_ is a leaf.
#ifndef CCFS_FUSE_PINS_H_
#define CCFS_FUSE_PINS_H_

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "ccfs/options.h"
#include "ccfs/page_cache.h"
#include "ccfs/status.h"
#include "util/mutex.h"

namespace ccfs {

class Pins {
 public:
  // `dataset`: DATASET's absolute path; `cache` is borrowed.
  Pins(std::string dataset, PageCache* cache) : dataset_(std::move(dataset)), cache_(cache) {}

  // Section 2: OK if `o`'s pins exist and fit, else InvalidArgument naming the key.
  Status Check(const Options& o) const;
  // Takes `o`'s pin list (after Check); unpins everything when it changed.
  void Apply(const Options& o) EXCLUDES(mu_);

  // The setting in force, moved on by every change of the list: a file checked at this
  // generation needs no new check.
  uint64_t generation() const { return generation_.load(std::memory_order_acquire); }
  bool any() const { return any_.load(std::memory_order_acquire); }
  // Whether `path` (relative to DATASET, no leading '/') is pinned.
  bool Matches(const std::string& path) const EXCLUDES(mu_);
  // Tells the engine `file_id` is pinned.
  void Pin(uint64_t file_id) { cache_->Pin(file_id); }

 private:
  const std::string dataset_;
  PageCache* const cache_;
  mutable Mutex mu_;
  std::string text_ GUARDED_BY(mu_);
  std::vector<std::string> paths_ GUARDED_BY(mu_);
  std::atomic<uint64_t> generation_{1};
  std::atomic<bool> any_{false};
};

// `text` (a `pin` value) as paths: empty parts are skipped, trailing '/' removed.
std::vector<std::string> SplitPinPaths(const std::string& text);

}  // namespace ccfs

#endif  // CCFS_FUSE_PINS_H_
