// Crash safety: kill -9 the daemon in the middle of a write load, unmount, remount, and check that
// every acknowledged write (and every fsync'ed one) is in DATASET intact, that nothing outside
// DATASET changed, and that mounting again over the dead daemon's mount point clears it and mounts
// at once, saying so (no manual step, not a hang).
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <filesystem>
#include <chrono>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "reliability/reliability_util.h"
#include "testing/mount_fixture.h"

namespace ccfs::testing {
namespace {

constexpr size_t kBlock = 5000;
constexpr int kSlots = 64;  // blocks of the file rewritten in place across every cycle

struct Shared {
  std::atomic<uint64_t> appended;       // blocks of the cycle's new file acknowledged
  std::atomic<uint64_t> fsynced;        // of those, covered by a successful fsync
  std::atomic<uint32_t> slot_gen[kSlots];  // last acknowledged generation of each slot
  std::atomic<uint32_t> slot_inflight[kSlots];  // generation being written (0: none)
  std::atomic<int> last_errno;
};

// Appends blocks to `append_path` and rewrites slots of `slots_path` until an error (the daemon
// died). Acknowledgements are recorded only after the call returned success.
int WriteLoad(Shared* sh, const std::string& append_path, const std::string& slots_path,
              uint64_t seed) {
  int a = open(append_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  int s = open(slots_path.c_str(), O_WRONLY);
  if (a < 0 || s < 0) return 2;
  std::mt19937_64 rng(seed);
  std::vector<char> buf(kBlock);
  for (uint64_t i = 0;; ++i) {
    FillBlock(buf.data(), kBlock, 1, i, 7);
    if (pwrite(a, buf.data(), kBlock, i * kBlock) != static_cast<ssize_t>(kBlock)) break;
    sh->appended.store(i + 1);
    if (i % 8 == 7) {
      if (fsync(a) != 0) break;
      sh->fsynced.store(i + 1);
    }
    int slot = rng() % kSlots;
    uint32_t gen = sh->slot_gen[slot].load() + 1;
    sh->slot_inflight[slot].store(gen);
    FillBlock(buf.data(), kBlock, 2, slot, gen);
    if (pwrite(s, buf.data(), kBlock, slot * kBlock) != static_cast<ssize_t>(kBlock)) break;
    sh->slot_gen[slot].store(gen);
    sh->slot_inflight[slot].store(0);
  }
  sh->last_errno.store(errno);
  return 0;
}

TEST(CrashTest, KillDashNineDuringWritesLosesNoAcknowledgedWrite) {
  const int cycles = static_cast<int>(3 * ReliabilityScale());
  MountedDataset ds;
  const std::string outside = ds.root() + "/outside_sentinel";
  WriteWholeFile(outside, "must not change");
  std::vector<char> buf(kBlock);
  std::string slots;
  for (int i = 0; i < kSlots; ++i) {
    FillBlock(buf.data(), kBlock, 2, i, 0);
    slots.append(buf.data(), kBlock);
  }
  WriteWholeFile(ds.DataPath("slots"), slots);

  auto* sh = static_cast<Shared*>(
      mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(sh, MAP_FAILED);
  new (sh) Shared();
  std::mt19937_64 rng(99);
  uint64_t total_blocks = 0;
  int survived = 0;
  for (int cycle = 0; cycle < cycles; ++cycle) {
    SCOPED_TRACE("cycle " + std::to_string(cycle));
    std::string error;
    ASSERT_TRUE(ds.Mount({"-o", "memory=2MiB,compressed_percent=50"}, &error)) << error;
    sh->appended = 0;
    sh->fsynced = 0;
    const std::string name = "append" + std::to_string(cycle);
    pid_t writer = ForkChild([&] {
      return WriteLoad(sh, ds.MntPath(name), ds.MntPath("slots"), cycle);
    });
    // Let the load run, then kill the daemon mid-write.
    auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(300 + rng() % 700);
    while (std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    ASSERT_EQ(kill(ds.pid(), SIGKILL), 0);
    EXPECT_EQ(WaitChild(writer, 20), 0) << "the writer did not stop after the daemon died";
    EXPECT_GT(sh->appended.load(), 0u) << "no write was acknowledged before the kill";

    // A new mount over the dead daemon's mount point clears it and mounts, quickly, saying so.
    auto t0 = std::chrono::steady_clock::now();
    CommandResult again = RunCcfs({"mount", "-o", "memory=2MiB", ds.data(), ds.mnt()}, 20);
    double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_EQ(again.exit_code, 0) << again.output;
    EXPECT_NE(again.output.find("cleared a dead ccfs mount"), std::string::npos) << again.output;
    EXPECT_LT(took, 5.0);
    if (IsMounted(ds.mnt())) {
      EXPECT_EQ(RunCcfs({"umount", ds.mnt()}, 20).exit_code, 0);
    }

    EXPECT_EQ(ds.Unmount(), 128 + SIGKILL);  // reaps the killed daemon
    ASSERT_FALSE(IsMounted(ds.mnt()));

    // Every acknowledged append is in DATASET, intact.
    std::string data = ReadWholeFile(ds.DataPath(name));
    uint64_t acked = sh->appended.load();
    ASSERT_GE(data.size(), acked * kBlock) << "acknowledged " << acked << " blocks, fsynced "
                                           << sh->fsynced.load();
    size_t bad = 0;
    for (uint64_t i = 0; i < acked; ++i) {
      FillBlock(buf.data(), kBlock, 1, i, 7);
      if (memcmp(data.data() + i * kBlock, buf.data(), kBlock) != 0) ++bad;
    }
    EXPECT_EQ(bad, 0u) << "acknowledged blocks damaged";
    // Every slot holds its last acknowledged generation, or the one in flight at the kill.
    std::string now = ReadWholeFile(ds.DataPath("slots"));
    ASSERT_EQ(now.size(), kSlots * kBlock);
    for (int i = 0; i < kSlots; ++i) {
      FillBlock(buf.data(), kBlock, 2, i, sh->slot_gen[i].load());
      bool ok = memcmp(now.data() + i * kBlock, buf.data(), kBlock) == 0;
      if (!ok && sh->slot_inflight[i].load() != 0) {
        // The write in flight was not acknowledged: it may have landed whole, in part (a killed
        // pwrite can be short) or not at all; every byte is the old or the new generation.
        std::vector<char> next(kBlock);
        FillBlock(next.data(), kBlock, 2, i, sh->slot_inflight[i].load());
        ok = true;
        for (size_t k = 0; k < kBlock; ++k) {
          char c = now[i * kBlock + k];
          if (c != buf[k] && c != next[k]) ok = false;
        }
        // From now on the slot may hold either; count the new generation only if it is whole.
        if (memcmp(now.data() + i * kBlock, next.data(), kBlock) == 0) {
          sh->slot_gen[i].store(sh->slot_inflight[i].load());
        } else if (ok) {
          // A torn unacknowledged write: rewrite the acknowledged generation so later cycles
          // check against something exact.
          int fd = open(ds.DataPath("slots").c_str(), O_WRONLY);
          EXPECT_EQ(pwrite(fd, buf.data(), kBlock, i * kBlock), static_cast<ssize_t>(kBlock));
          close(fd);
        }
      }
      sh->slot_inflight[i] = 0;
      EXPECT_TRUE(ok) << "slot " << i << " lost generation " << sh->slot_gen[i].load();
    }
    // Nothing outside DATASET changed; the mount point is an empty directory again.
    EXPECT_EQ(ReadWholeFile(outside), "must not change");
    std::vector<std::string> root_entries;
    for (const auto& e : std::filesystem::directory_iterator(ds.root())) {
      root_entries.push_back(e.path().filename());
    }
    std::sort(root_entries.begin(), root_entries.end());
    EXPECT_EQ(root_entries, (std::vector<std::string>{"daemon.log", "data", "mnt",
                                                       "outside_sentinel"}));
    EXPECT_TRUE(std::filesystem::is_empty(ds.mnt()));
    total_blocks += acked;
    if (!::testing::Test::HasFailure()) ++survived;
  }

  // A clean remount serves what the crashes left, byte for byte as in DATASET.
  std::string error;
  ASSERT_TRUE(ds.Mount({"-o", "memory=2MiB,compressed_percent=50"}, &error)) << error;
  for (int cycle = 0; cycle < cycles; ++cycle) {
    std::string name = "append" + std::to_string(cycle);
    EXPECT_TRUE(ReadWholeFile(ds.MntPath(name)) == ReadWholeFile(ds.DataPath(name))) << name;
  }
  EXPECT_TRUE(ReadWholeFile(ds.MntPath("slots")) == ReadWholeFile(ds.DataPath("slots")));
  EXPECT_EQ(ds.Unmount(), 0) << ds.DaemonLog();
  printf("[crash] %d of %d kill -9 cycles survived; %llu acknowledged blocks of %zu bytes "
         "verified\n",
         survived, cycles, (unsigned long long)total_blocks, kBlock);
  munmap(sh, sizeof(Shared));
}

}  // namespace
}  // namespace ccfs::testing
