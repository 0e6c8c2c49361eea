// Why the default is N fixed threads on one fd (bench/fuse_rtt.cc: direct_io reads of a null file
// system, whose figures docs/MEASUREMENTS.md keeps):
//   - fuse_session_loop (one thread) is the floor at queue depth 1, but cannot use a second CPU.
//   - fuse_session_loop_mt (libfuse 3.14) starts and stops worker threads as load comes and goes
//     and hands each request across CPUs; with default settings it costs orders of magnitude over
//     the floor at queue depth 1. Tuning max_idle_threads stops the churn but not the cross-CPU
//     hand-off of its worker bookkeeping.
//   - N threads blocked in read(2) on the session fd need no bookkeeping at all: the kernel wakes
//     exactly one waiter per request, that thread runs the handler and replies itself. At queue
//     depth 1 this behaves like the single loop; with two readers both CPUs serve.
// Measured figures are in docs/MEASUREMENTS.md ("Which transport"), next to the command.
#include "fuse/request_loop.h"

#include "util/cpus.h"
#include "util/mutex.h"

#define FUSE_USE_VERSION FUSE_MAKE_VERSION(3, 14)
#include <fuse3/fuse_lowlevel.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace ccfs {

const char* RequestLoopName(RequestLoopKind kind) {
  switch (kind) {
    case RequestLoopKind::kFixedThreads: return "fixed";
    case RequestLoopKind::kSingle: return "single";
    case RequestLoopKind::kLibfuseMt: return "mt";
  }
  return "?";
}

bool ParseRequestLoopKind(const std::string& name, RequestLoopKind* kind) {
  if (name == "fixed") *kind = RequestLoopKind::kFixedThreads;
  else if (name == "single") *kind = RequestLoopKind::kSingle;
  else if (name == "mt") *kind = RequestLoopKind::kLibfuseMt;
  else return false;
  return true;
}

namespace {

// Interrupts read(2) on /dev/fuse; installed without SA_RESTART so the read returns EINTR.
void WakeHandler(int) {}

void InstallWakeHandler() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = WakeHandler;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0;
    sigaction(RequestLoop::kWakeSignal, &sa, nullptr);
  });
}

}  // namespace

class RequestLoop::Impl {
 public:
  Impl(fuse_session* se, const RequestLoopConfig& config) : se_(se), config_(config) {
    done_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  }
  ~Impl() {
    Stop();
    if (done_fd_ >= 0) close(done_fd_);
  }

  Status Start() {
    if (done_fd_ < 0) return Status::FromErrno(errno, "request loop: eventfd");
    InstallWakeHandler();
    int n = config_.kind == RequestLoopKind::kFixedThreads ? std::max(1, config_.threads) : 1;
    running_ = n;
    for (int i = 0; i < n; ++i) {
      threads_.emplace_back([this] {
        std::optional<ThreadCpuGroup::Membership> cpu;
        if (config_.cpu != nullptr) cpu.emplace(config_.cpu->Join());
        if (!config_.cpus.empty()) PinThisThread(config_.cpus);
        Serve();
      });
    }
    return Status::Ok();
  }

  void Stop() {
    if (threads_.empty()) return;
    fuse_session_exit(se_);
    // A thread may be between its exited() check and read(2) when the first signal lands, so
    // keep waking until every thread has returned.
    while (running_.load() > 0) {
      for (auto& t : threads_) {
        if (t.joinable()) pthread_kill(t.native_handle(), kWakeSignal);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    Join();
  }

  void Join() {
    for (auto& t : threads_) {
      if (t.joinable()) t.join();
    }
    threads_.clear();
  }

  int done_fd() const { return done_fd_; }

  Status result() const {
    MutexLock lock(&mu_);
    return result_;
  }

 private:
  void Serve() {
    int err = 0;
    switch (config_.kind) {
      case RequestLoopKind::kFixedThreads:
        err = ServeFixed();
        break;
      case RequestLoopKind::kSingle:
        err = fuse_session_loop(se_);
        break;
      case RequestLoopKind::kLibfuseMt: {
        fuse_loop_config* cfg = fuse_loop_cfg_create();
        fuse_loop_cfg_set_max_threads(cfg, std::max(1, config_.threads));
        fuse_loop_cfg_set_idle_threads(cfg, std::max(1, config_.threads));
        fuse_loop_cfg_set_clone_fd(cfg, config_.clone_fd ? 1 : 0);
        err = fuse_session_loop_mt(se_, cfg);
        fuse_loop_cfg_destroy(cfg);
        break;
      }
    }
    // libfuse returns the negated errno, or a positive signal number when a libfuse signal
    // handler ended the loop (we install none).
    if (err < 0) {
      MutexLock lock(&mu_);
      if (result_.ok()) result_ = Status::FromErrno(-err, "reading /dev/fuse");
    }
    if (running_.fetch_sub(1) == 1) {
      uint64_t one = 1;
      [[maybe_unused]] ssize_t w = write(done_fd_, &one, sizeof(one));
    }
  }

  // One serving thread of kFixedThreads: its own receive buffer, no shared state of its own.
  int ServeFixed() {
    fuse_buf buf;
    memset(&buf, 0, sizeof(buf));
    int err = 0;
    while (!fuse_session_exited(se_)) {
      int res = fuse_session_receive_buf(se_, &buf);
      if (res == -EINTR || res == -EAGAIN) continue;
      // The connection is over: after a lazy unmount the kernel may end it as aborted rather than
      // gone (ENODEV) once the last open file closes. Either way there is nothing left to serve.
      if (res == -ECONNABORTED) break;
      if (res < 0) {
        err = res;
        fuse_session_exit(se_);
        break;
      }
      if (res == 0) break;  // unmounted (ENODEV) or exited
      fuse_session_process_buf(se_, &buf);
    }
    free(buf.mem);
    return err;
  }

  fuse_session* const se_;
  const RequestLoopConfig config_;
  int done_fd_ = -1;
  std::vector<std::thread> threads_;
  std::atomic<int> running_{0};
  mutable Mutex mu_;
  Status result_ GUARDED_BY(mu_);
};

RequestLoop::RequestLoop(fuse_session* session, const RequestLoopConfig& config)
    : impl_(std::make_unique<Impl>(session, config)) {}
RequestLoop::~RequestLoop() = default;
Status RequestLoop::Start() { return impl_->Start(); }
void RequestLoop::Stop() { impl_->Stop(); }
void RequestLoop::Join() { impl_->Join(); }
int RequestLoop::done_fd() const { return impl_->done_fd(); }
Status RequestLoop::result() const { return impl_->result(); }

}  // namespace ccfs
