// The daemon's stderr lines: "ccfs: <event>" on a terminal or file, "<N><event>" (sd-daemon
// priority prefixes) when stderr is the journal stream JOURNAL_STREAM names.
#include "fuse/log.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include <gtest/gtest.h>

#include "fuse/fuse_api.h"
#include "testing/command.h"

namespace ccfs {
namespace {

// Points stderr at a fresh temporary file for the test's lifetime and restores it (and
// JOURNAL_STREAM) afterwards.
class LogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char path[] = "/tmp/ccfs_log_test.XXXXXX";
    int fd = mkstemp(path);
    ASSERT_GE(fd, 0);
    path_ = path;
    fflush(stderr);
    saved_stderr_ = dup(STDERR_FILENO);
    ASSERT_GE(saved_stderr_, 0);
    ASSERT_EQ(dup2(fd, STDERR_FILENO), STDERR_FILENO);
    close(fd);
    if (const char* old = getenv("JOURNAL_STREAM")) saved_journal_stream_ = old;
    unsetenv("JOURNAL_STREAM");
  }
  void TearDown() override {
    if (saved_stderr_ >= 0) {
      dup2(saved_stderr_, STDERR_FILENO);
      close(saved_stderr_);
    }
    if (saved_journal_stream_.empty()) {
      unsetenv("JOURNAL_STREAM");
    } else {
      setenv("JOURNAL_STREAM", saved_journal_stream_.c_str(), 1);
    }
    if (!path_.empty()) unlink(path_.c_str());
  }

  // "DEVICE:INODE" of `fd`, as systemd writes JOURNAL_STREAM.
  static std::string StreamId(int fd) {
    struct stat st;
    if (fstat(fd, &st) != 0) return "";
    return std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino);
  }

  std::string Written() const { return testing::ReadWholeFile(path_); }

  std::string path_;
  int saved_stderr_ = -1;
  std::string saved_journal_stream_;
};

void LogOneOfEach() {
  LogError("cannot mount on /mnt");
  LogWarning("compressed_percent = 500: must be between 0 and 95");
  LogInfo("unmounted /mnt");
}

TEST_F(LogTest, PlainStderrKeepsTheProgramPrefix) {
  EXPECT_FALSE(StderrIsJournal());
  LogOneOfEach();
  EXPECT_EQ(Written(),
            "ccfs: cannot mount on /mnt\n"
            "ccfs: compressed_percent = 500: must be between 0 and 95\n"
            "ccfs: unmounted /mnt\n");
}

TEST_F(LogTest, JournalStreamGetsOnePriorityPrefixPerLine) {
  ASSERT_EQ(setenv("JOURNAL_STREAM", StreamId(STDERR_FILENO).c_str(), 1), 0);
  EXPECT_TRUE(StderrIsJournal());
  LogOneOfEach();
  EXPECT_EQ(Written(),
            "<3>cannot mount on /mnt\n"
            "<4>compressed_percent = 500: must be between 0 and 95\n"
            "<6>unmounted /mnt\n");
}

TEST_F(LogTest, JournalStreamNamingAnotherFileIsIgnored) {
  // A service that redirected stderr (2>file) inherits JOURNAL_STREAM for a stream it no longer
  // writes to; prefixes would then end up in the file.
  ASSERT_EQ(setenv("JOURNAL_STREAM", StreamId(saved_stderr_).c_str(), 1), 0);
  EXPECT_FALSE(StderrIsJournal());
  ASSERT_EQ(setenv("JOURNAL_STREAM", "not-a-stream", 1), 0);
  EXPECT_FALSE(StderrIsJournal());
  LogError("cannot mount on /mnt");
  EXPECT_EQ(Written(), "ccfs: cannot mount on /mnt\n");
}

TEST_F(LogTest, LibfuseMessagesAreDaemonLinesWithTheirPriority) {
  // libfuse writes its own messages (a failed unmount, a session error) through fuse_log.
  ASSERT_EQ(setenv("JOURNAL_STREAM", StreamId(STDERR_FILENO).c_str(), 1), 0);
  RouteFuseLog();
  fuse_log(FUSE_LOG_ERR, "fuse: failed to unmount %s: %s\n", "/mnt", "Invalid argument");
  fuse_log(FUSE_LOG_WARNING, "fuse: a warning\n");
  fuse_log(FUSE_LOG_INFO, "fuse: some news\n");
  fuse_set_log_func(nullptr);  // back to libfuse's own
  EXPECT_EQ(Written(),
            "<3>fuse: failed to unmount /mnt: Invalid argument\n"
            "<4>fuse: a warning\n"
            "<6>fuse: some news\n");
}

}  // namespace
}  // namespace ccfs
