// Thread CPU time: what the cost-per-buffer figures in CPU are measured with.
//
// Two ways to read a thread's CPU clock, chosen by what each costs where it is read:
//   ThreadCpuGroup  the summed CPU time of a set of long-lived threads (the compression workers,
//                   the evictor, the FUSE request threads), read by another thread when stats are
//                   taken (pthread_getcpuclockid). Nothing is added to the work those threads do.
//   CpuSample       one page read in about kCpuSampleEvery timed on the reading thread's own CPU
//                   clock (CLOCK_THREAD_CPUTIME_ID), the time scaled up by kCpuSampleEvery: an
//                   estimate of the CPU time of every read, split by the path each read took.
// Why sample rather than time every read: Linux's vDSO serves CLOCK_MONOTONIC but not the
// CPU-time clocks, which are a system call (dear on a small VM); two of them per page would double
// the cost of a raw hit in the engine. Sampled, their cost per page is a small fraction of it.
//
// Thread-safety: ThreadCpuNs and CpuSample act on the calling thread only. ThreadCpuGroup's
// methods may be called from any thread (one mutex, taken with no other lock held).
#ifndef CCFS_UTIL_THREAD_CPU_H_
#define CCFS_UTIL_THREAD_CPU_H_

#include <pthread.h>
#include <time.h>

#include <cstdint>
#include <list>

#include "util/mutex.h"

namespace ccfs {

// CPU time of the calling thread so far, in nanoseconds.
uint64_t ThreadCpuNs();
// CPU time of this process so far (every thread, user and system), in nanoseconds.
uint64_t ProcessCpuNs();

// The CPU time of a set of threads: each thread joins for as long as a Membership it holds lives.
// A thread that leaves (its Membership is destroyed) keeps counting with the CPU time it had then,
// so TotalNs() never goes backwards while the group lives.
class ThreadCpuGroup {
 public:
  class Membership {
   public:
    Membership(Membership&& other) noexcept;
    Membership(const Membership&) = delete;
    Membership& operator=(const Membership&) = delete;
    Membership& operator=(Membership&&) = delete;
    // REQUIRES: destroyed on the thread that joined (its CPU clock is read one last time).
    ~Membership();

   private:
    friend class ThreadCpuGroup;
    using Slot = std::list<clockid_t>::iterator;
    Membership(ThreadCpuGroup* group, Slot slot) : group_(group), slot_(slot) {}
    ThreadCpuGroup* group_;  // null once moved from
    Slot slot_;
  };

  ThreadCpuGroup() = default;
  // REQUIRES: every Membership of this group was destroyed.
  ~ThreadCpuGroup() = default;
  ThreadCpuGroup(const ThreadCpuGroup&) = delete;
  ThreadCpuGroup& operator=(const ThreadCpuGroup&) = delete;

  // The calling thread counts in this group (all its CPU time, from its start) until the returned
  // Membership is destroyed. A thread joins a group at most once at a time.
  [[nodiscard]] Membership Join() EXCLUDES(mu_);

  // CPU time of the threads that left, plus that of the members now.
  uint64_t TotalNs() const EXCLUDES(mu_);
  // Threads members now.
  int members() const EXCLUDES(mu_);

 private:
  void Leave(Membership::Slot slot) EXCLUDES(mu_);

  mutable Mutex mu_;
  std::list<clockid_t> members_ GUARDED_BY(mu_);  // each member's CPU clock
  uint64_t left_ns_ GUARDED_BY(mu_) = 0;
};

// One in about this many page reads is timed on the thread's CPU clock.
inline constexpr uint32_t kCpuSampleEvery = 64;

// Decides on construction whether this event is one of the sampled ones (gaps between samples are
// drawn from [1, 2 * kCpuSampleEvery - 1], mean kCpuSampleEvery, by a per-thread generator, so a
// workload that repeats with some period is not sampled in step with it) and, if it is, reads the
// thread's CPU clock. Use on the stack around one event whose wall-clock time is measured inside:
//   CpuSample cpu; t0 = now; <work>; wall = now - t0; total += cpu.ScaledNs(wall);
//
// Why the wall time: the two clock reads add CPU time of their own to the sample (the system
// calls' entry and exit on either side of the clock's reading, a sizeable part of a raw hit). A
// calibration (back-to-back reads, once per process) is taken off, but what the calls add in the
// middle of real work varies and is more on average: with the calibration alone, raw hits in the
// engine would count more CPU per read than the whole process spent. One thread cannot spend more
// CPU on an event than the event's own wall time, so that bounds each sample: close to exact for
// events that only compute (hits); on events that wait (misses) the part of the excess the
// calibration misses is left, small beside the event's CPU.
class CpuSample {
 public:
  CpuSample() : start_ns_(--countdown_ == 0 ? Start() : kNotSampled) {}
  bool sampled() const { return start_ns_ != kNotSampled; }
  // If sampled: the CPU time since construction less the calibrated cost of the clock reads, at
  // most `wall_ns`, times kCpuSampleEvery; else 0. Summed over every event, an estimate of the
  // events' CPU time. REQUIRES: `wall_ns` was measured on this thread inside this sample.
  uint64_t ScaledNs(uint64_t wall_ns) const;

 private:
  static constexpr uint64_t kNotSampled = UINT64_MAX;
  // Draws the next gap and reads the clock.
  static uint64_t Start();
  // Events left until the next sample on this thread. The first sample is a gap in, not the
  // thread's first event (which pays for first touches of its buffers).
  static constinit thread_local uint32_t countdown_;
  const uint64_t start_ns_;
};

}  // namespace ccfs

#endif  // CCFS_UTIL_THREAD_CPU_H_
