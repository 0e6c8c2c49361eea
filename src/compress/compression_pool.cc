// CompressionPool: a mutex-guarded FIFO of tasks served by a fixed set of worker threads.
//
// Why a plain mutex and condition variables: tasks are batches of victim pages (tens of µs to ms
// of work each), so one lock acquisition per task is noise next to the compression itself, and a
// lock-free queue would buy nothing measurable while costing clarity.
//
// Codec switching: each worker builds its codec when it starts. SetCodec() bumps a generation
// number under the lock; a worker compares its codec's generation with the pool's before each
// task and rebuilds only when they differ, so a task never sees its codec change under it and
// contexts are not rebuilt per task.
//
// Shutdown: the destructor sets stopping_ and wakes everyone; workers keep taking tasks until the
// queue is empty and only then exit, so every task submitted before destruction runs.
#include "compress/compression_pool.h"

#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <deque>
#include <thread>
#include <vector>

#include "util/cpus.h"
#include "util/mutex.h"
#include "util/thread_cpu.h"

namespace ccfs {

namespace {
uint64_t NextPoolId() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}
}  // namespace

class CompressionPool::Impl {
 public:
  static constexpr int kWorkerNice = 5;

  Impl(int threads, CodecKind kind, int level, std::vector<int> cpus)
      : kind_(kind), level_(level), cpus_(std::move(cpus)) {
    threads = ResolveCompressThreads(threads);
    workers_.reserve(static_cast<size_t>(threads));
    for (int i = 0; i < threads; ++i) workers_.emplace_back([this] { WorkerLoop(); });
  }

  ~Impl() {
    {
      MutexLock lock(&mu_);
      stopping_ = true;
    }
    work_ready_.SignalAll();
    for (std::thread& t : workers_) t.join();
  }

  void Submit(Task task) EXCLUDES(mu_) {
    {
      MutexLock lock(&mu_);
      queue_.push_back(std::move(task));
    }
    work_ready_.Signal();
  }

