// ThreadCpuGroup counts its members' CPU time and keeps what members had when they left;
// CpuSample times about one event in kCpuSampleEvery and its scaled sum estimates them all.
#include "util/thread_cpu.h"

#include <atomic>
#include <chrono>
#include <thread>

#include <gtest/gtest.h>

namespace ccfs {
namespace {

constexpr uint64_t kMs = 1000000;

// Burns `ns` of this thread's CPU time.
void Spin(uint64_t ns) {
  const uint64_t until = ThreadCpuNs() + ns;
  volatile uint64_t x = 0;
  while (ThreadCpuNs() < until) {
    for (int i = 0; i < 100; ++i) x = x + i;
  }
}

TEST(ThreadCpuGroupTest, CountsMembersWhileTheyRunAndAfterTheyLeave) {
  ThreadCpuGroup group;
  EXPECT_EQ(group.TotalNs(), 0u);
  std::atomic<bool> spun{false}, may_leave{false};
  std::thread member([&] {
    ThreadCpuGroup::Membership m = group.Join();
    Spin(30 * kMs);
    spun = true;
    while (!may_leave) std::this_thread::yield();
  });
  while (!spun) std::this_thread::yield();
  EXPECT_EQ(group.members(), 1);
  const uint64_t while_member = group.TotalNs();
  EXPECT_GE(while_member, 30 * kMs);
  may_leave = true;
  member.join();
  EXPECT_EQ(group.members(), 0);
  EXPECT_GE(group.TotalNs(), while_member) << "a member that left keeps its time";
}

TEST(ThreadCpuGroupTest, DoesNotCountThreadsThatNeverJoined) {
  ThreadCpuGroup group;
  std::atomic<bool> done{false};
  std::thread idle_member([&] {
    ThreadCpuGroup::Membership m = group.Join();
    while (!done) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
  Spin(50 * kMs);  // this thread is not a member
  EXPECT_LT(group.TotalNs(), 25 * kMs);
  done = true;
  idle_member.join();
}

TEST(CpuSampleTest, SamplesAboutOneEventInKCpuSampleEvery) {
  constexpr int kEvents = 64000;
  int sampled = 0;
  for (int i = 0; i < kEvents; ++i) {
    CpuSample cpu;
    if (cpu.sampled()) {
      ++sampled;
    } else {
      EXPECT_EQ(cpu.ScaledNs(1000), 0u);
    }
  }
  EXPECT_NEAR(sampled, kEvents / kCpuSampleEvery, kEvents / kCpuSampleEvery / 5);
}

TEST(CpuSampleTest, TheScaledSumEstimatesTheCpuTimeOfEveryEvent) {
  constexpr int kEvents = 6400;
  uint64_t estimate = 0;
  const uint64_t start = ThreadCpuNs();
  for (int i = 0; i < kEvents; ++i) {
    CpuSample cpu;
    const auto t0 = std::chrono::steady_clock::now();
    Spin(20000);  // 20 µs of CPU, plus the clock reads that measure it
    const auto wall = std::chrono::steady_clock::now() - t0;
    estimate += cpu.ScaledNs(std::chrono::duration_cast<std::chrono::nanoseconds>(wall).count());
  }
  const uint64_t actual = ThreadCpuNs() - start;
  // About 100 samples: the count alone varies by ~6% (one standard deviation).
  EXPECT_NEAR(static_cast<double>(estimate), static_cast<double>(actual), 0.3 * actual);
}

}  // namespace
}  // namespace ccfs
