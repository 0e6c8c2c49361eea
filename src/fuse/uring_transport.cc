// Why the transport is shaped this way:
//   - The kernel puts a caller's request on the queue of the CPU the caller runs on, and completes
//     the ring command as task work of the thread that submitted it. A queue served by one thread
//     pinned to that CPU therefore answers without waking another CPU: that wake-up, not copying,
//     is most of a /dev/fuse round trip on a small VM (bench/fuse_rtt).
//   - One thread per queue submits and reaps its ring and runs the handlers inline: no hand-off,
//     no lock on the ring. Commits are queued as SQEs while a batch of completions is handled and
//     go out with the next io_uring_submit_and_wait(), which also waits for the next request.
//   - fuse_session_process_buf() wants one buffer: fuse_in_header, the op's arguments, then any
//     data. The kernel splits a request into the header block (in_header, first argument) and the
//     payload buffer (the rest, e.g. a write's data). Each entry's payload buffer is preceded by a
//     spare page, so the header and first argument (at most 40 + 128 bytes) are copied in front of
//     the payload and the data is never moved. Replies are copied once into the payload buffer:
//     the handlers reply from their own buffers through libfuse, which this transport must not
//     change.
//   - Registration errors are answered inline by the kernel (fuse_uring_cmd returns them before
//     queueing the command), so their completions are there when io_uring_submit returns (a short
//     wait covers a deferred one); an accepted entry completes only when a request arrives, or
//     with ENOTCONN when the mount has already ended, which is no refusal.
#include "fuse/uring_transport.h"

#include "fuse/log.h"
#include "fuse/session_io.h"
#include "fuse/uring_abi.h"
#include "util/mutex.h"

#define FUSE_USE_VERSION FUSE_MAKE_VERSION(3, 14)
#include <fmt/format.h>
#include <fuse3/fuse_lowlevel.h>
#include <linux/fuse.h>
#include <liburing.h>
#include <poll.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/sysinfo.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace ccfs {

namespace {

constexpr const char* kEnableUringParam = "/sys/module/fuse/parameters/enable_uring";
constexpr uint32_t kMinPayload = 8192;       // the kernel's FUSE_MIN_READ_BUFFER
constexpr uint32_t kDefaultMaxPages = 32;    // the kernel's max_pages when INIT does not set it
constexpr int kRegisterVerdictMs = 2;

size_t PageSize() { return static_cast<size_t>(sysconf(_SC_PAGESIZE)); }

size_t RoundUp(size_t n, size_t unit) { return (n + unit - 1) / unit * unit; }

std::string KernelRelease() {
  std::ifstream f("/proc/sys/kernel/osrelease");
  std::string r;
  std::getline(f, r);
  return r.empty() ? "this kernel" : "Linux " + r;
}

}  // namespace

Status UringAvailable() {
  std::ifstream f(kEnableUringParam);
  if (!f) {
    return Status::NotSupported(fmt::format(
        "{} has no FUSE over io_uring ({} is missing); it needs Linux 6.14 or later built with "
        "CONFIG_FUSE_IO_URING=y",
        KernelRelease(), kEnableUringParam));
  }
  std::string v;
  std::getline(f, v);
  if (v != "Y" && v != "y" && v != "1") {
    return Status::NotSupported(fmt::format(
        "FUSE over io_uring is turned off in this kernel ({} = {}); turn it on as root with "
        "\"echo Y > {}\" (or boot with fuse.enable_uring=1)",
        kEnableUringParam, v, kEnableUringParam));
  }
  // io_uring itself may be refused to this process (sysctl kernel.io_uring_disabled, seccomp):
  // once INIT has asked for the ring, requests wait for it, so find out before mounting.
  io_uring probe;
  io_uring_params params;
  memset(&params, 0, sizeof(params));
  params.flags = IORING_SETUP_SQE128;
  int rc = io_uring_queue_init_params(2, &probe, &params);
  if (rc < 0) {
    return Status::NotSupported(fmt::format(
        "this process may not create an io_uring with 128-byte entries ({}); check sysctl "
        "kernel.io_uring_disabled (0 allows it)",
        strerror(-rc)));
  }
  io_uring_queue_exit(&probe);
  return Status::Ok();
}

class UringTransport::Impl {
 public:
  Impl(fuse_session* se, const UringTransportConfig& config) : se_(se), config_(config) {}
  ~Impl() { Stop(); }