  void SetCodec(CodecKind kind, int level) EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    if (kind == kind_ && level == level_) return;
    kind_ = kind;
    level_ = level;
    ++codec_generation_;
  }

  bool RunOne() EXCLUDES(mu_) {
    // The codec of this thread: built for this pool (by its id: a later pool may take its
    // address) and kept until SetCodec changes it.
    struct Helper {
      uint64_t pool = 0;
      uint64_t generation = 0;
      std::unique_ptr<Codec> codec;
    };
    thread_local Helper helper;
    MutexLock lock(&mu_);
    if (queue_.empty()) return false;
    if (helper.pool != id_) {
      helper.pool = id_;
      helper.codec.reset();
    }
    Task task = TakeLocked(&helper.generation, &helper.codec);
    lock.Unlock();
    // Background work, as on the workers: the caller's nice value is lowered for the task only.
    const id_t tid = static_cast<id_t>(gettid());
    errno = 0;
    const int nice_before = getpriority(PRIO_PROCESS, tid);
    const bool renice = errno == 0 && nice_before < kWorkerNice;
    if (renice) setpriority(PRIO_PROCESS, tid, kWorkerNice);
    const uint64_t cpu0 = ThreadCpuNs();
    task(*helper.codec);
    task = nullptr;
    helped_ns_.fetch_add(ThreadCpuNs() - cpu0, std::memory_order_relaxed);
    if (renice) setpriority(PRIO_PROCESS, tid, nice_before);
    lock.Lock();
    FinishLocked();
    return true;
  }

  void Wait() EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    while (!(queue_.empty() && running_ == 0)) idle_.Wait(&mu_);
  }

  int threads() const { return static_cast<int>(workers_.size()); }

  uint64_t codecs_built() const { return codecs_built_.load(std::memory_order_relaxed); }

  uint64_t cpu_ns() const {
    return cpu_.TotalNs() + helped_ns_.load(std::memory_order_relaxed);
  }

  size_t pending() const EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    return queue_.size() + running_;
  }

 private:
  void WorkerLoop() EXCLUDES(mu_) {
    pthread_setname_np(pthread_self(), "ccfs-compress");
    ThreadCpuGroup::Membership cpu = cpu_.Join();
    // Compression is background work: a reader waiting for its page should get the CPU first.
    // SCHED_BATCH tells the scheduler this thread is not interactive (no wake-up preemption of
    // readers); the nice value gives readers the larger share when both want a CPU.
    sched_param param{};
    pthread_setschedparam(pthread_self(), SCHED_BATCH, &param);
    setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), kWorkerNice);
    if (!cpus_.empty()) PinThisThread(cpus_);
    MutexLock lock(&mu_);
    uint64_t codec_generation = codec_generation_;
    std::unique_ptr<Codec> codec = BuildCodec(kind_, level_);
    for (;;) {
      while (!stopping_ && queue_.empty()) work_ready_.Wait(&mu_);
      if (queue_.empty()) return;  // stopping_ and nothing left to do
      Task task = TakeLocked(&codec_generation, &codec);
      lock.Unlock();

      task(*codec);
      task = nullptr;  // release what the task captured before reporting it done

      lock.Lock();
      FinishLocked();
    }
  }

  // Takes the oldest task (REQUIRES: one is queued) for a thread whose codec, built at
  // *generation, is rebuilt first if SetCodec changed the codec since (or there is none yet).
  Task TakeLocked(uint64_t* generation, std::unique_ptr<Codec>* codec) REQUIRES(mu_) {
    Task task = std::move(queue_.front());
    queue_.pop_front();
    ++running_;
    if (*codec == nullptr || *generation != codec_generation_) {
      *generation = codec_generation_;
      codec->reset();  // free the old contexts before allocating the new ones
      *codec = BuildCodec(kind_, level_);
    }
    return task;
  }

  // A task taken by TakeLocked has run.
  void FinishLocked() REQUIRES(mu_) {
    --running_;
    if (queue_.empty() && running_ == 0) idle_.SignalAll();
  }

  // Codec construction allocates (zstd contexts are a few hundred KiB): done with mu_ released.
  std::unique_ptr<Codec> BuildCodec(CodecKind kind, int level) REQUIRES(mu_) {
    mu_.Unlock();
    std::unique_ptr<Codec> codec = NewCodec(kind, level);
    codecs_built_.fetch_add(1, std::memory_order_relaxed);
    mu_.Lock();
    return codec;
  }

  // Lock order: mu_ is the only lock; tasks run without it.
  mutable Mutex mu_;
  CondVar work_ready_;  // with mu_: a task was queued, or stopping_ was set
  CondVar idle_;        // with mu_: the queue drained and nothing is running
  std::deque<Task> queue_ GUARDED_BY(mu_);
  size_t running_ GUARDED_BY(mu_) = 0;
  bool stopping_ GUARDED_BY(mu_) = false;
  CodecKind kind_ GUARDED_BY(mu_);
  int level_ GUARDED_BY(mu_);
  const std::vector<int> cpus_;  // where workers run; empty = anywhere
  // Unique in the process, never 0: names this pool to the threads RunOne borrows.
  const uint64_t id_ = NextPoolId();
  uint64_t codec_generation_ GUARDED_BY(mu_) = 0;  // bumped by SetCodec
  std::atomic<uint64_t> codecs_built_{0};
  std::atomic<uint64_t> helped_ns_{0};  // CPU of the tasks RunOne ran
  ThreadCpuGroup cpu_;                  // the workers; before workers_, which leave it first
  std::vector<std::thread> workers_;    // fixed after construction
};

CompressionPool::CompressionPool(int threads, CodecKind kind, int level, std::vector<int> cpus)
    : impl_(std::make_unique<Impl>(threads, kind, level, std::move(cpus))) {}

CompressionPool::~CompressionPool() = default;

void CompressionPool::Submit(Task task) { impl_->Submit(std::move(task)); }
void CompressionPool::SetCodec(CodecKind kind, int level) { impl_->SetCodec(kind, level); }
bool CompressionPool::RunOne() { return impl_->RunOne(); }
void CompressionPool::Wait() { impl_->Wait(); }
int CompressionPool::threads() const { return impl_->threads(); }
size_t CompressionPool::pending() const { return impl_->pending(); }
uint64_t CompressionPool::codecs_built() const { return impl_->codecs_built(); }
uint64_t CompressionPool::cpu_ns() const { return impl_->cpu_ns(); }

}  // namespace ccfs
