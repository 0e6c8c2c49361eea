// Why the daemon forks before anything else starts: PageCache and the request loop start threads,
// and a process with threads cannot fork safely. So the parent only parses, resolves and checks
// (all of which can fail with a clear message and nothing mounted), forks, and then waits on a
// pipe; the child builds the cache, mounts, starts serving and only then writes one byte to the
// pipe. The parent's exit status therefore means "mounted and serving" or "not mounted", which
// is what mount(8) and fstab need. Until the byte is written the child's stderr is still the
// caller's terminal, so its own errors reach the user directly.
//
// Signals: TERM, INT, HUP and USR1 are blocked while the daemon's threads are created (they
// inherit the mask), then unblocked in the main thread only, whose handlers write the signal
// number to a pipe that the main thread polls beside the request loop's done_fd (so an unmount
// from outside ends the daemon as promptly as a signal does). A signalfd would be neater but is
// not enough: liburcu starts a helper thread that leaves SIGUSR1 unblocked, so a blocked-only
// SIGUSR1 would be delivered there with its default action and kill the daemon.
#include "fuse/daemon.h"

#define FUSE_USE_VERSION FUSE_MAKE_VERSION(3, 14)
#include <fcntl.h>
#include <fmt/format.h>
#include <fuse3/fuse_lowlevel.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include "backing/sftp_store.h"
#include "ccfs/config.h"
#include "ccfs/page_cache.h"
#include "config/listen_address.h"
#include "config/memory_bound.h"
#include "fuse/control_dir.h"
#include "fuse/descriptor_limit.h"
#include "fuse/filesystem.h"
#include "fuse/log.h"
#include "fuse/metrics_server.h"
#include "fuse/mount_preflight.h"
#include "fuse/mount_readahead.h"
#include "fuse/request_loop.h"
#include "fuse/session_io.h"
#include "fuse/uring_transport.h"
#include "stats/prometheus.h"
#include "util/cpus.h"

