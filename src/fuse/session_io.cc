// Why a custom I/O rather than a newer libfuse: Debian 12 ships libfuse 3.14, which knows neither
// the INIT flags of kernels after 5.10 nor the write_flags and open_flags the kernel sends with a
// request. Both are plain fields in the bytes read from and written to /dev/fuse, so the smallest
// faithful fix is to read them there: the kernel's own word for what a request needs, rather than
// a guess made from the caller's uid.
//
// The INIT reply is found by its unique id (recorded when the INIT request was read) and patched
// in a copy: libfuse's buffers are not ours to change. Only the first reply to that id is patched;
// after it the writev hook costs a thread-local load and an atomic one, unless the thread serves a
// ring request (ReplyCapture), whose reply is handed to the ring instead of written.
#include "fuse/session_io.h"

#include "fuse/fuse_api.h"
#include "util/mutex.h"

#include <linux/fuse.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <mutex>
#include <vector>

namespace ccfs {
namespace {

struct InitState {
  std::atomic<uint64_t> want{0};
  std::atomic<bool> reply_pending{false};  // an INIT was read and its reply not yet written
  Mutex mu;
  uint64_t unique GUARDED_BY(mu) = 0;
  uint64_t offered GUARDED_BY(mu) = 0;
  std::atomic<uint64_t> added{0};
  // Set once the INIT reply has been written; `result` is complete then.
  CondVar answered_cv;
  bool answered GUARDED_BY(mu) = false;
  InitResult result GUARDED_BY(mu);
};

InitState g_init;
thread_local RequestFlags t_request;
thread_local const ReplyCapture* t_capture = nullptr;
thread_local bool t_deferred = false;  // DeferReply was called for t_capture's request
thread_local int32_t t_passthrough = 0;  // ReplyPassthrough's id for this thread's next reply
std::atomic<int> g_dev_fd{-1};           // the session's /dev/fuse, for the backing ioctls

// The kernel's passthrough ioctls on /dev/fuse (include/uapi/linux/fuse.h, 6.9; Debian 12's
// copy predates them).
struct BackingMap {
  int32_t fd;
  uint32_t flags;
  uint64_t padding;
};
constexpr unsigned long kBackingOpen = _IOW(229, 1, BackingMap);
constexpr unsigned long kBackingClose = _IOW(229, 2, uint32_t);
constexpr uint32_t kOpenPassthrough = 1u << 7;  // FOPEN_PASSTHROUGH
constexpr uint32_t kOpenParallelDirectWrites = 1u << 6;
// What fs/fuse/iomode.c lets an OPEN reply say beside FOPEN_PASSTHROUGH (else the open fails EIO).
constexpr uint32_t kPassthroughKeeps = FOPEN_DIRECT_IO | FOPEN_NOFLUSH | kOpenParallelDirectWrites;

template <typename T>
bool ArgAfterHeader(const void* buf, size_t len, T* arg) {
  if (len < sizeof(fuse_in_header) + sizeof(T)) return false;
  memcpy(arg, static_cast<const char*>(buf) + sizeof(fuse_in_header), sizeof(T));
  return true;
}

ssize_t TapRead(int fd, void* buf, size_t len, void* /*userdata*/) {
  ssize_t n = read(fd, buf, len);
  if (n > 0) {
    int saved = errno;
    NoteRequest(buf, static_cast<size_t>(n));
    errno = saved;
  }
  return n;
}

// Records the INIT reply as written and wakes WaitForInit.
void MarkInitAnswered(const InitResult& result) {
  MutexLock lock(&g_init.mu);
  g_init.result = result;
  g_init.answered = true;
  g_init.answered_cv.SignalAll();
}

// Patches and writes the INIT reply (out.unique matched the INIT request).
ssize_t WriteInitReply(int fd, struct iovec* iov, int count, const fuse_out_header& out,
                       uint64_t offered) {
  g_init.reply_pending.store(false, std::memory_order_release);
  InitResult result;
  result.offered = offered;
  result.error = out.error;
  // A reply too short to hold flags2 (protocol minor < 23) or an error: nothing to add to.
  if (out.error != 0 || count < 2 ||
      iov[1].iov_len < offsetof(fuse_init_out, flags2) + sizeof(uint32_t)) {
    ssize_t n = writev(fd, iov, count);
    int saved = errno;
    MarkInitAnswered(result);
    errno = saved;
    return n;
  }
  fuse_init_out reply;
  memset(&reply, 0, sizeof(reply));
  size_t reply_len = std::min(iov[1].iov_len, sizeof(reply));
  memcpy(&reply, iov[1].iov_base, reply_len);
  uint64_t add = g_init.want.load(std::memory_order_relaxed) & offered;
  // max_stack_depth, the 32-bit word after flags2: 1 = the backing files' file system may not be
  // stacked itself. A reply too short to hold it (the header gives its length) cannot ask.
  constexpr size_t kDepthAt = offsetof(fuse_init_out, flags2) + sizeof(uint32_t);
  static_assert(kDepthAt + sizeof(uint32_t) <= sizeof(fuse_init_out));
  if (reply_len < kDepthAt + sizeof(uint32_t)) add &= ~kInitPassthrough;
  if (add & kInitPassthrough) {
    const uint32_t depth = 1;
    memcpy(reinterpret_cast<char*>(&reply) + kDepthAt, &depth, sizeof(depth));
  }
  reply.flags |= static_cast<uint32_t>(add);
  if ((add >> 32) != 0) {
    reply.flags |= FUSE_INIT_EXT;  // offered: the high bits exist only in an extended INIT
    reply.flags2 |= static_cast<uint32_t>(add >> 32);
  }
  g_init.added.store(add, std::memory_order_relaxed);
  result.added = add;
  result.max_write = reply.max_write;
  if (reply.flags & FUSE_MAX_PAGES) result.max_pages = reply.max_pages;
  std::vector<iovec> patched(iov, iov + count);
  patched[1].iov_base = &reply;
  patched[1].iov_len = reply_len;
  ssize_t n = writev(fd, patched.data(), count);
  int saved = errno;
  if (n < 0) result.error = -saved;
  MarkInitAnswered(result);
  errno = saved;
  return n;
}

// Writes (or places in `capture`) an OPEN or CREATE reply patched to pass the file through to
// backing `id`: the fuse_open_out ends iov[1] (after the fuse_entry_out in a CREATE reply). A
// reply of another shape (an error) goes as it is.
ssize_t WritePassthrough(int fd, struct iovec* iov, int count, const ReplyCapture* capture,
                         int32_t id) {
  std::vector<iovec> patched(iov, iov + count);
  char body[sizeof(fuse_entry_out) + sizeof(fuse_open_out)];
  const size_t len = count == 2 ? iov[1].iov_len : 0;
  if (len == sizeof(fuse_open_out) || len == sizeof(body)) {
    memcpy(body, iov[1].iov_base, len);
    fuse_open_out o;
    memcpy(&o, body + len - sizeof(o), sizeof(o));
    o.open_flags = (o.open_flags & kPassthroughKeeps) | kOpenPassthrough;
    o.padding = static_cast<uint32_t>(id);  // backing_id in the kernel's newer fuse_open_out
    memcpy(body + len - sizeof(o), &o, sizeof(o));
    patched[1].iov_base = body;
  }
  if (capture != nullptr) return capture->place(capture->context, patched.data(), count);
  return writev(fd, patched.data(), count);
}

ssize_t TapWritev(int fd, struct iovec* iov, int count, void* /*userdata*/) {
  if (count < 1 || iov[0].iov_len < sizeof(fuse_out_header)) return writev(fd, iov, count);
  const ReplyCapture* capture = t_capture;
  if (t_passthrough != 0) {
    const int32_t id = t_passthrough;
    t_passthrough = 0;
    fuse_out_header out;
    memcpy(&out, iov[0].iov_base, sizeof(out));
    const bool captured = capture != nullptr && out.unique == capture->unique;
    if (out.error == 0) return WritePassthrough(fd, iov, count, captured ? capture : nullptr, id);
  }
  const bool init_pending = g_init.reply_pending.load(std::memory_order_acquire);
  if (capture == nullptr && !init_pending) return writev(fd, iov, count);
  fuse_out_header out;
  memcpy(&out, iov[0].iov_base, sizeof(out));
  if (capture != nullptr && out.unique == capture->unique) {
    return capture->place(capture->context, iov, count);
  }
  if (!init_pending) return writev(fd, iov, count);
  uint64_t offered;
  {
    MutexLock lock(&g_init.mu);
    if (out.unique != g_init.unique) return writev(fd, iov, count);
    offered = g_init.offered;
  }
  return WriteInitReply(fd, iov, count, out, offered);
}

}  // namespace

Status InstallSessionIo(fuse_session* se, uint64_t want_init_flags) {
  g_init.want.store(want_init_flags, std::memory_order_relaxed);
  g_dev_fd.store(fuse_session_fd(se), std::memory_order_relaxed);
  fuse_custom_io io;
  memset(&io, 0, sizeof(io));
  io.read = TapRead;
  io.writev = TapWritev;
  // No splice hooks: libfuse then neither splices requests in (ccfs does not ask it to) nor replies
  // out, so every byte passes through the two hooks above.
  int rc = fuse_session_custom_io(se, &io, fuse_session_fd(se));
  if (rc != 0) return Status::FromErrno(-rc, "fuse_session_custom_io");
  return Status::Ok();
}

int RegisterBacking(int fd) {
  BackingMap map{fd, 0, 0};
  const int id = ioctl(g_dev_fd.load(std::memory_order_relaxed), kBackingOpen, &map);
  return id < 0 ? -errno : id;
}

void UnregisterBacking(int32_t backing_id) {
  uint32_t id = static_cast<uint32_t>(backing_id);
  ioctl(g_dev_fd.load(std::memory_order_relaxed), kBackingClose, &id);
}

void ReplyPassthrough(int32_t backing_id) { t_passthrough = backing_id; }

uint64_t InitFlagsAdded() { return g_init.added.load(std::memory_order_relaxed); }

bool WaitForInit(int timeout_ms, InitResult* result) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  MutexLock lock(&g_init.mu);
  while (!g_init.answered) {
    if (!g_init.answered_cv.WaitUntil(&g_init.mu, deadline)) break;
  }
  if (!g_init.answered) return false;
  *result = g_init.result;
  return true;
}

