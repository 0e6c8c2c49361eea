// Daemon log: one line per event, to stderr while the daemon runs in the foreground (or before it
// detaches) and to syslog (facility daemon, ident "ccfs") once it has detached.
//
// On stderr a line reads "ccfs: <event>", unless stderr is the systemd journal (a service running
// `ccfs mount -f`): then it reads "<N><event>", N being the syslog priority as sd-daemon(3)
// spells it (<3> error, <4> warning, <6> info), which journald strips and keeps as the entry's
// priority. stderr counts as the journal when JOURNAL_STREAM names its device and inode, as
// systemd.exec(5) documents; a stderr redirected elsewhere by the service keeps the plain form.
//
// Thread-safety: LogLine may be called from any thread; each line is written with one call.
#ifndef CCFS_FUSE_LOG_H_
#define CCFS_FUSE_LOG_H_

#include <string>

namespace ccfs {

enum class LogLevel { kInfo, kWarning, kError };

// From now on, log to syslog instead of stderr.
void LogToSyslog();
void LogLine(LogLevel level, const std::string& line);
inline void LogInfo(const std::string& line) { LogLine(LogLevel::kInfo, line); }
inline void LogWarning(const std::string& line) { LogLine(LogLevel::kWarning, line); }
inline void LogError(const std::string& line) { LogLine(LogLevel::kError, line); }

// From now on libfuse's own messages (its mount and unmount, its session) are daemon log lines
// too, at their libfuse level: under the journal every line then carries its priority.
void RouteFuseLog();

// True when stderr is the stream JOURNAL_STREAM names ("DEVICE:INODE", both decimal). Read at
// each call: the variable and stderr may change (a test, a daemon that detaches).
bool StderrIsJournal();

}  // namespace ccfs

#endif  // CCFS_FUSE_LOG_H_
