#include "fuse/read_handles.h"

#include <utility>
#include <vector>

#include "fuse/inode_table.h"

namespace ccfs {

std::shared_ptr<FileHandle> ReadHandles::Find(const Inode* i) {
  std::shared_ptr<FileHandle> stale;  // destroyed after `lock`: closed without the mutex
  MutexLock lock(&mu_);
  auto it = map_.find(i);
  if (it == map_.end()) return nullptr;
  if (it->second.serial != i->serial) {
    stale = std::move(it->second.handle);
    lru_.erase(it->second.pos);
    map_.erase(it);
    return nullptr;
  }
  lru_.splice(lru_.begin(), lru_, it->second.pos);
  return it->second.handle;
}

std::shared_ptr<FileHandle> ReadHandles::Keep(const Inode* i, std::shared_ptr<FileHandle> h,
                                              std::vector<std::shared_ptr<FileHandle>>* let_go) {
  std::vector<std::shared_ptr<FileHandle>> closed;  // closed after the lock is let go
  std::shared_ptr<FileHandle> use;
  {
    MutexLock lock(&mu_);
    auto [it, inserted] = map_.try_emplace(i);
    Entry& e = it->second;
    if (!inserted && e.serial == i->serial) {
      lru_.splice(lru_.begin(), lru_, e.pos);
      closed.push_back(std::move(h));
      use = e.handle;
    } else {
      if (inserted) {
        lru_.push_front(i);
        e.pos = lru_.begin();
      } else {
        lru_.splice(lru_.begin(), lru_, e.pos);
        closed.push_back(std::move(e.handle));
      }
      e.serial = i->serial;
      e.handle = std::move(h);
      use = e.handle;
      while (map_.size() > capacity_) {
        auto last = map_.find(lru_.back());
        closed.push_back(std::move(last->second.handle));
        map_.erase(last);
        lru_.pop_back();
      }
    }
  }
  if (let_go != nullptr) {
    for (auto& c : closed) let_go->push_back(std::move(c));
  }
  closed.clear();
  return use;
}

bool ReadHandles::Forget(const Inode* i, const BackingFile* only) {
  std::shared_ptr<FileHandle> gone;  // destroyed after `lock`: closed without the mutex
  MutexLock lock(&mu_);
  auto it = map_.find(i);
  if (it == map_.end() || (only != nullptr && it->second.handle->backing.get() != only)) {
    return false;
  }
  gone = std::move(it->second.handle);
  lru_.erase(it->second.pos);
  map_.erase(it);
  return true;
}

size_t ReadHandles::Shed() {
  std::unordered_map<const Inode*, Entry> gone;
  {
    MutexLock lock(&mu_);
    gone.swap(map_);
    lru_.clear();
  }
  return gone.size();
}

size_t ReadHandles::size() {
  MutexLock lock(&mu_);
  return map_.size();
}

}  // namespace ccfs
