// BoundedFiles: one handle per file of a data set, opened on demand within a bound of descriptors.
//
// A replay, advise or crossover over a tree of more files than the descriptor limit must still
// run. Below the bound every file is opened up front and a handle is reached without a lock, as
// a replay's hot loop needs (the figures it measures stay what they were). Above it, handles are
// opened when first used and kept in an LRU list of `bound` entries; a handle lent out (Lease) is
// never closed under its user, and the least recently used idle ones are closed first.
//
// Thread-safety: Open once, then Acquire from any number of threads; a Lease is used by the
// thread that took it.
#ifndef CCFS_TRACE_BOUNDED_FILES_H_
#define CCFS_TRACE_BOUNDED_FILES_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <utility>
#include <vector>

#include "ccfs/status.h"
#include "util/mutex.h"

namespace ccfs {

// `Handle` is default-constructible and movable; an empty handle (default) holds nothing.
template <typename Handle>
class BoundedFiles {
 public:
  using Opener = std::function<Status(uint32_t file, Handle* handle)>;

  class Lease {
   public:
    Lease() = default;
    Lease(Lease&& o) noexcept { *this = std::move(o); }
    Lease& operator=(Lease&& o) noexcept {
      Release();
      owner_ = std::exchange(o.owner_, nullptr);
      file_ = o.file_;
      handle_ = std::exchange(o.handle_, nullptr);
      return *this;
    }
    ~Lease() { Release(); }
    Handle& operator*() const { return *handle_; }
    Handle* operator->() const { return handle_; }

   private:
    friend class BoundedFiles;
    void Release() {
      if (owner_ != nullptr) owner_->Give(file_);
      owner_ = nullptr;
    }
    BoundedFiles* owner_ = nullptr;  // null: nothing to give back (all open up front)
    uint32_t file_ = 0;
    Handle* handle_ = nullptr;
  };

  // `count` files, at most `bound` handles open at once (>= 1) unless more are lent out at once.
  // Opens every file now when count <= bound. Errors are the opener's.
  Status Open(size_t count, size_t bound, Opener opener) {
    opener_ = std::move(opener);
    bound_ = std::max<size_t>(bound, 1);
    slots_ = std::vector<Slot>(count);
    up_front_ = count <= bound_;
    if (!up_front_) return Status::Ok();
    for (uint32_t f = 0; f < count; ++f) {
      Status s = opener_(f, &slots_[f].handle);
      if (!s.ok()) return s;
    }
    return Status::Ok();
  }

  size_t size() const { return slots_.size(); }

  // The handle of `file`, opened if it is not.
  Status Acquire(uint32_t file, Lease* lease) {
    *lease = Lease();
    Slot& slot = slots_[file];
    if (up_front_) {
      lease->handle_ = &slot.handle;
      return Status::Ok();
    }
    {
      MutexLock lock(&mu_);
      if (slot.open) {
        if (slot.in_lru) lru_.erase(slot.lru_pos);
        slot.in_lru = false;
        ++slot.users;
        Grant(file, lease);
        return Status::Ok();
      }
    }
    Handle fresh;
    Status s = opener_(file, &fresh);
    if (!s.ok()) return s;
    std::vector<Handle> to_close;
    {
      MutexLock lock(&mu_);
      if (slot.open) {
        to_close.push_back(std::move(fresh));  // opened by another thread meanwhile
        if (slot.in_lru) lru_.erase(slot.lru_pos);
        slot.in_lru = false;
      } else {
        slot.handle = std::move(fresh);
        slot.open = true;
        ++open_;
      }
      ++slot.users;
      Grant(file, lease);
      TrimLocked(&to_close);
    }
    return Status::Ok();  // to_close's handles close here, outside the lock
  }

 private:
  struct Slot {
    Handle handle;
    bool open = false;
    int users = 0;
    bool in_lru = false;
    typename std::list<uint32_t>::iterator lru_pos;
  };

  void Grant(uint32_t file, Lease* lease) {
    lease->owner_ = this;
    lease->file_ = file;
    lease->handle_ = &slots_[file].handle;
  }

  void Give(uint32_t file) {
    std::vector<Handle> to_close;
    MutexLock lock(&mu_);
    Slot& slot = slots_[file];
    if (--slot.users == 0) {
      lru_.push_front(file);
      slot.lru_pos = lru_.begin();
      slot.in_lru = true;
    }
    TrimLocked(&to_close);
  }

  void TrimLocked(std::vector<Handle>* to_close) REQUIRES(mu_) {
    while (open_ > bound_ && !lru_.empty()) {
      Slot& victim = slots_[lru_.back()];
      lru_.pop_back();
      victim.in_lru = false;
      victim.open = false;
      to_close->push_back(std::move(victim.handle));
      victim.handle = Handle();
      --open_;
    }
  }

  Opener opener_;
  size_t bound_ = 1;
  bool up_front_ = true;
  std::vector<Slot> slots_;  // sized by Open; a slot's fields other than `handle` are mu_'s
  Mutex mu_;
  std::list<uint32_t> lru_ GUARDED_BY(mu_);  // idle open handles, newest first
  size_t open_ GUARDED_BY(mu_) = 0;
};

}  // namespace ccfs

#endif  // CCFS_TRACE_BOUNDED_FILES_H_
