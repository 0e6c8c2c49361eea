// The engine target (trace/replay_target.h): ccfs's PageCache in this process, no FUSE, so a
// replay measures the cache's own cost.
#include <fcntl.h>

#include "ccfs/backing_store.h"
#include "ccfs/page_cache.h"
#include "trace/replay_target.h"
#include "util/descriptor_limit.h"

namespace ccfs {

namespace {

class EngineTarget final : public ReplayTarget {
 public:
  Status Open(const Dataset& dataset, const Options& options, bool writable) {
    store_ = NewPosixBackingStore(dataset.root());
    const int flags = writable ? O_RDWR : O_RDONLY;
    // Two descriptors per file (the ordinary one and the O_DIRECT one).
    Status s = files_.Open(dataset.files().size(), RaiseDescriptorLimit() / 4,
                           [this, &dataset, flags](uint32_t file, std::unique_ptr<BackingFile>* f) {
                             return store_->Open(dataset.files()[file].path, flags, 0, f);
                           });
    if (!s.ok()) return s;
    return PageCache::Create(options, &cache_);
  }

  // File ids start at 1, as the daemon's inode numbers do.
  Status Read(uint32_t file, uint64_t offset, size_t len, char* buf) override {
    BoundedFiles<std::unique_ptr<BackingFile>>::Lease f;
    Status s = files_.Acquire(file, &f);
    if (!s.ok()) return s;
    size_t n = 0;
    return cache_->Read(file + 1, f->get(), offset, len, buf, &n);
  }
  Status Write(uint32_t file, uint64_t offset, const char* buf, size_t len) override {
    BoundedFiles<std::unique_ptr<BackingFile>>::Lease f;
    Status s = files_.Acquire(file, &f);
    if (!s.ok()) return s;
    return cache_->Write(file + 1, f->get(), offset, buf, len);
  }
  bool Counters(CacheStats* stats) override {
    *stats = cache_->Stats();
    return true;
  }
  void Quiesce() override { cache_->Quiesce(); }

 private:
  std::unique_ptr<BackingStore> store_;
  BoundedFiles<std::unique_ptr<BackingFile>> files_;  // outlive cache_: declared first
  std::unique_ptr<PageCache> cache_;
};

}  // namespace

Status OpenEngineTarget(const Dataset& dataset, const Options& options, bool writable,
                        std::unique_ptr<ReplayTarget>* target) {
  return OpenTargetAs<EngineTarget>(target, dataset, options, writable);
}

}  // namespace ccfs
