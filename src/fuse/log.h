// Daemon log: one line per event, to stderr while the daemon runs in the foreground (or before it
// detaches) and to syslog (facility daemon, ident "ccfs") once it has detached.
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

}  // namespace ccfs

#endif  // CCFS_FUSE_LOG_H_
