#include "trace/memory_cgroup.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>

#include <fmt/format.h>

namespace ccfs {

namespace {

// Control files take one value per write(2); the kernel's answer is the write's result.
Status WriteValue(const std::string& path, const std::string& value) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return Status::FromErrno(errno, path);
  ssize_t n = ::write(fd, value.data(), value.size());
  int err = errno;
  ::close(fd);
  if (n != static_cast<ssize_t>(value.size())) return Status::FromErrno(err, path);
  return Status::Ok();
}

}  // namespace

Status MemoryCgroup::Create(uint64_t limit, std::unique_ptr<MemoryCgroup>* cgroup) {
  if (!std::filesystem::exists(std::filesystem::path(kRoot) / "memory.limit_in_bytes")) {
    return Status::NotSupported(fmt::format(
        "--memory needs the cgroup v1 memory controller mounted at {}", kRoot));
  }
  auto g = std::unique_ptr<MemoryCgroup>(new MemoryCgroup);
  g->path_ = fmt::format("{}/ccfs-replay-{}", kRoot, ::getpid());
  if (::mkdir(g->path_.c_str(), 0755) != 0 && errno != EEXIST) {
    return Status::FromErrno(errno, g->path_ + ": cannot create the memory cgroup");
  }
  g->created_ = true;
  Status s = WriteValue(g->path_ + "/memory.limit_in_bytes", std::to_string(limit));
  if (!s.ok()) return s;  // g's destructor removes the directory
  // Anonymous (1) and page-cache (2) charges follow a process that joins. Kernels without the
  // knob (it is deprecated) charge only what a process allocates after joining.
  WriteValue(g->path_ + "/memory.move_charge_at_immigrate", "3");
  *cgroup = std::move(g);
  return Status::Ok();
}

Status MemoryCgroup::AddProcess(pid_t pid) {
  Status s = WriteValue(path_ + "/cgroup.procs", std::to_string(pid));
  if (s.ok()) added_.push_back(pid);
  return s;
}

MemoryCgroup::~MemoryCgroup() {
  // A process that has exited since is gone from the cgroup already (the write fails, harmlessly).
  for (pid_t pid : added_) WriteValue(std::string(kRoot) + "/cgroup.procs", std::to_string(pid));
  if (created_) {
    WriteValue(path_ + "/memory.force_empty", "0");  // reclaim its page cache before removal
    ::rmdir(path_.c_str());
  }
}

}  // namespace ccfs
