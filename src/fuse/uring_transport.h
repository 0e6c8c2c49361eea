// UringTransport: FUSE over io_uring (Linux 6.14+), the `transport = uring` way for requests to
// reach ccfs's handlers.
//
// What it is. One queue per possible CPU (the kernel's numbering: queue i takes the requests of
// callers running on CPU i). Each queue is an io_uring with 128-byte SQEs on the session's
// /dev/fuse descriptor, holding `entries_per_queue` ring entries; an entry is a header buffer
// (fuse_uring_req_header, src/fuse/uring_abi.h) and a payload buffer of max(8 KiB, max_write,
// max_pages pages) as agreed in INIT. Each entry is REGISTERed once; after that a completion
// means "a request is in this entry", and one COMMIT_AND_FETCH both returns the reply and gives
// the entry back for the next request. Requests are fed to the same fuse_session as the /dev/fuse
// loop (fuse_session_process_buf), so the op table and the handlers are unchanged; libfuse's reply
// comes back through SessionIo's ReplyCapture (src/fuse/session_io.h) into the entry.
//
// What stays on /dev/fuse. INIT (before the rings exist), FORGET, INTERRUPT and notification
// replies: the kernel never puts them on a ring. A RequestLoop must keep serving /dev/fuse for the
// whole life of the mount; it is also what notices the unmount.
//
// Threads. Start() spawns one thread per queue, pinned to that queue's CPU (left unpinned, with
// one log line, if the process may not run there). A queue's thread alone submits to and reaps
// its ring, runs the handlers of its requests one at a time, and commits their replies. A handler
// may hand its request to another thread (DeferReply, fuse/session_io.h: a read that waits for
// the store); that thread places the reply in the entry and wakes the queue's thread, which
// commits it, so the ring is still touched by one thread only. Such threads must have replied
// before Stop() (the daemon stops its miss pool first). Start()
// returns once every queue has registered its entries (or one was refused). Stop() and the
// destructor may be called from any one other thread.
//
// Ownership and lifetime. The session is borrowed and must outlive the transport; the rings and
// buffers are the transport's. REQUIRES for Start(): InstallSessionIo() was called on the session,
// the INIT reply added FUSE_OVER_IO_URING (WaitForInit says so), and a RequestLoop serves /dev/fuse.
//
// Shutdown. A queue's thread ends when Stop() wakes it (an eventfd polled on its ring) or when the
// kernel has ended all of its entries (ENOTCONN: unmount, abort, the connection's end). Stop()
// then closes the rings; io_uring's cancel takes back entries still waiting for a request. Stop()
// does not end the session: the caller stops the RequestLoop and unmounts as it does with dev.
// If the daemon dies (kill -9), the kernel ends the rings and the connection with the process.
#ifndef CCFS_FUSE_URING_TRANSPORT_H_
#define CCFS_FUSE_URING_TRANSPORT_H_

#include <cstdint>
#include <memory>
#include <string>

#include "ccfs/status.h"
#include "util/thread_cpu.h"

struct fuse_session;

namespace ccfs {

// Whether this kernel lets a FUSE server use io_uring, judged before mounting from
// /sys/module/fuse/parameters/enable_uring and a probe ring. OK, or an error saying what is
// missing and how to turn it on (the mount's message for transport = uring, the log line for auto).
Status UringAvailable();

struct UringTransportConfig {
  int entries_per_queue = 8;
  uint32_t max_write = 0;  // from the INIT reply (InitResult)
  uint32_t max_pages = 0;  // from the INIT reply, 0 if it did not set FUSE_MAX_PAGES
  // If set, the queue threads join it for their lifetime (RequestLoopConfig::cpu's group).
  // Borrowed; must outlive the queue threads.
  ThreadCpuGroup* cpu = nullptr;
};

class UringTransport {
 public:
  UringTransport(fuse_session* session, const UringTransportConfig& config);
  // Stops the queues if the caller has not.
  ~UringTransport();
  UringTransport(const UringTransport&) = delete;
  UringTransport& operator=(const UringTransport&) = delete;

  // Creates the rings, starts the queue threads and registers every entry. An error names what the
  // kernel refused; nothing is left running then.
  Status Start();
  // Wakes every queue thread, joins them and closes the rings. Idempotent.
  void Stop();

  // After Start() failed: true if the kernel refused a REGISTER. It has then gone back to sending
  // every request to /dev/fuse (dev_uring.c resets the connection's ring flag), so a /dev/fuse
  // loop alone serves the mount. False for other failures: the kernel still holds requests for a
  // ring that will never come, and the mount must end.
  bool refused_by_kernel() const;

  int queues() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ccfs

#endif  // CCFS_FUSE_URING_TRANSPORT_H_