  Status Start();
  void Stop();
  int queues() const { return static_cast<int>(queues_.size()); }
  bool refused_by_kernel() const {
    MutexLock lock(&mu_);
    return refused_by_kernel_;
  }

 private:
  struct Queue;

  // One ring entry: its buffers live in one mapping: [header page][spare page][payload].
  struct Entry {
    Queue* queue = nullptr;
    char* mapping = nullptr;
    size_t mapping_size = 0;
    uring_abi::ReqHeader* header = nullptr;
    char* payload = nullptr;
    size_t payload_size = 0;
    iovec iov[2];
    uint32_t last_cmd = 0;
    uint64_t commit_id = 0;
    bool replied = false;
  };

  struct Queue {
    Impl* impl = nullptr;
    int qid = 0;
    io_uring ring;
    bool ring_ready = false;
    int stop_fd = -1;  // written by Stop; its poll is tagged by the queue itself
    // Entries whose replies were placed on another thread (DeferReply) and wait for their
    // commit: PlacedLater adds them and writes done_fd, whose poll (tagged by &done_fd) wakes the
    // queue's thread.
    int done_fd = -1;
    Mutex done_mu;
    std::vector<Entry*> done GUARDED_BY(done_mu);
    std::vector<Entry> entries;
    std::thread thread;
  };

  Status CreateQueue(Queue* q);
  void DestroyQueue(Queue* q);
  void Serve(Queue* q);
  int Register(Queue* q);
  // Runs the request in `e`; false if its handler deferred the reply (DeferReply): the entry is
  // then committed by CommitPlacedLater, once the reply is in it.
  bool Handle(Entry* e);
  // The queue's next SQE, an SQE128 slot zeroed; when the SQ is full, submits what it holds and
  // tries once more. nullptr if there is still none.
  static io_uring_sqe* NextSqe(Queue* q);
  void PrepareCommand(Queue* q, Entry* e, uint32_t cmd);
  // Queues a poll for `fd` readable whose completion carries `tag` (Serve tells the polls apart by
  // it). False if there was no SQE for it.
  static bool PreparePoll(Queue* q, int fd, void* tag);
  void CommitPlacedLater(Queue* q);
  static ssize_t PlaceReply(void* context, const iovec* iov, int count);
  // ReplyCapture::placed_later: on the thread that replied.
  static void PlacedLater(void* context);
  void ReportRegistration(int qid, int err);

  fuse_session* const se_;
  const UringTransportConfig config_;
  std::vector<std::unique_ptr<Queue>> queues_;
  size_t payload_size_ = 0;

  mutable Mutex mu_;
  CondVar registered_cv_;
  bool refused_by_kernel_ GUARDED_BY(mu_) = false;
  int registered_ GUARDED_BY(mu_) = 0;   // queues that have given their verdict
  Status register_error_ GUARDED_BY(mu_);

  std::atomic<bool> warned_bad_request_{false};
  std::atomic<bool> warned_ring_error_{false};
};

Status UringTransport::Impl::Start() {
  const size_t page = PageSize();
  uint32_t max_pages = config_.max_pages != 0 ? config_.max_pages : kDefaultMaxPages;
  payload_size_ = RoundUp(std::max<size_t>({kMinPayload, config_.max_write,
                                            static_cast<size_t>(max_pages) * page}),
                          page);
  const int n = std::max(1, get_nprocs_conf());
  for (int qid = 0; qid < n; ++qid) {
    auto q = std::make_unique<Queue>();
    q->impl = this;
    q->qid = qid;
    Status s = CreateQueue(q.get());
    queues_.push_back(std::move(q));
    if (!s.ok()) {
      Stop();
      return s;
    }
  }
  for (auto& q : queues_) {
    Queue* qp = q.get();
    q->thread = std::thread([this, qp] { Serve(qp); });
  }
  Status result;
  {
    MutexLock lock(&mu_);
    while (registered_ < static_cast<int>(queues_.size())) registered_cv_.Wait(&mu_);
    result = register_error_;
  }
  if (!result.ok()) Stop();
  return result;
}

