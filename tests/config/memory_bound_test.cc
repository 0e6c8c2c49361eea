// CheckMemoryFits: a `memory` the machine or the daemon's memory cgroup cannot hold is refused,
// naming the keys and the figures; what fits is accepted.
#include "config/memory_bound.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace ccfs {
namespace {

using ::testing::HasSubstr;

constexpr uint64_t kMiB = 1ull << 20;
constexpr uint64_t kGiB = 1ull << 30;

Options WithMemory(uint64_t memory) {
  Options o;
  o.memory = memory;
  return o;
}

TEST(MemoryBoundTest, MemoryAboveTheMachinesRamIsRefused) {
  const HostMemory host{24 * kGiB, 0};
  for (uint64_t memory : {25 * kGiB, 100 * kGiB, 1000 * (kGiB << 10)}) {
    const Status s = CheckMemoryFits(WithMemory(memory), host);
    ASSERT_FALSE(s.ok()) << memory;
    EXPECT_THAT(s.message(), HasSubstr("memory = "));
    EXPECT_THAT(s.message(), HasSubstr("RAM (24GiB"));
  }
  EXPECT_TRUE(CheckMemoryFits(WithMemory(16 * kGiB), host).ok());
  EXPECT_TRUE(CheckMemoryFits(WithMemory(24 * kGiB), host).ok());
  // Unknown RAM is not judged.
  EXPECT_TRUE(CheckMemoryFits(WithMemory(100 * kGiB), HostMemory{}).ok());
}

TEST(MemoryBoundTest, MemoryAboveTheCgroupsLimitIsRefused) {
  const HostMemory host{24 * kGiB, 1 * kGiB};
  Status s = CheckMemoryFits(WithMemory(2 * kGiB), host);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("memory = 2GiB"));
  EXPECT_THAT(s.message(), HasSubstr("memory cgroup"));
  EXPECT_THAT(s.message(), HasSubstr("1GiB"));
}

TEST(MemoryBoundTest, DaemonModeLeavesRoomForTheDaemonsOwnMemory) {
  const HostMemory host{24 * kGiB, 256 * kMiB};
  EXPECT_TRUE(CheckMemoryFits(WithMemory(256 * kMiB - kDaemonOwnBytes), host).ok());
  const Status s = CheckMemoryFits(WithMemory(256 * kMiB), host);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("memory = 256MiB"));
  EXPECT_THAT(s.message(), HasSubstr("OOM killer"));
}

TEST(MemoryBoundTest, KernelModeCountsOnlyTheDaemonsTiers) {
  // The equal-RAM rule: daemon and readers in one cgroup of `memory`. The kernel's share is page
  // cache the cgroup reclaims; the compressed tier is not.
  const HostMemory host{24 * kGiB, 64 * kMiB};
  Options o = WithMemory(64 * kMiB);
  o.raw_tier = "kernel";
  o.compressed_percent = 80;
  const Status s = CheckMemoryFits(o, host);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("memory = 64MiB"));
  EXPECT_THAT(s.message(), HasSubstr("compressed_percent = 80"));
  o.compressed_percent = 25;
  EXPECT_TRUE(CheckMemoryFits(o, host).ok()) << CheckMemoryFits(o, host).ToString();
  // The same budget in daemon mode holds all 64 MiB itself.
  o.raw_tier = "daemon";
  EXPECT_FALSE(CheckMemoryFits(o, host).ok());
}

}  // namespace
}  // namespace ccfs
