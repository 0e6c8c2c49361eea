// CPU placement for pin_threads: the split of the allowed CPUs, pinning a thread, and the engine's
// compression workers staying on their CPUs.
#include "util/cpus.h"

#include <dirent.h>
#include <sched.h>
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <string>
#include <thread>

#include "ccfs/options.h"
#include "ccfs/page_cache.h"

namespace ccfs {
namespace {

std::vector<int> Allowed() {
  cpu_set_t set;
  CPU_ZERO(&set);
  EXPECT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  }
  return cpus;
}

TEST(SplitCpusTest, CompressionGetsTheLastCpusRequestsTheRest) {
  const std::vector<int> allowed = Allowed();
  for (int threads : {0, 1, 3, 1000}) {
    SCOPED_TRACE(threads);
    CpuSplit s = SplitCpus(threads);
    ASSERT_FALSE(s.request.empty());
    ASSERT_FALSE(s.compress.empty());
    if (allowed.size() == 1) {
      EXPECT_EQ(s.request, allowed);
      EXPECT_EQ(s.compress, allowed);
      continue;
    }
    std::vector<int> joined = s.request;
    joined.insert(joined.end(), s.compress.begin(), s.compress.end());
    EXPECT_EQ(joined, allowed) << "disjoint, in order, covering every allowed CPU";
    size_t want = std::min<size_t>(static_cast<size_t>(ResolveCompressThreads(threads)), allowed.size() - 1);
    EXPECT_EQ(s.compress.size(), want);
  }
}

TEST(SplitCpusTest, PinThisThreadKeepsItThere) {
  const int cpu = Allowed().back();
  std::thread t([&] {
    ASSERT_TRUE(PinThisThread({cpu}).ok());
    for (int i = 0; i < 100; ++i) {
      ASSERT_EQ(sched_getcpu(), cpu);
      std::this_thread::yield();
    }
  });
  t.join();
}

// Cpus_allowed_list of every thread of this process named `name`, but those in `skip` (thread
// ids); *tids gets the ids seen.
std::set<std::string> AllowedListsOf(const std::string& name, const std::set<std::string>& skip = {},
                                     std::set<std::string>* tids = nullptr) {
  std::set<std::string> lists;
  DIR* d = opendir("/proc/self/task");
  if (d == nullptr) return lists;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] == '.') continue;
    std::string base = std::string("/proc/self/task/") + e->d_name;
    std::string comm;
    std::getline(std::ifstream(base + "/comm"), comm);
    if (comm != name) continue;
    if (tids != nullptr) tids->insert(e->d_name);
    if (skip.count(e->d_name) != 0) continue;
    std::ifstream status(base + "/status");
    for (std::string line; std::getline(status, line);) {
      if (line.rfind("Cpus_allowed_list:", 0) == 0) lists.insert(line.substr(line.find_last_of("\t ") + 1));
    }
  }
  closedir(d);
  return lists;
}

TEST(SplitCpusTest, EngineCompressionWorkersRunOnTheirCpus) {
  if (Allowed().size() < 2) GTEST_SKIP() << "one CPU: nothing to split";
  std::set<std::string> before;  // compression workers of other engines alive in this process
  AllowedListsOf("ccfs-compress", {}, &before);
  Options o;
  o.memory = 4 << 20;
  o.compress_threads = 1;
  o.pin_threads = true;
  std::unique_ptr<PageCache> cache;
  ASSERT_TRUE(PageCache::Create(o, &cache).ok());
  const std::string last = std::to_string(Allowed().back());
  // Workers pin themselves as they start.
  std::set<std::string> lists;
  for (int i = 0; i < 200 && lists != std::set<std::string>{last}; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    lists = AllowedListsOf("ccfs-compress", before);
  }
  EXPECT_EQ(lists, std::set<std::string>{last});
}

}  // namespace
}  // namespace ccfs
