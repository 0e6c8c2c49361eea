#include "fuse/log.h"

#include <syslog.h>
#include <unistd.h>

#include <atomic>

namespace ccfs {

namespace {
std::atomic<bool> g_syslog{false};
}  // namespace

void LogToSyslog() {
  openlog("ccfs", LOG_PID | LOG_NDELAY, LOG_DAEMON);
  g_syslog = true;
}

void LogLine(LogLevel level, const std::string& line) {
  if (g_syslog) {
    int priority = level == LogLevel::kError ? LOG_ERR
                   : level == LogLevel::kWarning ? LOG_WARNING : LOG_INFO;
    syslog(priority, "%s", line.c_str());
    return;
  }
  // One write(2) per line so lines from different threads never interleave.
  std::string text = "ccfs: " + line + "\n";
  [[maybe_unused]] ssize_t n = write(STDERR_FILENO, text.data(), text.size());
}

}  // namespace ccfs
