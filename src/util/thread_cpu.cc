// Thread CPU clocks (thread_cpu.h says which is used where, and why).
//
// Why a group reads its members' clocks rather than asking them to report: the members are busy
// threads (a compression worker, a request thread); reading clock_gettime on another thread's
// clock id costs the reader a system call and the member nothing. A member's clock id is valid
// until the thread ends, and a member leaves (under the group's mutex) before it can end, so
// TotalNs never reads the clock of a thread that is gone.
#include "util/thread_cpu.h"

#include <algorithm>
#include <atomic>
#include <iterator>

namespace ccfs {
namespace {

uint64_t ClockNs(clockid_t clock) {
  timespec ts;
  if (clock_gettime(clock, &ts) != 0) return 0;
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000u + static_cast<uint64_t>(ts.tv_nsec);
}

// A per-thread xorshift generator for the gaps between samples: cheap, and different threads
// start from different seeds so they are not sampled in step.
uint32_t NextGap() {
  thread_local uint64_t state = [] {
    static std::atomic<uint64_t> seeds{0x9e3779b97f4a7c15u};
    return seeds.fetch_add(0x9e3779b97f4a7c15u, std::memory_order_relaxed) | 1;
  }();
  state ^= state << 13;
  state ^= state >> 7;
  state ^= state << 17;
  return 1 + static_cast<uint32_t>(state % (2 * kCpuSampleEvery - 1));
}

// What a timing of no work at all reads on the thread CPU clock: the part of the two clock reads
// that falls between their samples of the clock (about one system call). Every sample includes
// at least that much; it is measured once (the median of a few back-to-back pairs) and taken off
// each sample (thread_cpu.h: what is left of the excess is bounded by the event's wall time).
uint64_t ClockReadCost() {
  static const uint64_t cost = [] {
    constexpr int kPairs = 31;
    uint64_t d[kPairs];
    for (uint64_t& v : d) {
      const uint64_t a = ThreadCpuNs();
      v = ThreadCpuNs() - a;
    }
    std::nth_element(d, d + kPairs / 2, d + kPairs);
    return d[kPairs / 2];
  }();
  return cost;
}

}  // namespace

uint64_t ThreadCpuNs() { return ClockNs(CLOCK_THREAD_CPUTIME_ID); }
uint64_t ProcessCpuNs() { return ClockNs(CLOCK_PROCESS_CPUTIME_ID); }

// ---- ThreadCpuGroup ---------------------------------------------------------------------------

ThreadCpuGroup::Membership ThreadCpuGroup::Join() {
  clockid_t clock = CLOCK_THREAD_CPUTIME_ID;
  // pthread_getcpuclockid fails only for a thread that has ended; the caller is running.
  pthread_getcpuclockid(pthread_self(), &clock);
  MutexLock lock(&mu_);
  members_.push_back(clock);
  return Membership(this, std::prev(members_.end()));
}

ThreadCpuGroup::Membership::Membership(Membership&& other) noexcept
    : group_(other.group_), slot_(other.slot_) {
  other.group_ = nullptr;
}

ThreadCpuGroup::Membership::~Membership() {
  if (group_ != nullptr) group_->Leave(slot_);
}

void ThreadCpuGroup::Leave(Membership::Slot slot) {
  // The last reading is taken under the lock, so a TotalNs() running meanwhile saw at most this.
  MutexLock lock(&mu_);
  left_ns_ += ThreadCpuNs();
  members_.erase(slot);
}

uint64_t ThreadCpuGroup::TotalNs() const {
  MutexLock lock(&mu_);
  uint64_t total = left_ns_;
  for (clockid_t clock : members_) total += ClockNs(clock);
  return total;
}

int ThreadCpuGroup::members() const {
  MutexLock lock(&mu_);
  return static_cast<int>(members_.size());
}

// ---- CpuSample --------------------------------------------------------------------------------

constinit thread_local uint32_t CpuSample::countdown_ = kCpuSampleEvery;

uint64_t CpuSample::Start() {
  countdown_ = NextGap();
  ClockReadCost();  // measured before the first sample starts, not inside it
  return ThreadCpuNs();
}

uint64_t CpuSample::ScaledNs(uint64_t wall_ns) const {
  if (!sampled()) return 0;
  const uint64_t spent = ThreadCpuNs() - start_ns_;
  const uint64_t cost = ClockReadCost();
  return std::min(spent > cost ? spent - cost : 0, wall_ns) * kCpuSampleEvery;
}

}  // namespace ccfs