Status UringTransport::Impl::CreateQueue(Queue* q) {
  const size_t page = PageSize();
  q->stop_fd = eventfd(0, EFD_CLOEXEC);
  if (q->stop_fd < 0) return Status::FromErrno(errno, "eventfd");
  q->done_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (q->done_fd < 0) return Status::FromErrno(errno, "eventfd");
  // One command per entry, the stop poll and the done poll.
  const unsigned depth = static_cast<unsigned>(std::max(1, config_.entries_per_queue)) + 2;
  io_uring_params params;
  memset(&params, 0, sizeof(params));
  params.flags = IORING_SETUP_SQE128 | IORING_SETUP_CQSIZE;
  params.cq_entries = depth * 2;
  int rc = io_uring_queue_init_params(depth, &q->ring, &params);
  if (rc < 0) {
    return Status::FromErrno(-rc, fmt::format("io_uring_setup (ring queue {})", q->qid));
  }
  q->ring_ready = true;
  int fd = fuse_session_fd(se_);
  rc = io_uring_register_files(&q->ring, &fd, 1);
  if (rc < 0) return Status::FromErrno(-rc, "registering /dev/fuse with the ring");
  q->entries.resize(static_cast<size_t>(config_.entries_per_queue));
  for (Entry& e : q->entries) {
    e.queue = q;
    e.mapping_size = 2 * page + payload_size_;
    void* m = mmap(nullptr, e.mapping_size, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) {
      e.mapping = nullptr;
      return Status::FromErrno(errno, "ring entry buffers");
    }
    e.mapping = static_cast<char*>(m);
    e.header = reinterpret_cast<uring_abi::ReqHeader*>(e.mapping);
    e.payload = e.mapping + 2 * page;
    e.payload_size = payload_size_;
    e.iov[0] = {e.header, sizeof(uring_abi::ReqHeader)};
    e.iov[1] = {e.payload, e.payload_size};
  }
  return Status::Ok();
}

void UringTransport::Impl::DestroyQueue(Queue* q) {
  if (q->ring_ready) io_uring_queue_exit(&q->ring);
  q->ring_ready = false;
  for (Entry& e : q->entries) {
    if (e.mapping != nullptr) munmap(e.mapping, e.mapping_size);
    e.mapping = nullptr;
  }
  q->entries.clear();
  if (q->stop_fd >= 0) close(q->stop_fd);
  q->stop_fd = -1;
  if (q->done_fd >= 0) close(q->done_fd);
  q->done_fd = -1;
}

void UringTransport::Impl::Stop() {
  for (auto& q : queues_) {
    if (q->thread.joinable() && q->stop_fd >= 0) {
      uint64_t one = 1;
      [[maybe_unused]] ssize_t w = write(q->stop_fd, &one, sizeof(one));
    }
  }
  for (auto& q : queues_) {
    if (q->thread.joinable()) q->thread.join();
  }
  // Closing a ring lets io_uring cancel the entries still waiting for a request.
  for (auto& q : queues_) DestroyQueue(q.get());
  queues_.clear();
}

io_uring_sqe* UringTransport::Impl::NextSqe(Queue* q) {
  // Each entry has at most one command in the kernel and the SQ holds one per entry plus the two
  // polls, so this cannot run out.
  io_uring_sqe* sqe = io_uring_get_sqe(&q->ring);
  if (sqe == nullptr) {
    io_uring_submit(&q->ring);
    sqe = io_uring_get_sqe(&q->ring);
    if (sqe == nullptr) return nullptr;
  }
  memset(sqe, 0, 2 * sizeof(io_uring_sqe));  // an SQE128 slot
  return sqe;
}

void UringTransport::Impl::PrepareCommand(Queue* q, Entry* e, uint32_t cmd) {
  io_uring_sqe* sqe = NextSqe(q);
  if (sqe == nullptr) return;  // the entry is lost, not the request misrouted
  sqe->opcode = IORING_OP_URING_CMD;
  sqe->flags = IOSQE_FIXED_FILE;
  sqe->fd = 0;  // index of /dev/fuse among the ring's registered files
  sqe->cmd_op = cmd;
  io_uring_sqe_set_data(sqe, e);
  uring_abi::CmdReq req;
  memset(&req, 0, sizeof(req));
  req.qid = static_cast<uint16_t>(q->qid);
  if (cmd == uring_abi::kCmdRegister) {
    sqe->addr = reinterpret_cast<uint64_t>(e->iov);
    sqe->len = 2;
  } else {
    req.commit_id = e->commit_id;
  }
  memcpy(sqe->cmd, &req, sizeof(req));
  e->last_cmd = cmd;
}

