#include "fuse/log.h"

#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include <atomic>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>

#include "fuse/fuse_api.h"

namespace ccfs {

namespace {

std::atomic<bool> g_syslog{false};

int SyslogPriority(LogLevel level) {
  switch (level) {
    case LogLevel::kError:
      return LOG_ERR;
    case LogLevel::kWarning:
      return LOG_WARNING;
    case LogLevel::kInfo:
      break;
  }
  return LOG_INFO;
}

void FuseLog(enum fuse_log_level level, const char* fmt, va_list ap) {
  char buf[1024];
  vsnprintf(buf, sizeof(buf), fmt, ap);
  std::string line(buf);
  while (!line.empty() && line.back() == '\n') line.pop_back();
  if (line.empty()) return;
  LogLine(level <= FUSE_LOG_ERR       ? LogLevel::kError
          : level == FUSE_LOG_WARNING ? LogLevel::kWarning
                                      : LogLevel::kInfo,
          line);
}

}  // namespace

void RouteFuseLog() { fuse_set_log_func(FuseLog); }

void LogToSyslog() {
  openlog("ccfs", LOG_PID | LOG_NDELAY, LOG_DAEMON);
  g_syslog = true;
}

bool StderrIsJournal() {
  // systemd sets JOURNAL_STREAM for a service whose stderr (or stdout) is connected to the journal;
  // a child that inherits the variable but not the stream (a redirection) must not use prefixes,
  // hence the comparison with what fd 2 really is.
  const char* stream = getenv("JOURNAL_STREAM");
  if (stream == nullptr) return false;
  uintmax_t dev = 0, ino = 0;
  if (sscanf(stream, "%" SCNuMAX ":%" SCNuMAX, &dev, &ino) != 2) return false;
  struct stat st;
  if (fstat(STDERR_FILENO, &st) != 0) return false;
  return static_cast<uintmax_t>(st.st_dev) == dev && static_cast<uintmax_t>(st.st_ino) == ino;
}

void LogLine(LogLevel level, const std::string& line) {
  const int priority = SyslogPriority(level);
  if (g_syslog) {
    syslog(priority, "%s", line.c_str());
    return;
  }
  // The journal already names the program (SYSLOG_IDENTIFIER); the prefix carries the priority.
  std::string text = StderrIsJournal() ? "<" + std::to_string(priority) + ">" + line + "\n"
                                       : "ccfs: " + line + "\n";
  // One write(2) per line so lines from different threads never interleave.
  [[maybe_unused]] ssize_t n = write(STDERR_FILENO, text.data(), text.size());
}

}  // namespace ccfs
