// SessionIo: the custom I/O (fuse_session_custom_io) that ccfs puts between libfuse 3.14 and
// /dev/fuse, for the two things libfuse 3.14 cannot do itself. Every byte passes through unchanged
// except the ones named here.
//
//   INIT flags libfuse does not know. The kernel offers its capabilities in the INIT request (the
//   flags word, and flags2 when it sets FUSE_INIT_EXT) and turns on those the INIT reply names.
//   libfuse 3.14 names only those it knows. InstallSessionIo() records what the kernel offered
//   and, as the INIT reply goes out, adds the bits of `want_init_flags` that were offered (e.g.
//   FUSE_DIRECT_IO_ALLOW_MMAP, 6.6; FUSE_OVER_IO_URING, 6.14). A bit the kernel did not offer is
//   never added. InitFlagsAdded() says afterwards which were.
//
//   Request flags libfuse drops. libfuse 3.14 gives handlers neither the write_flags of WRITE nor
//   the open_flags of OPEN and CREATE (where the kernel says FUSE_WRITE_KILL_SUIDGID and
//   FUSE_OPEN_KILL_SUIDGID). Each request read through the session is noted for the thread that
//   read it, and libfuse runs the handler on that same thread before it reads again (its own loops
//   and fuse_session_receive_buf + fuse_session_process_buf alike), so a handler finds its
//   request's flags in CurrentRequest().
//
//   Replies that belong in a ring. A transport that does not read requests through this custom I/O
//   (FUSE over io_uring, src/fuse/uring_transport.h, reads them from its ring) calls NoteRequest()
//   itself before it runs the handler, and sets a ReplyCapture for the request on its thread:
//   libfuse's reply to that request (same thread, same unique) then goes to the capture instead of
//   /dev/fuse. Every other write (notifications, replies to /dev/fuse requests) is untouched. INIT
//   always arrives on /dev/fuse; WaitForInit() tells a transport that it has been answered and
//   what was agreed.
//
// Thread-safety: at most one session per process uses SessionIo (the daemon has one). Install it
// before any request thread starts; the hooks then run on any number of request threads.
// CurrentRequest() is per thread. Ownership: the session keeps the descriptor (fuse_session_destroy
// closes it); SessionIo keeps no pointer to the session.
#ifndef CCFS_FUSE_SESSION_IO_H_
#define CCFS_FUSE_SESSION_IO_H_

#include <cstddef>
#include <cstdint>
#include <sys/types.h>

#include "ccfs/status.h"

struct fuse_session;
struct iovec;

