// The open-file watch of raw_tier = kernel mode: see open_file_watch.h for why it exists.
#include "fuse/open_file_watch.h"

#include <algorithm>
#include <utility>
#include <vector>

namespace ccfs {

OpenFileWatch::OpenFileWatch(InodeTable* inodes, ChangeDetector* changes,
                             std::chrono::microseconds period)
    : inodes_(inodes), changes_(changes), period_(std::max(period, kMinPeriod)) {}

OpenFileWatch::~OpenFileWatch() { Stop(); }

void OpenFileWatch::Start() {
  if (thread_.joinable()) return;
  thread_ = std::thread([this] { Loop(); });
}

void OpenFileWatch::Stop() {
  {
    MutexLock lock(&mu_);
    stop_ = true;
  }
  wake_.SignalAll();
  if (thread_.joinable()) thread_.join();
}

OpenFileWatch::Counts OpenFileWatch::counts() const {
  MutexLock lock(&mu_);
  return counts_;
}

void OpenFileWatch::Loop() {
  auto next = std::chrono::steady_clock::now() + period_;
  for (;;) {
    {
      MutexLock lock(&mu_);
      while (!stop_ && wake_.WaitUntil(&mu_, next)) {
      }
      if (stop_) return;
    }
    const auto start = std::chrono::steady_clock::now();
    Pass();
    // The next pass starts one period after this one started, or at once after a pass longer
    // than the period: a change is found at most max(period, a pass) after it is visible.
    next = std::max(start + period_, std::chrono::steady_clock::now());
  }
}

void OpenFileWatch::Pass() {
  const auto start = std::chrono::steady_clock::now();
  uint64_t checks = 0, changes = 0;
  // The descriptors are lent for the pass: the Inodes outlive it whatever the kernel forgets.
  std::vector<std::pair<Inode*, InodeFd>> open = inodes_->BorrowOpenFiles();
  for (auto& [inode, fd] : open) {
    {
      MutexLock lock(&mu_);
      if (stop_) break;
    }
    ++checks;
    if (changes_->CheckOpenFile(inode, fd.get())) ++changes;
  }
  open.clear();  // gives the descriptors back before the counts are published
  const uint64_t ns = static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() -
                                                           start)
          .count());
  MutexLock lock(&mu_);
  ++counts_.passes;
  counts_.checks += checks;
  counts_.changes += changes;
  counts_.ns += ns;
}

}  // namespace ccfs