void UringTransport::Impl::ReportRegistration(int qid, int err) {
  MutexLock lock(&mu_);
  if (err != 0) refused_by_kernel_ = true;
  if (err != 0 && register_error_.ok()) {
    std::string why;
    switch (-err) {
      case EOPNOTSUPP:
        why = fmt::format("FUSE over io_uring is turned off in this kernel; as root: echo Y > {}",
                          kEnableUringParam);
        break;
      case EINVAL:
        why = "the kernel refused the ring entries (buffer sizes or queue number)";
        break;
      default:
        why = strerror(-err);
    }
    register_error_ = Status::IOError(-err, fmt::format(
        "registering ring queue {} with the kernel failed: {}", qid, why));
  }
  ++registered_;
  registered_cv_.SignalAll();
}

int UringTransport::Impl::Register(Queue* q) {
  for (Entry& e : q->entries) PrepareCommand(q, &e, uring_abi::kCmdRegister);
  if (!PreparePoll(q, q->stop_fd, q)) return -EBUSY;
  PreparePoll(q, q->done_fd, &q->done_fd);
  int rc = io_uring_submit(&q->ring);
  if (rc < 0) return rc;
  __kernel_timespec ts;
  ts.tv_sec = 0;
  ts.tv_nsec = kRegisterVerdictMs * 1000000L;
  io_uring_cqe* cqe = nullptr;
  io_uring_wait_cqe_timeout(&q->ring, &cqe, &ts);
  // Look without consuming: a request that arrived meanwhile is served by the loop.
  // ENOTCONN and ECONNABORTED are not refusals: the mount ended already (a quick unmount right
  // after mounting), and the loop winds the queue down.
  unsigned head;
  int err = 0;
  io_uring_for_each_cqe(&q->ring, head, cqe) {
    void* data = io_uring_cqe_get_data(cqe);
    const int res = cqe->res;
    if (data != q && res < 0 && res != -ENOTCONN && res != -ECONNABORTED && err == 0) err = res;
  }
  return err;
}

void UringTransport::Impl::Serve(Queue* q) {
  std::optional<ThreadCpuGroup::Membership> cpu;
  if (config_.cpu != nullptr) cpu.emplace(config_.cpu->Join());
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(q->qid, &set);
  if (sched_setaffinity(0, sizeof(set), &set) != 0) {
    LogWarning(fmt::format("uring transport: queue {} cannot run on CPU {} ({}); left unpinned",
                           q->qid, q->qid, strerror(errno)));
  }
  int err = Register(q);
  ReportRegistration(q->qid, err);
  if (err != 0) return;

  int live = static_cast<int>(q->entries.size());
  bool stop = false;
  while (!stop && live > 0) {
    int rc = io_uring_submit_and_wait(&q->ring, 1);
    if (rc < 0 && rc != -EINTR && rc != -EAGAIN && rc != -EBUSY) {
      LogError(fmt::format("uring transport: queue {}: io_uring_enter: {}", q->qid, strerror(-rc)));
      break;
    }
    unsigned head;
    unsigned seen = 0;
    io_uring_cqe* cqe;
    io_uring_for_each_cqe(&q->ring, head, cqe) {
      ++seen;
      void* data = io_uring_cqe_get_data(cqe);
      if (data == q) {
        stop = true;
        continue;
      }
      if (data == &q->done_fd) {
        CommitPlacedLater(q);
        continue;
      }
      Entry* e = static_cast<Entry*>(data);
      const int res = cqe->res;
      if (res == 0) {
        if (Handle(e)) PrepareCommand(q, e, uring_abi::kCmdCommitAndFetch);
      } else if (res == -EINTR || res == -EAGAIN) {
        PrepareCommand(q, e, e->last_cmd);
      } else {
        // ENOTCONN: unmounted or aborted; ECANCELED: the ring is going away. Anything else is
        // a kernel refusal that loses this entry (the others keep serving).
        --live;
        if (res != -ENOTCONN && res != -ECANCELED && !warned_ring_error_.exchange(true)) {
          LogError(fmt::format("uring transport: queue {}: ring command {} failed: {}", q->qid,
                               e->last_cmd, strerror(-res)));
        }
      }
    }
    io_uring_cq_advance(&q->ring, seen);
  }
  // Replies of the last batch must reach the kernel before the thread leaves.
  io_uring_submit(&q->ring);
}

bool UringTransport::Impl::PreparePoll(Queue* q, int fd, void* tag) {
  io_uring_sqe* poll = NextSqe(q);
  if (poll == nullptr) return false;
  io_uring_prep_poll_add(poll, fd, POLLIN);
  io_uring_sqe_set_data(poll, tag);
  return true;
}