void SetReplyCapture(const ReplyCapture* capture) {
  t_capture = capture;
  t_deferred = false;
}

bool DeferReply(ReplyCapture* later) {
  const ReplyCapture* capture = t_capture;
  if (capture == nullptr) {
    *later = ReplyCapture();
    return true;
  }
  if (capture->placed_later == nullptr) return false;
  *later = *capture;
  t_deferred = true;
  return true;
}

const ReplyCapture* ReplyRoute(const ReplyCapture& later) {
  return later.place != nullptr ? &later : nullptr;
}

void ReplyDelivered(const ReplyCapture& later) {
  SetReplyCapture(nullptr);
  if (later.placed_later != nullptr) later.placed_later(later.context);
}

void KeepReply() { t_deferred = false; }

bool ReplyWasDeferred() { return t_deferred; }

bool RequestFromRing() { return t_capture != nullptr; }

const RequestFlags& CurrentRequest() { return t_request; }

void NoteRequest(const void* buf, size_t len) {
  fuse_in_header in;
  if (len < sizeof(in)) return;
  memcpy(&in, buf, sizeof(in));
  t_request = RequestFlags();
  t_request.opcode = in.opcode;
  switch (in.opcode) {
    case FUSE_WRITE: {
      fuse_write_in w;
      if (ArgAfterHeader(buf, len, &w)) t_request.write_flags = w.write_flags;
      break;
    }
    case FUSE_OPEN: {
      fuse_open_in o;
      if (ArgAfterHeader(buf, len, &o)) t_request.open_flags = o.open_flags;
      break;
    }
    case FUSE_CREATE: {
      fuse_create_in c;
      if (ArgAfterHeader(buf, len, &c)) t_request.open_flags = c.open_flags;
      break;
    }
    case FUSE_INIT: {
      // Kernels before 7.36 send a shorter fuse_init_in: flags, but no flags2.
      constexpr size_t kFlagsEnd = offsetof(fuse_init_in, flags) + sizeof(uint32_t);
      constexpr size_t kFlags2End = offsetof(fuse_init_in, flags2) + sizeof(uint32_t);
      if (len < sizeof(in) + kFlagsEnd) break;
      fuse_init_in init;
      memset(&init, 0, sizeof(init));
      memcpy(&init, static_cast<const char*>(buf) + sizeof(in),
             std::min(len - sizeof(in), sizeof(init)));
      uint64_t offered = init.flags;
      if ((init.flags & FUSE_INIT_EXT) && len >= sizeof(in) + kFlags2End) {
        offered |= static_cast<uint64_t>(init.flags2) << 32;
      }
      MutexLock lock(&g_init.mu);
      g_init.unique = in.unique;
      g_init.offered = offered;
      g_init.reply_pending.store(true, std::memory_order_release);
      break;
    }
    default:
      break;
  }
}

}  // namespace ccfs
