// Test helpers that run programs (the ccfs binary under test above all) and capture what they say.
//
// RunCommand and RunCcfs run a program to completion (killing it after a timeout); CcfsProcess
// starts the ccfs binary in the background, for tests that signal it or read its output while it
// runs. stdout and stderr are captured separately, into unlinked or temporary files (no pipe to
// fill up), and also offered together.
//
// Not thread-safe: one test thread drives a CcfsProcess.
#ifndef CCFS_TESTS_TESTING_COMMAND_H_
#define CCFS_TESTS_TESTING_COMMAND_H_

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

namespace ccfs::testing {

// Output and exit code of a command run to completion.
struct CommandResult {
  int exit_code = -1;  // 128 + signal if killed by one, -1 if it could not be run or reaped
  std::string out;     // stdout
  std::string err;     // stderr
  std::string output;  // stdout, then stderr
  pid_t pid = -1;      // the process it ran (reaped: for what it may have left under its pid)
};

// Runs argv[0] (searched in PATH) with the given arguments; waits at most timeout_s seconds (then
// kills it).
CommandResult RunCommand(const std::vector<std::string>& argv, double timeout_s = 30);
// Runs the ccfs binary under test with `args`.
CommandResult RunCcfs(const std::vector<std::string>& args, double timeout_s = 30);

// The mode every mount the tests start runs in: with CCFS_TEST_TRANSPORT=uring (or dev, auto) in
// the environment, `ccfs mount ARGS` becomes `ccfs mount -o transport=uring ARGS`; with
// CCFS_TEST_RAW_TIER=kernel (or daemon), `-o raw_tier=kernel` likewise. A test's own -o ... (later)
// still wins. RunCcfs, CcfsProcess and MountedDataset apply it; `args` are ccfs's arguments
// (without the binary). Both unset: `args` unchanged.
std::vector<std::string> WithTestMode(const std::vector<std::string>& args);
// Whether mounts run with raw_tier = kernel (CCFS_TEST_RAW_TIER=kernel, or unset and kernel the
// default): the kernel answers repeated reads itself, so a test that counts the daemon's reads
// must expect fewer.
bool TestRawTierIsKernel();
// After a change made directly in DATASET: with raw_tier = kernel, waits out the staleness bound
// (the mount's attr_timeout, `attr_timeout_s`, plus 0.1 s) after which the kernel has dropped its
// stale pages; with raw_tier = daemon returns at once (the daemon checks before every read).
void AwaitChangeUnderneath(double attr_timeout_s);

// The pieces underneath, for a test that keeps a process running (the mount fixture's daemon):
// Spawn forks and execs argv (searched in PATH) with stdout to out_fd, stderr to err_fd and stdin
// from /dev/null, returning its pid (-1 if fork failed); Reap waits for it up to timeout_s, kills
// it after that, and returns its exit code (128 + signal if killed by one).
pid_t Spawn(const std::vector<std::string>& argv, int out_fd, int err_fd);
int Reap(pid_t pid, double timeout_s);

// TempDir()/NAME.PID: a path of this test process's own, so test runs of two checkouts at once do
// not remove each other's files.
std::string TempPath(const std::string& name);

std::string ReadWholeFile(const std::string& path);

// `text` cut at its newlines (the last line need not end in one).
std::vector<std::string> Lines(const std::string& text);
void WriteWholeFile(const std::string& path, const std::string& data);

// The ccfs binary under test running in the background, stdout and stderr sent to files. The
// destructor kills it if it was not waited for and removes the files.
class CcfsProcess {
 public:
  explicit CcfsProcess(const std::vector<std::string>& args);
  ~CcfsProcess();
  CcfsProcess(const CcfsProcess&) = delete;
  CcfsProcess& operator=(const CcfsProcess&) = delete;

  // What it has written to stdout so far.
  std::string out() const { return ReadWholeFile(out_); }
  void Signal(int sig);

  // Waits up to `timeout` for the process to end; kills it if it does not.
  CommandResult Wait(std::chrono::milliseconds timeout = std::chrono::seconds(20));

 private:
  pid_t pid_ = -1;
  bool reaped_ = false;
  std::string out_, err_;
};

}  // namespace ccfs::testing

#endif  // CCFS_TESTS_TESTING_COMMAND_H_