namespace ccfs {

namespace {

// Written by the signal handlers, read by the main thread.
int g_signal_pipe[2] = {-1, -1};

void ForwardSignal(int sig) {
  int saved = errno;
  unsigned char s = static_cast<unsigned char>(sig);
  [[maybe_unused]] ssize_t n = write(g_signal_pipe[1], &s, 1);
  errno = saved;
}

constexpr int kHandledSignals[] = {SIGTERM, SIGINT, SIGHUP, SIGUSR1};

// Both config entry points validate what they return (config.h), so the result needs no check.
Status LoadOptions(const DaemonArgs& args, Options* options, std::vector<std::string>* passthrough) {
  Options o = MountDefaults();
  Status s = LoadConfigAndOptionLists(args.config_file, args.option_lists, &o, passthrough);
  if (s.ok()) *options = o;
  return s;
}

// INIT flags libfuse 3.14 cannot ask for (src/fuse/session_io.h): shared mappings of direct_io
// files (read-only ones are what programs need; docs/OPERATING.md says what writable ones do),
// and the kernel telling, per write, truncate and O_TRUNC, whether the caller may keep
// set-user-ID and set-group-ID bits (src/fuse/kill_priv.h).
constexpr uint64_t kExtraInitFlags = kInitDirectIoAllowMmap | kInitHandleKillprivV2;

// fstab-only words that mean nothing to FUSE (mount(8) may hand them on).
bool IsFstabOnlyOption(const std::string& opt) {
  static const char* const kWords[] = {"auto", "noauto", "user", "users", "nouser",
                                       "nofail", "_netdev", "defaults", "owner", "group"};
  for (const char* w : kWords) {
    if (opt == w) return true;
  }
  return opt.rfind("x-", 0) == 0 || opt.rfind("comment=", 0) == 0;
}

// Commas and backslashes inside one -o value must be escaped for libfuse's option parser.
std::string EscapeOptionValue(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == ',' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

std::string FuseMountOptions(const Options& options, const std::vector<std::string>& passthrough,
                             const std::string& dataset) {
  std::vector<std::string> opts;
  bool has_fsname = false, has_subtype = false, allow_other = options.allow_other;
  for (const std::string& o : passthrough) {
    if (IsFstabOnlyOption(o)) continue;
    has_fsname |= o.rfind("fsname=", 0) == 0;
    has_subtype |= o.rfind("subtype=", 0) == 0;
    if (o == "allow_other") {
      allow_other = true;
      continue;
    }
    opts.push_back(o);
  }
  if (!has_fsname) opts.push_back("fsname=" + EscapeOptionValue(dataset));
  if (!has_subtype) opts.push_back("subtype=ccfs");
  if (allow_other) {
    // Other users reach the daemon, which runs with its own credentials: the kernel must check
    // permissions against the files' modes before passing their requests on.
    opts.push_back("allow_other");
    opts.push_back("default_permissions");
  }
  std::string joined;
  for (const std::string& o : opts) joined += (joined.empty() ? "" : ",") + o;
  return joined;
}

// persist = DIR: an existing directory outside the mount point (the daemon must never reach its
// own mount) and outside DATASET (the cache file is not data). Sets *resolved to its absolute
// path, resolved now, before the daemon leaves its working directory. Errors name the key.
Status ResolvePersistDir(const std::string& dir, const std::string& dataset,
                         const std::string& mountpoint, std::string* resolved) {
  char buf[PATH_MAX];
  if (realpath(dir.c_str(), buf) == nullptr) {
    return Status::InvalidArgument("persist = " + dir + ": " + std::strerror(errno));
  }
  struct stat st;
  if (stat(buf, &st) != 0 || !S_ISDIR(st.st_mode)) {
    return Status::InvalidArgument("persist = " + dir + ": not a directory");
  }
  const std::string path = buf;
  for (const std::string* inside : {&mountpoint, &dataset}) {
    if (path == *inside || path.rfind(*inside + "/", 0) == 0) {
      return Status::InvalidArgument("persist = " + dir + ": inside " +
                                     (inside == &mountpoint ? "the mount point " : "DATASET ") +
                                     *inside + "; give a directory of the daemon's own");
    }
  }
  *resolved = path;
  return Status::Ok();
}

// Everything after the fork (or in the foreground): build, mount, serve, unmount.
class Daemon {
 public:
  Daemon(const DaemonArgs& args, const Options& options, std::vector<std::string> passthrough,
         std::string dataset, std::string mountpoint, std::string persist_dir, int ready_fd)
      : args_(args), options_(options), passthrough_(std::move(passthrough)),
        dataset_(std::move(dataset)), mountpoint_(std::move(mountpoint)),
        persist_dir_(std::move(persist_dir)), ready_fd_(ready_fd) {}

  int Run() {
    sigset_t signals;
    sigemptyset(&signals);
    for (int sig : kHandledSignals) sigaddset(&signals, sig);
    pthread_sigmask(SIG_BLOCK, &signals, nullptr);
    if (pipe2(g_signal_pipe, O_CLOEXEC | O_NONBLOCK) != 0) return Fail(Status::FromErrno(errno, "pipe"));
    signal_pipe_fd_ = g_signal_pipe[0];
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = ForwardSignal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    for (int sig : kHandledSignals) sigaction(sig, &sa, nullptr);
    // Modes arrive with the caller's umask already applied by the kernel.
    umask(0);

    Status s = PageCache::Create(options_, &cache_);
    if (!s.ok()) return Fail(s);
    Filesystem::Config fs_config;
    fs_config.dataset = dataset_;
    fs_config.mountpoint = mountpoint_;
    fs_config.attr_timeout = options_.attr_timeout;
    fs_config.entry_timeout = options_.entry_timeout;
    fs_config.negative_timeout = options_.negative_timeout;
    fs_config.readdirplus = options_.readdirplus;
    fs_config.close_to_open = options_.close_to_open;
    fs_config.passthrough = options_.passthrough && options_.kernel_raw_tier();
    // The last of `ro` and `rw` in the options is the kernel's, as mount(8) has it.
    for (const std::string& o : passthrough_) {
      if (o == "ro" || o == "rw") fs_config.read_only = o == "ro";
    }
    s = OpenSftp(fs_config.read_only, &fs_config.sftp);
    if (!s.ok()) return Fail(s);
    fs_config.misses_in_flight = options_.misses_in_flight;
    fs_config.request_threads = options_.request_threads;
    fs_config.persist_dir = persist_dir_;
    std::string descriptors;
    s = ChooseDescriptorBound(options_.max_open_files, &fs_config.max_open_files, &descriptors);
    if (!s.ok()) return Fail(s);
    LogInfo(descriptors);
    s = Filesystem::Create(fs_config, cache_.get(), &fs_);
    if (!s.ok()) return Fail(s);
    // Before the mount, so an address the daemon cannot listen on leaves nothing mounted.
    s = StartMetrics();
    if (!s.ok()) return Fail(s);

    // And the transport: a ring the kernel refuses leaves nothing mounted, not a mount that comes
    // and goes (a reader that saw it would take it for a mount that worked).
    bool use_uring = false;
    s = ChooseTransport(&use_uring);
    if (!s.ok()) return Fail(s);

    std::string mount_opts = FuseMountOptions(options_, passthrough_, dataset_);
    std::vector<std::string> argv_s = {"ccfs", "-o", mount_opts};
    std::vector<char*> argv;
    for (auto& a : argv_s) argv.push_back(a.data());
    fuse_args fargs = FUSE_ARGS_INIT(static_cast<int>(argv.size()), argv.data());
    RouteFuseLog();
    session_ = fuse_session_new(&fargs, &Filesystem::Ops(), sizeof(fuse_lowlevel_ops),
                                fs_->userdata());
    fuse_opt_free_args(&fargs);
    if (session_ == nullptr) {
      return Fail(Status::InvalidArgument("cannot start a FUSE session with options " + mount_opts));
    }
    if (fuse_session_mount(session_, mountpoint_.c_str()) != 0) {
      fuse_session_destroy(session_);
      session_ = nullptr;
      return Fail(Status::IOError(0, "cannot mount on " + mountpoint_));
    }
    s = InstallSessionIo(session_, kExtraInitFlags | (use_uring ? kInitOverIoUring : 0) |
                                       (options_.passthrough ? kInitPassthrough : 0));
    if (!s.ok()) {
      Shutdown();
      return Fail(s);
    }
    RequestLoopConfig loop_config;
    loop_config.kind = RequestLoopKind::kFixedThreads;
    loop_config.threads = options_.request_threads;
    if (options_.pin_threads) loop_config.cpus = SplitCpus(options_.compress_threads).request;
    loop_config.cpu = fs_->request_cpu();
    loop_ = std::make_unique<RequestLoop>(session_, loop_config);
    s = loop_->Start();
    if (s.ok() && use_uring) s = StartUring();
    if (!s.ok()) {
      Shutdown();
      return Fail(s);
    }
    fs_->StartKernelCache(session_);
    if (options_.kernel_raw_tier()) WidenKernelReadahead();
    if (ready_fd_ >= 0) Detach();
    // Every thread of ours exists now and blocks these signals; take them here.
    pthread_sigmask(SIG_UNBLOCK, &signals, nullptr);
    LogInfo(fmt::format("serving {} at {} (memory={}, compressed_percent={}, page_size={}, "
                        "raw_tier={}, compressor={}, request_threads={}, transport={})",
                        dataset_, mountpoint_, FormatSize(options_.memory),
                        options_.compressed_percent, FormatSize(options_.page_size),
                        options_.raw_tier,
                        CodecName(options_.compressor), options_.request_threads,
                        uring_ != nullptr ? "uring" : "dev"));
    if (metrics_ != nullptr) LogInfo("metrics at " + metrics_url_);
    fs_->StartPersistence();

    int rc = WaitForEnd();
    Shutdown();
    LogInfo("unmounted " + mountpoint_);
    return rc;
  }

 private:
  int Fail(const Status& s) {
    LogError(s.ToString());
    return 1;
  }

  // sftp: the connections to the server DATASET's files are read from, or none with the key off.
  // A mount that is not read-only is refused: sshfs acknowledges a write before its server has it
  // (backing/sftp_store.h), so a read over SFTP right after one could cache the old bytes.
  Status OpenSftp(bool read_only, std::shared_ptr<SftpPool>* pool) {
    if (options_.sftp.empty()) return Status::Ok();
    if (!read_only) {
      return Status::InvalidArgument(
          "sftp = " + options_.sftp + ": needs a read-only mount (-o ro): sshfs acknowledges a "
          "write before its server has it, and a read over SFTP right after it could cache the "
          "old bytes");
    }
    SftpTarget target;
    Status s;
    if (options_.sftp == "auto") {
      std::ifstream in("/proc/mounts");
      std::stringstream mounts;
      mounts << in.rdbuf();
      s = SftpTargetOfMount(dataset_, mounts.str(), &target);
    } else {
      s = ParseSftpTarget(options_.sftp, &target);
    }
    if (!s.ok()) return s;
    if (!options_.ssh_config.empty()) {
      std::error_code ec;
      target.ssh_config = std::filesystem::absolute(options_.ssh_config, ec).string();
      if (ec || access(target.ssh_config.c_str(), R_OK) != 0) {
        return Status::InvalidArgument("ssh_config = " + options_.ssh_config +
                                       ": not a readable file");
      }
    }
    std::unique_ptr<SftpPool> made;
    s = SftpPool::Open(target, options_.sftp_connections, LogWarning, &made);
    if (!s.ok()) return s;
    LogInfo(fmt::format("sftp: misses read from {} over {} connection{}", target.ToString(),
                        options_.sftp_connections, options_.sftp_connections == 1 ? "" : "s"));
    *pool = std::move(made);
    return Status::Ok();
  }

  // transport = dev: no ring. uring: the ring, or the mount fails saying what the kernel lacks.
  // auto: the ring if the kernel allows it, else dev, said once in the log.
  Status ChooseTransport(bool* use_uring) {
    *use_uring = false;
    if (options_.transport == "dev") return Status::Ok();
    Status s = UringAvailable();
    *use_uring = s.ok();
    if (s.ok()) return s;
    if (options_.transport == "auto") {
      LogInfo("transport = auto: serving /dev/fuse: " + s.message());
      return Status::Ok();
    }
    return Status::NotSupported("transport = uring: " + s.message() + "; or use transport = dev");
  }

  // After INIT: the rings, if the kernel agreed to them. Once INIT has asked for the ring the
  // kernel holds requests until it is registered, so a failure here must end the mount.
  Status StartUring() {
    InitResult init;
    if (!WaitForInit(10000, &init)) {
      return Status::IOError(ETIMEDOUT, "transport: the kernel's INIT did not arrive within 10 s");
    }
    if (init.error != 0 || (init.added & kInitOverIoUring) == 0) {
      std::string why = "the kernel did not offer FUSE over io_uring in INIT (was "
                        "/sys/module/fuse/parameters/enable_uring turned off meanwhile?)";
      if (options_.transport == "auto") {
        LogInfo("transport = auto: serving /dev/fuse: " + why);
        return Status::Ok();
      }
      return Status::NotSupported("transport = uring: " + why);
    }
    UringTransportConfig config;
    config.max_write = init.max_write;
    config.max_pages = init.max_pages;
    config.cpu = fs_->request_cpu();
    uring_ = std::make_unique<UringTransport>(session_, config);
    Status s = uring_->Start();
    if (s.ok()) return s;
    const bool fall_back = options_.transport == "auto" && uring_->refused_by_kernel();
    uring_.reset();
    if (!fall_back) return Status::IOError(0, "transport = uring: " + s.message());
    LogInfo("transport = auto: serving /dev/fuse: " + s.message());
    return Status::Ok();
  }

  // raw_tier = kernel: the kernel's read-ahead window follows the `readahead` key (a stream's
  // read-ahead reaches the daemon as requests of up to max_pages: fuse/mount_readahead.h). Without
  // it (not root, INIT not answered) the kernel's window stays.
  void WidenKernelReadahead() {
    InitResult init;
    if (!WaitForInit(10000, &init) || init.error != 0) return;
    const uint64_t bytes = options_.kernel_readahead();
    Status s = SetMountReadahead(mountpoint_, bytes);
    if (!s.ok()) {
      LogInfo("raw_tier = kernel: the kernel's read-ahead window is kept: " + s.ToString());
      return;
    }
    LogInfo(fmt::format("raw_tier = kernel: read-ahead {}{} (max_pages {})", FormatSize(bytes),
                        bytes < options_.readahead
                            ? fmt::format(" (readahead = {}, at most 1/{} of the kernel's share)",
                                          FormatSize(options_.readahead),
                                          Options::kKernelReadaheadShare)
                            : "",
                        init.max_pages));
  }

  // The `metrics` key: the Prometheus endpoint, if set. Its errors name the key and address.
  Status StartMetrics() {
    if (options_.metrics.empty()) return Status::Ok();
    ListenAddress address;
    Status s = ParseListenAddress(options_.metrics, &address);  // validated: cannot fail
    if (s.ok()) s = MetricsServer::Start(address, [this] { return RenderMetrics(); }, &metrics_);
    if (!s.ok()) {
      return Status::InvalidArgument("metrics = " + options_.metrics + ": " + s.ToString());
    }
    metrics_url_ = "http://" + address.ToString() + "/metrics";
    return Status::Ok();
  }

  // Runs on the metrics server's threads: fs_ and the strings it reads outlive the server
  // (Shutdown stops it first).
  std::string RenderMetrics() const {
    return RenderPrometheus(fs_->control().Stats(),
                            DaemonIdentity::Now(dataset_, mountpoint_, started_), CCFS_VERSION,
                            fs_->Requests());
  }

  // Tells the waiting parent the mount is ready and cuts the daemon loose from the terminal.
  void Detach() {
    char ok = '1';
    [[maybe_unused]] ssize_t n = write(ready_fd_, &ok, 1);
    close(ready_fd_);
    ready_fd_ = -1;
    int null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null_fd >= 0) {
      dup2(null_fd, STDIN_FILENO);
      dup2(null_fd, STDOUT_FILENO);
      dup2(null_fd, STDERR_FILENO);
      close(null_fd);
    }
    LogToSyslog();
    [[maybe_unused]] int r = chdir("/");
  }

  // Serves signals until the mount goes away; returns the exit code.
  int WaitForEnd() {
    pollfd fds[2] = {{signal_pipe_fd_, POLLIN, 0}, {loop_->done_fd(), POLLIN, 0}};
    while (true) {
      if (poll(fds, 2, -1) < 0) {
        // 512-516 are the kernel's restart codes (ERESTARTSYS .. ERESTART_RESTARTBLOCK): a
        // debugger that attaches and runs code in the process can let one reach user space. Like
        // EINTR they mean "not done, call again", not that the mount is gone.
        if (errno == EINTR || (errno >= 512 && errno <= 516)) continue;
        LogError(fmt::format("poll: {}", strerror(errno)));
        return 1;
      }
      if (fds[1].revents & POLLIN) {
        Status s = loop_->result();
        if (!s.ok()) {
          LogError(s.ToString());
          return 1;
        }
        return 0;  // unmounted from outside
      }
      if (!(fds[0].revents & POLLIN)) continue;
      unsigned char signo;
      if (read(signal_pipe_fd_, &signo, 1) != 1) continue;
      switch (signo) {
        case SIGTERM:
        case SIGINT:
          LogInfo(fmt::format("{}: unmounting {}", strsignal(signo), mountpoint_));
          return 0;
        case SIGHUP:
          Reload();
          break;
        case SIGUSR1:
          LogInfo(fs_->control().StatsLine());
          break;
      }
    }
  }

  void Reload() {
    if (args_.config_file.empty() && args_.option_lists.empty()) {
      LogInfo("SIGHUP: no --config file to re-read");
      return;
    }
    Options wanted;
    std::vector<std::string> ignored;
    Status s = LoadOptions(args_, &wanted, &ignored);
    if (!s.ok()) {
      LogError("SIGHUP: " + s.ToString() + "; settings unchanged");
      return;
    }
    std::vector<std::string> needs_remount;
    std::string source = "SIGHUP " + (args_.config_file.empty() ? "-o" : args_.config_file);
    fs_->control().ApplyLiveOptions(wanted, source, &needs_remount);
  }

  void Shutdown() {
    metrics_.reset();  // joins its threads; it reads cache_
    // While requests are still answered: an invalidation may wait for a READ's reply.
    if (fs_ != nullptr) fs_->StopKernelCache();
    // Before the transports: its reads reply through them (a ring's entry is committed by its
    // queue's thread). Reads that come after are answered on the request threads.
    if (fs_ != nullptr) fs_->StopMissPool();
    if (uring_ != nullptr) uring_->Stop();
    if (loop_ != nullptr) loop_->Stop();
    if (session_ != nullptr) {
      fuse_session_unmount(session_);
      fuse_session_destroy(session_);
      session_ = nullptr;
    }
    loop_.reset();
    // No request is served any more: the cache file holds what the tiers hold at the end.
    if (fs_ != nullptr) fs_->FinishPersistence();
    fs_.reset();
    cache_.reset();
    // The pipe stays open: a late signal must still find somewhere to write.
  }

  const DaemonArgs args_;
  const Options options_;
  const std::vector<std::string> passthrough_;
  const std::string dataset_;
  const std::string mountpoint_;
  const std::string persist_dir_;  // persist, resolved; "" = off
  int ready_fd_;
  int signal_pipe_fd_ = -1;
  std::unique_ptr<PageCache> cache_;
  std::unique_ptr<Filesystem> fs_;
  fuse_session* session_ = nullptr;
  std::unique_ptr<RequestLoop> loop_;
  std::unique_ptr<UringTransport> uring_;
  std::unique_ptr<MetricsServer> metrics_;
  std::string metrics_url_;
  const std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
};

}  // namespace

int RunDaemon(const DaemonArgs& given) {
  DaemonArgs args = given;
  auto fail = [](const Status& s) {
    fprintf(stderr, "ccfs mount: %s\n", s.ToString().c_str());
    return 1;
  };
  // The daemon leaves its working directory once detached: keep the config file reachable.
  if (!args.config_file.empty()) {
    std::error_code ec;
    std::filesystem::path abs = std::filesystem::absolute(args.config_file, ec);
    if (!ec) args.config_file = abs.string();
  }
  Options options;
  std::vector<std::string> passthrough;
  Status s = LoadOptions(args, &options, &passthrough);
  if (!s.ok()) return fail(s);
  // Before anything is allocated or mounted: a budget the machine or the memory cgroup cannot
  // hold would end in an OOM killer (config/memory_bound.h).
  s = CheckMemoryFits(options, HostMemory::Read());
  if (!s.ok()) return fail(s);
  std::string dataset, mountpoint;
  s = PrepareMountPaths(args.dataset, args.mountpoint, &dataset, &mountpoint);
  if (!s.ok()) return fail(s);
  std::string persist_dir;
  if (!options.persist.empty()) {
    s = ResolvePersistDir(options.persist, dataset, mountpoint, &persist_dir);
    if (!s.ok()) return fail(s);
  }

  int ready_fd = -1;
  if (!args.foreground) {
    int pipe_fds[2];
    if (pipe2(pipe_fds, O_CLOEXEC) != 0) return fail(Status::FromErrno(errno, "pipe"));
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) return fail(Status::FromErrno(errno, "fork"));
    if (pid > 0) {
      close(pipe_fds[1]);
      char c = 0;
      ssize_t n;
      do {
        n = read(pipe_fds[0], &c, 1);
      } while (n < 0 && errno == EINTR);
      close(pipe_fds[0]);
      if (n == 1 && c == '1') return 0;
      int status;
      waitpid(pid, &status, 0);
      return 1;  // the child said why on stderr
    }
    close(pipe_fds[0]);
    ready_fd = pipe_fds[1];
    setsid();
  }
  Daemon daemon(args, options, std::move(passthrough), dataset, mountpoint, persist_dir, ready_fd);
  return daemon.Run();
}

}  // namespace ccfs
