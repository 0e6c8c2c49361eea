// The in-memory backing store for tests.
//
// It mirrors the POSIX store's contract closely enough that engine bugs surface here rather than
// only on a real disk: ReadPages insists on the same alignment (a misaligned call aborts with a
// message naming the file and offset, in every build type, because the real store would fail it
// and an engine that does it is broken), reads stop at end of file, and open flags are honoured
// (O_CREAT, O_EXCL, O_TRUNC, access mode), so a test can reproduce ENOENT, EEXIST and EBADF.
//
// Files are shared by every handle opened on them and by Put(): replacing a file's content through
// Put() changes what already-open handles read, like a file rewritten underneath the daemon.
#include <fcntl.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>

#include "ccfs/backing_store.h"
#include "ccfs/status.h"
#include "util/mutex.h"

namespace ccfs {
namespace {

struct MemFile {
  Mutex mu;
  std::string data GUARDED_BY(mu);
};

class MemBackingStoreImpl;

class MemBackingFile final : public BackingFile {
 public:
  MemBackingFile(MemBackingStoreImpl* store, std::shared_ptr<MemFile> file, std::string path,
                 int accmode)
      : store_(store), file_(std::move(file)), path_(std::move(path)), accmode_(accmode) {}

  Status ReadPages(uint64_t offset, size_t len, std::span<char* const> bufs,
                   uint64_t known_size, size_t* got) override;
  Status Write(uint64_t offset, const void* buf, size_t len) override;

  Status Size(uint64_t* size) override {
    MutexLock lock(&file_->mu);
    *size = file_->data.size();
    return Status::Ok();
  }

  Status Sync(bool datasync) override { return Status::Ok(); }
  bool direct() const override { return true; }

 private:
  MemBackingStoreImpl* const store_;
  const std::shared_ptr<MemFile> file_;
  const std::string path_;
  const int accmode_;
};

class MemBackingStoreImpl final : public MemBackingStore {
 public:
  Status Open(const std::string& path, int flags, mode_t mode,
              std::unique_ptr<BackingFile>* file) override {
    std::shared_ptr<MemFile> f;
    {
      MutexLock lock(&mu_);
      auto it = files_.find(path);
      if (it == files_.end()) {
        if (!(flags & O_CREAT)) return Status::FromErrno(ENOENT, path + ": open");
        it = files_.emplace(path, std::make_shared<MemFile>()).first;
      } else if ((flags & O_CREAT) && (flags & O_EXCL)) {
        return Status::FromErrno(EEXIST, path + ": open");
      }
      f = it->second;
    }
    if ((flags & O_TRUNC) && (flags & O_ACCMODE) != O_RDONLY) {
      MutexLock lock(&f->mu);
      f->data.clear();
    }
    file->reset(new MemBackingFile(this, std::move(f), path, flags & O_ACCMODE));
    return Status::Ok();
  }

  void Put(const std::string& path, std::string data) override {
    std::shared_ptr<MemFile> f;
    {
      MutexLock lock(&mu_);
      auto& slot = files_[path];
      if (!slot) slot = std::make_shared<MemFile>();
      f = slot;
    }
    MutexLock lock(&f->mu);
    f->data = std::move(data);
  }

  std::string Get(const std::string& path) override {
    std::shared_ptr<MemFile> f;
    {
      MutexLock lock(&mu_);
      auto it = files_.find(path);
      if (it == files_.end()) return std::string();
      f = it->second;
    }
    MutexLock lock(&f->mu);
    return f->data;
  }

  void FailReads(bool fail) override { fail_reads_.store(fail, std::memory_order_relaxed); }
  uint64_t page_reads() const override { return page_reads_.load(std::memory_order_relaxed); }

  bool fail_reads() const { return fail_reads_.load(std::memory_order_relaxed); }
  void CountPageRead() { page_reads_.fetch_add(1, std::memory_order_relaxed); }

 private:
  Mutex mu_;
  std::map<std::string, std::shared_ptr<MemFile>> files_ GUARDED_BY(mu_);
  std::atomic<bool> fail_reads_{false};
  std::atomic<uint64_t> page_reads_{0};
};

Status MemBackingFile::ReadPages(uint64_t offset, size_t len, std::span<char* const> bufs,
                                 uint64_t /*known_size*/, size_t* got) {
  *got = 0;
  bool aligned = offset % kIoAlignment == 0 && len % kIoAlignment == 0 && len > 0 &&
                 !bufs.empty() && bufs.size() <= kMaxReadBuffers;
  for (char* b : bufs) aligned = aligned && reinterpret_cast<uintptr_t>(b) % kIoAlignment == 0;
  if (!aligned) {
    std::fprintf(stderr,
                 "MemBackingFile::ReadPages(%s): offset %llu, %zu buffers of %zu bytes not aligned "
                 "to %zu; the POSIX store would fail this read\n",
                 path_.c_str(), static_cast<unsigned long long>(offset), bufs.size(), len,
                 kIoAlignment);
    std::abort();
  }
  store_->CountPageRead();
  if (accmode_ == O_WRONLY) return Status::FromErrno(EBADF, path_ + ": read of write-only file");
  if (store_->fail_reads()) {
    return Status::FromErrno(EIO, path_ + ": read at offset " + std::to_string(offset) +
                                      " (injected failure)");
  }
  MutexLock lock(&file_->mu);
  const uint64_t size = file_->data.size();
  for (char* buf : bufs) {
    const uint64_t at = offset + *got;
    if (at >= size) break;
    const size_t n = std::min<uint64_t>(len, size - at);
    std::memcpy(buf, file_->data.data() + at, n);
    *got += n;
    if (n < len) break;
  }
  return Status::Ok();
}

Status MemBackingFile::Write(uint64_t offset, const void* buf, size_t len) {
  if (accmode_ == O_RDONLY) return Status::FromErrno(EBADF, path_ + ": write to read-only file");
  MutexLock lock(&file_->mu);
  std::string& d = file_->data;
  if (d.size() < offset + len) d.resize(offset + len, '\0');
  std::memcpy(d.data() + offset, buf, len);
  return Status::Ok();
}

}  // namespace

std::unique_ptr<MemBackingStore> NewMemBackingStore() {
  return std::make_unique<MemBackingStoreImpl>();
}

}  // namespace ccfs
