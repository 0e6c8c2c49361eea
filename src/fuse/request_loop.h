// RequestLoop: the threads that take FUSE requests off /dev/fuse and run their handlers.
//
// Three shapes, chosen by measurement (bench/fuse_rtt.cc; figures in the .cc):
//   kFixedThreads  N threads, each looping on fuse_session_receive_buf/process_buf over the one
//                  session fd. The kernel wakes one waiting reader per request. The default.
//   kSingle        libfuse's fuse_session_loop on one thread (the null-FUSE floor's loop).
//   kLibfuseMt     libfuse's fuse_session_loop_mt with max_threads = N, max_idle_threads = N and
//                  the given clone_fd; kept only so the benchmark can compare against it.
//
// The loop serves until the session ends: the file system is unmounted (the kernel answers
// ENODEV), or Stop() is called. done_fd() becomes readable when every serving thread has returned,
// so a signal-handling thread can poll it beside its signalfd.
//
// Threads: Start() spawns the serving threads; Stop() and Join() may be called from any one other
// thread. The serving threads block no signals of their own; Stop() wakes them from read(2) with
// kWakeSignal, whose handler does nothing, so callers must not block kWakeSignal in them.
// Ownership: the session is borrowed and must outlive the RequestLoop.
#ifndef CCFS_FUSE_REQUEST_LOOP_H_
#define CCFS_FUSE_REQUEST_LOOP_H_

#include <csignal>
#include <memory>
#include <string>
#include <vector>

#include "ccfs/status.h"
#include "util/thread_cpu.h"

struct fuse_session;

namespace ccfs {

enum class RequestLoopKind { kFixedThreads, kSingle, kLibfuseMt };

// "fixed", "single", "mt".
const char* RequestLoopName(RequestLoopKind kind);
bool ParseRequestLoopKind(const std::string& name, RequestLoopKind* kind);

struct RequestLoopConfig {
  RequestLoopKind kind = RequestLoopKind::kFixedThreads;
  int threads = 2;        // serving threads (kSingle ignores it)
  bool clone_fd = false;  // kLibfuseMt only
  std::vector<int> cpus;  // kFixedThreads: serving threads run only on these CPUs (empty: any)
  // If set, the serving threads join it for their lifetime (their CPU time is the request
  // threads' in the stats). kLibfuseMt's workers are libfuse's threads and are not counted.
  // Borrowed; must outlive the RequestLoop's threads.
  ThreadCpuGroup* cpu = nullptr;
};

class RequestLoop {
 public:
  // The signal Stop() sends serving threads to break them out of a blocking read.
  static constexpr int kWakeSignal = SIGUSR2;

  RequestLoop(fuse_session* session, const RequestLoopConfig& config);
  // Stops and joins the threads if the caller has not.
  ~RequestLoop();
  RequestLoop(const RequestLoop&) = delete;
  RequestLoop& operator=(const RequestLoop&) = delete;

  // Spawns the serving threads.
  Status Start();
  // Marks the session exited and wakes every serving thread; returns once they have all returned.
  void Stop();
  // Blocks until every serving thread has returned (after unmount or Stop()).
  void Join();
  // Readable (an eventfd) once every serving thread has returned.
  int done_fd() const;
  // The first error that ended a serving thread other than unmount, or OK.
  Status result() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ccfs

#endif  // CCFS_FUSE_REQUEST_LOOP_H_
