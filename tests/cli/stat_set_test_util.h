// Helpers for the tests of `ccfs stat` and `ccfs set`: a fake mount (a plain directory holding a
// hand-made .ccfs/stats.json, as the daemon would serve it) and a way to run the ccfs binary.
#ifndef CCFS_TESTS_CLI_STAT_SET_TEST_UTIL_H_
#define CCFS_TESTS_CLI_STAT_SET_TEST_UTIL_H_

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "ccfs/stats.h"
#include "stats/stats_json.h"

namespace ccfs::testing_cli {

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

// A directory that looks like a ccfs mount to the command line: .ccfs/stats.json and .ccfs/control.
class FakeMount {
 public:
  FakeMount() {
    std::string tmpl = ::testing::TempDir() + "ccfs-fake-mount-XXXXXX";
    path_ = mkdtemp(tmpl.data());
    std::filesystem::create_directory(path_ + "/.ccfs");
    WriteFile(control(), "");
  }
  ~FakeMount() { std::filesystem::remove_all(path_); }

  const std::string& path() const { return path_; }
  std::string stats() const { return path_ + "/.ccfs/stats.json"; }
  std::string control() const { return path_ + "/.ccfs/control"; }
  // Replaces stats.json atomically, as a reader of the real mount would see it change.
  void SetStats(const CacheStats& s) const {
    WriteFile(stats() + ".tmp", RenderStatsJson(s));
    std::filesystem::rename(stats() + ".tmp", stats());
  }

 private:
  std::string path_;
};

struct RunResult {
  int exit_code = -1;  // -1 if killed by a signal
  std::string out;
  std::string err;
};

// A ccfs process with stdout and stderr sent to files.
class CcfsProcess {
 public:
  explicit CcfsProcess(const std::vector<std::string>& args) {
    out_ = ::testing::TempDir() + "ccfs-cli-out-" + std::to_string(getpid()) + "-" +
           std::to_string(counter_++);
    err_ = out_ + ".err";
    pid_ = fork();
    if (pid_ == 0) {
      int o = open(out_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      int e = open(err_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      dup2(o, 1);
      dup2(e, 2);
      std::vector<char*> argv;
      std::string bin = CCFS_BINARY;
      argv.push_back(bin.data());
      std::vector<std::string> copy = args;
      for (auto& a : copy) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(bin.c_str(), argv.data());
      _exit(127);
    }
  }
  ~CcfsProcess() {
    if (pid_ > 0 && !reaped_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    unlink(out_.c_str());
    unlink(err_.c_str());
  }

  std::string out() const { return ReadFile(out_); }
  void Signal(int sig) { kill(pid_, sig); }

  // Waits up to `timeout` for the process to end; kills it (exit_code -1) if it does not.
  RunResult Wait(std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
    RunResult r;
    auto deadline = std::chrono::steady_clock::now() + timeout;
    int status = 0;
    for (;;) {
      pid_t done = waitpid(pid_, &status, WNOHANG);
      if (done == pid_) break;
      if (std::chrono::steady_clock::now() > deadline) {
        kill(pid_, SIGKILL);
        waitpid(pid_, &status, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    reaped_ = true;
    if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
    r.out = ReadFile(out_);
    r.err = ReadFile(err_);
    return r;
  }

 private:
  static inline int counter_ = 0;
  pid_t pid_ = -1;
  bool reaped_ = false;
  std::string out_, err_;
};

inline RunResult RunCcfs(const std::vector<std::string>& args) {
  CcfsProcess p(args);
  return p.Wait();
}

}  // namespace ccfs::testing_cli

#endif  // CCFS_TESTS_CLI_STAT_SET_TEST_UTIL_H_
