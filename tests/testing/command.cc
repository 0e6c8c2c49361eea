#include "testing/command.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include "ccfs/options.h"

namespace ccfs::testing {

namespace {

using Clock = std::chrono::steady_clock;

// An unlinked temporary file, read back from the start.
int AnonymousFile() {
  char path[] = "/tmp/ccfs_cmd_out.XXXXXX";
  int fd = mkstemp(path);
  if (fd >= 0) unlink(path);
  return fd;
}

std::string ReadBack(int fd) {
  std::string text;
  lseek(fd, 0, SEEK_SET);
  char buf[4096];
  ssize_t n;
  while ((n = read(fd, buf, sizeof(buf))) > 0) text.append(buf, static_cast<size_t>(n));
  return text;
}

std::vector<std::string> CcfsArgv(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {CCFS_BINARY};
  std::vector<std::string> with_transport = WithTestMode(args);
  argv.insert(argv.end(), with_transport.begin(), with_transport.end());
  return argv;
}

}  // namespace

std::vector<std::string> WithTestMode(const std::vector<std::string>& args) {
  if (args.empty() || args[0] != "mount") return args;
  std::vector<std::string> out = {args[0]};
  static const struct { const char* variable; const char* key; } kModes[] = {
      {"CCFS_TEST_TRANSPORT", "transport"}, {"CCFS_TEST_RAW_TIER", "raw_tier"}};
  for (const auto& mode : kModes) {
    const char* value = getenv(mode.variable);
    if (value == nullptr || *value == '\0') continue;
    out.push_back("-o");
    out.push_back(std::string(mode.key) + "=" + value);
  }
  out.insert(out.end(), args.begin() + 1, args.end());
  return out;
}

void AwaitChangeUnderneath(double attr_timeout_s) {
  if (TestRawTierIsKernel()) {
    std::this_thread::sleep_for(std::chrono::duration<double>(attr_timeout_s + 0.1));
  }
}

bool TestRawTierIsKernel() {
  const char* value = getenv("CCFS_TEST_RAW_TIER");
  if (value == nullptr || *value == '\0') return MountDefaults().kernel_raw_tier();
  return std::string(value) == "kernel";
}

pid_t Spawn(const std::vector<std::string>& argv, int out_fd, int err_fd) {
  std::vector<char*> v;
  for (const auto& a : argv) v.push_back(const_cast<char*>(a.c_str()));
  v.push_back(nullptr);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(out_fd, STDOUT_FILENO);
    dup2(err_fd, STDERR_FILENO);
    int null_fd = open("/dev/null", O_RDONLY);
    dup2(null_fd, STDIN_FILENO);
    execvp(v[0], v.data());
    _exit(127);
  }
  return pid;
}

int Reap(pid_t pid, double timeout_s) {
  if (pid <= 0) return -1;
  auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                     std::chrono::duration<double>(timeout_s));
  int status = 0;
  while (true) {
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) break;
    if (r < 0) return -1;
    if (Clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

CommandResult RunCommand(const std::vector<std::string>& argv, double timeout_s) {
  CommandResult result;
  int out = AnonymousFile();
  int err = AnonymousFile();
  if (out >= 0 && err >= 0) {
    pid_t pid = Spawn(argv, out, err);
    result.pid = pid;
    result.exit_code = Reap(pid, timeout_s);
    result.out = ReadBack(out);
    result.err = ReadBack(err);
    result.output = result.out + result.err;
  }
  if (out >= 0) close(out);
  if (err >= 0) close(err);
  return result;
}

CommandResult RunCcfs(const std::vector<std::string>& args, double timeout_s) {
  return RunCommand(CcfsArgv(args), timeout_s);
}

std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

void WriteWholeFile(const std::string& path, const std::string& data) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(data.data(), static_cast<std::streamsize>(data.size()));
}

std::string TempPath(const std::string& name) {
  return (std::filesystem::path(::testing::TempDir()) / (name + "." + std::to_string(getpid())))
      .string();
}

CcfsProcess::CcfsProcess(const std::vector<std::string>& args) {
  static std::atomic<int> counter{0};
  out_ = ::testing::TempDir() + "ccfs-cli-out-" + std::to_string(getpid()) + "-" +
         std::to_string(counter++);
  err_ = out_ + ".err";
  int out = open(out_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  int err = open(err_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (out >= 0 && err >= 0) pid_ = Spawn(CcfsArgv(args), out, err);
  if (out >= 0) close(out);
  if (err >= 0) close(err);
}

CcfsProcess::~CcfsProcess() {
  if (pid_ > 0 && !reaped_) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  unlink(out_.c_str());
  unlink(err_.c_str());
}

void CcfsProcess::Signal(int sig) {
  if (pid_ > 0 && !reaped_) kill(pid_, sig);
}

CommandResult CcfsProcess::Wait(std::chrono::milliseconds timeout) {
  CommandResult r;
  r.exit_code = Reap(pid_, std::chrono::duration<double>(timeout).count());
  reaped_ = true;
  r.out = ReadWholeFile(out_);
  r.err = ReadWholeFile(err_);
  r.output = r.out + r.err;
  return r;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  return lines;
}

}  // namespace ccfs::testing
