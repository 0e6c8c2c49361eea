#include "testing/mount_fixture.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "client/mount_client.h"

namespace ccfs::testing {

using Clock = std::chrono::steady_clock;

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
  std::vector<std::string> args = {"mount", "-f"};
  args.insert(args.end(), extra_args.begin(), extra_args.end());
  args.push_back(data_);
  args.push_back(mnt_);
  std::vector<std::string> argv = {CCFS_BINARY};
  for (std::string& a : WithTestMode(args)) argv.push_back(std::move(a));
  pid_ = Spawn(argv, fd, fd);
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

int MountedDataset::Terminate() {
  if (pid_ <= 0) return -1;
  if (kill(pid_, SIGTERM) != 0) return -1;
  for (int i = 0; i < 2000 && IsMounted(mnt_); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  const bool itself = !IsMounted(mnt_);
  const int code = Unmount();
  return itself ? code : -2;
}

std::string MountedDataset::DaemonLog() const { return ReadWholeFile(log_); }

nlohmann::json MountedDataset::Stats() const {
  std::string text = ReadWholeFile(MountStatsPath(mnt_));
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
