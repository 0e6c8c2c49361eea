// rocksdb_tiered: RocksDB's own tiered cache against ccfs's engine, in one process, on the
// identical trace, at equal memory and split.
//
// RocksDB side (librocksdb 7.8): an LRUCache primary of (100 - C)% of --memory holding whole pages,
// with a CompressedSecondaryCache of C% behind it (lz4 or zstd, RocksDB's compress_format_version
// 2). Pages are inserted with a CacheItemHelper so that the primary demotes its LRU victims into
// the secondary (compressing them on the thread that inserts, RocksDB's design) and a lookup that
// misses the primary is served from the secondary (decompressed by the create callback, which is
// how a compressed hit is counted). A miss reads the page from the data set with O_DIRECT into a
// new page object and inserts it. With C = 0 there is no secondary cache.
// ccfs side: PageCache with the same memory, compressed_percent, codec and page size (the
// in-process engine of bench/tiered_compare).
// Prints one JSON line per cache, then the ratios ccfs / RocksDB.
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

#include <rocksdb/cache.h>
#include <rocksdb/secondary_cache.h>
#include <rocksdb/slice.h>
#include <rocksdb/status.h>

#include "tiered_harness.h"

namespace {

struct PageObj {
  uint32_t size;
  char* data;  // 4 KiB aligned (O_DIRECT target)
};

char* AlignedPage(uint32_t page) {
  return static_cast<char*>(std::aligned_alloc(4096, (page + 4095) / 4096 * 4096));
}

size_t SizeCb(void* obj) { return static_cast<PageObj*>(obj)->size; }
rocksdb::Status SaveToCb(void* from, size_t offset, size_t length, void* out) {
  std::memcpy(out, static_cast<PageObj*>(from)->data + offset, length);
  return rocksdb::Status::OK();
}
void DelCb(const rocksdb::Slice&, void* value) {
  auto* p = static_cast<PageObj*>(value);
  std::free(p->data);
  delete p;
}
const rocksdb::Cache::CacheItemHelper kHelper(SizeCb, SaveToCb, DelCb);

class RocksTieredCache final : public tiered::TieredCache {
 public:
  bool Open(const tiered::Workload& w, const tiered::Args& args) {
    page_ = args.page_size;
    for (uint32_t i = 0; i < w.dataset().files().size(); ++i) {
      std::string path = w.dataset().FullPath(i);
      int fd = ::open(path.c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC);
      if (fd < 0) {
        std::perror(path.c_str());
        return false;
      }
      fds_.push_back(fd);
    }
    const uint64_t comp = args.memory / 100 * static_cast<uint64_t>(args.percent);
    rocksdb::LRUCacheOptions lru;
    lru.capacity = args.memory - comp;
    if (comp > 0) {
      rocksdb::CompressedSecondaryCacheOptions sec;
      sec.capacity = comp;
      sec.compression_type = args.compressor == "zstd" ? rocksdb::kZSTD : rocksdb::kLZ4Compression;
      secondary_ = rocksdb::NewCompressedSecondaryCache(sec);
      lru.secondary_cache = secondary_;
    }
    cache_ = rocksdb::NewLRUCache(lru);
    return cache_ != nullptr;
  }
  ~RocksTieredCache() override {
    cache_.reset();
    for (int fd : fds_) ::close(fd);
  }
  const char* name() const override { return "rocksdb"; }

  tiered::Outcome Read(const tiered::PageOp& op, char* dst) override {
    char key[12];
    std::memcpy(key, &op.file, 4);
    const uint64_t index = op.offset / page_;
    std::memcpy(key + 4, &index, 8);
    rocksdb::Slice k(key, sizeof(key));
    bool created = false;
    const uint32_t page = page_;
    rocksdb::Cache::CreateCallback create = [&created, page](const void* buf, size_t size,
                                                             void** out, size_t* charge) {
      created = true;
      auto* p = new PageObj{static_cast<uint32_t>(size), AlignedPage(page)};
      std::memcpy(p->data, buf, size);
      *out = p;
      *charge = size;
      return rocksdb::Status::OK();
    };
    rocksdb::Cache::Handle* h =
        cache_->Lookup(k, &kHelper, create, rocksdb::Cache::Priority::LOW, true);
    if (h != nullptr) {
      auto* p = static_cast<PageObj*>(cache_->Value(h));
      std::memcpy(dst, p->data, op.length);
      cache_->Release(h);
      return created ? tiered::Outcome::kCompressedHit : tiered::Outcome::kRawHit;
    }
    auto* p = new PageObj{0, AlignedPage(page_)};
    ssize_t n = ::pread(fds_[op.file], p->data, page_, static_cast<off_t>(op.offset));
    if (n < 0) {
      std::perror("pread O_DIRECT");
      std::exit(1);
    }
    p->size = static_cast<uint32_t>(n);
    std::memcpy(dst, p->data, op.length);
    cache_->Insert(k, p, &kHelper, page_, nullptr, rocksdb::Cache::Priority::LOW);
    return tiered::Outcome::kMiss;
  }
  void Report(nlohmann::json* j) override {
    (*j)["primary_usage"] = cache_->GetUsage();
    (*j)["primary_capacity"] = cache_->GetCapacity();
    if (secondary_) {
      size_t usage = 0;
      secondary_->GetCapacity(usage);
      (*j)["secondary_capacity"] = usage;
    }
  }

 private:
  uint32_t page_ = 8192;
  std::vector<int> fds_;
  std::shared_ptr<rocksdb::SecondaryCache> secondary_;
  std::shared_ptr<rocksdb::Cache> cache_;
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"rocksdb_tiered: RocksDB LRUCache + CompressedSecondaryCache vs the ccfs engine"};
  tiered::Args args;
  args.AddTo(app);
  app.add_option("--cache", args.cache, "both, ccfs or rocksdb")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  if (!args.Finish()) return 2;
  tiered::Workload w;
  if (!w.Open(args)) return 1;
  nlohmann::json c, r;
  if (args.cache != "rocksdb") {
    tiered::CcfsEngineCache ccfs;
    if (!ccfs.Open(w, args)) return 1;
    c = tiered::Run(&ccfs, w, args);
    std::printf("%s\n", c.dump().c_str());
    std::fflush(stdout);
  }
  if (args.cache != "ccfs") {
    RocksTieredCache rocks;
    if (!rocks.Open(w, args)) return 1;
    r = tiered::Run(&rocks, w, args);
    std::printf("%s\n", r.dump().c_str());
  }
  if (!c.is_null() && !r.is_null()) {
    std::fprintf(stderr, "ccfs/rocksdb: hit ratio %.3f / %.3f, us per buffer %.2f / %.2f = %.2fx\n",
                 c["hit_ratio"].get<double>(), r["hit_ratio"].get<double>(),
                 c["us_per_buffer"].get<double>(), r["us_per_buffer"].get<double>(),
                 c["us_per_buffer"].get<double>() / r["us_per_buffer"].get<double>());
  }
  return 0;
}
