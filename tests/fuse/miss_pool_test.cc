// MissPool: work runs off the caller's thread, at most the limit at once, and Stop() runs what
// was handed over before it returns.
#include "fuse/miss_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace ccfs {
namespace {

// Work that blocks until Release(), as a miss waits for the store.
class Gate {
 public:
  std::function<void()> Work() {
    return [this] {
      std::unique_lock<std::mutex> lock(mu_);
      ++started_;
      cv_.notify_all();
      cv_.wait(lock, [this] { return open_; });
      ++finished_;
    };
  }
  void WaitStarted(int n) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return started_ >= n; });
  }
  void Release() {
    std::lock_guard<std::mutex> lock(mu_);
    open_ = true;
    cv_.notify_all();
  }
  int finished() {
    std::lock_guard<std::mutex> lock(mu_);
    return finished_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int started_ = 0, finished_ = 0;
  bool open_ = false;
};

TEST(MissPoolTest, RunsUpToTheLimitAtOnceAndRefusesBeyond) {
  MissPool pool(3, nullptr);
  Gate gate;
  for (int i = 0; i < 3; ++i) {
    std::function<void()> w = gate.Work();
    ASSERT_TRUE(pool.TryRun(&w)) << i;
  }
  gate.WaitStarted(3);  // three at once: none waits for another
  std::function<void()> fourth = gate.Work();
  EXPECT_FALSE(pool.TryRun(&fourth)) << "every thread is busy";
  EXPECT_TRUE(fourth) << "refused work is left to the caller";
  gate.Release();
  pool.Stop();
  EXPECT_EQ(gate.finished(), 3);
  EXPECT_EQ(pool.peak(), 3);
}

TEST(MissPoolTest, AThreadThatFinishedTakesTheNextPiece) {
  MissPool pool(1, nullptr);
  std::atomic<int> ran{0};
  const std::thread::id caller = std::this_thread::get_id();
  std::atomic<bool> off_caller{true};
  for (int i = 0; i < 100; ++i) {
    std::function<void()> w = [&] {
      if (std::this_thread::get_id() == caller) off_caller = false;
      ++ran;
    };
    // One thread: wait for it to be free again, as a request thread would find it.
    while (!pool.TryRun(&w)) std::this_thread::yield();
  }
  pool.Stop();
  EXPECT_EQ(ran.load(), 100);
  EXPECT_TRUE(off_caller.load());
  EXPECT_EQ(pool.peak(), 1);
}

TEST(MissPoolTest, StopRunsWhatWasHandedOverAndThenRefuses) {
  MissPool pool(4, nullptr);
  Gate gate;
  for (int i = 0; i < 4; ++i) {
    std::function<void()> w = gate.Work();
    ASSERT_TRUE(pool.TryRun(&w));
  }
  std::thread stopper([&] { pool.Stop(); });
  gate.WaitStarted(4);
  gate.Release();
  stopper.join();
  EXPECT_EQ(gate.finished(), 4) << "each piece owes a reply";
  std::function<void()> late = [] {};
  EXPECT_FALSE(pool.TryRun(&late));
}

TEST(MissPoolTest, NoLimitRunsNothing) {
  MissPool pool(0, nullptr);
  std::function<void()> w = [] {};
  EXPECT_FALSE(pool.TryRun(&w));
}

}  // namespace
}  // namespace ccfs
