#include "client/mount_client.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <future>
#include <memory>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ccfs/mount_protocol.h"
#include "stats/stats_json.h"

namespace ccfs {

namespace {

std::string InControlDir(const std::string& mountpoint, const char* name) {
  return fmt::format("{}/{}/{}", mountpoint, kControlDirName, name);
}

// Reads `fd` from its current offset to end of file.
Status ReadToEnd(int fd, const std::string& path, std::string* text) {
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::FromErrno(errno, path + ": read");
    if (n == 0) return Status::Ok();
    text->append(buf, static_cast<size_t>(n));
  }
}

// The daemon's answer to the write just made on `fd`; empty if it gives none (an older daemon).
std::string ReadReply(int fd) {
  std::string reply;
  char buf[4096];
  for (off_t offset = 0;;) {
    ssize_t n = ::pread(fd, buf, sizeof(buf), offset);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    reply.append(buf, static_cast<size_t>(n));
    offset += n;
  }
  return reply;
}

// "a=1\nb=2\n" -> "a=1, b=2", for a message on one line.
std::string OneLine(const std::string& lines) {
  std::string out;
  size_t start = 0;
  while (start < lines.size()) {
    size_t end = lines.find('\n', start);
    if (end == std::string::npos) end = lines.size();
    if (end > start) {
      if (!out.empty()) out += ", ";
      out.append(lines, start, end - start);
    }
    start = end + 1;
  }
  return out;
}

}  // namespace

std::string MountStatsPath(const std::string& mountpoint) {
  return InControlDir(mountpoint, kStatsFileName);
}

std::string MountControlPath(const std::string& mountpoint) {
  return InControlDir(mountpoint, kControlFileName);
}

bool IsCcfsMount(const std::string& path) {
  struct stat st;
  return ::stat(MountStatsPath(path).c_str(), &st) == 0;
}

Status CheckMount(const std::string& mountpoint) {
  struct stat st;
  if (::stat(mountpoint.c_str(), &st) != 0) {
    int err = errno;
    if (err == ENOTCONN) {
      return Status::IOError(err, mountpoint + ": the ccfs daemon is gone; unmount with "
                                  "`fusermount3 -u " + mountpoint + "`");
    }
    return Status::FromErrno(err, mountpoint);
  }
  if (!S_ISDIR(st.st_mode)) {
    return Status::InvalidArgument(mountpoint + " is not a directory, so not a ccfs mount");
  }
  const std::string path = MountStatsPath(mountpoint);
  if (::stat(path.c_str(), &st) != 0) {
    int err = errno;
    if (err == ENOENT || err == ENOTDIR) {
      return Status::NotFound(fmt::format("{} is not a ccfs mount (it has no {}/{})", mountpoint,
                                          kControlDirName, kStatsFileName));
    }
    return Status::FromErrno(err, path);
  }
  return Status::Ok();
}

Status ReadMountStats(const std::string& mountpoint, CacheStats* stats, double* uptime_s) {
  Status s = CheckMount(mountpoint);
  if (!s.ok()) return s;
  return ReadMountStatsFile(mountpoint, stats, uptime_s);
}

Status ReadMountStatsFile(const std::string& mountpoint, CacheStats* stats, double* uptime_s) {
  const std::string path = MountStatsPath(mountpoint);
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::FromErrno(errno, path);
  // Read to end of file rather than trusting st_size: the daemon renders the document when the
  // file is opened, and the size it reported to a stat() before that may be stale.
  std::string text;
  Status s = ReadToEnd(fd, path, &text);
  ::close(fd);
  if (!s.ok()) return s;
  s = ParseStatsJson(text, stats);
  if (!s.ok()) return Status::InvalidArgument(path + ": " + s.message());
  if (uptime_s != nullptr) {
    *uptime_s = 0;
    nlohmann::json doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (doc.is_object() && doc.contains(kStatsDaemonKey) && doc[kStatsDaemonKey].is_object()) {
      const nlohmann::json& daemon = doc[kStatsDaemonKey];
      auto uptime = daemon.find(kStatsDaemonUptimeKey);
      if (uptime != daemon.end() && uptime->is_number()) *uptime_s = uptime->get<double>();
    }
  }
  return Status::Ok();
}

pid_t ReadDaemonPid(const std::string& mountpoint, std::chrono::milliseconds timeout) {
  auto read_pid = [path = MountStatsPath(mountpoint)]() -> long {
    std::ifstream in(path);
    if (!in) return 0;
    nlohmann::json doc = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
    if (!doc.is_object() || !doc.contains(kStatsDaemonKey)) return 0;
    const nlohmann::json& daemon = doc[kStatsDaemonKey];
    if (!daemon.is_object()) return 0;
    return daemon.value(kStatsDaemonPidKey, 0L);
  };
  // The thread is detached: if the daemon never answers, it stays blocked in open() until the
  // mount goes away, and the caller moves on.
  auto task = std::make_shared<std::packaged_task<long()>>(read_pid);
  std::future<long> result = task->get_future();
  std::thread([task] { (*task)(); }).detach();
  if (result.wait_for(timeout) != std::future_status::ready) return 0;
  return static_cast<pid_t>(result.get());
}

Status ControlRefusal(const std::string& sent, const std::string& reply) {
  const std::string prefix = kControlErrorPrefix;
  if (reply.compare(0, prefix.size(), prefix) == 0) {
    std::string message = reply.substr(prefix.size());
    while (!message.empty() && (message.back() == '\n' || message.back() == '\r')) {
      message.pop_back();
    }
    if (!message.empty()) return Status::InvalidArgument(message);
  }
  return Status::InvalidArgument("refused by the daemon (EINVAL): " + OneLine(sent));
}

Status ApplyLiveSettings(const std::string& mountpoint, const std::vector<LiveSetting>& settings) {
  Status s;
  std::string text;
  for (const LiveSetting& setting : settings) text += setting.key + "=" + setting.value + "\n";

  // Read-write: the daemon's answer to the write is read back on the same descriptor.
  const std::string control = MountControlPath(mountpoint);
  int fd = ::open(control.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return Status::FromErrno(errno, control);
  ssize_t n;
  do {
    n = ::write(fd, text.data(), text.size());
  } while (n < 0 && errno == EINTR);
  const int err = errno;
  if (n < 0 && err == EINVAL) {
    s = ControlRefusal(text, ReadReply(fd));
  } else if (n < 0) {
    s = Status::FromErrno(err, control);
  } else if (static_cast<size_t>(n) != text.size()) {
    s = Status::IOError(0, fmt::format("{}: only {} of {} bytes were taken", control, n,
                                       text.size()));
  }
  ::close(fd);
  return s;
}

}  // namespace ccfs
