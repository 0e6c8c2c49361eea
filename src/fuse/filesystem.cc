// Filesystem: the per-mount context, INIT, and the one op table that registers every handler of
// ops.h. What the kernel is asked for at INIT (caching, splice, writeback) lives here, next to the
// table, because it decides which requests the handlers will see.
#include "fuse/filesystem.h"

#include <fcntl.h>
#include <fmt/format.h>

#include <cstring>
#include <iterator>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "fuse/log.h"
#include "fuse/ops.h"

namespace ccfs {

namespace {

// The ops of kOpTable, as RequestStats' kinds; kOpNames are their labels, the names of their
// fuse_lowlevel_ops slots.
enum Op {
  kLookup, kForget, kForgetMulti, kGetattr, kSetattr, kReadlink, kMknod, kMkdir, kSymlink, kLink,
  kUnlink, kRmdir, kRename, kStatfs,
  kOpen, kCreate, kRead, kWrite, kFlush, kFsync, kRelease, kFallocate, kLseek, kIoctl,
  kOpendir, kReaddir, kReaddirplus, kReleasedir, kFsyncdir,
  kSetxattr, kGetxattr, kListxattr, kRemovexattr,
  kOps
};
constexpr const char* kOpNames[kOps] = {
    "lookup", "forget", "forget_multi", "getattr", "setattr", "readlink", "mknod", "mkdir",
    "symlink", "link", "unlink", "rmdir", "rename", "statfs",
    "open", "create", "read", "write", "flush", "fsync", "release", "fallocate", "lseek", "ioctl",
    "opendir", "readdir", "readdirplus", "releasedir", "fsyncdir",
    "setxattr", "getxattr", "listxattr", "removexattr"};

std::vector<std::string> OpNames() { return {std::begin(kOpNames), std::end(kOpNames)}; }

std::unique_ptr<KernelCache> KernelCacheFor(PageCache* cache) {
  const Options o = cache->options();
  if (!o.kernel_raw_tier()) return nullptr;
  auto kernel = std::make_unique<KernelCache>(o.kernel_budget(), o.page_size, o.kernel_evict);
  if (o.demotes()) {
    KernelCache::Demoter d;
    d.mix = o.kernel_demote == "mix";
    d.full = [cache] {
      const CacheStats s = cache->Stats();
      return s.compressed_bytes + s.page_size >= s.compressed_budget_bytes;
    };
    d.epoch = [cache] { return cache->ChangeEpoch(); };
    kernel->SetDemoter(std::move(d));
  }
  return kernel;
}

}  // namespace

FsContext::FsContext(const Filesystem::Config& config_in, PageCache* cache_in)
    : config(config_in),
      cache(cache_in),
      kernel(KernelCacheFor(cache_in)),
      // Kernel mode: a change drops the kernel's pages of the file, and the file's read handle
      // if one is kept (read_handles.h), which may name the file the name named before: over a
      // store that names files by path (sshfs), a handle goes on reading a file another client
      // renamed a new one over.
      changes(cache_in, kernel == nullptr ? ChangeDetector::StaleCallback()
                                          : [this](Inode* i, uint64_t offset) {
                                              kernel->InvalidateFrom(inodes.InoOf(i), offset);
                                              read_handles.Forget(i);
                                            }),
      watch(kernel == nullptr
                ? nullptr
                : std::make_unique<OpenFileWatch>(
                      &inodes, &changes,
                      std::chrono::microseconds(
                          static_cast<int64_t>(config_in.attr_timeout * 1e6)))),
      requests(OpNames()),
      pins(config_in.dataset, cache_in),
      passthrough(kernel != nullptr && config_in.passthrough ? std::make_unique<PassthroughOpens>()
                                                              : nullptr),
      control(cache_in, kernel.get(), watch.get(), &request_cpu, config_in.dataset,
              config_in.mountpoint, config_in.attr_timeout, &pins, config_in.sftp.get(),
              &changes, passthrough.get()),
      read_handles(config_in.max_open_files / 4),
      dir_warmer(&inodes, config_in.dataset),
      misses(config_in.misses_in_flight > 0
                 ? std::make_unique<MissPool>(config_in.misses_in_flight, &request_cpu)
                 : nullptr) {}

namespace ops {

namespace {
thread_local RequestTimeScope* t_request_time = nullptr;
}  // namespace

RequestTimeScope::RequestTimeScope(RequestTime* time) : time_(time) { t_request_time = this; }
RequestTimeScope::~RequestTimeScope() { t_request_time = nullptr; }

RequestTime HandOffRequestTime() {
  RequestTimeScope* scope = t_request_time;
  if (scope == nullptr) return RequestTime();
  scope->handed_off_ = true;
  return *scope->time_;
}

void KeepRequestTime() {
  if (t_request_time != nullptr) t_request_time->handed_off_ = false;
}

}  // namespace ops

FsContext::~FsContext() {
  size_t files_left = files.size() + control.open_files();
  size_t dirs_left = dirs.size();
  if (files_left + dirs_left > 0) {
    LogInfo(fmt::format("closing what is still open: files={} directories={}", files_left,
                        dirs_left));
  }
}

namespace {

void Init(void* userdata, fuse_conn_info* conn) {
  // The kernel must not batch writes (writes go through before they are acknowledged); splice
  // only pays for large transfers. Whether it caches file data is decided per open file: never in
  // daemon mode (direct_io), in kernel mode (keep_cache) ...
  conn->want &= ~(FUSE_CAP_WRITEBACK_CACHE | FUSE_CAP_SPLICE_READ | FUSE_CAP_SPLICE_WRITE |
                  FUSE_CAP_SPLICE_MOVE);
  // ... where the daemon finds a change made underneath itself and tells the kernel to drop the
  // file's pages: at OPEN, when it answers attributes, and every attr_timeout for open files
  // (open_file_watch.h). Not the kernel's auto_inval_data, which drops every page of a file at
  // its next attribute refresh after a WRITE through the mount (its cached mtime is not updated
  // by the write): the file's own writer would lose its cache with each write. A size the kernel
  // finds changed still drops the file's pages (explicit_inval_data off). Readahead stays the
  // kernel's: a random read asks for just its own pages in one request, a sequential reader gets
  // its pages ahead (below).
  //
  // A read-only mount in kernel mode opens its data files without OPEN or RELEASE (read_handles.h):
  // the daemon then sees neither the opens it would check a file at nor the open files it would
  // check every attr_timeout, and the kernel's auto_inval_data takes their place: each read(2)
  // after attr_timeout refreshes the file's attributes (a GETATTR, where the daemon checks the
  // file), and a changed size or mtime drops its pages. No write can go through such a mount, so
  // none drops the cache of its own writer.
  FsContext* fs = static_cast<FsContext*>(userdata);
  // With passthrough, OPEN is what passes a file through: it stays.
  if (fs->kernel != nullptr && fs->config.read_only && !fs->config.passthrough &&
      (conn->capable & FUSE_CAP_NO_OPEN_SUPPORT)) {
    fs->no_open.store(true, std::memory_order_relaxed);
    conn->want |= FUSE_CAP_AUTO_INVAL_DATA;
    conn->want &= ~FUSE_CAP_EXPLICIT_INVAL_DATA;
  } else if (fs->kernel != nullptr) {
    conn->want &= ~(FUSE_CAP_AUTO_INVAL_DATA | FUSE_CAP_EXPLICIT_INVAL_DATA);
  }
  // O_TRUNC arrives with open() instead of as a separate SETATTR.
  if (conn->capable & FUSE_CAP_ATOMIC_O_TRUNC) conn->want |= FUSE_CAP_ATOMIC_O_TRUNC;
  // READDIRPLUS fills the kernel's entries from a listing; "auto" lets the kernel ask for it only
  // where lookups follow listings (the first read of a directory, and after lookups of its names).
  if (!fs->config.readdirplus) {
    conn->want &= ~(FUSE_CAP_READDIRPLUS | FUSE_CAP_READDIRPLUS_AUTO);
  }
  // Requests as large as the kernel allows, so conn->max_write is left as libfuse sets it: libfuse
  // asks for max_pages = max_write / page size (FUSE_MAX_PAGES), and its default max_write is its
  // buffer's, 1 MiB (256 pages, the kernel's limit). A read(2) of
  // 1 MiB in daemon mode (direct_io) is then one READ, and in kernel mode the kernel's read-ahead
  // can send up to 1 MiB at once (its window is widened after INIT: fuse/mount_readahead.h). The
  // handlers' buffers grow to the largest request seen (data_ops.cc), and the io_uring transport
  // sizes its payload buffers from max_write and max_pages (uring_transport.h).
}

// Whether request `op` (its arguments `args`) may change what a stat of a file shows: the handler
// then runs inside a ChangeDetector::MountChange, which voids the attributes recorded before it
// ends (change_detector.h). An OPEN changes a file when it truncates it; a FLUSH, FSYNC or RELEASE
// of a writable descriptor may (a store's client writing behind sends the writes then). IOCTL does
// not: the daemon's own (warm, residency, evict) change no attribute, and it answers every other
// one ENOTTY (Python's isatty at each open of a file is one).
template <Op op, typename... Args>
bool MayChange(fuse_req_t req, Args... args) {
  if constexpr (op == kSetattr || op == kMknod || op == kMkdir || op == kSymlink || op == kLink ||
                op == kUnlink || op == kRmdir || op == kRename || op == kCreate || op == kWrite ||
                op == kFallocate || op == kSetxattr || op == kRemovexattr) {
    return true;
  } else if constexpr (op == kOpen || op == kFlush || op == kFsync || op == kRelease) {
    const std::tuple<Args...> all(args...);
    fuse_file_info* fi = std::get<sizeof...(Args) - 1>(all);
    if constexpr (op == kOpen) {
      return (fi->flags & O_TRUNC) != 0;
    } else {
      // No OPEN was made (fh 0), or a .ccfs file's handle, which is not a FileHandle.
      if (fi->fh == 0) return false;
      if (ops::ContextOf(req)->inodes.Get(std::get<0>(all))->kind != NodeKind::kReal) return false;
      const int fd = ops::FileOf(fi)->fd;
      return fd >= 0 && (fcntl(fd, F_GETFL) & O_ACCMODE) != O_RDONLY;
    }
  } else {
    return false;
  }
}

// Handler H, counted and timed as request kind `op`: from its entry to its return, which follows
// its one reply (written to /dev/fuse; with transport = uring, handed to the ring's capture, which
// the transport commits with its next fetch: session_io.h). The context is taken before H runs,
// because the reply frees `req`; it outlives every handler (FsContext is destroyed after the
// request loop stops). Two clock reads and RequestStats::Record per request. A handler that
// replies on another thread takes the time over (ops::HandOffRequestTime): it is then recorded
// after that reply.
template <Op op, auto H>
struct Timed;
template <Op op, typename... Args, void (*H)(fuse_req_t, Args...)>
struct Timed<op, H> {
  static void Call(fuse_req_t req, Args... args) {
    ops::RequestTime time;
    time.stats = &ops::ContextOf(req)->requests;
    time.kind = op;
    time.start_ns = SteadyNowNs();
    ops::RequestTimeScope scope(&time);
    std::optional<ChangeDetector::MountChange> change;
    if (MayChange<op>(req, args...)) change.emplace(&ops::ContextOf(req)->changes);
    H(req, args...);
    if (!scope.handed_off()) time.Done();
  }
};

// Every op ccfs serves, each timed (Timed); a slot left empty is answered by libfuse (ENOSYS, or
// its default). init and retrieve_reply are not requests a reader made, and are not timed.
const fuse_lowlevel_ops kOpTable = [] {
  fuse_lowlevel_ops ops;
  memset(&ops, 0, sizeof(ops));
  ops.init = Init;
  // names and attributes
  ops.lookup = Timed<kLookup, ops::Lookup>::Call;
  ops.forget = Timed<kForget, ops::Forget>::Call;
  ops.forget_multi = Timed<kForgetMulti, ops::ForgetMulti>::Call;
  ops.getattr = Timed<kGetattr, ops::Getattr>::Call;
  ops.setattr = Timed<kSetattr, ops::Setattr>::Call;
  ops.readlink = Timed<kReadlink, ops::Readlink>::Call;
  ops.mknod = Timed<kMknod, ops::Mknod>::Call;
  ops.mkdir = Timed<kMkdir, ops::Mkdir>::Call;
  ops.symlink = Timed<kSymlink, ops::Symlink>::Call;
  ops.link = Timed<kLink, ops::Link>::Call;
  ops.unlink = Timed<kUnlink, ops::Unlink>::Call;
  ops.rmdir = Timed<kRmdir, ops::Rmdir>::Call;
  ops.rename = Timed<kRename, ops::Rename>::Call;
  ops.statfs = Timed<kStatfs, ops::Statfs>::Call;
  // open files
  ops.open = Timed<kOpen, ops::Open>::Call;
  ops.create = Timed<kCreate, ops::Create>::Call;
  ops.read = Timed<kRead, ops::Read>::Call;
  ops.write = Timed<kWrite, ops::Write>::Call;
  ops.flush = Timed<kFlush, ops::Flush>::Call;
  ops.fsync = Timed<kFsync, ops::Fsync>::Call;
  ops.release = Timed<kRelease, ops::Release>::Call;
  ops.fallocate = Timed<kFallocate, ops::Fallocate>::Call;
  ops.lseek = Timed<kLseek, ops::Lseek>::Call;
  ops.ioctl = Timed<kIoctl, ops::Ioctl>::Call;
  ops.retrieve_reply = ops::RetrieveReply;
  // directories
  ops.opendir = Timed<kOpendir, ops::Opendir>::Call;
  ops.readdir = Timed<kReaddir, ops::Readdir>::Call;
  ops.readdirplus = Timed<kReaddirplus, ops::Readdirplus>::Call;
  ops.releasedir = Timed<kReleasedir, ops::Releasedir>::Call;
  ops.fsyncdir = Timed<kFsyncdir, ops::Fsyncdir>::Call;
  // extended attributes
  ops.setxattr = Timed<kSetxattr, ops::Setxattr>::Call;
  ops.getxattr = Timed<kGetxattr, ops::Getxattr>::Call;
  ops.listxattr = Timed<kListxattr, ops::Listxattr>::Call;
  ops.removexattr = Timed<kRemovexattr, ops::Removexattr>::Call;
  return ops;
}();

}  // namespace

Status Filesystem::Create(const Config& config, PageCache* cache, std::unique_ptr<Filesystem>* fs) {
  auto context = std::make_unique<FsContext>(config, cache);
  // The ledger forgets an Inode's pages before its address can name a new ino (its entries, and
  // runs asked back, would otherwise be taken for the new file's).
  KernelCache* kernel = context->kernel.get();
  Status s = context->inodes.Open(config.dataset, config.max_open_files, [kernel](fuse_ino_t ino) {
    if (kernel != nullptr) kernel->Forget(ino);
  });
  if (!s.ok()) return s;
  s = context->pins.Check(cache->options());
  if (!s.ok()) return s;
  context->pins.Apply(cache->options());
  if (!config.persist_dir.empty()) {
    context->inodes.KeepPaths();
    context->persister = std::make_unique<Persister>(
        Persister::Config{config.persist_dir, config.dataset}, cache, &context->inodes,
        &context->pins);
  }
  fs->reset(new Filesystem(std::move(context)));
  return Status::Ok();
}

Filesystem::Filesystem(std::unique_ptr<FsContext> context) : context_(std::move(context)) {}
Filesystem::~Filesystem() = default;

const fuse_lowlevel_ops& Filesystem::Ops() { return kOpTable; }
void* Filesystem::userdata() { return context_.get(); }
ThreadCpuGroup* Filesystem::request_cpu() { return &context_->request_cpu; }

ControlDir& Filesystem::control() { return context_->control; }
std::vector<RequestStats::Kind> Filesystem::Requests() const {
  return context_->requests.Snapshot();
}

void Filesystem::StartKernelCache(fuse_session* se) {
  if (context_->kernel != nullptr) {
    context_->kernel->Start(se);
    // The split tuner predicts and applies splits here through the mount's trip and budget.
    ControlDir* control = &context_->control;
    context_->cache->AttachKernelSide(PageCache::KernelSide{
        [control] { return control->MeasureTripUs(); }, [control] { control->SplitApplied(); }});
  }
  if (context_->watch != nullptr) context_->watch->Start();
}
void Filesystem::StopKernelCache() {
  // First: its trip probe needs the requests answered, and its hook reaches the parts below.
  if (context_->kernel != nullptr) context_->cache->AttachKernelSide({});
  if (context_->watch != nullptr) context_->watch->Stop();  // it queues invalidations
  if (context_->kernel != nullptr) context_->kernel->Stop();
}
void Filesystem::StartPersistence() {
  if (context_->persister != nullptr) context_->persister->Start();
}
void Filesystem::FinishPersistence() {
  if (context_->persister != nullptr) context_->persister->Finish();
}

void Filesystem::StopMissPool() {
  if (context_->misses == nullptr) return;
  context_->misses->Stop();
  LogInfo(fmt::format("misses in flight: at most {} reads waited for the store off the request "
                      "threads at once (misses_in_flight = {})",
                      context_->misses->peak(), context_->config.misses_in_flight));
}

}  // namespace ccfs