namespace ccfs {

// INIT flags (64-bit: flags | flags2 << 32) that libfuse 3.14 cannot ask for. Values from the
// kernel's include/uapi/linux/fuse.h (Debian 12's copy predates the last two).
inline constexpr uint64_t kInitHandleKillprivV2 = 1ull << 28;   // 5.11
inline constexpr uint64_t kInitDirectIoAllowMmap = 1ull << 36;  // 6.6
inline constexpr uint64_t kInitOverIoUring = 1ull << 41;        // 6.14
// FUSE_PASSTHROUGH (6.9): an OPEN reply may name a file the daemon registered, whose reads and
// writes the kernel then makes itself. Added with max_stack_depth 1 (the word after flags2, which
// libfuse 3.14's fuse_init_out leaves zero): the registered files must be on a file system that is
// not itself stacked (no overlay, no other passthrough).
inline constexpr uint64_t kInitPassthrough = 1ull << 37;

// Puts the custom I/O on `se`. REQUIRES: fuse_session_mount(se) succeeded and no request has been
// read yet (INIT is the first); called once per process.
Status InstallSessionIo(fuse_session* se, uint64_t want_init_flags);

// The INIT flags the reply added: want_init_flags & what the kernel offered. 0 before INIT.
uint64_t InitFlagsAdded();

// What the INIT exchange agreed, as far as a transport needs it.
struct InitResult {
  uint64_t offered = 0;    // the kernel's INIT flags (flags | flags2 << 32)
  uint64_t added = 0;      // what InstallSessionIo's reply added (InitFlagsAdded())
  uint32_t max_write = 0;  // from the reply
  uint32_t max_pages = 0;  // from the reply when it set FUSE_MAX_PAGES, else 0
  int32_t error = 0;       // the reply's error (0: INIT accepted)
};

// Waits up to `timeout_ms` until the INIT reply has been written to /dev/fuse (the kernel has
// taken it once writev returns). True and *result filled when it has; false on timeout.
bool WaitForInit(int timeout_ms, InitResult* result);

// Where a reply goes instead of /dev/fuse. `place` gets the reply's iovecs as libfuse would have
// written them (iov[0] the fuse_out_header) and returns the bytes taken, or -1 with errno set.
struct ReplyCapture {
  uint64_t unique = 0;
  ssize_t (*place)(void* context, const struct iovec* iov, int count) = nullptr;
  void* context = nullptr;
  // Set by a transport whose requests may be answered later on another thread (DeferReply):
  // called on that thread once the reply has been placed, to give the request's slot back.
  void (*placed_later)(void* context) = nullptr;
};

// Routes this thread's reply to capture->unique to `capture` (nullptr: none). The capture must
// outlive its use; the caller clears it once the handler has returned. Setting one also clears
// ReplyWasDeferred.
void SetReplyCapture(const ReplyCapture* capture);

// Replies on another thread. A handler that will reply later, elsewhere, calls DeferReply before
// it returns: false means it may not (its request came from a ring that cannot wait: reply here);
// true fills *later, which the replying thread passes to the two calls around its reply:
//   SetReplyCapture(ReplyRoute(later)); fuse_reply_...(req, ...); ReplyDelivered(later);
// For a request from /dev/fuse, *later routes nowhere and the reply is written as usual.
bool DeferReply(ReplyCapture* later);
// Takes a DeferReply back: the handler replies on this thread after all.
void KeepReply();
const ReplyCapture* ReplyRoute(const ReplyCapture& later);
void ReplyDelivered(const ReplyCapture& later);
// Whether the handler that just ran on this thread called DeferReply (a transport asks, after it).
bool ReplyWasDeferred();
// Whether this thread's request came from a ring (a ReplyCapture is set).
bool RequestFromRing();

// What libfuse 3.14 does not pass on about the request this thread is serving.
struct RequestFlags {
  uint32_t opcode = 0;       // FUSE_WRITE, FUSE_OPEN, ...; 0 if the thread has noted none
  uint32_t write_flags = 0;  // WRITE: FUSE_WRITE_*
  uint32_t open_flags = 0;   // OPEN and CREATE: FUSE_OPEN_*
};

// Passthrough (kInitPassthrough agreed). RegisterBacking registers the open file `fd` with the
// kernel (FUSE_DEV_IOC_BACKING_OPEN on the session's /dev/fuse; CAP_SYS_ADMIN needed): the
// backing id (> 0), or -errno. The kernel opens the file afresh for each open passed through to
// it, with that open's flags, so `fd` may be closed once registered. UnregisterBacking drops an
// id (opens passed through to it keep their file).
int RegisterBacking(int fd);
void UnregisterBacking(int32_t backing_id);
// This thread's next OPEN or CREATE reply passes the file through to `backing_id`: the reply is
// patched as it is written (FOPEN_PASSTHROUGH and the id; of its other open flags only those the
// kernel allows beside passthrough stay: FOPEN_DIRECT_IO, FOPEN_NOFLUSH and
// FOPEN_PARALLEL_DIRECT_WRITES). Call just before the reply; a reply of another kind clears it.
void ReplyPassthrough(int32_t backing_id);

// The flags of the last request this thread read (or noted).
const RequestFlags& CurrentRequest();

// Notes the request in `buf` (a fuse_in_header and its arguments, `len` bytes) for
// CurrentRequest() on this thread, and records an INIT request's offer.
void NoteRequest(const void* buf, size_t len);

}  // namespace ccfs

#endif  // CCFS_FUSE_SESSION_IO_H_
