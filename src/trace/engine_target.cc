// The engine target (trace/replay_target.h): ccfs's PageCache in this process, no FUSE, so a
// replay measures the cache's own cost.
#include <fcntl.h>

#include "ccfs/backing_store.h"
#include "ccfs/page_cache.h"
#include "trace/replay_target.h"

namespace ccfs {

namespace {

class EngineTarget final : public ReplayTarget {
 public:
  Status Open(const Dataset& dataset, const Options& options, bool writable) {
    std::unique_ptr<BackingStore> store = NewPosixBackingStore(dataset.root());
    for (const Dataset::File& f : dataset.files()) {
      std::unique_ptr<BackingFile> file;
      Status s = store->Open(f.path, writable ? O_RDWR : O_RDONLY, 0, &file);
      if (!s.ok()) return s;
      files_.push_back(std::move(file));
    }
    return PageCache::Create(options, &cache_);
  }

  // File ids start at 1, as the daemon's inode numbers do.
  Status Read(uint32_t file, uint64_t offset, size_t len, char* buf) override {
    size_t n = 0;
    return cache_->Read(file + 1, files_[file].get(), offset, len, buf, &n);
  }
  Status Write(uint32_t file, uint64_t offset, const char* buf, size_t len) override {
    return cache_->Write(file + 1, files_[file].get(), offset, buf, len);
  }
  bool Counters(CacheStats* stats) override {
    *stats = cache_->Stats();
    return true;
  }
  void Quiesce() override { cache_->Quiesce(); }

 private:
  std::vector<std::unique_ptr<BackingFile>> files_;  // outlive cache_: declared first
  std::unique_ptr<PageCache> cache_;
};

}  // namespace

Status OpenEngineTarget(const Dataset& dataset, const Options& options, bool writable,
                        std::unique_ptr<ReplayTarget>* target) {
  return OpenTargetAs<EngineTarget>(target, dataset, options, writable);
}

}  // namespace ccfs
