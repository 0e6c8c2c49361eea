// What the engine tests read: files of pages of a chosen compressibility, and a backing file that
// records (and can delay or fail) the reads the engine makes of it.
#ifndef CCFS_TESTS_CACHE_ENGINE_FILES_H_
#define CCFS_TESTS_CACHE_ENGINE_FILES_H_

#include <atomic>
#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "ccfs/backing_store.h"

namespace ccfs {

// Page content of a given compressibility: `random_bytes` random bytes, then a repeated text.
inline std::string MakePage(uint64_t page, size_t page_size, size_t random_bytes, uint64_t seed) {
  std::string p(page_size, '\0');
  std::mt19937_64 rng(seed * 1000003 + page);
  for (size_t i = 0; i + 8 <= random_bytes; i += 8) {
    uint64_t w = rng();
    std::memcpy(&p[i], &w, 8);
  }
  static const char kText[] = "page cache line of fairly repetitive text, ";
  for (size_t i = random_bytes; i < page_size; ++i) p[i] = kText[(i + page) % (sizeof(kText) - 1)];
  std::memcpy(&p[0], &page, sizeof(page));  // every page distinct
  return p;
}

inline std::string MakeFile(uint64_t pages, size_t page_size, size_t random_bytes, size_t tail = 0,
                     uint64_t seed = 1) {
  std::string data;
  data.reserve(pages * page_size + tail);
  for (uint64_t i = 0; i < pages; ++i) data += MakePage(i, page_size, random_bytes, seed);
  data += MakePage(pages, page_size, random_bytes, seed).substr(0, tail);
  return data;
}

// A backing file that forwards everything to `inner`; tests override ReadPages.
class ForwardingFile : public BackingFile {
 public:
  explicit ForwardingFile(std::unique_ptr<BackingFile> inner) : inner_(std::move(inner)) {}
  Status ReadPages(uint64_t offset, size_t len, std::span<char* const> bufs,
                   uint64_t known_size, size_t* got) override {
    return inner_->ReadPages(offset, len, bufs, known_size, got);
  }
  Status Write(uint64_t offset, const void* buf, size_t len) override {
    return inner_->Write(offset, buf, len);
  }
  Status Size(uint64_t* size) override { return inner_->Size(size); }
  Status Sync(bool datasync) override { return inner_->Sync(datasync); }
  bool direct() const override { return inner_->direct(); }

 protected:
  std::unique_ptr<BackingFile> inner_;
};

// A backing file that records what each read asked for, and can hold reads for a while (so that
// other readers arrive while a run is loading) or fail those that cover one page.
class CountingFile final : public ForwardingFile {
 public:
  struct ReadCall {
    uint64_t first_page;
    size_t pages;
  };
  explicit CountingFile(std::unique_ptr<BackingFile> inner) : ForwardingFile(std::move(inner)) {}

  Status ReadPages(uint64_t offset, size_t len, std::span<char* const> bufs,
                   uint64_t known_size, size_t* got) override {
    const uint64_t first = offset / len;
    {
      std::lock_guard<std::mutex> lock(mu_);
      calls_.push_back(ReadCall{first, bufs.size()});
      for (size_t i = 0; i < bufs.size(); ++i) ++page_reads_[first + i];
    }
    std::this_thread::sleep_for(hold_.load());
    const uint64_t bad = fail_page_.load();
    if (bad >= first && bad < first + bufs.size()) {
      *got = 0;
      return Status::FromErrno(EIO, "injected failure at page " + std::to_string(bad));
    }
    return inner_->ReadPages(offset, len, bufs, known_size, got);
  }

  void Hold(std::chrono::milliseconds d) { hold_ = d; }
  void FailReadsOfPage(uint64_t page) { fail_page_ = page; }
  std::vector<ReadCall> calls() {
    std::lock_guard<std::mutex> lock(mu_);
    return calls_;
  }
  std::map<uint64_t, int> page_reads() {
    std::lock_guard<std::mutex> lock(mu_);
    return page_reads_;
  }

 private:
  std::atomic<std::chrono::milliseconds> hold_{std::chrono::milliseconds(0)};
  std::atomic<uint64_t> fail_page_{UINT64_MAX};
  std::mutex mu_;
  std::vector<ReadCall> calls_;
  std::map<uint64_t, int> page_reads_;
};

}  // namespace ccfs

#endif  // CCFS_TESTS_CACHE_ENGINE_FILES_H_
