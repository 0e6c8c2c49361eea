// CheckMemoryFits: a `memory` the machine or the daemon's memory cgroup cannot hold is refused,
// naming the keys and the figures; what fits is accepted. CheckSplitFits: a split auto or
// `ccfs set` may move to, against what the cgroup holds now.
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

// What the cgroup holds now counts: the daemon's own memory as measured (its RssAnon beyond its
// tiers' bytes), and its readers' (the cgroup's unreclaimable charge beyond the daemon's).
TEST(MemoryBoundTest, SplitFitsCountWhatTheCgroupHoldsNow) {
  HostMemory host{24 * kGiB, 64 * kMiB};
  host.self_anon_bytes = 50 * kMiB;  // 30 MiB in the tiers: 20 of its own
  host.cgroup_unreclaimable_bytes = 50 * kMiB;
  Options o = WithMemory(64 * kMiB);
  o.raw_tier = "kernel";
  o.compressed_percent = 50;  // 32 MiB compressed + the staging tier: 20 + 33 + 4 < 64
  EXPECT_TRUE(CheckSplitFits(o, host, 30 * kMiB).ok()) << CheckSplitFits(o, host, 30 * kMiB).ToString();
  // A reader takes 16 MiB more: 20 + 16 + 33 + 4 > 64.
  host.cgroup_unreclaimable_bytes = 66 * kMiB;
  Status s = CheckSplitFits(o, host, 30 * kMiB);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("compressed_percent = 50"));
  EXPECT_THAT(s.message(), HasSubstr("its readers' (16MiB)"));
  EXPECT_THAT(s.message(), HasSubstr("memory cgroup"));
  o.compressed_percent = 25;
  EXPECT_TRUE(CheckSplitFits(o, host, 30 * kMiB).ok());
  // The daemon's own memory is never taken below the mount's allowance.
  host.self_anon_bytes = 30 * kMiB;
  host.cgroup_unreclaimable_bytes = 30 * kMiB;
  o.compressed_percent = 70;  // 16 + 45.8 + 4 > 64
  EXPECT_FALSE(CheckSplitFits(o, host, 30 * kMiB).ok());
  // Without a cgroup limit only the machine counts.
  host.cgroup_limit_bytes = 0;
  EXPECT_TRUE(CheckSplitFits(o, host, 30 * kMiB).ok());
}

// The kernel's share is its budget, or what the cgroup leaves beside the daemon when that is less;
// a higher split leaves less.
TEST(MemoryBoundTest, KernelShareIsWhatTheCgroupLeavesBesideTheDaemon) {
  HostMemory host{24 * kGiB, 0};
  host.self_anon_bytes = 20 * kMiB;  // no tiers held: 20 MiB of its own
  Options o = WithMemory(64 * kMiB);
  o.raw_tier = "kernel";
  o.compressed_percent = 0;
  EXPECT_EQ(KernelShareBytes(o, host, 0), o.kernel_budget()) << "no cgroup: the budget";
  host.cgroup_limit_bytes = 64 * kMiB;
  host.cgroup_unreclaimable_bytes = 24 * kMiB;  // the daemon's 20 and a reader's 4
  const uint64_t at0 = KernelShareBytes(o, host, 0);
  EXPECT_EQ(at0, 64 * kMiB - 20 * kMiB - 4 * kMiB - (o.memory - o.kernel_budget()));
  o.compressed_percent = 50;
  const uint64_t at50 = KernelShareBytes(o, host, 0);
  EXPECT_LT(at50, o.kernel_budget());
  EXPECT_EQ(at50, 64 * kMiB - 20 * kMiB - 4 * kMiB - (o.memory - o.kernel_budget()));
  EXPECT_LT(at50, at0);
  // The daemon's own memory as measured, below the mount's allowance too (an estimate, not a
  // check): 10 MiB of its own and a reader's 4.
  host.self_anon_bytes = 10 * kMiB;
  host.cgroup_unreclaimable_bytes = 14 * kMiB;
  EXPECT_EQ(KernelShareBytes(o, host, 0),
            64 * kMiB - 10 * kMiB - 4 * kMiB - (o.memory - o.kernel_budget()));
  // A cgroup with room to spare leaves the budget.
  host.cgroup_limit_bytes = 1 * kGiB;
  EXPECT_EQ(KernelShareBytes(o, host, 0), o.kernel_budget());
  // One with no room left: nothing, not an underflow.
  host.cgroup_limit_bytes = 30 * kMiB;
  EXPECT_EQ(KernelShareBytes(o, host, 0), 0u);
}

}  // namespace
}  // namespace ccfs