void UringTransport::Impl::PlacedLater(void* context) {
  Entry* e = static_cast<Entry*>(context);
  Queue* q = e->queue;
  {
    MutexLock lock(&q->done_mu);
    q->done.push_back(e);
  }
  uint64_t one = 1;
  [[maybe_unused]] ssize_t w = write(q->done_fd, &one, sizeof(one));
}

void UringTransport::Impl::CommitPlacedLater(Queue* q) {
  uint64_t count;
  [[maybe_unused]] ssize_t r = read(q->done_fd, &count, sizeof(count));
  std::vector<Entry*> done;
  {
    MutexLock lock(&q->done_mu);
    done.swap(q->done);
  }
  for (Entry* e : done) PrepareCommand(q, e, uring_abi::kCmdCommitAndFetch);
  PreparePoll(q, q->done_fd, &q->done_fd);
}

bool UringTransport::Impl::Handle(Entry* e) {
  fuse_in_header in;
  memcpy(&in, e->header->in_out, sizeof(in));
  const uring_abi::EntInOut& ent = e->header->ring_ent_in_out;
  e->commit_id = ent.commit_id;
  e->replied = false;
  const size_t payload = ent.payload_sz;
  const bool sane = payload <= e->payload_size && in.len >= sizeof(in) + payload &&
                    in.len - sizeof(in) - payload <= uring_abi::kOpInOutSize;
  if (sane) {
    const size_t op_len = in.len - sizeof(in) - payload;
    char* start = e->payload - op_len - sizeof(in);
    memcpy(start, &in, sizeof(in));
    memcpy(start + sizeof(in), e->header->op_in, op_len);
    NoteRequest(start, in.len);
    ReplyCapture capture;
    capture.unique = in.unique;
    capture.place = &Impl::PlaceReply;
    capture.placed_later = &Impl::PlacedLater;
    capture.context = e;
    SetReplyCapture(&capture);
    fuse_buf buf;
    memset(&buf, 0, sizeof(buf));
    buf.mem = start;
    buf.size = in.len;
    fuse_session_process_buf(se_, &buf);
    const bool later = ReplyWasDeferred();
    SetReplyCapture(nullptr);
    // Another thread has the request now and may have replied already: `e` is not touched again
    // here (PlacedLater gives it back).
    if (later) return false;
  } else if (!warned_bad_request_.exchange(true)) {
    LogError(fmt::format("uring transport: request {} (opcode {}) has inconsistent sizes (len {}, "
                         "payload {}); answered EIO",
                         in.unique, in.opcode, in.len, payload));
  }
  if (!e->replied) {
    // Every request on a ring expects an answer; a handler that gave none must not hang it.
    fuse_out_header out;
    memset(&out, 0, sizeof(out));
    out.unique = in.unique;
    out.error = -EIO;
    out.len = sizeof(out);
    memcpy(e->header->in_out, &out, sizeof(out));
    e->header->ring_ent_in_out.payload_sz = 0;
  }
  return true;
}

ssize_t UringTransport::Impl::PlaceReply(void* context, const iovec* iov, int count) {
  Entry* e = static_cast<Entry*>(context);
  fuse_out_header out;
  memcpy(&out, iov[0].iov_base, sizeof(out));
  size_t total = 0;
  ssize_t written = static_cast<ssize_t>(iov[0].iov_len);
  for (int i = 1; i < count; ++i) {
    written += static_cast<ssize_t>(iov[i].iov_len);
    if (total + iov[i].iov_len > e->payload_size) {
      out.error = -EIO;  // larger than max_write / max_pages allow: cannot happen from libfuse
      total = 0;
      break;
    }
    memcpy(e->payload + total, iov[i].iov_base, iov[i].iov_len);
    total += iov[i].iov_len;
  }
  if (out.error != 0) total = 0;
  out.len = static_cast<uint32_t>(sizeof(out) + total);
  memcpy(e->header->in_out, &out, sizeof(out));
  e->header->ring_ent_in_out.payload_sz = static_cast<uint32_t>(total);
  e->replied = true;
  return written;
}

UringTransport::UringTransport(fuse_session* session, const UringTransportConfig& config)
    : impl_(std::make_unique<Impl>(session, config)) {}
UringTransport::~UringTransport() = default;
Status UringTransport::Start() { return impl_->Start(); }
void UringTransport::Stop() { impl_->Stop(); }
int UringTransport::queues() const { return impl_->queues(); }
bool UringTransport::refused_by_kernel() const { return impl_->refused_by_kernel(); }

}  // namespace ccfs
