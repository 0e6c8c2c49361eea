// The kernel ABI of FUSE over io_uring, for builds whose headers predate it.
//
// Debian 12's <linux/fuse.h> (protocol 7.38) and liburing 2.3 know nothing of FUSE's ring. The
// names, values and layouts below are those of include/uapi/linux/fuse.h in Linux 6.14+ (protocol
// 7.42: FUSE_OVER_IO_URING, struct fuse_uring_ent_in_out, struct fuse_uring_req_header,
// struct fuse_uring_cmd_req, enum fuse_uring_cmd); fs/fuse/dev_uring.c is the other side and
// Documentation/filesystems/fuse-io-uring.rst the description. They live in ccfs's namespace so
// that a newer system header defining the same names does not collide.
//
// What the kernel does with them (dev_uring.c):
//   - REGISTER (sqe->addr = an iovec[2]: the header, then the payload buffer; sqe->len = 2;
//     cmd area = fuse_uring_cmd_req with qid) hands one entry of queue `qid` to the kernel. It is
//     refused with EOPNOTSUPP when enable_uring is off and the connection did not ask for the ring
//     in its INIT reply, EAGAIN before INIT is answered, EINVAL when the payload buffer is smaller
//     than max(8 KiB, max_write, max_pages pages). Once every queue holds an entry, the connection
//     sends its requests (all but FORGET and INTERRUPT) to the queue of the caller's CPU.
//   - The command completes (CQE res 0) when a request has been placed in the entry: the
//     fuse_in_header at the start of in_out, the op's first argument in op_in, the rest of the
//     arguments (a write's data) in the payload buffer, ring_ent_in_out.commit_id and .payload_sz.
//   - COMMIT_AND_FETCH (cmd area: qid and that commit_id) takes the reply — a fuse_out_header in
//     in_out (unique and error are read, len is not), every out argument in the payload buffer,
//     ring_ent_in_out.payload_sz — and gives the entry back for the next request.
//   - On unmount or abort every entry completes with ENOTCONN; io_uring's cancel on ring exit
//     takes back idle entries the same way.
#ifndef CCFS_FUSE_URING_ABI_H_
#define CCFS_FUSE_URING_ABI_H_

#include <cstddef>
#include <cstdint>

namespace ccfs::uring_abi {

// INIT flags2 bit 9 (1 << 41 of the 64-bit flags): the server will serve requests from rings.
// Same value as kInitOverIoUring in session_io.h, which adds it to the INIT reply.
inline constexpr uint64_t kFuseOverIoUring = 1ull << 41;

inline constexpr size_t kInOutHeaderSize = 128;  // FUSE_URING_IN_OUT_HEADER_SZ
inline constexpr size_t kOpInOutSize = 128;      // FUSE_URING_OP_IN_OUT_SZ
inline constexpr size_t kSqe128CmdSize = 80;     // the command area of a 128-byte SQE

// enum fuse_uring_cmd: the sqe->cmd_op of an IORING_OP_URING_CMD on /dev/fuse.
inline constexpr uint32_t kCmdRegister = 1;        // FUSE_IO_URING_CMD_REGISTER
inline constexpr uint32_t kCmdCommitAndFetch = 2;  // FUSE_IO_URING_CMD_COMMIT_AND_FETCH

// struct fuse_uring_ent_in_out
struct EntInOut {
  uint64_t flags;
  uint64_t commit_id;   // kernel → server with a request; server → kernel in the commit command
  uint32_t payload_sz;  // bytes used in the payload buffer, both ways
  uint32_t padding;
  uint64_t reserved;
};

// struct fuse_uring_req_header: iov[0] of REGISTER.
struct ReqHeader {
  char in_out[kInOutHeaderSize];  // fuse_in_header (request) / fuse_out_header (reply)
  char op_in[kOpInOutSize];       // the request's first argument (fuse_read_in, fuse_write_in...)
  EntInOut ring_ent_in_out;
};

// struct fuse_uring_cmd_req: the command area of the SQE.
struct CmdReq {
  uint64_t flags;
  uint64_t commit_id;  // COMMIT_AND_FETCH: the commit_id the request came with; REGISTER: 0
  uint16_t qid;        // the queue: the CPU number
  uint8_t padding[6];
};

static_assert(sizeof(EntInOut) == 32);
static_assert(offsetof(ReqHeader, ring_ent_in_out) == 256);
static_assert(sizeof(ReqHeader) == 288);
static_assert(sizeof(CmdReq) == 24 && sizeof(CmdReq) <= kSqe128CmdSize);

}  // namespace ccfs::uring_abi

#endif  // CCFS_FUSE_URING_ABI_H_
