#include "trace/memory_cgroup.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

namespace ccfs {

namespace {

constexpr const char kPrefix[] = "ccfs-replay-";

// The helpers below use system calls and stack buffers only (no allocation, no locks): the
// guardian runs them in a child forked from a process with threads, where nothing else is safe.

// dst = a + b, cut to the buffer.
void Join(char (&dst)[PATH_MAX], const char* a, const char* b) {
  size_t n = 0;
  for (const char* p = a; *p != '\0' && n + 1 < sizeof(dst); ++p) dst[n++] = *p;
  for (const char* p = b; *p != '\0' && n + 1 < sizeof(dst); ++p) dst[n++] = *p;
  dst[n] = '\0';
}

// Writes `value` to control file `path`: 0, or the errno. Control files take one value per
// write(2); the kernel's answer is the write's result.
int Put(const char* path, const char* value, size_t len) {
  int fd = ::open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  const ssize_t n = ::write(fd, value, len);
  const int err = n == static_cast<ssize_t>(len) ? 0 : (n < 0 ? errno : EIO);
  ::close(fd);
  return err;
}

// Put with its error named (not for the guardian: a Status allocates).
Status WriteValue(const std::string& path, const std::string& value) {
  const int err = Put(path.c_str(), value.data(), value.size());
  return err == 0 ? Status::Ok() : Status::FromErrno(err, path);
}

// Moves every process left in cgroup `dir` to the root cgroup, has the kernel reclaim the page
// cache charged to it (memory.force_empty) and removes it. A process that exits meanwhile is gone
// from the list already; one that joins meanwhile is moved on the next pass.
void Dismantle(const char* dir) {
  char procs[PATH_MAX], root_procs[PATH_MAX], path[PATH_MAX];
  Join(procs, dir, "/cgroup.procs");
  Join(root_procs, MemoryCgroup::kRoot, "/cgroup.procs");
  for (int pass = 0; pass < 8; ++pass) {
    int fd = ::open(procs, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;  // removed already
    char text[4096];
    ssize_t n = ::read(fd, text, sizeof(text));
    ::close(fd);
    if (n <= 0) break;  // empty
    for (ssize_t start = 0, i = 0; i < n; ++i) {
      if (text[i] != '\n') continue;
      if (i > start) Put(root_procs, text + start, static_cast<size_t>(i - start));
      start = i + 1;
    }
  }
  Join(path, dir, "/memory.force_empty");
  Put(path, "0", 1);
  ::rmdir(dir);
}

// The guardian: a child outside the cgroup that waits for this process to end and then
// dismantles the cgroup. A replay ended by a signal (kill -9, the cgroup's own OOM killer) runs
// no destructor; without the guardian its cgroup would stay, holding a kernel-mode mount's daemon
// to the replay's limit. Returns its pid, or -1 (the cgroup then relies on the destructor and on
// the next replay's sweep).
pid_t StartGuardian(const std::string& dir) {
  const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, ::getpid(), 0));
  if (pidfd < 0) return -1;
  char path[PATH_MAX];
  Join(path, dir.c_str(), "");
  const pid_t child = ::fork();
  if (child != 0) {
    ::close(pidfd);
    return child;
  }
  // Nothing of the replay's stays open here: its files on a mount would keep the mount busy, and
  // its output pipes would keep a caller waiting for their end.
  if (pidfd > 0) ::syscall(SYS_close_range, 0, pidfd - 1, 0);
  ::syscall(SYS_close_range, pidfd + 1, ~0U, 0);
  struct sigaction ignore;
  std::memset(&ignore, 0, sizeof(ignore));
  ignore.sa_handler = SIG_IGN;
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE}) ::sigaction(sig, &ignore, nullptr);
  sigset_t none;
  ::sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  struct pollfd p = {pidfd, POLLIN, 0};
  while (::poll(&p, 1, -1) < 0 && errno == EINTR) {
  }
  Dismantle(path);
  ::_exit(0);
}

// Removes the cgroups of replays that ended without removing theirs (their guardian killed with
// them): a ccfs-replay-PID whose PID no longer runs. A PID reused since keeps its cgroup until
// the process now holding it ends.
void SweepAbandoned() {
  DIR* root = ::opendir(MemoryCgroup::kRoot);
  if (root == nullptr) return;
  const size_t prefix = std::strlen(kPrefix);
  while (dirent* e = ::readdir(root)) {
    if (std::strncmp(e->d_name, kPrefix, prefix) != 0) continue;
    char* end = nullptr;
    const long pid = std::strtol(e->d_name + prefix, &end, 10);
    if (end == e->d_name + prefix || *end != '\0' || pid <= 0) continue;
    if (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;
    char dir[PATH_MAX];
    Join(dir, MemoryCgroup::kRoot, "/");
    char full[PATH_MAX];
    Join(full, dir, e->d_name);
    Dismantle(full);
  }
  ::closedir(root);
}

}  // namespace

Status MemoryCgroup::Create(uint64_t limit, std::unique_ptr<MemoryCgroup>* cgroup) {
  if (!std::filesystem::exists(std::filesystem::path(kRoot) / "memory.limit_in_bytes")) {
    return Status::NotSupported(fmt::format(
        "--memory needs the cgroup v1 memory controller mounted at {}", kRoot));
  }
  SweepAbandoned();
  auto g = std::unique_ptr<MemoryCgroup>(new MemoryCgroup);
  g->path_ = fmt::format("{}/{}{}", kRoot, kPrefix, ::getpid());
  if (::mkdir(g->path_.c_str(), 0755) != 0 && errno != EEXIST) {
    return Status::FromErrno(errno, g->path_ + ": cannot create the memory cgroup");
  }
  g->created_ = true;
  Status s = WriteValue(g->path_ + "/memory.limit_in_bytes", std::to_string(limit));
  if (!s.ok()) return s;  // g's destructor removes the directory
  // Anonymous (1) and page-cache (2) charges follow a process that joins. Kernels without the
  // knob (it is deprecated) charge only what a process allocates after joining.
  WriteValue(g->path_ + "/memory.move_charge_at_immigrate", "3");
  // Forked before anything joins, so the guardian is charged to (and held by) none of it.
  g->guardian_ = StartGuardian(g->path_);
  *cgroup = std::move(g);
  return Status::Ok();
}

Status MemoryCgroup::AddProcess(pid_t pid) {
  return WriteValue(path_ + "/cgroup.procs", std::to_string(pid));
}

MemoryCgroup::~MemoryCgroup() {
  if (created_) Dismantle(path_.c_str());
  if (guardian_ > 0) {
    ::kill(guardian_, SIGKILL);
    while (::waitpid(guardian_, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
}

}  // namespace ccfs
