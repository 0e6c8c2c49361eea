#include "testing/mount_fixture.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

namespace ccfs::testing {

namespace {

using Clock = std::chrono::steady_clock;

// Forks and execs argv with stdout and stderr sent to `out_fd`.
pid_t Spawn(const std::vector<std::string>& argv, int out_fd) {
  std::vector<char*> v;
  for (const auto& a : argv) v.push_back(const_cast<char*>(a.c_str()));
  v.push_back(nullptr);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(out_fd, STDOUT_FILENO);
    dup2(out_fd, STDERR_FILENO);
    int null_fd = open("/dev/null", O_RDONLY);
    dup2(null_fd, STDIN_FILENO);
    execvp(v[0], v.data());
    _exit(127);
  }
  return pid;
}

// Waits for `pid` up to timeout_s; kills it after that. Returns the exit code (128+sig).
int Reap(pid_t pid, double timeout_s) {
  auto deadline = Clock::now() + std::chrono::duration<double>(timeout_s);
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

}  // namespace

CommandResult RunCommand(const std::vector<std::string>& argv, double timeout_s) {
  char path[] = "/tmp/ccfs_cmd_out.XXXXXX";
  int fd = mkstemp(path);
  CommandResult result;
  if (fd < 0) return result;
  unlink(path);
  pid_t pid = Spawn(argv, fd);
  result.exit_code = Reap(pid, timeout_s);
  lseek(fd, 0, SEEK_SET);
  char buf[4096];
  ssize_t n;
  while ((n = read(fd, buf, sizeof(buf))) > 0) result.output.append(buf, n);
  close(fd);
  return result;
}

CommandResult RunCcfs(const std::vector<std::string>& args, double timeout_s) {
  std::vector<std::string> argv = {CCFS_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunCommand(argv, timeout_s);
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

MountedDataset::MountedDataset() {
  // Real disk, not tmpfs: the backing store reads misses with O_DIRECT.
  char tmpl[] = "/var/tmp/ccfs_fs_test.XXXXXX";
  if (mkdtemp(tmpl) != nullptr) root_ = tmpl;
  data_ = root_ + "/data";
  mnt_ = root_ + "/mnt";
  log_ = root_ + "/daemon.log";
  mkdir(data_.c_str(), 0755);
  mkdir(mnt_.c_str(), 0755);
}

MountedDataset::~MountedDataset() {
  Unmount();
  if (IsMounted(mnt_)) RunCommand({"fusermount3", "-uz", mnt_}, 10);
  std::error_code ec;
  if (!root_.empty() && !IsMounted(mnt_)) std::filesystem::remove_all(root_, ec);
}

bool MountedDataset::Mount(const std::vector<std::string>& extra_args, std::string* error) {
  int fd = open(log_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  std::vector<std::string> argv = {CCFS_BINARY, "mount", "-f"};
  argv.insert(argv.end(), extra_args.begin(), extra_args.end());
  argv.push_back(data_);
  argv.push_back(mnt_);
  pid_ = Spawn(argv, fd);
  close(fd);
  auto deadline = Clock::now() + std::chrono::seconds(10);
  while (Clock::now() < deadline) {
    if (IsMounted(mnt_)) return true;
    int status;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      *error = "ccfs mount exited before mounting: " + DaemonLog();
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  Unmount();
  *error = "ccfs mount did not mount within 10 s: " + DaemonLog();
  return false;
}

int MountedDataset::Unmount() {
  if (pid_ <= 0) return -1;
  if (IsMounted(mnt_) && RunCommand({"fusermount3", "-u", mnt_}, 10).exit_code != 0) {
    RunCommand({"fusermount3", "-uz", mnt_}, 10);
  }
  int code = Reap(pid_, 10);
  pid_ = -1;
  return code;
}

std::string MountedDataset::DaemonLog() const { return ReadWholeFile(log_); }

nlohmann::json MountedDataset::Stats() const {
  std::string text = ReadWholeFile(mnt_ + "/.ccfs/stats.json");
  return nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
}

void MountTest::TearDown() {
  if (ds_.mounted()) {
    int code = ds_.Unmount();
    EXPECT_EQ(code, 0) << "daemon log:\n" << ds_.DaemonLog();
  }
  EXPECT_FALSE(IsMounted(ds_.mnt()));
}

void MountTest::MountOrDie(const std::vector<std::string>& extra_args) {
  std::string error;
  ASSERT_TRUE(ds_.Mount(extra_args, &error)) << error;
}

}  // namespace ccfs::testing
