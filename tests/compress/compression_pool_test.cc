// CompressionPool tests: tasks run exactly once, on several named threads at once, Wait() and
// pending() tell the truth, SetCodec() reaches the workers, and destruction drains the queue.
#include "compress/compression_pool.h"

#include <gtest/gtest.h>
#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace ccfs {
namespace {

using namespace std::chrono_literals;

// A gate tasks block on until the test opens it.
class Gate {
 public:
  void Open() {
    std::lock_guard<std::mutex> lock(mu_);
    open_ = true;
    cv_.notify_all();
  }
  void Pass() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return open_; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
};

// Polls `done` for up to `limit`; true if it became true.
template <typename F>
bool Eventually(F done, std::chrono::milliseconds limit = 5000ms) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

TEST(CompressionPoolTest, RunsEveryTaskExactlyOnce) {
  constexpr int kTasks = 5000;
  std::vector<std::atomic<int>> runs(kTasks);
  {
    CompressionPool pool(4, CodecKind::kLz4, 1);
    for (int i = 0; i < kTasks; ++i) {
      pool.Submit([&runs, i](Codec&) { runs[i].fetch_add(1, std::memory_order_relaxed); });
    }
    pool.Wait();
    EXPECT_EQ(pool.pending(), 0u);
  }
  for (int i = 0; i < kTasks; ++i) ASSERT_EQ(runs[i].load(), 1) << "task " << i;
}

TEST(CompressionPoolTest, WorkersRunTasksConcurrentlyOnNamedThreads) {
  constexpr int kThreads = 3;
  CompressionPool pool(kThreads, CodecKind::kLz4, 1);
  ASSERT_EQ(pool.threads(), kThreads);

  // Each task waits until all kThreads tasks have started: this only finishes if kThreads workers
  // really run side by side.
  std::atomic<int> started{0};
  std::mutex mu;
  std::set<std::thread::id> ids;
  std::set<std::string> names;
  for (int i = 0; i < kThreads; ++i) {
    pool.Submit([&](Codec&) {
      char name[32] = {};
      pthread_getname_np(pthread_self(), name, sizeof(name));
      {
        std::lock_guard<std::mutex> lock(mu);
        ids.insert(std::this_thread::get_id());
        names.insert(name);
      }
      started.fetch_add(1);
      Eventually([&] { return started.load() == kThreads; });
    });
  }
  pool.Wait();
  EXPECT_EQ(started.load(), kThreads);
  EXPECT_EQ(ids.size(), static_cast<size_t>(kThreads));
  EXPECT_EQ(names, std::set<std::string>{"ccfs-compress"});
}

TEST(CompressionPoolTest, ZeroThreadsLeavesOneCpuToReaders) {
  CompressionPool pool(0, CodecKind::kLz4, 1);
  const int online = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  EXPECT_EQ(pool.threads(), online > 1 ? online - 1 : 1);
}

TEST(CompressionPoolTest, WaitBlocksUntilRunningAndQueuedTasksFinish) {
  CompressionPool pool(2, CodecKind::kLz4, 1);
  Gate gate;
  std::atomic<int> finished{0};
  for (int i = 0; i < 2; ++i) {
    pool.Submit([&](Codec&) {
      gate.Pass();
      finished.fetch_add(1);
    });
  }
  for (int i = 0; i < 3; ++i) pool.Submit([&](Codec&) { finished.fetch_add(1); });

  // Both workers are stuck at the gate: 2 running + 3 queued.
  EXPECT_EQ(pool.pending(), 5u);

  std::atomic<bool> wait_returned{false};
  std::thread waiter([&] {
    pool.Wait();
    wait_returned = true;
  });
  std::this_thread::sleep_for(50ms);
  EXPECT_FALSE(wait_returned.load()) << "Wait() returned while tasks were still running";
  EXPECT_EQ(finished.load(), 0);

  gate.Open();
  waiter.join();
  EXPECT_TRUE(wait_returned.load());
  EXPECT_EQ(finished.load(), 5);
  EXPECT_EQ(pool.pending(), 0u);
}

TEST(CompressionPoolTest, WaitBlocksWhileATaskRunsWithNothingQueued) {
  CompressionPool pool(2, CodecKind::kLz4, 1);
  Gate gate;
  std::atomic<bool> started{false};
  std::atomic<bool> finished{false};
  pool.Submit([&](Codec&) {
    started = true;
    gate.Pass();
    finished = true;
  });
  ASSERT_TRUE(Eventually([&] { return started.load(); }));
  EXPECT_EQ(pool.pending(), 1u);  // running, not queued

  std::atomic<bool> wait_returned{false};
  std::thread waiter([&] {
    pool.Wait();
    wait_returned = true;
  });
  std::this_thread::sleep_for(50ms);
  EXPECT_FALSE(wait_returned.load()) << "Wait() returned while a task was running";
  gate.Open();
  waiter.join();
  EXPECT_TRUE(finished.load());
}

TEST(CompressionPoolTest, WaitOnIdlePoolReturnsAtOnce) {
  CompressionPool pool(2, CodecKind::kZstd, 1);
  pool.Wait();
  EXPECT_EQ(pool.pending(), 0u);
}

TEST(CompressionPoolTest, SetCodecSwitchesWhatWorkersUse) {
  CompressionPool pool(2, CodecKind::kLz4, 1);
  struct Seen {
    CodecKind kind;
    int level;
  };
  std::mutex mu;
  std::vector<Seen> seen;
  auto record = [&](Codec& codec) {
    std::lock_guard<std::mutex> lock(mu);
    seen.push_back({codec.kind(), codec.level()});
  };

  for (int i = 0; i < 20; ++i) pool.Submit(record);
  pool.Wait();
  ASSERT_EQ(seen.size(), 20u);
  for (const Seen& s : seen) {
    EXPECT_EQ(s.kind, CodecKind::kLz4);
    EXPECT_EQ(s.level, 1);
  }

  seen.clear();
  pool.SetCodec(CodecKind::kZstd, 3);
  for (int i = 0; i < 20; ++i) pool.Submit(record);
  pool.Wait();
  ASSERT_EQ(seen.size(), 20u);
  for (const Seen& s : seen) {
    EXPECT_EQ(s.kind, CodecKind::kZstd);
    EXPECT_EQ(s.level, 3);
  }

  // What a user of the cache notices: blobs made by the pool now decode as zstd.
  std::vector<char> page(8192, 'x');
  std::vector<char> blob(8192);
  size_t blob_size = 0;
  pool.Submit([&](Codec& codec) {
    blob_size = codec.Compress(page.data(), page.size(), blob.data(), blob.size());
  });
  pool.Wait();
  ASSERT_GT(blob_size, 0u);
  std::vector<char> out(8192);
  EXPECT_TRUE(NewCodec(CodecKind::kZstd, 3)->Decompress(blob.data(), blob_size, out.data(),
                                                         out.size()).ok());
  EXPECT_EQ(out, page);
  EXPECT_FALSE(NewCodec(CodecKind::kLz4, 1)->Decompress(blob.data(), blob_size, out.data(),
                                                        out.size()).ok());
}

TEST(CompressionPoolTest, RunOneRunsTheOldestQueuedTaskOnTheCallerWithThePoolsCodec) {
  CompressionPool pool(1, CodecKind::kLz4, 1);
  EXPECT_FALSE(pool.RunOne()) << "nothing queued";
  // The worker is held in a task, so the next two stay queued.
  Gate gate;
  std::atomic<bool> holding{false};
  pool.Submit([&](Codec&) {
    holding = true;
    gate.Pass();
  });
  ASSERT_TRUE(Eventually([&] { return holding.load(); }));
  pool.SetCodec(CodecKind::kZstd, 3);
  std::vector<int> order;
  std::thread::id ran_on;
  CodecKind kind = CodecKind::kLz4;
  int level = 0;
  pool.Submit([&](Codec& codec) {
    order.push_back(1);
    ran_on = std::this_thread::get_id();
    kind = codec.kind();
    level = codec.level();
    // Some CPU, so that cpu_ns() has something to count.
    std::vector<char> page(1 << 20, 'x'), blob(2 << 20);
    for (int i = 0; i < 20; ++i) codec.Compress(page.data(), page.size(), blob.data(), blob.size());
  });
  pool.Submit([&](Codec&) { order.push_back(2); });
  const uint64_t cpu_before = pool.cpu_ns();
  EXPECT_EQ(pool.pending(), 3u);
  ASSERT_TRUE(pool.RunOne());
  EXPECT_EQ(order, std::vector<int>{1}) << "the oldest queued task first";
  EXPECT_EQ(ran_on, std::this_thread::get_id());
  EXPECT_EQ(kind, CodecKind::kZstd) << "the codec the pool is set to";
  EXPECT_EQ(level, 3);
  EXPECT_GT(pool.cpu_ns(), cpu_before) << "the caller's CPU for the task is the pool's";
  ASSERT_TRUE(pool.RunOne());
  EXPECT_EQ(order, (std::vector<int>{1, 2}));
  EXPECT_FALSE(pool.RunOne());
  EXPECT_EQ(pool.pending(), 1u) << "the held task";
  gate.Open();
  pool.Wait();
  EXPECT_EQ(pool.pending(), 0u);
}

TEST(CompressionPoolTest, WorkersBuildCodecsOnceAndAgainOnlyAfterAChange) {
  constexpr int kThreads = 2;
  CompressionPool pool(kThreads, CodecKind::kZstd, 1);
  // Each worker builds its codec as it starts.
  ASSERT_TRUE(Eventually([&] { return pool.codecs_built() == kThreads; }));

  std::atomic<int> ran{0};
  auto task = [&](Codec& codec) {
    char page[4096] = {};
    char blob[8192];
    codec.Compress(page, sizeof(page), blob, sizeof(blob));
    ran.fetch_add(1);
  };
  for (int i = 0; i < 200; ++i) pool.Submit(task);
  pool.Wait();
  EXPECT_EQ(pool.codecs_built(), static_cast<uint64_t>(kThreads)) << "rebuilt per task";

  // Setting the codec it already has rebuilds nothing.
  pool.SetCodec(CodecKind::kZstd, 1);
  for (int i = 0; i < 200; ++i) pool.Submit(task);
  pool.Wait();
  EXPECT_EQ(pool.codecs_built(), static_cast<uint64_t>(kThreads));

  // A real change costs at most one build per worker, however many tasks follow.
  pool.SetCodec(CodecKind::kLz4, 1);
  for (int i = 0; i < 200; ++i) pool.Submit(task);
  pool.Wait();
  EXPECT_GT(pool.codecs_built(), static_cast<uint64_t>(kThreads));
  EXPECT_LE(pool.codecs_built(), static_cast<uint64_t>(2 * kThreads));
  EXPECT_EQ(ran.load(), 600);
}

TEST(CompressionPoolTest, DestructorFinishesQueuedTasks) {
  std::atomic<int> finished{0};
  Gate gate;
  std::thread opener;
  {
    CompressionPool pool(1, CodecKind::kLz4, 1);
    pool.Submit([&](Codec&) { gate.Pass(); });
    for (int i = 0; i < 100; ++i) pool.Submit([&](Codec&) { finished.fetch_add(1); });
    // The destructor starts while the worker is still blocked and 100 tasks are queued.
    opener = std::thread([&] {
      std::this_thread::sleep_for(30ms);
      gate.Open();
    });
  }
  opener.join();
  EXPECT_EQ(finished.load(), 100);
}

TEST(CompressionPoolTest, SubmitFromManyThreads) {
  constexpr int kSubmitters = 4;
  constexpr int kPerSubmitter = 500;
  std::atomic<int> finished{0};
  CompressionPool pool(2, CodecKind::kLz4, 1);
  std::vector<std::thread> submitters;
  for (int t = 0; t < kSubmitters; ++t) {
    submitters.emplace_back([&] {
      for (int i = 0; i < kPerSubmitter; ++i) pool.Submit([&](Codec&) { finished.fetch_add(1); });
    });
  }
  for (auto& t : submitters) t.join();
  pool.Wait();
  EXPECT_EQ(finished.load(), kSubmitters * kPerSubmitter);
}

}  // namespace
}  // namespace ccfs
